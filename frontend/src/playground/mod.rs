//! The playground (`/`, and `/s/{id}` for a shared view): edit a Python program
//! (highlighted and checked by tree-sitter in the page), run it under the server's
//! tracer, then step through the recorded run with pdb's commands, forwards and
//! backwards. Built as the `app` wasm bundle (`src/main.rs`).

pub mod app;
pub mod controls;
pub mod debugger;
pub mod editor;
pub mod examples;
pub mod heap;
pub mod jobs;
pub mod neural_view;
pub mod outcome;
pub mod predict;
pub mod session;
pub mod sharing;
pub mod state_tree_view;
pub mod stop_view;
pub mod syntax;
pub mod ui;
pub mod values;

pub use app::App;
