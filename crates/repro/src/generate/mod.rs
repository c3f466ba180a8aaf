//! Candidate reproduction scripts, from two generators:
//!
//! - [`llm`]: an LLM prompted with the restructured report, the plan, the context and,
//!   when refining, the previous attempt with its feedback, streamed token by token; its
//!   draft then goes through the edit actions as tools;
//! - [`rules`]: no model at all, the report's code (or the context) with the edit
//!   actions of `crate::edits` applied.
//!
//! Every candidate lists its edits, which the agent streams with it. How feedback turns
//! into the next candidate is [`crate::refine`].

use replayground_shared::repro::{PlanStep, RankedContext, RestructuredReport};

use crate::report::ParsedReport;

use crate::project::Project;

pub mod llm;
pub mod names;
pub mod rules;

pub use llm::{Ask, Draw, Prior, extract_code, generation_messages, llm_candidate};
pub use names::{resolve_undefined, undefined_names};
pub use rules::rule_candidate;

/// A candidate script and the edits or reasons behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub code: String,
    pub edits: Vec<String>,
}

impl Candidate {
    /// Whether this is the rules' skeleton for a report with neither code nor project
    /// context: a start for an LLM, never a script that could show the bug.
    pub fn is_skeleton(&self) -> bool {
        self.edits.iter().any(|e| e == rules::SKELETON_EDIT)
    }
}

/// What a generator knows about the bug.
#[derive(Debug, Clone, Copy)]
pub struct GenInput<'a> {
    pub report: &'a ParsedReport,
    pub restructured: &'a RestructuredReport,
    pub plan: &'a [PlanStep],
    pub context: Option<&'a RankedContext>,
    /// The project's own modules (`train`, `pkg.data`, `pkg`): their imports are inlined
    /// by the context, never installed packages.
    pub project_modules: &'a [String],
    /// The project itself, whose modules a candidate inlines instead of importing.
    pub project: Option<&'a Project>,
}

impl GenInput<'_> {
    /// What the report says about the program and its data: its problem and what it observed.
    pub(crate) fn report_text(&self) -> String {
        format!("{}\n{}", self.restructured.problem, self.restructured.observed)
    }
}

#[cfg(test)]
impl<'a> GenInput<'a> {
    /// The input for a report alone: no plan, no context, no project.
    pub(crate) fn of_report(report: &'a ParsedReport, restructured: &'a RestructuredReport) -> Self {
        Self {
            report,
            restructured,
            plan: &[],
            context: None,
            project_modules: &[],
            project: None,
        }
    }
}
