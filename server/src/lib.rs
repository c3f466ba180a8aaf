//! The Replayground server: runs Python programs in a sandbox under a tracer, and serves
//! the traces to the command line and the browser.
//!
//! - [`sandbox`]: the [`sandbox::Sandbox`] seam, bubblewrap and resource limits.
//! - [`runner`]: `tracer.py` in a sandbox, its JSON lines assembled into a `Trace`.
//! - [`app`]: the state every request shares; [`jobs`]: the job queue and shutdown.
//! - [`http`]: the HTTP API, health, metrics and the static playground.
//! - [`ws`]: WebSocket sessions that stream jobs.
//! - [`metrics`]: Prometheus metrics.
//! - [`neural`]: the neural debugger's training data pipeline.
//! - [`neural_session`]: the playground's neural mode (`predict` jobs).
//! - [`store`]: share links on SQLite or Postgres.
//! - [`cli`]: the `replayground` command line.

pub mod app;
mod cgroup;
pub mod cli;
pub mod http;
pub mod jobs;
pub mod metrics;
pub mod neural;
pub mod neural_session;
pub mod python;
pub mod repro;
pub mod runner;
pub mod sandbox;
mod seccomp;
pub mod store;
pub mod ws;
