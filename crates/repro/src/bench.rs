//! The reproduction agent's benchmark (issue 6): a suite of cases, each a bug report,
//! an optional project and its ground truth (`case.json`), scored stage by stage:
//! retrieval recall of the buggy file, training-loop detection, symptom classification,
//! and the rate at which the agent reproduces the symptom in a real sandboxed run.
//!
//! The suite format is described in `tests/repro-suite/README.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use replayground_shared::repro::{AgentEvent, BugReport, ReproOutcome, Stage, SymptomClass};
use serde::{Deserialize, Serialize};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::agent::{AgentConfig, AgentDeps, run_agent};
use super::checks::run_script;
use super::embed::Embedder;
use super::llm::Llm;
use super::project::Project;
use super::report::{code_snippets, report_text, restructure, restructure_rules};
use super::retrieval::{RetrievalConfig, Retriever};
use replayground_exec::sandbox::{RunLimits, Sandbox};

/// The packages a case may require; anything else is refused so a typo cannot hide a case.
pub const PACKAGES: [&str; 3] = ["numpy", "torch", "tensorflow"];
/// Cases run at once: two keeps a 2-core machine responsive and halves the wall time.
pub const DEFAULT_CONCURRENCY: usize = 2;
/// The `k` of retrieval recall@k (the agent ranks up to five contexts).
const RECALL_K: usize = 5;

/// What a case's `case.json` says is true.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseTruth {
    pub symptom: SymptomClass,
    /// For crashes and warnings: the exception or warning type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// The file to fix, inside the case's project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buggy_file: Option<String>,
    /// The project's files holding a loop that trains a model, whatever the framework.
    #[serde(default)]
    pub training_loop_files: Vec<String>,
    /// Python packages the reproduction needs (`numpy`, `torch`, `tensorflow`).
    pub requires: Vec<String>,
    #[serde(default)]
    pub notes: String,
}

/// One case of a suite, loaded and checked.
#[derive(Debug, Clone)]
pub struct Case {
    /// The case's folder name, e.g. `01-nan-log-zero`.
    pub name: String,
    pub report: BugReport,
    pub project: Option<Arc<Project>>,
    pub truth: CaseTruth,
}

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("The suite folder {} cannot be read ({source}). Pass --suite a folder of cases such as tests/repro-suite.", path.display())]
    Suite { path: PathBuf, source: std::io::Error },
    #[error("The suite folder {} holds no cases (sub-folders with a case.json). Pass --suite a folder of cases such as tests/repro-suite.", .0.display())]
    Empty(PathBuf),
    #[error("Case {case}: {reason}")]
    Case { case: String, reason: String },
}

fn case_error(case: &str, reason: impl Into<String>) -> BenchError {
    BenchError::Case {
        case: case.to_owned(),
        reason: reason.into(),
    }
}

/// Loads one case folder and checks its ground truth against its project.
pub fn load_case(dir: &Path) -> Result<Case, BenchError> {
    let name = dir
        .file_name()
        .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
    let truth_text = std::fs::read_to_string(dir.join("case.json"))
        .map_err(|e| case_error(&name, format!("case.json cannot be read ({e})")))?;
    let truth: CaseTruth = serde_json::from_str(&truth_text).map_err(|e| {
        case_error(
            &name,
            format!("case.json is not valid ({e}); see tests/repro-suite/README.md"),
        )
    })?;
    if let Some(unknown) = truth.requires.iter().find(|r| !PACKAGES.contains(&r.as_str())) {
        return Err(case_error(
            &name,
            format!("requires `{unknown}`; known packages are {}", PACKAGES.join(", ")),
        ));
    }
    if truth.requires.is_empty() {
        return Err(case_error(
            &name,
            "requires is empty; name the packages the reproduction needs",
        ));
    }
    let report_path = ["report.json", "report.md", "report.txt"]
        .iter()
        .map(|file| dir.join(file))
        .find(|path| path.is_file())
        .ok_or_else(|| case_error(&name, "has no report.json, report.md or report.txt"))?;
    let report = super::report::read_report(&report_path).map_err(|e| case_error(&name, e))?;
    let project_dir = dir.join("project");
    let project = if project_dir.is_dir() {
        let project = Project::from_dir(&project_dir)
            .map_err(|e| case_error(&name, format!("its project cannot be read: {e}")))?;
        Some(Arc::new(project))
    } else {
        None
    };
    let named_files = truth.buggy_file.iter().chain(&truth.training_loop_files);
    for file in named_files {
        let present = project.as_ref().is_some_and(|p| p.file(file).is_some());
        if !present {
            return Err(case_error(
                &name,
                format!("case.json names `{file}`, which is not in its project/"),
            ));
        }
    }
    if project.is_some() && truth.buggy_file.is_none() {
        return Err(case_error(&name, "has a project/ but case.json names no buggy_file"));
    }
    Ok(Case {
        name,
        report,
        project,
        truth,
    })
}

/// Loads every case of a suite folder, sorted by name.
pub fn load_suite(dir: &Path) -> Result<Vec<Case>, BenchError> {
    let entries = std::fs::read_dir(dir).map_err(|source| BenchError::Suite {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("case.json").is_file())
        .collect();
    folders.sort();
    if folders.is_empty() {
        return Err(BenchError::Empty(dir.to_path_buf()));
    }
    folders.iter().map(|folder| load_case(folder)).collect()
}

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
    /// The LLM to measure beside the rules, with the spec it came from.
    pub llm: Option<(String, Arc<dyn Llm>)>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm: Option<SymptomClass>,
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
    /// `rules` or `llm`.
    pub generator: String,
    /// The agent accepted a candidate (its own verdict, which may rest on an approximation).
    pub accepted: bool,
    /// Accepted, observed in a real run (not approximated), and the run agrees with the
    /// case's truth: a crash with the true exception type, or for a silent bug the true
    /// class or none (printed values match the report without wording that names a class).
    /// A run showing a different class never counts.
    pub reproduced: bool,
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
        // The agent's own query (agent::find_contexts): the report's text and its code.
        let query = format!(
            "{}\n{}",
            report_text(&case.report),
            code_snippets(&case.report).join("\n")
        );
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
    let generator = if llm.is_some() { "llm" } else { "rules" }.to_owned();
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
        let path = dir.join(format!("{}.{}.{generator}.jsonl", case.name, variant.name));
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
    RunResult {
        variant: variant.name.clone(),
        generator,
        accepted: outcome.reproduced,
        reproduced: outcome.reproduced && !outcome.approximated && class_matches && type_matches,
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
    let rules = restructure_rules(&case.report).symptom.class;
    let llm_class = match &config.llm {
        Some((_, llm)) => Some(
            restructure(&case.report, Some(llm.as_ref()), &mut |_| {})
                .await
                .0
                .symptom
                .class,
        ),
        None => None,
    };
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
            if let Some((_, llm)) = &config.llm {
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
                        llm: None,
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

/// A share with its counts, e.g. 0.84 (21/25).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    pub hits: usize,
    pub total: usize,
    /// `hits / total`, 0 when there is nothing to count.
    pub rate: f64,
}

impl Rate {
    pub fn new(hits: usize, total: usize) -> Self {
        Self {
            hits,
            total,
            rate: if total == 0 { 0.0 } else { hits as f64 / total as f64 },
        }
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.total == 0 {
            return write!(f, "n/a");
        }
        write!(f, "{:.2} ({}/{})", self.rate, self.hits, self.total)
    }
}

/// Training-loop detection over files: micro-averaged over the cases with a project.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PrecisionRecall {
    pub true_positives: usize,
    pub false_positives: usize,
    pub false_negatives: usize,
    pub precision: Rate,
    pub recall: Rate,
}

impl PrecisionRecall {
    fn of<'a>(results: impl Iterator<Item = &'a LoopResult>) -> Self {
        let (mut tp, mut fp, mut fneg) = (0, 0, 0);
        for r in results {
            let expected: BTreeSet<&String> = r.expected.iter().collect();
            let found: BTreeSet<&String> = r.found.iter().collect();
            tp += expected.intersection(&found).count();
            fp += found.difference(&expected).count();
            fneg += expected.difference(&found).count();
        }
        Self {
            true_positives: tp,
            false_positives: fp,
            false_negatives: fneg,
            precision: Rate::new(tp, tp + fp),
            recall: Rate::new(tp, tp + fneg),
        }
    }
}

/// Mean, median and maximum of some durations, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TimeStats {
    pub mean_ms: u64,
    pub p50_ms: u64,
    pub max_ms: u64,
}

impl TimeStats {
    fn of(mut values: Vec<u64>) -> Self {
        if values.is_empty() {
            return Self {
                mean_ms: 0,
                p50_ms: 0,
                max_ms: 0,
            };
        }
        values.sort_unstable();
        let mean = values.iter().sum::<u64>() / values.len() as u64;
        // Nearest-rank median: the lower middle value of an even count.
        Self {
            mean_ms: mean,
            p50_ms: values[(values.len() - 1) / 2],
            max_ms: values[values.len() - 1],
        }
    }
}

/// The reproduction rate of one generator under one variant.
#[derive(Debug, Clone, Serialize)]
pub struct ReproRate {
    pub variant: String,
    pub generator: String,
    /// Symptom matched by a real run: the benchmark's reproduction rate.
    pub reproduced: Rate,
    /// The agent's own acceptances, including those its checks were wrong about.
    pub accepted: Rate,
    pub approximated: usize,
    pub time: TimeStats,
}

/// The whole benchmark: per-stage scores, then every case.
#[derive(Debug, Clone, Serialize)]
pub struct BenchSummary {
    pub suite: String,
    pub cases: usize,
    /// Symptom classification by the rules, over every case.
    pub symptom_rules: Rate,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symptom_llm: Option<Rate>,
    /// Recall@1 / @5 of the buggy file, over the cases with a project.
    pub retrieval_recall_at_1: Rate,
    pub retrieval_recall_at_5: Rate,
    pub training_loops: PrecisionRecall,
    /// The same over the cases that require `torch` or `tensorflow`.
    pub training_loops_frameworks: PrecisionRecall,
    pub reproduction: Vec<ReproRate>,
    /// Wall time per case (stages and every agent run).
    pub time_per_case: TimeStats,
    pub skipped: usize,
    /// Why cases were skipped, with how many each.
    pub skipped_reasons: BTreeMap<String, usize>,
    pub errors: usize,
    pub results: Vec<CaseResult>,
}

impl BenchSummary {
    pub fn new(suite: &str, results: Vec<CaseResult>) -> Self {
        let symptom_rules = Rate::new(
            results.iter().filter(|r| r.symptom.rules == r.symptom.expected).count(),
            results.len(),
        );
        let with_llm: Vec<&CaseResult> = results.iter().filter(|r| r.symptom.llm.is_some()).collect();
        let symptom_llm = (!with_llm.is_empty()).then(|| {
            Rate::new(
                with_llm
                    .iter()
                    .filter(|r| r.symptom.llm == Some(r.symptom.expected))
                    .count(),
                with_llm.len(),
            )
        });
        let ranks: Vec<Option<usize>> = results
            .iter()
            .filter_map(|r| r.retrieval.as_ref().map(|x| x.rank))
            .collect();
        let at = |k: usize| {
            Rate::new(
                ranks.iter().filter(|rank| rank.is_some_and(|r| r <= k)).count(),
                ranks.len(),
            )
        };
        let uses_framework = |r: &CaseResult| r.requires.iter().any(|p| p == "torch" || p == "tensorflow");
        let mut groups: Vec<(String, String)> = Vec::new();
        for run in results.iter().flat_map(|r| &r.runs) {
            let key = (run.variant.clone(), run.generator.clone());
            if !groups.contains(&key) {
                groups.push(key);
            }
        }
        let reproduction = groups
            .into_iter()
            .map(|(variant, generator)| {
                let runs: Vec<&RunResult> = results
                    .iter()
                    .flat_map(|r| &r.runs)
                    .filter(|run| run.variant == variant && run.generator == generator)
                    .collect();
                ReproRate {
                    reproduced: Rate::new(runs.iter().filter(|r| r.reproduced).count(), runs.len()),
                    accepted: Rate::new(runs.iter().filter(|r| r.accepted).count(), runs.len()),
                    approximated: runs.iter().filter(|r| r.approximated).count(),
                    time: TimeStats::of(runs.iter().map(|r| r.elapsed_ms).collect()),
                    variant,
                    generator,
                }
            })
            .collect();
        let mut skipped_reasons = BTreeMap::new();
        for reason in results.iter().filter_map(|r| r.skipped.as_ref()) {
            *skipped_reasons.entry(reason.clone()).or_insert(0) += 1;
        }
        Self {
            suite: suite.to_owned(),
            cases: results.len(),
            symptom_rules,
            symptom_llm,
            retrieval_recall_at_1: at(1),
            retrieval_recall_at_5: at(RECALL_K),
            training_loops: PrecisionRecall::of(results.iter().filter_map(|r| r.training_loops.as_ref())),
            training_loops_frameworks: PrecisionRecall::of(
                results
                    .iter()
                    .filter(|r| uses_framework(r))
                    .filter_map(|r| r.training_loops.as_ref()),
            ),
            reproduction,
            time_per_case: TimeStats::of(results.iter().map(|r| r.elapsed_ms).collect()),
            skipped: results.iter().filter(|r| r.skipped.is_some()).count(),
            skipped_reasons,
            errors: results.iter().filter(|r| r.error.is_some()).count(),
            results,
        }
    }

    /// The human-readable report: one table per stage, then one line per case.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let secs = |ms: u64| format!("{:.1}s", ms as f64 / 1000.0);
        let _ = writeln!(out, "Reproduction benchmark: {} ({} cases)\n", self.suite, self.cases);
        let _ = writeln!(out, "{:<44} score", "stage");
        let _ = writeln!(out, "{:<44} {}", "symptom classification (rules)", self.symptom_rules);
        if let Some(llm) = &self.symptom_llm {
            let _ = writeln!(out, "{:<44} {llm}", "symptom classification (llm)");
        }
        let _ = writeln!(
            out,
            "{:<44} {}",
            "retrieval recall@1 of the buggy file", self.retrieval_recall_at_1
        );
        let _ = writeln!(
            out,
            "{:<44} {}",
            "retrieval recall@5 of the buggy file", self.retrieval_recall_at_5
        );
        for (label, pr) in [
            ("training loops, all", &self.training_loops),
            ("training loops, torch/tf", &self.training_loops_frameworks),
        ] {
            let _ = writeln!(out, "{:<44} precision {}  recall {}", label, pr.precision, pr.recall);
        }
        let _ = writeln!(
            out,
            "{:<44} mean {}  p50 {}  max {}",
            "time per case",
            secs(self.time_per_case.mean_ms),
            secs(self.time_per_case.p50_ms),
            secs(self.time_per_case.max_ms)
        );
        let _ = writeln!(
            out,
            "\n{:<20} {:<10} {:<16} {:<16} {:<8} time mean / p50 / max",
            "variant", "generator", "reproduced", "accepted", "approx."
        );
        for r in &self.reproduction {
            let _ = writeln!(
                out,
                "{:<20} {:<10} {:<16} {:<16} {:<8} {} / {} / {}",
                r.variant,
                r.generator,
                r.reproduced.to_string(),
                r.accepted.to_string(),
                r.approximated,
                secs(r.time.mean_ms),
                secs(r.time.p50_ms),
                secs(r.time.max_ms)
            );
        }
        let _ = writeln!(out, "\nskipped: {}", self.skipped);
        for (reason, count) in &self.skipped_reasons {
            let _ = writeln!(out, "  {count} × {reason}");
        }
        if self.errors > 0 {
            let _ = writeln!(out, "stage errors: {}", self.errors);
        }
        let _ = writeln!(
            out,
            "\n{:<34} {:<24} {:<24} {:<6} runs",
            "case", "symptom (truth)", "symptom (rules)", "rank"
        );
        for r in &self.results {
            let rank = r
                .retrieval
                .as_ref()
                .map_or("-".to_owned(), |x| x.rank.map_or("miss".to_owned(), |k| k.to_string()));
            let runs = match &r.skipped {
                Some(reason) => format!("skipped: {reason}"),
                None => r
                    .runs
                    .iter()
                    .map(|run| {
                        let mark = if run.reproduced {
                            "✓"
                        } else if run.accepted {
                            "~"
                        } else {
                            "✗"
                        };
                        format!("{}/{} {mark}", run.variant, run.generator)
                    })
                    .collect::<Vec<_>>()
                    .join("  "),
            };
            let _ = writeln!(
                out,
                "{:<34} {:<24} {:<24} {:<6} {runs}",
                r.case,
                r.symptom.expected.as_str(),
                r.symptom.rules.as_str(),
                rank
            );
            if let Some(error) = &r.error {
                let _ = writeln!(out, "    error: {error}");
            }
        }
        let _ = writeln!(
            out,
            "\n✓ reproduced in a real run   ~ accepted by the agent, but not the true symptom or not observed   ✗ not reproduced"
        );
        out
    }
}

/// `replayground bench-repro`: the benchmark from the command line.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchReproArgs {
    /// The suite: one folder per case with report.md or report.json, case.json and an optional project/.
    #[arg(
        long,
        env = "REPLAYGROUND_REPRO_SUITE",
        value_name = "DIR",
        default_value = "tests/repro-suite"
    )]
    pub suite: PathBuf,
    /// Also measure the agent with this stage switched off (repeat to switch off several at once):
    /// context, restructure, plan, structural, static, relevance, runtime, refine.
    #[arg(long, value_name = "STAGE")]
    pub ablate: Vec<Stage>,
    /// Also measure the agent without each stage in turn (eight more runs per case).
    #[arg(long)]
    pub compare_ablations: bool,
    /// The models; an LLM is measured beside the rules (`--llm rules` for the rules alone).
    #[command(flatten)]
    pub models: super::agent::AgentModels,
    /// Only the first N cases, in name order.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub budget: super::cli::SearchBudget,
    /// Cases run at once.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONCURRENCY)]
    pub concurrency: usize,
    /// Print one JSON object instead of the tables.
    #[arg(long)]
    pub json: bool,
    /// Write every agent run's events to DIR/CASE.VARIANT.GENERATOR.jsonl, to see why a case failed.
    #[arg(long, value_name = "DIR")]
    pub transcripts: Option<PathBuf>,
}

/// Runs `bench-repro`: loads the suite, runs it with a progress bar, prints the tables or JSON.
pub async fn command(
    args: &BenchReproArgs,
    sandbox: Arc<dyn Sandbox>,
    python: &Path,
) -> anyhow::Result<std::process::ExitCode> {
    use anyhow::Context as _;
    use std::io::Write as _;

    let mut cases = load_suite(&args.suite)?;
    if let Some(limit) = args.limit {
        cases.truncate(limit);
    }
    let models = args.models.clone();
    let python = python.to_path_buf();
    // Scored on real runs only: the torch / TensorFlow cases are skipped, not guessed.
    let mut deps = tokio::task::spawn_blocking(move || AgentDeps::load(&models, sandbox, python, None)).await??;
    let llm = deps
        .llm
        .take()
        .map(|llm| (args.models.llm.clone().unwrap_or_else(|| llm.name()), llm));
    let config = BenchConfig {
        deps,
        agent: args.budget.config(),
        llm,
        variants: Variant::list(&args.ablate, args.compare_ablations),
        concurrency: args.concurrency,
        transcripts: args.transcripts.clone(),
    };
    if let Some(dir) = &args.transcripts {
        std::fs::create_dir_all(dir).with_context(|| format!("creating the transcript folder {}", dir.display()))?;
    }
    let bar = indicatif::ProgressBar::new(cases.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} cases {elapsed_precise} eta {eta} {msg}")
            .expect("a valid template"),
    );
    let mut on_case = |result: &CaseResult| {
        bar.inc(1);
        bar.set_message(result.case.clone());
    };
    let results = run_suite(cases, config, &mut on_case).await;
    bar.finish_and_clear();
    let summary = BenchSummary::new(&args.suite.display().to_string(), results);
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&summary)?)?;
    } else {
        write!(out, "{}", summary.table())?;
    }
    Ok(std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loops(expected: &[&str], found: &[&str]) -> LoopResult {
        LoopResult {
            expected: expected.iter().map(|s| (*s).to_owned()).collect(),
            found: found.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn precision_and_recall_count_files() {
        let pr = PrecisionRecall::of(
            [
                loops(&["train.py"], &["train.py", "eval.py"]),
                loops(&["a.py", "b.py"], &[]),
            ]
            .iter(),
        );
        assert_eq!((pr.true_positives, pr.false_positives, pr.false_negatives), (1, 1, 2));
        assert!((pr.precision.rate - 0.5).abs() < 1e-9);
        assert!((pr.recall.rate - 1.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn time_stats_use_the_lower_median() {
        let stats = TimeStats::of(vec![40, 10, 30, 20]);
        assert_eq!((stats.mean_ms, stats.p50_ms, stats.max_ms), (25, 20, 40));
        assert_eq!(TimeStats::of(Vec::new()).max_ms, 0);
    }

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
        }
    }

    fn outcome(reproduced: bool, approximated: bool, class: SymptomClass, error_type: Option<&str>) -> ReproOutcome {
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
    fn a_rate_of_nothing_is_not_a_number() {
        assert_eq!(Rate::new(0, 0).to_string(), "n/a");
        assert_eq!(Rate::new(3, 4).to_string(), "0.75 (3/4)");
    }

    #[test]
    fn bad_ground_truth_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let case = dir.path().join("01-x");
        std::fs::create_dir_all(case.join("project")).unwrap();
        std::fs::write(case.join("report.md"), "loss is nan").unwrap();
        std::fs::write(case.join("project/train.py"), "x = 1\n").unwrap();
        std::fs::write(
            case.join("case.json"),
            r#"{"symptom": "nan_loss", "requires": ["numpy"]}"#,
        )
        .unwrap();
        assert!(
            load_case(&case)
                .unwrap_err()
                .to_string()
                .contains("case.json is not valid")
        );
        std::fs::write(
            case.join("case.json"),
            r#"{"symptom": "wrong_calculation", "buggy_file": "loss.py", "requires": ["numpy"]}"#,
        )
        .unwrap();
        assert!(load_case(&case).unwrap_err().to_string().contains("`loss.py`"));
        std::fs::write(
            case.join("case.json"),
            r#"{"symptom": "crash", "buggy_file": "train.py", "requires": ["jax"]}"#,
        )
        .unwrap();
        assert!(load_case(&case).unwrap_err().to_string().contains("`jax`"));
        std::fs::write(
            case.join("case.json"),
            r#"{"symptom": "crash", "buggy_file": "train.py", "requires": ["numpy"]}"#,
        )
        .unwrap();
        let loaded = load_case(&case).unwrap();
        assert_eq!(loaded.report.free_text, "loss is nan");
        assert!(load_suite(&case).is_err(), "a case folder is not a suite");
        assert_eq!(load_suite(dir.path()).unwrap().len(), 1);
    }
}
