//! The four kinds of feedback a candidate reproduction gets (RepGen §3.3), one module
//! each, with the scoring kept pure and apart from the code that runs things:
//!
//! - `structural`: tree-sitter parses it; ERROR / MISSING nodes fail with line and column;
//! - `static_check`: `ruff check --select F,E9` (undefined names, missing imports,
//!   syntax), which only parses the code and never runs it;
//! - `relevance`: embedding cosine between code and report (plus an LLM's yes/no), else
//!   word overlap;
//! - `runtime`: the script runs for real in the sandbox (or, where it cannot, is
//!   approximated and marked so);
//! - `observe`: a run's output read like a report (pure);
//! - `written`: the text a script's `print` calls write from its source, which a run's
//!   symptom and values never count (pure);
//! - `score`: verdicts and scores (pure): how well a run shows the reported symptom, and
//!   the combined score that decides acceptance.

mod observe;
mod relevance;
mod runtime;
mod score;
mod static_check;
mod structural;
mod written;

pub use observe::{RunObservation, metrics, observe};
pub use relevance::relevance;
pub use runtime::{
    Approximators, NEURAL_ROLLOUT_STEPS, check_interpreter, limits_for_frameworks, run_script, runtime, script_job,
};
pub(crate) use score::shows_message;
pub use score::{ACCEPT_SCORE, APPROXIMATED_CAP, align_with_report, combined_score, score_run, word_overlap};
pub use static_check::{RuffDiagnostic, RuffLocation, locate_ruff, ruff_diagnostics, static_check};
pub use structural::structural;
