//! A reproduction run as the page shows it: the agent's events folded into stages,
//! contexts, the restructured report, the plan, the attempts and the outcome. The same
//! fold serves a live run and a stored transcript.

use replayground_shared::repro::{
    AgentEvent, BugReport, CheckKind, CheckVerdict, PlanStep, RankedContext, ReproOutcome, ReproTranscript,
    RestructuredReport, Stage,
};

/// How far a stage has got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StageStatus {
    /// Switched off for this run.
    Off,
    Waiting,
    Running,
    Done,
    /// The latest attempt's check of this stage did not pass.
    Failed,
    /// Done, but on a guess: the script could not run here and an LLM or the neural
    /// debugger predicted what it would do.
    Approximated,
    /// The run ended without needing it (e.g. no refinement after an accepted attempt).
    Skipped,
}

impl StageStatus {
    /// The CSS class of a stage in this status.
    pub fn class(self) -> &'static str {
        match self {
            Self::Skipped => "skipped",
            other => other.label(),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Waiting => "waiting",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Approximated => "approximated",
            Self::Skipped => "not needed",
        }
    }
}

/// One candidate reproduction.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub number: u32,
    /// The ranked context it was written from (0: no project).
    pub context: u32,
    /// The code so far: streamed tokens until the complete candidate arrives.
    pub code: String,
    /// Whether `code` is the complete candidate.
    pub complete: bool,
    pub edits: Vec<String>,
    pub checks: Vec<CheckVerdict>,
    pub score: Option<f32>,
    pub accepted: bool,
    pub feedback: String,
}

impl Attempt {
    fn new(number: u32, context: u32) -> Self {
        Self {
            number,
            context,
            code: String::new(),
            complete: false,
            edits: Vec::new(),
            checks: Vec::new(),
            score: None,
            accepted: false,
            feedback: String::new(),
        }
    }

    /// The verdict of `kind`, if that check has run.
    pub fn check(&self, kind: CheckKind) -> Option<&CheckVerdict> {
        self.checks.iter().rev().find(|v| v.check == kind)
    }

    pub fn finished(&self) -> bool {
        self.score.is_some()
    }
}

/// Everything the live view shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunState {
    pub generator: Option<String>,
    pub llm: Option<String>,
    pub stages: Vec<(Stage, StageStatus)>,
    /// The latest progress message of each stage.
    pub messages: Vec<(Stage, String)>,
    pub contexts: Vec<RankedContext>,
    pub training_loops: Vec<String>,
    pub report: Option<RestructuredReport>,
    pub plan: Vec<PlanStep>,
    pub attempts: Vec<Attempt>,
    pub outcome: Option<ReproOutcome>,
    pub failure: Option<String>,
    /// Every event except tokens (each candidate's complete code replaces them), for the
    /// stored transcript.
    pub events: Vec<AgentEvent>,
}

fn check_stage(kind: CheckKind) -> Stage {
    match kind {
        CheckKind::Structural => Stage::Structural,
        CheckKind::Static => Stage::Static,
        CheckKind::Relevance => Stage::Relevance,
        CheckKind::Runtime => Stage::Runtime,
    }
}

impl RunState {
    /// A state replaying `events` (a stored transcript).
    pub fn replay<'a>(events: impl IntoIterator<Item = &'a AgentEvent>) -> Self {
        let mut state = Self::default();
        for event in events {
            state.apply(event.clone());
        }
        state
    }

    pub fn is_over(&self) -> bool {
        self.outcome.is_some() || self.failure.is_some()
    }

    pub fn status(&self, stage: Stage) -> StageStatus {
        self.stages
            .iter()
            .find(|(s, _)| *s == stage)
            .map_or(StageStatus::Waiting, |(_, status)| *status)
    }

    pub fn message(&self, stage: Stage) -> Option<&str> {
        self.messages.iter().find(|(s, _)| *s == stage).map(|(_, m)| m.as_str())
    }

    fn set(&mut self, stage: Stage, status: StageStatus) {
        match self.stages.iter_mut().find(|(s, _)| *s == stage) {
            Some((_, current)) if *current == StageStatus::Off => {}
            Some((_, current))
                if matches!(*current, StageStatus::Done | StageStatus::Approximated)
                    && status == StageStatus::Running => {}
            Some((_, current)) => *current = status,
            None => self.stages.push((stage, status)),
        }
    }

    fn attempt_mut(&mut self, number: u32) -> &mut Attempt {
        if let Some(i) = self.attempts.iter().position(|a| a.number == number) {
            return &mut self.attempts[i];
        }
        self.attempts.push(Attempt::new(number, 0));
        self.attempts.last_mut().expect("just pushed")
    }

    /// The attempt numbered `number`.
    pub fn attempt(&self, number: u32) -> Option<&Attempt> {
        self.attempts.iter().find(|a| a.number == number)
    }

    /// The attempt before `number`, for the diff.
    pub fn previous(&self, number: u32) -> Option<&Attempt> {
        self.attempts
            .iter()
            .filter(|a| a.number < number)
            .max_by_key(|a| a.number)
    }

    /// The final script: the outcome's, else the accepted or the best-scored attempt's.
    pub fn script(&self) -> Option<String> {
        if let Some(script) = self.outcome.as_ref().and_then(|o| o.script.clone()) {
            return Some(script);
        }
        if !self.is_over() {
            return None;
        }
        self.attempts
            .iter()
            .filter(|a| a.complete)
            .max_by(|a, b| {
                (a.accepted, a.score.unwrap_or(0.0))
                    .partial_cmp(&(b.accepted, b.score.unwrap_or(0.0)))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .map(|a| a.code.clone())
    }

    /// What the scripts needed that this machine lacks, from the latest runtime check
    /// that could not run.
    pub fn missing(&self) -> Option<String> {
        self.attempts
            .iter()
            .rev()
            .flat_map(|a| a.checks.iter().rev())
            .find_map(|v| v.missing.clone())
    }

    /// The stored form of this run.
    pub fn transcript(&self, report: BugReport) -> ReproTranscript {
        ReproTranscript {
            report,
            events: self.events.clone(),
            script: self.script(),
        }
    }

    /// Folds one event in.
    pub fn apply(&mut self, event: AgentEvent) {
        if !matches!(event, AgentEvent::Token { .. }) {
            self.events.push(event.clone());
        }
        match event {
            AgentEvent::Started { stages, generator, llm } => {
                self.generator = Some(generator);
                self.llm = llm;
                self.stages = Stage::ALL
                    .into_iter()
                    .map(|s| {
                        let status = if stages.contains(&s) {
                            StageStatus::Waiting
                        } else {
                            StageStatus::Off
                        };
                        (s, status)
                    })
                    .collect();
            }
            AgentEvent::Progress { stage, message } => {
                self.set(stage, StageStatus::Running);
                match self.messages.iter_mut().find(|(s, _)| *s == stage) {
                    Some((_, m)) => *m = message,
                    None => self.messages.push((stage, message)),
                }
            }
            AgentEvent::Context {
                contexts,
                training_loops,
            } => {
                self.contexts = contexts;
                self.training_loops = training_loops;
                self.set(Stage::Context, StageStatus::Done);
            }
            AgentEvent::Report { report } => {
                self.report = Some(report);
                self.set(Stage::Restructure, StageStatus::Done);
            }
            AgentEvent::Plan { steps } => {
                self.plan = steps;
                self.set(Stage::Plan, StageStatus::Done);
            }
            AgentEvent::AttemptStarted { attempt, context } => {
                if attempt > 1 {
                    self.set(Stage::Refine, StageStatus::Running);
                }
                self.attempt_mut(attempt).context = context;
            }
            AgentEvent::Token { attempt, text } => {
                let a = self.attempt_mut(attempt);
                if !a.complete {
                    a.code.push_str(&text);
                }
            }
            AgentEvent::Candidate { attempt, code, edits } => {
                let a = self.attempt_mut(attempt);
                a.code = code;
                a.edits = edits;
                a.complete = true;
            }
            AgentEvent::Check { attempt, verdict } => {
                let status = if verdict.approximated {
                    StageStatus::Approximated
                } else if verdict.passed {
                    StageStatus::Done
                } else {
                    StageStatus::Failed
                };
                self.set(check_stage(verdict.check), status);
                self.attempt_mut(attempt).checks.push(verdict);
            }
            AgentEvent::AttemptFinished {
                attempt,
                score,
                accepted,
                feedback,
            } => {
                let a = self.attempt_mut(attempt);
                a.score = Some(score);
                a.accepted = accepted;
                a.feedback = feedback;
                if attempt > 1 {
                    self.set(Stage::Refine, StageStatus::Done);
                }
            }
            AgentEvent::Finished { outcome } => {
                self.outcome = Some(outcome);
                self.settle();
            }
            AgentEvent::Failed { message } => {
                self.failure = Some(message);
                self.settle();
            }
        }
    }

    /// At the end, nothing is still running or waiting.
    fn settle(&mut self) {
        for (_, status) in &mut self.stages {
            match status {
                StageStatus::Running => *status = StageStatus::Done,
                StageStatus::Waiting => *status = StageStatus::Skipped,
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use replayground_shared::repro::{Symptom, SymptomClass};

    fn verdict(check: CheckKind, passed: bool) -> CheckVerdict {
        CheckVerdict {
            check,
            passed,
            score: Some(if passed { 0.9 } else { 0.2 }),
            detail: String::new(),
            approximated: false,
            missing: None,
        }
    }

    fn run() -> Vec<AgentEvent> {
        vec![
            AgentEvent::Started {
                stages: vec![
                    Stage::Restructure,
                    Stage::Plan,
                    Stage::Structural,
                    Stage::Runtime,
                    Stage::Refine,
                ],
                generator: "edit actions".into(),
                llm: None,
            },
            AgentEvent::Progress {
                stage: Stage::Restructure,
                message: "reading the report".into(),
            },
            AgentEvent::Report {
                report: RestructuredReport {
                    problem: "NaN".into(),
                    observed: "nan".into(),
                    expected: "a number".into(),
                    steps: vec![],
                    symptom: Symptom {
                        class: SymptomClass::WrongCalculation,
                        error_type: None,
                        cues: vec!["nan".into()],
                    },
                    framework: Some("numpy".into()),
                    refined_by_llm: false,
                },
            },
            AgentEvent::AttemptStarted { attempt: 1, context: 0 },
            AgentEvent::Token {
                attempt: 1,
                text: "import ".into(),
            },
            AgentEvent::Token {
                attempt: 1,
                text: "numpy".into(),
            },
            AgentEvent::Candidate {
                attempt: 1,
                code: "import numpy\n".into(),
                edits: vec!["added imports".into()],
            },
            AgentEvent::Check {
                attempt: 1,
                verdict: verdict(CheckKind::Runtime, false),
            },
            AgentEvent::AttemptFinished {
                attempt: 1,
                score: 0.3,
                accepted: false,
                feedback: "no NaN".into(),
            },
            AgentEvent::AttemptStarted { attempt: 2, context: 0 },
            AgentEvent::Token {
                attempt: 2,
                text: "import numpy as np".into(),
            },
        ]
    }

    #[test]
    fn tokens_stream_into_the_attempt_then_the_candidate_replaces_them() {
        let mut state = RunState::default();
        for event in run().into_iter().take(6) {
            state.apply(event);
        }
        assert_eq!(state.attempt(1).unwrap().code, "import numpy");
        assert!(!state.attempt(1).unwrap().complete);
        assert_eq!(state.status(Stage::Restructure), StageStatus::Done);
        assert_eq!(state.status(Stage::Context), StageStatus::Off);
        assert_eq!(state.status(Stage::Plan), StageStatus::Waiting);
        let state = RunState::replay(&run());
        assert_eq!(state.attempt(1).unwrap().code, "import numpy\n");
        assert_eq!(state.attempt(1).unwrap().score, Some(0.3));
        assert_eq!(
            state.status(Stage::Runtime),
            StageStatus::Failed,
            "attempt 1's run did not pass"
        );
        assert_eq!(state.status(Stage::Refine), StageStatus::Running);
        assert_eq!(state.previous(2).unwrap().number, 1);
        assert!(state.script().is_none(), "no script while running");
        assert!(state.events.iter().all(|e| !matches!(e, AgentEvent::Token { .. })));
    }

    #[test]
    fn a_runtime_check_on_a_guess_shows_as_approximated() {
        let mut state = RunState::replay(&run());
        state.apply(AgentEvent::Check {
            attempt: 2,
            verdict: CheckVerdict {
                approximated: true,
                missing: Some("torch".into()),
                ..verdict(CheckKind::Runtime, false)
            },
        });
        assert_eq!(state.status(Stage::Runtime), StageStatus::Approximated);
        assert_eq!(state.missing().as_deref(), Some("torch"));
        assert_eq!(StageStatus::Approximated.label(), "approximated");
    }

    #[test]
    fn the_outcome_gives_the_script_and_settles_the_stages() {
        let mut events = run();
        events.push(AgentEvent::Finished {
            outcome: ReproOutcome {
                reproduced: true,
                score: 0.8,
                attempts: 2,
                script: Some("print('nan')\n".into()),
                observed: None,
                approximated: false,
                output: None,
                elapsed_ms: 10,
            },
        });
        let state = RunState::replay(&events);
        assert!(state.is_over());
        assert_eq!(state.script().as_deref(), Some("print('nan')\n"));
        assert!(state.stages.iter().all(|(_, s)| *s != StageStatus::Running));
        assert_eq!(state.status(Stage::Plan), StageStatus::Skipped, "no plan event came");
        assert_eq!(state.status(Stage::Context), StageStatus::Off);
        let transcript = state.transcript(BugReport::default());
        let reopened = RunState::replay(&transcript.events);
        assert_eq!((reopened.outcome, reopened.attempts.len()), (state.outcome.clone(), 2));
        assert_eq!(transcript.script, state.script());
    }

    #[test]
    fn a_failed_run_offers_its_best_complete_candidate() {
        let mut events = run();
        events.push(AgentEvent::Failed {
            message: "the sandbox is unavailable".into(),
        });
        let state = RunState::replay(&events);
        assert_eq!(state.failure.as_deref(), Some("the sandbox is unavailable"));
        assert_eq!(state.script().as_deref(), Some("import numpy\n"));
    }
}
