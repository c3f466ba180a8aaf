//! The reproduction agent's loop (RepGen, arXiv 2512.14990): context → restructured
//! report → plan → generate → structural / static / relevance / runtime checks →
//! refine, up to `attempts_per_context` attempts per context, then the next context.
//! Every step is an [`AgentEvent`] on a channel, so the browser, the command line and a
//! stored transcript see the same run. Cancelling drops the work in flight, which kills
//! a running sandbox job at once.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use replayground_shared::repro::{
    AgentEvent, BugReport, CheckKind, PlanStep, RankedContext, ReproOutcome, Stage, Symptom,
};
use tokio::sync::mpsc::Sender;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// A job's cancellation and the tracker of the threads it starts for CPU-bound work.
type Work<'a> = (&'a CancellationToken, &'a TaskTracker);

use super::checks;
use super::context::{
    self,
    embed::{CrossEncoder, Embedder},
};
use super::generate::{self, Candidate, GenInput};
use super::llm::Llm;
use super::plan;
use super::project::Project;
use super::refine;
use super::report::ParsedReport;
use super::restructure;
use replayground_exec::sandbox::{RunLimits, Sandbox};
use replayground_neural::service::NeuralService;

mod candidate;
mod events;

use candidate::{Checked, check_candidate};
use events::{attempt_started, emit, emit_lines, finished, say};

/// The models the agent uses, as `serve`, `repro` and `bench-repro` take them.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AgentModels {
    /// The reproduction agent's LLM: `openai:URL#MODEL` (Ollama, vLLM, llama.cpp server),
    /// `candle:DIR` (a local Qwen2-family model), `gguf:FILE`, `scripted:FILE` or `rules`
    /// (rule-based edits only). Default: Qwen2.5-Coder-0.5B when `cargo xtask setup` installed it.
    #[arg(long, env = "REPLAYGROUND_LLM", value_name = "SPEC")]
    pub llm: Option<String>,
    /// A cross-encoder (an HF `BertForSequenceClassification` folder, e.g. ms-marco-MiniLM-L-6-v2)
    /// that reranks the agent's contexts; none: the embedding model reranks.
    #[arg(long, env = "REPLAYGROUND_RERANKER", value_name = "DIR")]
    pub reranker: Option<PathBuf>,
    /// The sentence-embedding model (all-MiniLM-L6-v2 folder); default: the one
    /// `cargo xtask setup` installs, when present; without one the agent ranks by BM25 only.
    #[arg(
        long,
        env = "REPLAYGROUND_EMBEDDINGS",
        value_name = "DIR",
        conflicts_with = "no_embeddings"
    )]
    pub embeddings: Option<PathBuf>,
    /// Leave the embedding model out (BM25 ranking, word-overlap relevance): for small
    /// machines and debug builds, where embedding is slow.
    #[arg(long, env = "REPLAYGROUND_NO_EMBEDDINGS")]
    pub no_embeddings: bool,
}

/// What the agent runs with. Cheap to clone: the models are shared.
#[derive(Clone)]
pub struct AgentDeps {
    pub sandbox: Arc<dyn Sandbox>,
    /// The interpreter as seen inside the sandbox (Debian's `/usr/bin/python3`).
    pub python: PathBuf,
    pub embedder: Option<Arc<Embedder>>,
    pub reranker: Option<Arc<CrossEncoder>>,
    pub llm: Option<Arc<dyn Llm>>,
    /// The neural debugger, which approximates scripts that cannot run here when no LLM
    /// is configured.
    pub neural: Option<NeuralService>,
}

impl AgentDeps {
    /// The agent's models as `models` names them, running scripts in `sandbox` with
    /// `python`; `neural` approximates scripts that cannot run here. A model named
    /// explicitly must load; the default embedding model is used when it loads. Blocking:
    /// the models read their weights.
    pub fn load(
        models: &AgentModels,
        sandbox: Arc<dyn Sandbox>,
        python: PathBuf,
        neural: Option<NeuralService>,
    ) -> anyhow::Result<Self> {
        use anyhow::Context as _;
        let llm = super::llm::resolve(models.llm.as_deref())
            .context("cannot use the LLM of --llm (REPLAYGROUND_LLM); `--llm rules` runs without one")?;
        let embedder = Embedder::resolve(models.embeddings.as_deref(), models.no_embeddings)
            .context("cannot load the embedding model of --embeddings")?;
        let reranker = match &models.reranker {
            Some(dir) => Some(Arc::new(CrossEncoder::load(dir).with_context(|| {
                format!("cannot load the reranker in {}; check --reranker", dir.display())
            })?)),
            None => None,
        };
        Ok(Self {
            sandbox,
            python,
            embedder,
            reranker,
            llm,
            neural,
        })
    }

    /// Rule-based generation and BM25 ranking: no model at all.
    pub fn without_models(sandbox: Arc<dyn Sandbox>, python: PathBuf, neural: Option<NeuralService>) -> Self {
        Self {
            sandbox,
            python,
            embedder: None,
            reranker: None,
            llm: None,
            neural,
        }
    }
}

/// How the agent runs.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// Stages switched off (ablations).
    pub ablate: BTreeSet<Stage>,
    /// Candidates per context before the next context (RepGen: 5).
    pub attempts_per_context: u32,
    /// Contexts tried, best first (RepGen: 5).
    pub max_contexts: usize,
    /// Combined score at which a candidate is accepted (RepGen: 0.7).
    pub accept_score: f32,
    /// Limits of one candidate's run.
    pub run_limits: RunLimits,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            ablate: BTreeSet::new(),
            attempts_per_context: 5,
            max_contexts: 5,
            accept_score: checks::ACCEPT_SCORE,
            run_limits: RunLimits {
                wall_time: Duration::from_secs(20),
                cpu_time: Duration::from_secs(15),
                memory_bytes: 1 << 30,
                ..RunLimits::default()
            },
        }
    }
}

impl AgentConfig {
    fn on(&self, stage: Stage) -> bool {
        !self.ablate.contains(&stage)
    }
}

/// The best candidate so far, kept outside the work so a cancelled run still reports it.
#[derive(Debug, Default)]
struct Progress {
    attempts: u32,
    best: Option<Best>,
}

#[derive(Debug)]
struct Best {
    score: f32,
    code: String,
    observed: Option<Symptom>,
    output: Option<String>,
    approximated: bool,
}

impl Progress {
    fn outcome(&self, reproduced: bool, started: Instant) -> ReproOutcome {
        ReproOutcome {
            reproduced,
            score: self.best.as_ref().map_or(0.0, |b| b.score),
            attempts: self.attempts,
            script: self.best.as_ref().map(|b| b.code.clone()),
            observed: self.best.as_ref().and_then(|b| b.observed.clone()),
            approximated: self.best.as_ref().is_some_and(|b| b.approximated),
            output: self.best.as_ref().and_then(|b| b.output.clone()),
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        }
    }
}

/// Runs the agent on `report` (and `project` when given), sending every step to
/// `events`. Ends with `Finished`, or `Failed` with a sentence saying why.
pub async fn run_agent(
    report: BugReport,
    project: Option<Arc<Project>>,
    deps: &AgentDeps,
    config: &AgentConfig,
    events: Sender<AgentEvent>,
    cancel: CancellationToken,
) -> ReproOutcome {
    let started = Instant::now();
    let mut progress = Progress::default();
    let threads = TaskTracker::new();
    // The report is read once; every stage takes it as read.
    let report = ParsedReport::from(report);
    let finished = {
        let work = run(
            &report,
            project,
            deps,
            config,
            &events,
            &mut progress,
            started,
            (&cancel, &threads),
        );
        tokio::pin!(work);
        tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            outcome = &mut work => Some(outcome),
        }
    };
    // Dropping the stages' futures does not stop their threads: they see `cancel` within
    // one batch, and the job (and its slot) lasts until they have.
    threads.close();
    threads.wait().await;
    if let Some(outcome) = finished {
        return outcome;
    }
    let outcome = progress.outcome(false, started);
    let _ = events
        .send(AgentEvent::Failed {
            message: format!("The reproduction was cancelled after {} attempt(s).", progress.attempts),
        })
        .await;
    outcome
}

/// Generates with the LLM, forwarding its tokens as `Token` events while it writes.
async fn llm_generate(
    llm: &dyn Llm,
    input: &GenInput<'_>,
    previous: Option<generate::Prior<'_>>,
    attempt: u32,
    repeats: u32,
    events: &Sender<AgentEvent>,
) -> Result<Candidate, super::llm::LlmError> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let generation = async move {
        let mut on_token = |text: &str| {
            let _ = tx.send(text.to_owned());
        };
        let draw = generate::Draw {
            seed: u64::from(attempt),
            repeats,
        };
        generate::llm_candidate(llm, input, previous, draw, &mut on_token).await
    };
    let forward = async {
        while let Some(text) = rx.recv().await {
            emit(events, AgentEvent::Token { attempt, text }).await;
        }
    };
    let (result, ()) = tokio::join!(generation, forward);
    result
}

/// `candidate` with the names ruff finds undefined in it resolved by a rename, the rules or
/// a short question to the LLM ([`generate::resolve_undefined`]).
async fn with_names_defined(
    llm: &dyn Llm,
    input: &GenInput<'_>,
    mut candidate: Candidate,
    ruff: &std::path::Path,
    probe: &dyn generate::names::ImportProbe,
    attempt: u32,
    events: &Sender<AgentEvent>,
) -> Candidate {
    let Ok(diagnostics) = checks::ruff_diagnostics(ruff, &candidate.code).await else {
        return candidate;
    };
    let names = generate::undefined_names(&diagnostics);
    if names.is_empty() {
        return candidate;
    }
    say(
        events,
        Stage::Refine,
        format!("defining the names the script uses undefined: {}", names.join(", ")),
    )
    .await;
    let (edits, error) =
        generate::resolve_undefined(llm, input, &mut candidate.code, &names, u64::from(attempt), Some(probe)).await;
    if let Some(e) = error {
        say(
            events,
            Stage::Refine,
            format!("{e}; the names the rules could not define stay undefined"),
        )
        .await;
    }
    candidate.edits.extend(edits);
    candidate
}

#[allow(clippy::too_many_arguments)] // the stages' shared inputs, each used by several stages
async fn run(
    report: &ParsedReport,
    project: Option<Arc<Project>>,
    deps: &AgentDeps,
    config: &AgentConfig,
    events: &Sender<AgentEvent>,
    progress: &mut Progress,
    started: Instant,
    work: Work<'_>,
) -> ReproOutcome {
    let stages: Vec<Stage> = Stage::ALL.into_iter().filter(|s| config.on(*s)).collect();
    let llm = deps.llm.clone();
    emit(
        events,
        AgentEvent::Started {
            stages,
            generator: if llm.is_some() {
                "llm".to_owned()
            } else {
                "rules".to_owned()
            },
            llm: llm.as_ref().map(|l| l.name()),
        },
    )
    .await;
    if let Err(message) = report.check() {
        emit(events, AgentEvent::Failed { message }).await;
        return progress.outcome(false, started);
    }

    let project_modules: Vec<String> = project.as_ref().map_or_else(Vec::new, |p| {
        p.python_files()
            .map(|f| replayground_exec::python::module_name(&f.path))
            .collect()
    });
    let project_ref = project.clone();
    let contexts = match project {
        Some(project) if config.on(Stage::Context) => {
            context::find_contexts(
                report,
                project,
                (deps.embedder.clone(), deps.reranker.clone()),
                config.max_contexts.max(1),
                events,
                work,
            )
            .await
        }
        Some(_) => {
            say(events, Stage::Context, "context retrieval is switched off").await;
            Vec::new()
        }
        None => Vec::new(),
    };

    let restructured = if config.on(Stage::Restructure) {
        say(events, Stage::Restructure, "restructuring the report").await;
        let (restructured, note) = restructure::restructure(report, llm.as_deref(), &mut |_| {}).await;
        if let Some(note) = note {
            say(events, Stage::Restructure, note).await;
        }
        restructured
    } else {
        restructure::unstructured(report)
    };
    emit(
        events,
        AgentEvent::Report {
            report: restructured.clone(),
        },
    )
    .await;

    let steps: Vec<PlanStep> = if config.on(Stage::Plan) {
        let (steps, note) = plan::plan(&restructured, contexts.first(), llm.as_deref(), &mut |_| {}).await;
        if let Some(note) = note {
            say(events, Stage::Plan, note).await;
        }
        emit(events, AgentEvent::Plan { steps: steps.clone() }).await;
        steps
    } else {
        Vec::new()
    };

    let text = format!("{}\n{}\n{}", restructured.problem, restructured.observed, report.text());
    let ruff = if config.on(Stage::Static) {
        checks::locate_ruff()
    } else {
        None
    };
    if config.on(Stage::Static) && ruff.is_none() {
        say(
            events,
            Stage::Static,
            "ruff is not installed (run `cargo xtask setup`): static checks are skipped",
        )
        .await;
    }
    let slots: Vec<Option<&RankedContext>> = if contexts.is_empty() {
        vec![None]
    } else {
        contexts.iter().take(config.max_contexts.max(1)).map(Some).collect()
    };
    // Every script tried, with the attempt that first ran it.
    let mut seen: HashMap<String, u32> = HashMap::new();
    let mut llm_working = llm.is_some();
    'contexts: for (index, context) in slots.iter().enumerate() {
        let context_number = if context.is_some() { index as u32 + 1 } else { 0 };
        let input = GenInput {
            project_modules: &project_modules,
            project: project_ref.as_deref(),
            report,
            restructured: &restructured,
            plan: &steps,
            context: *context,
        };
        let mut previous: Option<(Candidate, Checked)> = None;
        let mut previous_by_tools = false;
        // LLM drafts in a row that repeated an earlier script.
        let mut repeats = 0;
        // With an LLM, the rules' own script (the report's code and the project's, assembled
        // by the tools: the draft the LLM continues) runs first, on top of the LLM's
        // attempts: it takes seconds, and a case that draft reproduces is not left to a
        // small model's lines after it. The LLM then drafts afresh. A skeleton (no code,
        // no context) is not run: it cannot show the bug.
        let mut rules_draft = llm_working
            .then(|| generate::rule_candidate(&input))
            .filter(|draft| !draft.is_skeleton());
        let rules_first = rules_draft.is_some();
        for round in 0..config.attempts_per_context.max(1) + u32::from(rules_first) {
            if events.is_closed() {
                break 'contexts;
            }
            let attempt = progress.attempts + 1;
            let refining = round > 0 && config.on(Stage::Refine);
            // With an LLM, the rules' edits come first as tools over its last draft (names
            // defined from the project, made-up imports dropped, loops shrunk); the LLM
            // rewrites from the feedback when they change nothing, or after their own try.
            let tooled = match &previous {
                // A draft that does not parse goes back to the LLM: commenting its lines
                // out would mostly remove what the draft was for.
                Some((candidate, checked))
                    if llm_working
                        && refining
                        && !previous_by_tools
                        && checked.verdict(CheckKind::Structural).is_none_or(|v| v.passed) =>
                {
                    refine::rule_refine(&input, candidate, &checked.feedback())
                        .filter(|next| !seen.contains_key(&next.code))
                }
                _ => None,
            };
            previous_by_tools = tooled.is_some();
            let rules_round = rules_first && round == 0;
            let candidate = if rules_round {
                attempt_started(events, attempt, context_number).await;
                let rules = rules_draft.take().expect("rules_first implies the rules' draft");
                emit_lines(events, attempt, &rules.code).await;
                rules
            } else if let Some(next) = tooled {
                attempt_started(events, attempt, context_number).await;
                emit_lines(events, attempt, &next.code).await;
                next
            } else if llm_working {
                let llm = llm.as_deref().expect("llm_working implies an LLM");
                attempt_started(events, attempt, context_number).await;
                let feedback = previous.as_ref().map(|(_, c)| refine::feedback_text(&c.verdicts));
                let prior = previous.as_ref().zip(feedback.as_deref()).filter(|_| refining).map(
                    |((candidate, checked), feedback)| generate::Prior {
                        candidate,
                        feedback,
                        crash_line: checked.crash_line(),
                        error_line: checked.error_line(),
                    },
                );
                match llm_generate(llm, &input, prior, attempt, repeats, events).await {
                    Ok(candidate) => candidate,
                    Err(e) => {
                        llm_working = false;
                        say(
                            events,
                            Stage::Refine,
                            format!("{e}; continuing with the rule-based generator"),
                        )
                        .await;
                        generate::rule_candidate(&input)
                    }
                }
            } else {
                let feedback = previous
                    .as_ref()
                    .map(|(candidate, checked)| (candidate, checked.feedback()));
                let next = refine::next_rule_candidate(&input, feedback, refining);
                let Some(next) = next else {
                    if round > 0 {
                        say(events, Stage::Refine, "no further edit applies to this candidate").await;
                    }
                    break;
                };
                attempt_started(events, attempt, context_number).await;
                emit_lines(events, attempt, &next.code).await;
                next
            };
            // Every script the LLM path tries gets the names it uses undefined resolved
            // first: small models' rewrites rarely fix them on their own.
            let candidate = match (llm.as_deref(), ruff.as_deref()) {
                (Some(llm), Some(ruff)) if llm_working => {
                    let probe = candidate::SandboxImports { deps, config };
                    with_names_defined(llm, &input, candidate, ruff, &probe, attempt, events).await
                }
                _ => candidate,
            };
            progress.attempts = attempt;
            emit(
                events,
                AgentEvent::Candidate {
                    attempt,
                    code: candidate.code.clone(),
                    edits: candidate.edits.clone(),
                },
            )
            .await;
            if let Some(&first) = seen.get(&candidate.code) {
                // The rules are deterministic: the same script again means they have
                // nothing new. An LLM is asked again, sampled more widely.
                let resample = llm_working;
                let feedback = if resample {
                    repeats += 1;
                    let temperature = generate::Draw { seed: 0, repeats }.temperature();
                    format!("The same script as attempt {first}; asking the LLM again at temperature {temperature:.1}.")
                } else {
                    format!("The same script as attempt {first}; moving on.")
                };
                emit(
                    events,
                    AgentEvent::AttemptFinished {
                        attempt,
                        score: 0.0,
                        accepted: false,
                        feedback,
                    },
                )
                .await;
                if resample {
                    continue;
                }
                break;
            }
            seen.insert(candidate.code.clone(), attempt);
            repeats = 0;
            let checked = check_candidate(
                &candidate.code,
                &restructured,
                &text,
                deps,
                config,
                ruff.as_deref(),
                &project_modules,
                attempt,
                events,
            )
            .await;
            let (score, observed) = checked.score();
            let accepted = observed && score >= config.accept_score;
            let feedback = refine::feedback_text(&checked.verdicts);
            emit(
                events,
                AgentEvent::AttemptFinished {
                    attempt,
                    score,
                    accepted,
                    feedback,
                },
            )
            .await;
            let approximated = checked.verdict(CheckKind::Runtime).is_some_and(|v| v.approximated);
            if progress.best.as_ref().is_none_or(|b| score > b.score) {
                let run = checked.run.as_ref().filter(|_| !approximated);
                progress.best = Some(Best {
                    score,
                    code: candidate.code.clone(),
                    observed: run.map(|r| r.symptom.clone()),
                    output: run.map(checks::RunObservation::shown),
                    approximated,
                });
            }
            if accepted {
                return finished(events, progress.outcome(true, started)).await;
            }
            if let Some(missing) = checked
                .run
                .as_ref()
                .and_then(|r| r.missing.clone())
                .filter(|missing| !refine::can_do_without(&input, missing))
            {
                say(
                    events,
                    Stage::Runtime,
                    format!("the script needs {missing}, which this machine lacks, so no run here can observe the bug; stopping with an approximated result"),
                )
                .await;
                break 'contexts;
            }
            if !rules_round {
                previous = Some((candidate, checked));
            }
        }
    }
    finished(events, progress.outcome(false, started)).await
}
