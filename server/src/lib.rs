//! The Replayground server: the web layer over the engine crates. It serves traces,
//! neural predictions and reproduction jobs to the command line and the browser; the
//! engine crates never import it (see `docs/architecture.md`).
//!
//! - [`app`]: the state every request shares; [`jobs`]: the job queue and shutdown.
//! - [`http`]: the HTTP API, the WebSocket sessions that stream jobs ([`http::ws`]:
//!   traces, neural-mode predictions, reproductions), health, metrics and the static
//!   playground.
//! - [`projects`]: uploaded projects kept for the reproduction agent.
//! - [`metrics`]: Prometheus metrics.
//! - [`store`]: share links on SQLite or Postgres.
//! - [`cli`]: the `replayground` command line.
//!
//! The engine crates are re-exported under their old paths for the binaries and tests:
//! [`sandbox`], [`runner`] and [`python`] from `replayground-exec`, [`neural`] and
//! [`repro`].

pub mod app;
pub mod cli;
pub mod http;
pub mod jobs;
pub mod metrics;
pub mod projects;
pub mod store;

pub use replayground_exec::{python, runner, sandbox};
pub use replayground_neural as neural;
pub use replayground_repro as repro;
