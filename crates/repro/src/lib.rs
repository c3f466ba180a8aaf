//! The bug-reproduction agent (RepGen, arXiv 2512.14990), one module per stage:
//!
//! - [`project`]: an uploaded project (.zip / .tar.gz / directory) read safely into memory.
//! - [`chunk`]: the project's Python cut into modules, classes and functions (tree-sitter).
//! - [`embed`]: sentence embeddings (all-MiniLM-L6-v2 with candle's BERT) and the reranker.
//! - [`retrieval`]: hybrid BM25 + dense retrieval over an HNSW index, reranked.
//! - [`extract`]: training-loop detection and dependency resolution from the syntax tree.
//! - [`report`]: restructuring a report and classifying its symptom.
//! - [`plan`]: the reproduction plan.
//! - [`llm`]: the LLM backends behind one trait.
//! - [`generate`]: candidate scripts, from an LLM or from rule-based edit actions.
//! - [`checks`]: structural, static, relevance and runtime feedback.
//! - [`agent`]: the generate → validate → refine loop that emits `AgentEvent`s.
//! - [`bench`]: the benchmark harness over a suite of cases.
//! - [`cli`]: `replayground repro`, the agent on the command line.

pub mod agent;
pub mod bench;
pub mod checks;
pub mod chunk;
pub mod cli;
pub mod embed;
pub mod extract;
pub mod generate;
pub mod llm;
pub mod plan;
pub mod project;
pub mod report;
pub mod retrieval;
