//! The Replayground server: runs Python programs in a sandbox under a tracer, and serves
//! the traces to the command line and the browser.
//!
//! - [`sandbox`]: the [`sandbox::Sandbox`] seam, bubblewrap and resource limits.
//! - [`runner`]: `tracer.py` in a sandbox, its JSON lines assembled into a `Trace`.
//! - [`api`]: the HTTP API and the static playground.
//! - [`store`]: share links on SQLite or Postgres.
//! - [`cli`]: the `replayground` command line.

pub mod api;
pub mod cli;
pub mod runner;
pub mod sandbox;
pub mod store;
