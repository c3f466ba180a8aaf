#!/usr/bin/env python3
"""llama.cpp's side of `cargo xtask bench-llm`: prompt processing and greedy decode speed
on the same GGUF file and the same prompt token ids as the candle runtime, then peak RSS.

    python tools/llm_bench_llama_cpp.py MODEL.gguf IDS.json DECODE_TOKENS THREADS

Prints one JSON line, the same fields as crates/llm/examples/bench.rs.
"""

import json
import resource
import sys
import time

import llama_cpp
import numpy as np


def main():
    model, ids_file, decode_tokens, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    ids = json.load(open(ids_file))
    started = time.perf_counter()
    llm = llama_cpp.Llama(
        model,
        n_ctx=len(ids) + decode_tokens + 16,
        n_batch=len(ids),
        n_ubatch=len(ids),
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
    load_s = time.perf_counter() - started
    vocab = llm.n_vocab()

    def next_token():
        logits = llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1)
        return int(np.argmax(np.ctypeslib.as_array(logits, shape=(vocab,))))

    best_prefill = best_decode = 0.0
    for _ in range(2):
        llm.reset()
        started = time.perf_counter()
        llm.eval(ids)
        token = next_token()
        best_prefill = max(best_prefill, len(ids) / (time.perf_counter() - started))
        started = time.perf_counter()
        for _ in range(decode_tokens - 1):
            llm.eval([token])
            token = next_token()
        best_decode = max(best_decode, (decode_tokens - 1) / (time.perf_counter() - started))
    print(
        json.dumps(
            {
                "engine": f"llama.cpp (llama-cpp-python {llama_cpp.__version__})",
                "threads": threads,
                "load_s": load_s,
                "prompt_tokens": len(ids),
                "prefill_tok_s": best_prefill,
                "decode_tok_s": best_decode,
                # ru_maxrss is KiB on Linux; it includes the Python interpreter and numpy.
                "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


if __name__ == "__main__":
    main()
