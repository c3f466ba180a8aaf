//! Running the suite: each case's stages measured on their own (retrieval, training
//! loops, the symptom), then the agent per variant and generator, judged against the
//! case's truth; cases run a few at a time.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use replayground_shared::repro::{AgentEvent, ReproOutcome, Stage, SymptomClass};
use serde::Serialize;
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::suite::Case;
use crate::agent::{AgentConfig, AgentDeps, run_agent};
use crate::checks::{check_interpreter, run_script};
use crate::embed::Embedder;
use crate::llm::Llm;
use crate::report::ParsedReport;
use crate::restructure::{restructure, restructure_rules};
use crate::retrieval::{RetrievalConfig, Retriever};
use replayground_exec::sandbox::{RunLimits, Sandbox};

/// Cases run at once: two keeps a 2-core machine responsive and halves the wall time.
pub const DEFAULT_CONCURRENCY: usize = 2;

/// The `k` of retrieval recall@k (the agent ranks up to five contexts).
pub(super) const RECALL_K: usize = 5;

/// One agent configuration to measure: the full agent, or one with stages switched off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Variant {
    /// `full`, or `-context`, `-context-static` ...
    pub name: String,
    pub ablate: BTreeSet<Stage>,
}

impl Variant {
    pub fn full() -> Self {
        Self {
            name: "full".to_owned(),
            ablate: BTreeSet::new(),
        }
    }

    pub fn without(ablate: BTreeSet<Stage>) -> Self {
        if ablate.is_empty() {
            return Self::full();
        }
        let name = ablate.iter().flat_map(|s| ["-", s.as_str()]).collect::<String>();
        Self { name, ablate }
    }

    /// The variants for `--ablate` (one variant without all the named stages) and
    /// `--compare-ablations` (one variant per stage); the full agent always comes first.
    pub fn list(ablate: &[Stage], compare_each: bool) -> Vec<Self> {
        let mut variants = vec![Self::full()];
        let mut push = |v: Self| {
            if !variants.contains(&v) {
                variants.push(v);
            }
        };
        if !ablate.is_empty() {
            push(Self::without(ablate.iter().copied().collect()));
        }
        if compare_each {
            for stage in Stage::ALL {
                push(Self::without(BTreeSet::from([stage])));
            }
        }
        variants
    }
}

/// Everything a benchmark run needs.
#[derive(Clone)]
pub struct BenchConfig {
    /// The sandbox, the interpreter and the embedder (BM25 alone without one) every run
    /// shares; its LLM is left out, each run brings its own generator.
    pub deps: AgentDeps,
    /// The agent's settings; each variant switches its own stages off.
    pub agent: AgentConfig,
    /// The LLMs to measure beside the rules, one generator each (named by `Llm::name`).
    pub llms: Vec<Arc<dyn Llm>>,
    pub variants: Vec<Variant>,
    pub concurrency: usize,
    /// Where to write every run's events, one JSON line each (`CASE.VARIANT.GENERATOR.jsonl`).
    pub transcripts: Option<PathBuf>,
}

/// How one case's symptom was classified.
#[derive(Debug, Clone, Serialize)]
pub struct SymptomResult {
    pub expected: SymptomClass,
    pub rules: SymptomClass,
    /// Each LLM's restructuring, by generator.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub llm: BTreeMap<String, SymptomClass>,
}

/// Where the buggy file ranked among the retrieved contexts.
#[derive(Debug, Clone, Serialize)]
pub struct RetrievalResult {
    pub buggy_file: String,
    /// 1-based rank of the first context from the buggy file, when it was retrieved.
    pub rank: Option<usize>,
    /// The retrieved contexts' files, best first.
    pub retrieved: Vec<String>,
}

/// Files the detector says hold a training loop, against the truth.
#[derive(Debug, Clone, Serialize)]
pub struct LoopResult {
    pub expected: Vec<String>,
    pub found: Vec<String>,
}

/// One agent run on one case.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub variant: String,
    /// `rules`, or the LLM's name (`gguf:qwen2.5-coder-0.5b-instruct-q4_k_m`).
    pub generator: String,
    /// The agent accepted a candidate (its own verdict, which may rest on an approximation).
    pub accepted: bool,
    /// Accepted, observed in a real run (not approximated), and the run agrees with the
    /// case's truth: a crash with the true exception type, or for a silent bug the true
    /// class or none (printed values match the report without wording that names a class).
    /// A run showing a different class never counts, nor a crash whose message is not the
    /// one the case's `expected_output` names.
    pub reproduced: bool,
    /// For a crash whose case names its expected output: whether the run's exception
    /// message shows it (the reported type raised for another reason does not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_matches: Option<bool>,
    pub approximated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<SymptomClass>,
    pub score: f32,
    pub attempts: u32,
    pub elapsed_ms: u64,
    /// Why the run ended without an outcome.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// Everything measured on one case.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    pub case: String,
    pub requires: Vec<String>,
    pub symptom: SymptomResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<RetrievalResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub training_loops: Option<LoopResult>,
    pub runs: Vec<RunResult>,
    /// Why the agent did not run on this case (a package the sandbox lacks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// A stage that failed on this case, in a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub elapsed_ms: u64,
}

/// Which required packages the sandbox's Python can import: `None` when it can, else why not.
pub async fn probe_packages(
    sandbox: &dyn Sandbox,
    python: &Path,
    limits: &RunLimits,
    packages: &BTreeSet<String>,
) -> BTreeMap<String, Option<String>> {
    let mut out = BTreeMap::new();
    if let Err(broken) = check_interpreter(sandbox, python, limits).await {
        return packages.iter().map(|p| (p.clone(), Some(broken.clone()))).collect();
    }
    for package in packages {
        let code = format!("import {package}\n");
        let missing = match run_script(sandbox, python, &code, limits).await {
            Ok(run) if run.traceback.is_none() && run.missing.is_none() => None,
            Ok(_) => Some(format!("{package} is not installed for {}", python.display())),
            Err(e) => Some(format!("the sandbox cannot run {} ({e})", python.display())),
        };
        out.insert(package.clone(), missing);
    }
    out
}

fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The stages that run no code: retrieval, training-loop detection, restructuring.
fn static_stages(
    case: &Case,
    embedder: Option<&Embedder>,
) -> (Option<RetrievalResult>, Option<LoopResult>, Option<String>) {
    let Some(project) = &case.project else {
        return (None, None, None);
    };
    let retriever = match Retriever::build(project, embedder, &mut |_, _| {}) {
        Ok(retriever) => retriever,
        Err(e) => return (None, None, Some(format!("retrieval could not index the project: {e}"))),
    };
    let found: BTreeSet<String> = retriever.training_loops().iter().map(|l| l.path.clone()).collect();
    let loops = LoopResult {
        expected: case.truth.training_loop_files.clone(),
        found: found.into_iter().collect(),
    };
    let retrieval = case.truth.buggy_file.as_ref().map(|buggy| {
        let config = RetrievalConfig {
            top_k: RECALL_K,
            ..RetrievalConfig::default()
        };
        // The agent's own query (context::find_contexts).
        let query = ParsedReport::from(case.report.clone()).query();
        let contexts = retriever.retrieve(&query, &config, embedder, None);
        let retrieved: Vec<String> = contexts.iter().map(|c| c.path.clone()).collect();
        let rank = retrieved.iter().position(|path| path == buggy).map(|i| i + 1);
        RetrievalResult {
            buggy_file: buggy.clone(),
            rank,
            retrieved,
        }
    });
    (retrieval, Some(loops), None)
}

/// Runs the agent once and judges its outcome against the case's truth.
async fn agent_run(case: &Case, config: &BenchConfig, variant: &Variant, llm: Option<Arc<dyn Llm>>) -> RunResult {
    let started = Instant::now();
    let generator = llm.as_ref().map_or_else(|| "rules".to_owned(), |llm| llm.name());
    let deps = AgentDeps {
        llm,
        ..config.deps.clone()
    };
    let agent_config = AgentConfig {
        ablate: variant.ablate.clone(),
        ..config.agent.clone()
    };
    // The benchmark reads only the outcome; a small buffer that is drained keeps the agent unblocked.
    let keep = config.transcripts.is_some();
    let (events, mut drain) = mpsc::channel(64);
    let drained = tokio::spawn(async move {
        let (mut failure, mut kept) = (None, Vec::new());
        while let Some(event) = drain.recv().await {
            if let AgentEvent::Failed { message } = &event {
                failure = Some(message.clone());
            }
            if keep {
                kept.push(event);
            }
        }
        (failure, kept)
    });
    let outcome = run_agent(
        case.report.clone(),
        case.project.clone(),
        &deps,
        &agent_config,
        events,
        CancellationToken::new(),
    )
    .await;
    let (failure, kept) = drained.await.unwrap_or_default();
    if let Some(dir) = &config.transcripts {
        let file_safe: String = generator
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let path = dir.join(format!("{}.{}.{file_safe}.jsonl", case.name, variant.name));
        let lines: String = kept
            .iter()
            .filter_map(|e| serde_json::to_string(e).ok())
            .map(|line| line + "\n")
            .collect();
        if let Err(error) = tokio::fs::write(&path, lines).await {
            tracing::warn!(%error, path = %path.display(), "could not write the run's transcript");
        }
    }
    RunResult {
        failure,
        ..judge(case, variant, generator, &outcome, millis(started))
    }
}

fn judge(case: &Case, variant: &Variant, generator: String, outcome: &ReproOutcome, elapsed_ms: u64) -> RunResult {
    let observed = outcome.observed.as_ref();
    let class_matches = observed.is_some_and(|o| {
        o.class == case.truth.symptom || (case.truth.symptom.is_silent() && o.class == SymptomClass::Unknown)
    });
    let type_matches = case.truth.symptom != SymptomClass::Crash
        || match (&case.truth.error_type, observed.and_then(|o| o.error_type.as_ref())) {
            (Some(expected), Some(seen)) => expected == seen,
            (Some(_), None) => false,
            (None, _) => true,
        };
    // A crash is the case's only with its message: any expected line, most of its words.
    let message_matches = (case.truth.symptom == SymptomClass::Crash && !case.expected_output.is_empty()).then(|| {
        outcome.output.as_deref().is_some_and(|output| {
            case.expected_output
                .iter()
                .any(|line| crate::checks::shows_message(output, line))
        })
    });
    RunResult {
        variant: variant.name.clone(),
        generator,
        accepted: outcome.reproduced,
        reproduced: outcome.reproduced
            && !outcome.approximated
            && class_matches
            && type_matches
            && message_matches != Some(false),
        message_matches,
        approximated: outcome.approximated,
        observed: observed.map(|o| o.class),
        score: outcome.score,
        attempts: outcome.attempts,
        elapsed_ms,
        failure: None,
    }
}

/// Scores one case: the static stages, then the agent for every variant and generator.
pub async fn run_case(
    case: Arc<Case>,
    config: Arc<BenchConfig>,
    unavailable: Arc<BTreeMap<String, Option<String>>>,
) -> CaseResult {
    let started = Instant::now();
    let report = ParsedReport::from(case.report.clone());
    let rules = restructure_rules(&report).symptom.class;
    let mut llm_class = BTreeMap::new();
    for llm in &config.llms {
        let (restructured, _) = restructure(&report, Some(llm.as_ref()), &mut |_| {}).await;
        llm_class.insert(llm.name(), restructured.symptom.class);
    }
    let (retrieval, training_loops, error) = {
        let case = case.clone();
        let embedder = config.deps.embedder.clone();
        tokio::task::spawn_blocking(move || static_stages(&case, embedder.as_deref()))
            .await
            .unwrap_or_else(|e| (None, None, Some(format!("the retrieval stage panicked: {e}"))))
    };
    let skipped = {
        let reasons: Vec<&str> = case
            .truth
            .requires
            .iter()
            .filter_map(|p| unavailable.get(p).and_then(Option::as_deref))
            .collect();
        (!reasons.is_empty()).then(|| reasons.join("; "))
    };
    let mut runs = Vec::new();
    if skipped.is_none() {
        for variant in &config.variants {
            runs.push(agent_run(&case, &config, variant, None).await);
            for llm in &config.llms {
                runs.push(agent_run(&case, &config, variant, Some(llm.clone())).await);
            }
        }
    }
    CaseResult {
        case: case.name.clone(),
        requires: case.truth.requires.clone(),
        symptom: SymptomResult {
            expected: case.truth.symptom,
            rules,
            llm: llm_class,
        },
        retrieval,
        training_loops,
        runs,
        skipped,
        error,
        elapsed_ms: millis(started),
    }
}

/// Runs every case, `config.concurrency` at a time; `on_case` sees each result as it lands.
pub async fn run_suite(
    cases: Vec<Case>,
    config: BenchConfig,
    on_case: &mut (dyn FnMut(&CaseResult) + Send),
) -> Vec<CaseResult> {
    let needed: BTreeSet<String> = cases.iter().flat_map(|c| c.truth.requires.iter().cloned()).collect();
    let probe_limits = &config.agent.run_limits;
    let unavailable =
        Arc::new(probe_packages(config.deps.sandbox.as_ref(), &config.deps.python, probe_limits, &needed).await);
    let config = Arc::new(config);
    let permits = Arc::new(Semaphore::new(config.concurrency.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    // What a case that panics is still reported with, by task id.
    let mut spawned = std::collections::HashMap::new();
    for (index, case) in cases.into_iter().enumerate() {
        let (config, unavailable, permits) = (config.clone(), unavailable.clone(), permits.clone());
        let (name, truth) = (case.name.clone(), case.truth.clone());
        let handle = tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.expect("the semaphore is never closed");
            run_case(Arc::new(case), config, unavailable).await
        });
        spawned.insert(handle.id(), (index, name, truth));
    }
    let mut results = Vec::new();
    while let Some(joined) = tasks.join_next_with_id().await {
        let (id, result) = match joined {
            Ok((id, result)) => (id, result),
            Err(e) => {
                let Some((_, name, truth)) = spawned.get(&e.id()) else {
                    continue;
                };
                let result = CaseResult {
                    case: name.clone(),
                    requires: truth.requires.clone(),
                    symptom: SymptomResult {
                        expected: truth.symptom,
                        rules: SymptomClass::Unknown,
                        llm: BTreeMap::new(),
                    },
                    retrieval: None,
                    training_loops: None,
                    runs: Vec::new(),
                    skipped: None,
                    error: Some(format!("the case stopped with a panic: {e}")),
                    elapsed_ms: 0,
                };
                (e.id(), result)
            }
        };
        on_case(&result);
        let index = spawned.get(&id).map_or(usize::MAX, |(index, _, _)| *index);
        results.push((index, result));
    }
    results.sort_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use super::super::suite::CaseTruth;
    use super::*;
    use replayground_shared::repro::BugReport;

    #[test]
    fn variants_put_the_full_agent_first_and_never_repeat() {
        let variants = Variant::list(&[Stage::Context], true);
        assert_eq!(variants[0], Variant::full());
        assert_eq!(variants[1].name, "-context");
        assert_eq!(variants.len(), 1 + Stage::ALL.len());
        let both = Variant::list(&[Stage::Static, Stage::Context], false);
        assert_eq!(both[1].name, "-context-static");
    }

    fn crash_case() -> Case {
        let truth = CaseTruth {
            symptom: SymptomClass::Crash,
            error_type: Some("KeyError".to_owned()),
            buggy_file: None,
            training_loop_files: Vec::new(),
            requires: vec!["numpy".to_owned()],
            notes: String::new(),
        };
        Case {
            name: "k".to_owned(),
            report: BugReport::default(),
            project: None,
            truth,
            expected_output: Vec::new(),
        }
    }

    fn outcome(reproduced: bool, approximated: bool, class: SymptomClass, error_type: Option<&str>) -> ReproOutcome {
        let output = error_type.map(|t| format!("{t}: 'lr'"));
        ReproOutcome {
            reproduced,
            score: 0.9,
            attempts: 1,
            script: None,
            observed: Some(replayground_shared::repro::Symptom {
                class,
                error_type: error_type.map(str::to_owned),
                cues: Vec::new(),
            }),
            approximated,
            output,
            elapsed_ms: 5,
        }
    }

    #[test]
    fn only_an_observed_run_with_the_true_symptom_reproduces() {
        let case = crash_case();
        let full = Variant::full();
        let judged = |o: &ReproOutcome| judge(&case, &full, "rules".to_owned(), o, 1);
        assert!(judged(&outcome(true, false, SymptomClass::Crash, Some("KeyError"))).reproduced);
        let wrong_type = judged(&outcome(true, false, SymptomClass::Crash, Some("ValueError")));
        assert!(wrong_type.accepted && !wrong_type.reproduced);
        assert!(!judged(&outcome(true, true, SymptomClass::Crash, Some("KeyError"))).reproduced);
        assert!(!judged(&outcome(false, false, SymptomClass::Crash, Some("KeyError"))).reproduced);
        assert!(!judged(&outcome(true, false, SymptomClass::WrongCalculation, None)).reproduced);
        assert!(
            !judged(&outcome(true, false, SymptomClass::Unknown, None)).reproduced,
            "a crash must be seen"
        );

        let mut silent = crash_case();
        silent.truth.symptom = SymptomClass::WrongShape;
        silent.truth.error_type = None;
        let judged = |o: &ReproOutcome| judge(&silent, &full, "rules".to_owned(), o, 1);
        assert!(judged(&outcome(true, false, SymptomClass::WrongShape, None)).reproduced);
        assert!(judged(&outcome(true, false, SymptomClass::Unknown, None)).reproduced);
        assert!(!judged(&outcome(true, false, SymptomClass::Crash, Some("ValueError"))).reproduced);
    }

    #[test]
    fn a_crash_must_show_the_expected_message_where_the_case_names_it() {
        let mut case = crash_case();
        case.truth.error_type = Some("ValueError".to_owned());
        case.expected_output = vec!["Negative dimension size caused by subtracting 3 from 1".to_owned()];
        let full = Variant::full();
        let judged = |output: &str| {
            let mut o = outcome(true, false, SymptomClass::Crash, Some("ValueError"));
            o.output = Some(output.to_owned());
            judge(&case, &full, "rules".to_owned(), &o, 1)
        };
        let keras = "ValueError: Exception encountered when calling layer \"conv2d\" (type Conv2D).\n\nNegative dimension size caused by subtracting 3 from 1 for '{{node conv2d/Conv2D}}'";
        let shown = judged(keras);
        assert!(shown.reproduced && shown.message_matches == Some(true));
        let other_reason =
            judged("ValueError: Unrecognized keyword arguments passed to Conv2D: {'border_mode': 'valid'}");
        assert!(other_reason.accepted && !other_reason.reproduced);
        assert_eq!(other_reason.message_matches, Some(false));
        let mut untold = case.clone();
        untold.expected_output.clear();
        let mut o = outcome(true, false, SymptomClass::Crash, Some("ValueError"));
        o.output = Some("ValueError: anything".to_owned());
        let judged = judge(&untold, &full, "rules".to_owned(), &o, 1);
        assert!(
            judged.reproduced && judged.message_matches.is_none(),
            "no expected output: type only"
        );
    }
}
