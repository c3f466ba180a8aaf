#!/usr/bin/env bash
# Trains the neural debugger from scratch on one NVIDIA GPU, in a time budget, from this
# folder alone (made by `cargo xtask gpu-train`; no Rust, no internet needed).
#
#   OUT=/some/folder bash run.sh        # defaults below; override any with the environment
#
# Writes to $OUT at most 8 files, none over 16 MiB: the bf16 weights in shards
# (model-0000k-of-0000n.safetensors), loss.csv, summary.json (tokens/s, losses, parameters)
# and meta.tar.gz (config.json, tokenizer.json, anchor.json: PyTorch's tokens/s on the same
# configuration and batch, log.txt).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
minutes=${MINUTES:-5}          # the training budget; the rest (anchor, tokenizer, export) takes 2-3 min
anchor_seconds=${ANCHOR_SECONDS:-40}
hidden=${HIDDEN:-512}
layers=${LAYERS:-7}
heads=${HEADS:-8}
context=${CONTEXT:-1024}
batch=${BATCH:-32}
vocab=${VOCAB:-4096}
lr=${LR:-1e-3}
device=${DEVICE:-cuda}
work=${WORK:-$(mktemp -d)}
mkdir -p "$out" "$work"
log="$work/log.txt"
exec > >(tee -a "$log") 2>&1

stamp() { echo "[$(date -u +%H:%M:%S)] $*"; }

stamp "bundle $(cat "$here/VERSION" 2>/dev/null || echo unknown) on $(hostname)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

# cudarc opens libcuda, libcublas(Lt), libcurand and libnvrtc by name: take them from the
# system's CUDA or from Python's NVIDIA wheels (PyTorch's), whichever this machine has.
cuda_dirs=$(python3 - <<'PY'
import glob, os, site, sys
bases = [p for p in sys.path if p.endswith("-packages")]
try:
    bases += site.getsitepackages() + [site.getusersitepackages()]
except Exception:
    pass
found = []
for base in bases:
    found += glob.glob(os.path.join(base, "nvidia", "*", "lib")) + glob.glob(os.path.join(base, "nvidia", "cu13", "lib"))
found += ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"]
keep = []
for d in found:
    if os.path.isdir(d) and d not in keep and any(glob.glob(os.path.join(d, p)) for p in ("libcublas*.so*", "libcurand*.so*", "libnvrtc*.so*")):
        keep.append(d)
print(":".join(keep))
PY
)
export LD_LIBRARY_PATH="$here/lib:$cuda_dirs:${LD_LIBRARY_PATH:-}"
stamp "CUDA libraries from: $cuda_dirs"

bin="$work/replayground"
gunzip -c "$here/replayground.gz" > "$bin"
chmod +x "$bin"
mkdir -p "$work/corpus"
tar -xzf "$here/corpus.tar.gz" -C "$work/corpus"
stamp "corpus: $(wc -l < "$work/corpus/train.jsonl") training trajectories, $(du -sh "$work/corpus" | cut -f1)"

# A few steps of a tiny model on a slice of the corpus first: if CUDA does not work, say so
# in seconds, not minutes.
stamp "smoke test on $device"
mkdir -p "$work/slice"
head -n 200 "$work/corpus/train.jsonl" > "$work/slice/train.jsonl"
head -n 50 "$work/corpus/heldout.jsonl" > "$work/slice/heldout.jsonl"
"$bin" train --corpus "$work/slice" --out "$work/smoke" --device "$device" \
    --steps 3 --batch-size 2 --context 64 --hidden-size 64 --layers 1 --heads 2 --vocab-size 512 \
    --warmup-steps 1 --checkpoint-every 3 --eval-every 3 || {
    code=$?
    stamp "SMOKE TEST FAILED (exit $code): not training; the log is in $out/meta.tar.gz"
    tar -czf "$out/meta.tar.gz" -C "$work" log.txt
    exit "$code"
}

# The anchor: PyTorch's Qwen2 (transformers) on the same configuration and batch.
stamp "PyTorch anchor, ${anchor_seconds}s per precision"
python3 "$here/anchor.py" --vocab "$vocab" --hidden "$hidden" --layers "$layers" --heads "$heads" \
    --context "$context" --batch "$batch" --seconds "$anchor_seconds" --out "$work/anchor.json" \
    || stamp "ANCHOR FAILED (exit $?)"

stamp "training for $minutes min: hidden $hidden, $layers layers, $heads heads, context $context, batch $batch, vocab $vocab"
"$bin" train --corpus "$work/corpus" --out "$work/model" --device "$device" --minutes "$minutes" \
    --steps 100000 --batch-size "$batch" --context "$context" --hidden-size "$hidden" --layers "$layers" \
    --heads "$heads" --vocab-size "$vocab" --lr "$lr" --warmup-steps 200 --checkpoint-every 500 \
    --eval-every 100 || stamp "TRAINING FAILED (exit $?)"

if [ -f "$work/model/model.safetensors" ]; then
    "$bin" export-model --from "$work/model" --to "$work/export" --dtype bf16 --shard-mib 16
    cp "$work"/export/model*.safetensors "$out/"
    cp "$work/model/loss.csv" "$work/model/summary.json" "$out/" 2>/dev/null || true
    cp "$work/model/config.json" "$work/model/tokenizer.json" "$work/" 2>/dev/null || true
fi
stamp "done; files in $out:"
ls -la "$out"
tar -czf "$out/meta.tar.gz" -C "$work" $(cd "$work" && ls config.json tokenizer.json anchor.json log.txt 2>/dev/null)
