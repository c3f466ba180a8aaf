//! Running untrusted Python, the ground truth of Replayground. It depends on nothing but
//! `replayground-shared`; the neural debugger, the reproduction agent and the server
//! all run programs through it.
//!
//! - [`sandbox`]: the [`sandbox::Sandbox`] seam, bubblewrap, resource limits, the
//!   per-job cgroup and the seccomp filter.
//! - [`runner`]: `tracer.py` in a sandbox, its protocol stream assembled into a `Trace`.
//! - [`python`]: Python source parsed with tree-sitter (definitions, lines, module names).

mod cgroup;
pub mod python;
pub mod runner;
pub mod sandbox;
mod seccomp;
