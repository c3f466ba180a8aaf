//! The neural debugger (arXiv 2603.09951): generated programs and their real traces,
//! trajectories in the trace language, the from-scratch model and its training, engines
//! that answer debugger actions (that model, or a code LLM prompted in context), the
//! service the server and the agent share, and the benchmarks that score them.

pub mod bounds;
pub mod commands;
pub mod corpus;
pub mod cruxeval;
pub mod decode;
pub mod dedup;
pub mod device;
pub mod eval;
pub mod export;
pub mod generator;
pub mod in_context;
pub mod infer;
pub mod model;
pub mod playground_bench;
pub mod plot;
pub mod policy;
pub mod predict;
pub mod pypi;
pub mod read_ahead;
pub mod real_bench;
pub mod real_code;
pub mod rollout;
pub mod service;
pub mod stdlib;
pub mod stepwise;
pub mod tokenizer;
pub mod train;

use std::path::Path;

use candle_core::Device;

/// Loads an engine named the way `--model` (eval) and `--neural-model` (serve, repro)
/// take it: a model folder trained by this pipeline, a catalogued code LLM prompted in
/// context (`qwen-0.5b`, `qwen-1.5b`), or `gguf:FILE` / a `.gguf` file; any of them
/// with `+steps` answers multi-event actions one event at a time ([`stepwise`]).
pub fn load_engine(
    spec: &str,
    device: &Device,
    max_trajectory_tokens: usize,
) -> anyhow::Result<Box<dyn infer::Engine>> {
    if let Some(inner) = spec.strip_suffix(stepwise::SUFFIX) {
        let inner = load_engine(inner, device, max_trajectory_tokens)?;
        return Ok(Box::new(stepwise::Stepwise::new(inner)));
    }
    let gguf = |path: &Path| -> anyhow::Result<Box<dyn infer::Engine>> {
        Ok(Box::new(
            in_context::InContextDebugger::load(path, device)?.with_max_trajectory_tokens(max_trajectory_tokens),
        ))
    };
    if let Some(path) = spec.strip_prefix("gguf:") {
        return gguf(Path::new(path));
    }
    if Path::new(spec).extension().is_some_and(|e| e == "gguf") {
        return gguf(Path::new(spec));
    }
    if !Path::new(spec).exists() && replayground_llm::catalogue::CATALOGUE.iter().any(|m| m.id == spec) {
        return gguf(&in_context::locate(spec)?);
    }
    Ok(Box::new(infer::NeuralDebugger::load_on(Path::new(spec), device)?))
}
