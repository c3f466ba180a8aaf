//! The bug-reproduction agent (RepGen, arXiv 2512.14990), one module per stage:
//!
//! - [`project`]: an uploaded project (.zip / .tar.gz / directory) read safely into memory.
//! - [`context`]: the Context stage: [`chunk`] (the project's Python cut into modules,
//!   classes and functions), [`embed`] (sentence embeddings and the reranker),
//!   [`retrieval`] (hybrid BM25 + dense retrieval over an HNSW index, reranked).
//! - [`training_loops`]: training-loop detection from the syntax tree.
//! - [`dependencies`]: a chunk's imports and the project definitions it uses, resolved.
//! - [`report`]: reading a report: stack traces, the symptom taxonomy, sections, snippets.
//! - [`restructure`]: the Restructure stage (rules, then an LLM).
//! - [`plan`]: the reproduction plan.
//! - [`llm`]: the LLM backends behind one trait.
//! - [`generate`]: candidate scripts, from an LLM (`generate::llm`) or the rules (`generate::rules`).
//! - `edits`: the rule-based edit actions, one file each.
//! - [`refine`]: the checks' feedback turned into the next candidate.
//! - [`checks`]: structural, static, relevance and runtime feedback.
//! - [`agent`]: the generate → validate → refine loop that emits `AgentEvent`s.
//! - [`bench`]: the benchmark harness over a suite of cases.
//! - [`cli`]: `replayground repro`, the agent on the command line.

pub mod agent;
pub mod bench;
pub mod checks;
pub mod cli;
pub mod context;
pub mod dependencies;
mod edits;
pub mod generate;
pub mod llm;
pub mod plan;
pub mod project;
pub mod refine;
pub mod report;
pub mod restructure;
pub mod training_loops;

pub use context::{chunk, embed, retrieval};

/// The old home of training-loop extraction and dependency resolution, for the paths the
/// server and its tests name.
pub mod extract {
    pub use crate::dependencies::{ProjectIndex, imported_packages, with_dependencies};
    pub use crate::training_loops::{TrainingLoop, training_loops};
}
