//! Every server integration test, as one test binary: one link instead of one per
//! file keeps `cargo test` fast and its target directory small (each binary links
//! candle, axum and sqlx). Each module is one area; `common` holds the shared helpers.

mod common;

mod api;
mod cli;
mod corpus;
mod corpus_pypi;
mod crash;
mod hostile;
mod neural_eval;
mod neural_ws;
mod pdb_oracle;
mod repro_agent;
mod repro_api;
mod repro_bench;
mod repro_context;
mod sandbox;
mod store;
mod tracer;
mod ws;
