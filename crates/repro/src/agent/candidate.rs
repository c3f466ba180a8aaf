//! The checks one candidate goes through (structural, static, relevance, runtime), in
//! the order that lets a small LLM's relevance question wait for the run.

use replayground_shared::repro::{AgentEvent, CheckKind, CheckVerdict, RestructuredReport, Stage};
use tokio::sync::mpsc::Sender;

use super::events::emit;
use super::{AgentConfig, AgentDeps};
use crate::checks::{self, RuffDiagnostic, RunObservation};
use crate::generate::names::ImportProbe;
use crate::refine::Feedback;
use replayground_exec::sandbox::BoxFuture;

/// Import lines tried in the sandbox, with the interpreter and limits candidates run
/// with: one run for all of them (the framework is imported once).
pub(super) struct SandboxImports<'a> {
    pub(super) deps: &'a AgentDeps,
    pub(super) config: &'a AgentConfig,
}

/// What the probe script prints before its verdicts: `1` per line that ran, `0` per line
/// that raised.
const PROBE_MARK: &str = "REPLAYGROUND_IMPORTS ";

impl ImportProbe for SandboxImports<'_> {
    fn imports<'a>(&'a self, lines: &'a [String]) -> BoxFuture<'a, Option<Vec<bool>>> {
        Box::pin(async move {
            // A JSON list of strings is a Python list of strings.
            let literal = serde_json::to_string(lines).ok()?;
            let script = format!(
                "ok = ''\nfor line in {literal}:\n    try:\n        exec(line, {{}})\n        ok += '1'\n    except BaseException:\n        ok += '0'\nprint({PROBE_MARK:?} + ok)\n"
            );
            let run = checks::run_script(
                self.deps.sandbox.as_ref(),
                &self.deps.python,
                &script,
                &checks::limits_for_frameworks(&lines.join("\n"), &self.config.run_limits),
            )
            .await
            .ok()?;
            let verdicts = run.stdout.lines().find_map(|l| l.strip_prefix(PROBE_MARK))?;
            (verdicts.len() == lines.len()).then(|| verdicts.chars().map(|c| c == '1').collect())
        })
    }
}

/// The checks of one candidate and what they found.
pub(super) struct Checked {
    pub(super) verdicts: Vec<CheckVerdict>,
    pub(super) diagnostics: Vec<RuffDiagnostic>,
    pub(super) run: Option<RunObservation>,
}

impl Checked {
    /// The verdicts, diagnostics and run as refinement reads them.
    pub(super) fn feedback(&self) -> Feedback<'_> {
        Feedback {
            verdicts: &self.verdicts,
            diagnostics: &self.diagnostics,
            run: self.run.as_ref(),
        }
    }

    /// The script's top-level line that raised, when its run crashed (`python -c`
    /// names the script `<string>`; the outermost frame is the top-level statement).
    pub(super) fn crash_line(&self) -> Option<u32> {
        let traceback = self.run.as_ref()?.traceback.as_ref()?;
        traceback.frames.iter().find(|f| f.file == "<string>").map(|f| f.line)
    }

    /// The script's innermost line in the traceback, when its run crashed: the line that
    /// raised, or called into the library that did.
    pub(super) fn error_line(&self) -> Option<u32> {
        let traceback = self.run.as_ref()?.traceback.as_ref()?;
        traceback
            .frames
            .iter()
            .rev()
            .find(|f| f.file == "<string>")
            .map(|f| f.line)
    }

    /// Streams a check's verdict as it is known and keeps it for scoring.
    pub(super) async fn record(&mut self, verdict: CheckVerdict, attempt: u32, events: &Sender<AgentEvent>) {
        emit(
            events,
            AgentEvent::Check {
                attempt,
                verdict: verdict.clone(),
            },
        )
        .await;
        self.verdicts.push(verdict);
    }

    pub(super) fn verdict(&self, kind: CheckKind) -> Option<&CheckVerdict> {
        self.verdicts.iter().find(|v| v.check == kind)
    }

    /// The combined score, and whether a run was observed.
    pub(super) fn score(&self) -> (f32, bool) {
        checks::combined_score(&self.verdicts)
    }
}

// The checks need the candidate, the report and the whole run's settings.
#[allow(clippy::too_many_arguments)]
pub(super) async fn check_candidate(
    code: &str,
    restructured: &RestructuredReport,
    text: &str,
    deps: &AgentDeps,
    config: &AgentConfig,
    ruff: Option<&std::path::Path>,
    project_modules: &[String],
    attempt: u32,
    events: &Sender<AgentEvent>,
) -> Checked {
    let mut checked = Checked {
        verdicts: Vec::new(),
        diagnostics: Vec::new(),
        run: None,
    };
    let llm = deps.llm.as_deref();
    let mut parses = true;
    if config.on(Stage::Structural) {
        let verdict = checks::structural(code);
        parses = verdict.passed;
        checked.record(verdict, attempt, events).await;
    }
    if config.on(Stage::Static) {
        let (verdict, diagnostics) = checks::static_check(code, ruff).await;
        checked.record(verdict, attempt, events).await;
        checked.diagnostics = diagnostics;
    }
    // A script that does not parse would only show a SyntaxError.
    let runs = config.on(Stage::Runtime) && parses;
    // The LLM's yes/no on relevance can change the verdict only of a run that shows the
    // report's symptom, and a small model on a CPU takes 10-20 s to read the script:
    // with an LLM, relevance waits for the run and asks it only then.
    let relevance_after_run = llm.is_some() && runs;
    if config.on(Stage::Relevance) && !relevance_after_run {
        let verdict = checks::relevance(code, text, deps.embedder.as_ref(), llm).await;
        checked.record(verdict, attempt, events).await;
    }
    if runs {
        let (verdict, run) = checks::runtime(
            deps.sandbox.as_ref(),
            &deps.python,
            &config.run_limits,
            code,
            restructured,
            checks::Approximators {
                llm,
                neural: deps.neural.as_ref(),
                on_start: Some(&|message| {
                    // Progress only: a full channel drops it rather than stall the check.
                    let _ = events.try_send(AgentEvent::Progress {
                        stage: Stage::Runtime,
                        message,
                    });
                }),
            },
            project_modules,
        )
        .await;
        let shown = verdict.passed && !verdict.approximated;
        checked.record(verdict, attempt, events).await;
        checked.run = run;
        if config.on(Stage::Relevance) && relevance_after_run {
            let verdict = checks::relevance(code, text, deps.embedder.as_ref(), llm.filter(|_| shown)).await;
            checked.record(verdict, attempt, events).await;
        }
    }
    checked
}
