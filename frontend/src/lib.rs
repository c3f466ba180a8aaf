//! The Replayground browser pages, one wasm bundle each: the playground
//! ([`playground`]: edit a Python program, run it under the server's tracer, step
//! through the recorded run forwards and backwards) and the reproduction page
//! ([`repro`]: a bug report in, the agent's reproduction out). Both talk to the server
//! through [`client`].
//!
//! Navigation is the shared crate's [`replayground_shared::StateTree`], so the page steps
//! exactly as the server and the CLI do, without a round trip per step.

pub mod client;
pub mod playground;
pub mod repro;
pub mod theme;

pub use playground::App;
