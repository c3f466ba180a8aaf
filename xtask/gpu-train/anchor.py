"""PyTorch's Qwen2 (transformers) trained on the same configuration and batch as the Rust
trainer, to anchor its tokens per second: random tokens, AdamW, next-token loss.

Two precisions: f32 with TF32 matrix products (what the Rust trainer does) and bf16
autocast (what a PyTorch user would do). Writes one JSON object to --out.
"""

import argparse
import json
import time


def measure(torch, model, batch, context, vocab, seconds, autocast):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    tokens = torch.randint(0, vocab, (batch, context + 1), device="cuda")
    inputs, targets = tokens[:, :-1], tokens[:, 1:]

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            logits = model(input_ids=inputs).logits
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab).float(), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    steps = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        step()
        steps += 1
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - started
    return {
        "steps": steps,
        "seconds": round(elapsed, 3),
        "tokens_per_second": round(steps * batch * context / elapsed, 1),
        "peak_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
    }


def main():
    parser = argparse.ArgumentParser()
    for name in ("vocab", "hidden", "layers", "heads", "context", "batch"):
        parser.add_argument(f"--{name}", type=int, required=True)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    import torch
    import transformers

    # The same shapes as the Rust trainer's Qwen2Config::small.
    config = transformers.Qwen2Config(
        vocab_size=args.vocab,
        hidden_size=args.hidden,
        intermediate_size=args.hidden * 8 // 3 // 32 * 32,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=max(args.heads // 2, 1),
        max_position_embeddings=args.context,
        tie_word_embeddings=True,
    )
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    report = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "gpu": torch.cuda.get_device_name(0),
        "config": vars(args),
    }
    for label, autocast in (("f32_tf32", False), ("bf16_autocast", True)):
        torch.manual_seed(0)
        model = transformers.Qwen2ForCausalLM(config).cuda()
        model.train()
        report["parameters"] = sum(p.numel() for p in model.parameters())
        report[label] = measure(torch, model, args.batch, args.context, args.vocab, args.seconds / 2, autocast)
        del model
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
