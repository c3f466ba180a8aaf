//! Prompt-processing and decode speed of the candle runtime on one GGUF file, its peak
//! memory, and what the prompt cache saves on a prompt that shares all but its last 64
//! tokens with the one before (the time to read it with the cache over without, best of 2). `cargo xtask bench-llm` runs this beside llama.cpp on the same prompt ids
//! (which it writes to `IDS_OUT`) and prints the comparison.
//!
//! `cargo run --release -p replayground-llm --example bench -- MODEL.gguf [PROMPT_TOKENS] [DECODE_TOKENS] [IDS_OUT]`

// Printing the measurements is what this program is for.
#![allow(clippy::print_stdout)]

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::{Context, Result};
use replayground_llm::{GenerationParams, LocalLlm, PromptCache, default_device};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let model_path = args
        .first()
        .context("usage: bench MODEL.gguf [PROMPT_TOKENS] [DECODE_TOKENS] [IDS_OUT]")?;
    let prompt_tokens: usize = args.get(1).map_or(Ok(512), |a| a.parse())?;
    let decode_tokens: usize = args.get(2).map_or(Ok(64), |a| a.parse())?;
    let loading = Instant::now();
    let llm = LocalLlm::load(model_path.as_ref(), &default_device())?;
    let load_s = loading.elapsed().as_secs_f64();

    // A fixed, code-like prompt: this crate's own source, as many tokens as asked for.
    let source = include_str!("../src/model.rs");
    let mut ids = Vec::new();
    while ids.len() < prompt_tokens {
        ids.extend(llm.encode(source)?);
    }
    ids.truncate(prompt_tokens);
    if let Some(out) = args.get(3) {
        std::fs::write(out, serde_json::to_string(&ids)?)?;
    }

    let never = AtomicBool::new(false);
    let mut best_prefill = 0.0f64;
    let mut best_decode = 0.0f64;
    for _ in 0..2 {
        // Ignore end-of-turn: decode exactly `decode_tokens` tokens, as llama.cpp does.
        // An empty prompt cache each time: the whole prompt is read.
        let generation = llm.generate_with(
            &mut PromptCache::new(1),
            &ids,
            &GenerationParams::greedy(decode_tokens),
            &never,
            &mut |_| {},
        )?;
        best_prefill = best_prefill.max(ids.len() as f64 / generation.prefill.as_secs_f64());
        let decoded = generation.tokens.len().saturating_sub(1);
        if decoded > 0 {
            best_decode = best_decode.max(decoded as f64 / generation.decode.as_secs_f64());
        }
    }
    // The same prompt with its last 64 tokens changed, read after the first one.
    let mut changed = ids.clone();
    let tail = changed.len().saturating_sub(64);
    changed[tail..].reverse();
    let mut cached = f64::MAX;
    let mut uncached = f64::MAX;
    for _ in 0..2 {
        let one = GenerationParams::greedy(1);
        let mut prompts = PromptCache::new(1);
        llm.generate_with(&mut prompts, &ids, &one, &never, &mut |_| {})?;
        cached = cached.min(
            llm.generate_with(&mut prompts, &changed, &one, &never, &mut |_| {})?
                .prefill
                .as_secs_f64(),
        );
        let fresh = llm.generate_with(&mut PromptCache::new(1), &changed, &one, &never, &mut |_| {})?;
        uncached = uncached.min(fresh.prefill.as_secs_f64());
    }
    let peak_rss_mib = peak_rss_kib().map(|kib| kib as f64 / 1024.0);
    println!(
        "{}",
        serde_json::json!({
            "engine": "candle",
            "model": llm.name(),
            "threads": std::env::var("RAYON_NUM_THREADS").ok(),
            "load_s": load_s,
            "prompt_tokens": ids.len(),
            "prefill_tok_s": best_prefill,
            "decode_tok_s": best_decode,
            "changed_tail_tokens": changed.len() - tail,
            "changed_tail_prefill_s": cached,
            "changed_prompt_prefill_s": uncached,
            "prompt_cache_time_ratio": cached / uncached,
            "peak_rss_mib": peak_rss_mib,
        })
    );
    Ok(())
}

/// `VmHWM` of this process: the most resident memory it ever had.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
