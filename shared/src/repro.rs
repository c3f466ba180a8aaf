//! The reproduction agent's vocabulary (RepGen, arXiv 2512.14990): the bug report a
//! user files, what each stage of the agent finds, and the [`AgentEvent`]s that stream
//! to the browser, the command line and a stored reproduction link.
//!
//! The server's `repro` module produces these; the browser's live view and the
//! stored transcript (`ShareKind::Repro`) consume them. Nothing here does I/O.

use serde::{Deserialize, Serialize};

/// Largest text field of a bug report, in bytes.
pub const MAX_REPORT_FIELD_BYTES: usize = 64 * 1024;
/// Largest uploaded project archive, in bytes.
pub const MAX_PROJECT_ARCHIVE_BYTES: usize = 20 * 1024 * 1024;

/// A bug report as the user files it. Every field may be empty except that the report
/// must say something: `check` explains what is missing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BugReport {
    pub title: String,
    pub description: String,
    /// What happens: a stack trace, an error message, metrics such as a loss curve.
    pub observed: String,
    pub expected: String,
    /// Code from the report, one snippet per entry.
    pub snippets: Vec<String>,
    pub environment: Environment,
    /// Text pasted from an issue tracker, restructured by the agent.
    pub free_text: String,
}

/// Where the bug was seen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Environment {
    pub python: String,
    /// Framework and library versions, e.g. `torch 2.3.1`.
    pub frameworks: Vec<String>,
    pub hardware: String,
}

impl BugReport {
    /// Checks the report before any work is done; the message names the field to fix.
    pub fn check(&self) -> Result<(), String> {
        let fields = [
            ("title", &self.title),
            ("description", &self.description),
            ("observed behaviour", &self.observed),
            ("expected behaviour", &self.expected),
            ("pasted report", &self.free_text),
        ];
        for (name, text) in fields {
            if text.len() > MAX_REPORT_FIELD_BYTES {
                return Err(format!(
                    "The {name} is {}. Shorten it.",
                    crate::text::size_and_limit(text.len(), MAX_REPORT_FIELD_BYTES)
                ));
            }
        }
        if let Some(big) = self.snippets.iter().find(|s| s.len() > MAX_REPORT_FIELD_BYTES) {
            return Err(format!(
                "A code snippet is {}. Shorten it.",
                crate::text::size_and_limit(big.len(), MAX_REPORT_FIELD_BYTES)
            ));
        }
        let said_something = fields.iter().any(|(_, text)| !text.trim().is_empty())
            || self.snippets.iter().any(|s| !s.trim().is_empty());
        if !said_something {
            return Err("The report is empty: describe the bug, paste a stack trace or a code snippet.".to_owned());
        }
        Ok(())
    }
}

/// The symptom classes of the deep-learning fault taxonomy the agent scores against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymptomClass {
    /// An uncaught exception; [`Symptom::error_type`] names it.
    Crash,
    /// Silent: numbers are wrong (NaN or exploding loss, wrong sign, wrong reduction).
    WrongCalculation,
    /// Silent: a hyper-parameter or argument is set wrongly (learning rate, axis, flags).
    WrongParameterSetting,
    /// Silent: a printed or logged message is wrong.
    WrongDisplayedMessage,
    /// Silent: a saved and reloaded model or tensor differs.
    WrongSaveReload,
    /// Silent: a tensor or array has the wrong shape.
    WrongShape,
    /// Silent: the model learns worse than it should (accuracy drop, data leakage).
    PerformanceDegradation,
    /// Silent: the model or pipeline is assembled wrongly.
    WrongStructure,
    /// Slow or memory-hungry.
    LowEfficiency,
    /// A warning is raised that should not be.
    Warning,
    /// Not classified.
    Unknown,
}

impl SymptomClass {
    pub const ALL: [Self; 11] = [
        Self::Crash,
        Self::WrongCalculation,
        Self::WrongParameterSetting,
        Self::WrongDisplayedMessage,
        Self::WrongSaveReload,
        Self::WrongShape,
        Self::PerformanceDegradation,
        Self::WrongStructure,
        Self::LowEfficiency,
        Self::Warning,
        Self::Unknown,
    ];

    /// The `snake_case` name used on the wire and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Crash => "crash",
            Self::WrongCalculation => "wrong_calculation",
            Self::WrongParameterSetting => "wrong_parameter_setting",
            Self::WrongDisplayedMessage => "wrong_displayed_message",
            Self::WrongSaveReload => "wrong_save_reload",
            Self::WrongShape => "wrong_shape",
            Self::PerformanceDegradation => "performance_degradation",
            Self::WrongStructure => "wrong_structure",
            Self::LowEfficiency => "low_efficiency",
            Self::Warning => "warning",
            Self::Unknown => "unknown",
        }
    }

    /// Silent bugs are the ones that do not crash.
    pub fn is_silent(self) -> bool {
        !matches!(self, Self::Crash | Self::Warning | Self::Unknown)
    }
}

/// A classified symptom: the class, the exception type for crashes, and the cues that
/// led to the class (e.g. `"loss is nan"`, `"ValueError: shapes (3,) and (4,)"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symptom {
    pub class: SymptomClass,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cues: Vec<String>,
}

/// The report restructured by the agent (RepGen §3.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestructuredReport {
    pub problem: String,
    pub observed: String,
    pub expected: String,
    pub steps: Vec<String>,
    pub symptom: Symptom,
    /// The framework the report is about (`numpy`, `torch`, `tensorflow`, `keras`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
    /// Whether an LLM refined the rule-based restructuring.
    #[serde(default)]
    pub refined_by_llm: bool,
}

/// One step of the agent's reproduction plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    pub kind: PlanStepKind,
    pub description: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStepKind {
    Environment,
    Data,
    Model,
    Training,
    Inference,
    Check,
}

/// What a retrieved piece of the project is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChunkKind {
    Module,
    Class,
    Function,
}

/// A piece of the user's project ranked as context for the reproduction (RepGen §3.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankedContext {
    /// Path inside the project.
    pub path: String,
    /// Qualified name, e.g. `Trainer.fit`; the module path for a module chunk.
    pub name: String,
    pub kind: ChunkKind,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// The combined score `(1 - α)·bm25 + α·dense` (both normalised), or the reranker's.
    pub score: f32,
    pub bm25: f32,
    pub dense: f32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerank: Option<f32>,
    /// The chunk contains a training loop (from the syntax tree).
    #[serde(default)]
    pub training_loop: bool,
    /// The chunk's code with the helpers and imports it depends on.
    pub code: String,
}

/// The agent's stages; each can be switched off for ablations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Context,
    Restructure,
    Plan,
    Structural,
    Static,
    Relevance,
    Runtime,
    Refine,
}

impl Stage {
    pub const ALL: [Self; 8] = [
        Self::Context,
        Self::Restructure,
        Self::Plan,
        Self::Structural,
        Self::Static,
        Self::Relevance,
        Self::Runtime,
        Self::Refine,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Context => "context",
            Self::Restructure => "restructure",
            Self::Plan => "plan",
            Self::Structural => "structural",
            Self::Static => "static",
            Self::Relevance => "relevance",
            Self::Runtime => "runtime",
            Self::Refine => "refine",
        }
    }
}

impl std::str::FromStr for Stage {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|stage| stage.as_str() == s).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|stage| stage.as_str()).collect();
            format!("unknown stage `{s}`; expected one of {}", names.join(", "))
        })
    }
}

/// The four kinds of feedback a candidate reproduction gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    Structural,
    Static,
    Relevance,
    Runtime,
}

/// The verdict of one check on one candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckVerdict {
    pub check: CheckKind,
    pub passed: bool,
    /// 0..=1 where the check scores (relevance, runtime).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
    /// What the check saw, in a sentence or a few lines (the feedback for refinement).
    pub detail: String,
    /// The program could not run here and its behaviour was approximated.
    #[serde(default)]
    pub approximated: bool,
    /// The package the program needs that this machine lacks (a runtime check that could
    /// not run), so the page can say why in a few words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// How a reproduction run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReproOutcome {
    /// A candidate reached the acceptance score.
    pub reproduced: bool,
    /// The best candidate's score.
    pub score: f32,
    pub attempts: u32,
    /// The accepted script, or the best candidate when none was accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// The symptom the best candidate showed when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Symptom>,
    /// The best candidate's behaviour was approximated, not observed.
    #[serde(default)]
    pub approximated: bool,
    /// What the best candidate's real run showed: its exception with the whole message, or
    /// the end of what it printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    pub elapsed_ms: u64,
}

/// One step of the agent, as it happens. Internally tagged by `event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The run begins: the stages that are on and the generator that will write code.
    Started {
        stages: Vec<Stage>,
        generator: String,
        llm: Option<String>,
    },
    /// A stage begins or reports progress (e.g. `embedding 40/120 chunks`).
    Progress {
        stage: Stage,
        message: String,
    },
    /// The ranked contexts from the project, best first.
    Context {
        contexts: Vec<RankedContext>,
        training_loops: Vec<String>,
    },
    Report {
        report: RestructuredReport,
    },
    Plan {
        steps: Vec<PlanStep>,
    },
    /// A new candidate is being written from context number `context` (0 = no project).
    AttemptStarted {
        attempt: u32,
        context: u32,
    },
    /// Code streaming token by token for the attempt.
    Token {
        attempt: u32,
        text: String,
    },
    /// The complete candidate and the edits or reasons behind it.
    Candidate {
        attempt: u32,
        code: String,
        edits: Vec<String>,
    },
    Check {
        attempt: u32,
        verdict: CheckVerdict,
    },
    /// The attempt's combined score; `feedback` drives the next refinement.
    AttemptFinished {
        attempt: u32,
        score: f32,
        accepted: bool,
        feedback: String,
    },
    /// The run ended.
    Finished {
        outcome: ReproOutcome,
    },
    /// The run could not go on; the message says why and what to do.
    Failed {
        message: String,
    },
}

/// A stored reproduction (`ShareKind::Repro` payload): the report, every event, and
/// the final script, reopened read-only with a rerun button.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReproTranscript {
    pub report: BugReport,
    pub events: Vec<AgentEvent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
}

/// Ask the agent to reproduce a report (WebSocket `repro` message, `POST /api/repro`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReproRequest {
    pub report: BugReport,
    /// An uploaded project (`POST /api/projects` answers its id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Stages to switch off.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ablate: Vec<Stage>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_report_is_refused_with_a_reason() {
        let error = BugReport::default().check().unwrap_err();
        assert!(error.contains("empty"), "{error}");
        let report = BugReport {
            snippets: vec!["import numpy".into()],
            ..BugReport::default()
        };
        assert!(report.check().is_ok());
    }

    #[test]
    fn oversized_field_is_named() {
        let report = BugReport {
            observed: "x".repeat(MAX_REPORT_FIELD_BYTES + 1),
            ..BugReport::default()
        };
        assert!(report.check().unwrap_err().contains("observed behaviour"));
    }

    #[test]
    fn stages_parse_from_their_names() {
        for stage in Stage::ALL {
            assert_eq!(stage.as_str().parse::<Stage>(), Ok(stage));
        }
        assert!("retrieval".parse::<Stage>().unwrap_err().contains("context"));
    }

    #[test]
    fn events_are_tagged_by_event() {
        let event = AgentEvent::Token {
            attempt: 2,
            text: "import".into(),
        };
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(json["event"], "token");
        assert_eq!(serde_json::from_value::<AgentEvent>(json).unwrap(), event);
    }
}
