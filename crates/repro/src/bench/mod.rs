//! The reproduction agent's benchmark (issue 6): a suite of cases, each a bug report,
//! an optional project and its ground truth (`case.json`), scored stage by stage:
//! retrieval recall of the buggy file, training-loop detection, symptom classification,
//! and the rate at which the agent reproduces the symptom in a real sandboxed run.
//!
//! `suite` loads the cases, `run` runs them, `summary` sums them up; this module
//! is the `bench-repro` command. The suite format is described in
//! `tests/repro-suite/README.md`.

mod run;
mod suite;
mod summary;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use replayground_shared::repro::Stage;

use crate::agent::AgentDeps;
use replayground_exec::sandbox::Sandbox;

pub use run::{
    BenchConfig, CaseResult, DEFAULT_CONCURRENCY, LoopResult, RetrievalResult, RunResult, SymptomResult, Variant,
    probe_packages, run_case, run_suite,
};
pub use suite::{BenchError, Case, CaseTruth, PACKAGES, SPLITS_FILE, load_case, load_suite, select_split};
pub use summary::{BenchSummary, PrecisionRecall, Rate, ReproRate, TimeStats};

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
    pub models: crate::agent::AgentModels,
    /// Another LLM measured beside the rules and `--llm`, in the same run (repeat for
    /// several): `gguf:FILE`, `candle:DIR`, `openai:URL#MODEL`, `scripted:FILE`.
    #[arg(long, value_name = "SPEC")]
    pub also_llm: Vec<String>,
    /// Only the cases of this split, as the suite's splits.json names them (tests/repro-real:
    /// `development`, the cases looked at while building the agent, or `held_out`, never looked at).
    #[arg(long, value_name = "NAME")]
    pub split: Option<String>,
    /// Only the first N cases, in name order.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub budget: crate::cli::SearchBudget,
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
    if let Some(split) = &args.split {
        cases = select_split(&args.suite, cases, split)?;
    }
    if let Some(limit) = args.limit {
        cases.truncate(limit);
    }
    // A benchmark whose interpreter cannot start measures nothing: every run would read
    // as a crash without a word.
    crate::checks::check_interpreter(sandbox.as_ref(), python, &args.budget.config().run_limits)
        .await
        .map_err(anyhow::Error::msg)?;
    let models = args.models.clone();
    let python = python.to_path_buf();
    // Scored on real runs only: the torch / TensorFlow cases are skipped, not guessed.
    let also = args.also_llm.clone();
    let (mut deps, also) = tokio::task::spawn_blocking(move || {
        let deps = AgentDeps::load(&models, sandbox, python, None)?;
        let also = also
            .iter()
            .map(|spec| crate::llm::from_spec(spec).with_context(|| format!("cannot use the LLM of --also-llm {spec}")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        anyhow::Ok((deps, also))
    })
    .await??;
    let llms: Vec<_> = deps.llm.take().into_iter().chain(also).collect();
    let mut names = std::collections::BTreeSet::new();
    if let Some(twice) = llms
        .iter()
        .map(|llm| llm.name())
        .find(|name| !names.insert(name.clone()))
    {
        anyhow::bail!("the LLM {twice} is named twice (--llm and --also-llm); each is measured once");
    }
    let config = BenchConfig {
        deps,
        agent: args.budget.config(),
        llms,
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
    // The bar draws only on a terminal; a log (CI) gets one line per finished case instead.
    let log_lines = !std::io::IsTerminal::is_terminal(&std::io::stderr());
    let total = cases.len();
    let mut on_case = |result: &CaseResult| {
        bar.inc(1);
        bar.set_message(result.case.clone());
        if log_lines {
            let runs: Vec<String> = result
                .runs
                .iter()
                .map(|run| {
                    let verdict = if run.reproduced { "reproduced" } else { "not reproduced" };
                    format!(
                        "{}: {verdict} in {:.0} s",
                        run.generator,
                        run.elapsed_ms as f64 / 1000.0
                    )
                })
                .collect();
            eprintln!(
                "bench-repro: {}/{total} {}: {}",
                bar.position(),
                result.case,
                runs.join("; ")
            );
        }
    };
    let results = run_suite(cases, config, &mut on_case).await;
    bar.finish_and_clear();
    let suite = match &args.split {
        Some(split) => format!("{} ({split})", args.suite.display()),
        None => args.suite.display().to_string(),
    };
    let summary = BenchSummary::new(&suite, results);
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&summary)?)?;
    } else {
        write!(out, "{}", summary.table())?;
    }
    Ok(std::process::ExitCode::SUCCESS)
}
