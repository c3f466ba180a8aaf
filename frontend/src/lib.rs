//! The Replayground browser app: edit a Python program, run it under the server's tracer,
//! then step through the recorded run with pdb's commands, forwards and backwards.
//!
//! Navigation is the shared crate's [`replayground_shared::StateTree`], so the page steps
//! exactly as the server and the CLI do, without a round trip per step.

pub mod api;
pub mod app;
pub mod debugger;
pub mod stop_view;

pub use app::App;
