//! The neural debugger's data pipeline (arXiv 2603.09951): generated programs, their
//! real traces, and trajectories in the trace language sampled by a debugger policy.

pub mod commands;
pub mod corpus;
pub mod cruxeval;
pub mod dedup;
pub mod device;
pub mod eval;
pub mod generator;
pub mod in_context;
pub mod infer;
pub mod model;
pub mod plot;
pub mod policy;
pub mod pypi;
pub mod real_bench;
pub mod rollout;
pub mod tokenizer;
pub mod train;
