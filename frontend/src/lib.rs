//! The Replayground browser app: edit a Python program (highlighted and checked by
//! tree-sitter in the page), run it under the server's tracer, then step through the
//! recorded run with pdb's commands, forwards and backwards.
//!
//! Navigation is the shared crate's [`replayground_shared::StateTree`], so the page steps
//! exactly as the server and the CLI do, without a round trip per step.

pub mod api;
pub mod app;
pub mod debugger;
pub mod editor;
pub mod examples;
pub mod heap;
pub mod neural_view;
pub mod predict;
pub mod repro;
pub mod sharing;
pub mod socket;
pub mod state_tree_view;
pub mod stop_view;
pub mod syntax;
pub mod theme;
pub mod values;
pub mod wire;

pub use app::App;
