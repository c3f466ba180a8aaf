//! Types and pure logic shared by the Replayground server and the browser app.
//!
//! Nothing here does I/O, so the crate builds for native targets and `wasm32`
//! alike and the browser navigates traces with exactly the server's code.

pub mod protocol;
pub mod repro;
pub mod share;
pub mod state;
pub mod state_tree;
#[cfg(any(test, feature = "test-util"))]
pub mod test_util;
pub mod text;
pub mod trace;
pub mod trace_lang;

pub use state::{State, StopKind, Vars};
pub use state_tree::{Action, ActionParseError, Debugger, StateTree, Stop};
pub use trace::{Event, EventKind, Frame, Limit, Outcome, Trace, TraceError, Value, ValueId};
