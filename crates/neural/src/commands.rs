//! The neural debugger's command-line subcommands: `corpus`, `train`, `predict`, `eval`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use replayground_shared::trace_lang::{self, Direction, Trajectory, normalize_state};
use replayground_shared::{Action, StateTree};

use super::corpus::{self, CorpusConfig};
use super::cruxeval::{self, Checker, CruxEvalOptions, Rollout, Suite};
use super::dedup::Reference;
use super::device::{self, DeviceChoice};
use super::eval;
use super::infer::{Engine, Guide, NeuralDebugger, Sampling};
use super::playground_bench;
use super::policy::Policy;
use super::real_bench;
use super::real_code::{Arguments, Harvest};
use super::train::{self, TrainConfig};
use replayground_exec::runner::Tracer;
use replayground_exec::sandbox::{RunLimits, Sandbox};

/// Where CruxEval lives in a checkout (evaluation only; the corpus is checked against it).
const CRUXEVAL: &str = "../shared/data/cruxeval/cruxeval.jsonl";

#[derive(Debug, Clone, Args)]
pub struct CorpusArgs {
    /// Output folder (programs.jsonl, train.jsonl, heldout.jsonl, manifest.json).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Programs to generate.
    #[arg(long, default_value_t = 2000)]
    pub programs: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, default_value_t = 4)]
    pub trajectories_per_program: usize,
    /// Sandbox jobs at once.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// CruxEval problems whose near-copies are left out (`none` to skip).
    #[arg(long, value_name = "FILE", default_value = CRUXEVAL)]
    pub cruxeval: String,
    /// The realistic benchmark's programs, whose near-copies are left out (`none` to skip).
    #[arg(long, value_name = "DIR", default_value = real_bench::DEFAULT_DIR)]
    pub neural_real: String,
    /// Also add real functions from the permissively licensed wheels in DIR
    /// (`python3 -m pip download algorithms --no-deps -d DIR`), called with arguments
    /// inferred from their annotations, names, defaults and docstrings.
    #[arg(long, value_name = "DIR")]
    pub pypi: Option<PathBuf>,
    /// Also add the pure-Python functions of the standard library (PSF licence): of the
    /// sandbox Python's own, or of the folder DIR.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "auto")]
    pub stdlib: Option<String>,
    /// How real functions get their arguments (`random` is the old way, kept to compare).
    #[arg(long, value_enum, default_value_t = Arguments::Inferred)]
    pub arguments: Arguments,
}

#[derive(Debug, Clone, Args)]
pub struct TrainArgs {
    /// A folder made by `replayground corpus`.
    #[arg(long, value_name = "DIR")]
    pub corpus: PathBuf,
    /// Checkpoint folder (resumes when it holds one).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[arg(long, default_value_t = 2000)]
    pub steps: usize,
    #[arg(long, default_value_t = 8)]
    pub batch_size: usize,
    #[arg(long, default_value_t = 512)]
    pub context: usize,
    #[arg(long, default_value_t = 256)]
    pub hidden_size: usize,
    #[arg(long, default_value_t = 4)]
    pub layers: usize,
    #[arg(long, default_value_t = 8)]
    pub heads: usize,
    #[arg(long, default_value_t = 4096)]
    pub vocab_size: usize,
    #[arg(long = "lr", default_value_t = 1e-3)]
    pub learning_rate: f64,
    #[arg(long, default_value_t = 100)]
    pub warmup_steps: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, default_value_t = 100)]
    pub checkpoint_every: usize,
    #[arg(long, default_value_t = 50)]
    pub eval_every: usize,
    /// Stop after this many steps of this run (the schedule still spans --steps).
    #[arg(long)]
    pub stop_after: Option<usize>,
    /// Train for this many minutes instead of --steps: the first steps are timed and the
    /// schedule is planned to end within the budget (e.g. a GPU session of fixed length).
    #[arg(long, value_name = "MINUTES")]
    pub minutes: Option<f64>,
    /// Where to train (a CUDA build is needed for `cuda`).
    #[arg(long, value_enum, default_value_t = DeviceChoice::Auto)]
    pub device: DeviceChoice,
}

#[derive(Debug, Clone, Args)]
pub struct PlotLossArgs {
    /// A checkpoint folder holding `loss.csv`; `loss.png` is written beside it.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct PredictArgs {
    pub file: PathBuf,
    #[arg(long, default_value = "")]
    pub actions: String,
    #[arg(long, value_name = "DIR")]
    pub model: PathBuf,
    #[command(flatten)]
    pub sampling: SamplingArgs,
}

#[derive(Debug, Clone, Args)]
pub struct SamplingArgs {
    /// 0 = greedy.
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f64,
    #[arg(long)]
    pub top_p: Option<f64>,
    /// Seed of the sampler (sample i of k uses seed + i).
    #[arg(long, alias = "seed", default_value_t = 0)]
    pub sample_seed: u64,
    /// Tokens one state line may take at least (more when the previous state is long).
    #[arg(long, default_value_t = 256)]
    pub max_tokens: usize,
    /// Where the model runs.
    #[arg(long, value_enum, default_value_t = DeviceChoice::Auto)]
    pub device: DeviceChoice,
    /// Decode under the trace language's grammar alone, without what the code and the
    /// action allow (lines, frames, names, depths): to measure what those bounds add.
    #[arg(long)]
    pub grammar_only: bool,
    /// Decode every token, also where the grammar and bounds leave no choice (a code
    /// LLM otherwise reads that text in one forward pass): to measure what that saves.
    #[arg(long)]
    pub no_jump_forward: bool,
    /// Decode greedily without drafts copied from the prompt (a code LLM otherwise
    /// checks them a few tokens per forward pass; the answers are the same): to measure
    /// what that saves.
    #[arg(long)]
    pub no_speculate: bool,
}

impl SamplingArgs {
    fn sampling(&self) -> Sampling {
        Sampling {
            temperature: self.temperature,
            top_p: self.top_p,
            seed: self.sample_seed,
            max_tokens: self.max_tokens,
            bounded: !self.grammar_only,
            jump_forward: !self.no_jump_forward,
            speculate: !self.no_speculate,
        }
    }
}

/// The evaluation suites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SuiteName {
    /// Next-state exact match on a corpus's held-out trajectories.
    NextState,
    /// Next-state exact match on the realistic benchmark: hand-written programs
    /// (tests/neural-real/programs), traced for real and walked by the seeded policy.
    Real,
    /// The playground's neural mode on the realistic programs, timed as a student meets
    /// it: each program read ahead, then step into from the first stop (--per-trajectory
    /// steps, default 12), each asked as the page asks it.
    Playground,
    /// CruxEval-O: the return value of `f(input)`, by rolling the debugger to the return.
    CruxevalO,
    /// CruxEval-I: an input giving the output, by stepping backwards to the call.
    CruxevalI,
}

#[derive(Debug, Clone, Args)]
pub struct EvalArgs {
    #[arg(long, value_enum, default_value_t = SuiteName::NextState)]
    pub suite: SuiteName,
    /// The engines, side by side in one run (repeat the flag or separate with commas):
    /// a model folder (the from-scratch model, e.g. models/neural-debugger-tiny), or a
    /// code LLM prompted in context: `qwen-0.5b`, `qwen-1.5b` (installed by `cargo xtask
    /// setup [--with qwen-1.5b]`) or `gguf:FILE`; `ENGINE+steps` runs one step by step
    /// (multi-event actions walked one step into at a time, steps back checked forward).
    #[arg(
        long = "model",
        alias = "engine",
        value_name = "ENGINE",
        required = true,
        value_delimiter = ','
    )]
    pub models: Vec<String>,
    /// next-state: a corpus `heldout.jsonl` (required). real: the programs' folder
    /// (default tests/neural-real/programs). CruxEval: its JSONL (default
    /// `../shared/data/cruxeval/cruxeval.jsonl` beside the checkout).
    #[arg(long, value_name = "PATH")]
    pub data: Option<PathBuf>,
    /// Examples (next-state, real), programs (playground) or problems (CruxEval) to
    /// evaluate, from the start.
    #[arg(long, default_value_t = 500)]
    pub limit: usize,
    /// next-state, real: at most this many questions from each trajectory (its first
    /// steps), so that a short run covers every program.
    #[arg(long, value_name = "N")]
    pub per_trajectory: Option<usize>,
    /// real: the seed of program i's action script is SEED + i.
    #[arg(long, value_name = "SEED", default_value_t = 1)]
    pub program_seed: u64,
    /// Code LLMs in context: the longest trajectory (program, states, action) read after
    /// the worked examples, in tokens; a longer one loses its earliest states.
    #[arg(long, default_value_t = super::in_context::DEFAULT_MAX_TRAJECTORY_TOKENS)]
    pub max_trajectory_tokens: usize,
    /// CruxEval: samples per problem (pass@k with k = samples; more than 1 needs --temperature).
    #[arg(long, default_value_t = 1)]
    pub samples: usize,
    /// cruxeval-o: how to roll from the call to the return.
    #[arg(long, value_enum, default_value_t = Rollout::StepReturn)]
    pub rollout: Rollout,
    /// CruxEval: sandbox jobs at once.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// next-state, real: list every question's answer beside the truth in the report.
    #[arg(long)]
    pub answers: bool,
    /// Print only the JSON report.
    #[arg(long)]
    pub json: bool,
}

pub async fn corpus(
    args: &CorpusArgs,
    sandbox: Arc<dyn Sandbox>,
    python: &std::path::Path,
) -> anyhow::Result<ExitCode> {
    let mut reference = if args.cruxeval == "none" {
        Reference::default()
    } else {
        Reference::load_cruxeval(std::path::Path::new(&args.cruxeval)).map_err(|e| {
            anyhow::anyhow!("{e}; pass --cruxeval FILE, or --cruxeval none to build without the CruxEval check")
        })?
    };
    if args.neural_real != "none" {
        let programs = real_bench::load(std::path::Path::new(&args.neural_real))
            .map_err(|e| anyhow::anyhow!("{e}; or pass --neural-real none to build without this check"))?;
        real_bench::keep_out_of(&mut reference, &programs);
    }
    let tracer = Arc::new(Tracer::new(
        sandbox,
        python,
        RunLimits {
            max_events: 5_000,
            ..RunLimits::default()
        },
    ));
    let config = CorpusConfig {
        out: args.out.clone(),
        programs: args.programs,
        seed: args.seed,
        trajectories_per_program: args.trajectories_per_program,
        jobs: args.jobs,
        policy: Policy::default(),
        heldout_every: 10,
    };
    let mut harvests: Vec<Harvest> = Vec::new();
    if let Some(dir) = &args.pypi {
        harvests.push(super::pypi::load_dir(dir, args.seed, args.arguments)?);
    }
    if let Some(dir) = &args.stdlib {
        let dir = if dir == "auto" {
            super::stdlib::locate(python).ok_or_else(|| {
                anyhow::anyhow!(
                    "{} cannot say where its standard library is; pass --stdlib DIR",
                    python.display()
                )
            })?
        } else {
            PathBuf::from(dir)
        };
        harvests.push(super::stdlib::load_dir(&dir, args.seed, args.arguments)?);
    }
    for harvest in &harvests {
        for note in &harvest.notes {
            eprintln!("{}: {note}", harvest.origin.as_str());
        }
        eprintln!(
            "{}: {} programs from {} eligible of {} top-level functions and {} of {} classes ({} archives or modules)",
            harvest.origin.as_str(),
            harvest.programs.len(),
            harvest.functions_eligible,
            harvest.functions_seen,
            harvest.classes_eligible,
            harvest.classes_seen,
            harvest.archives_used
        );
    }
    let stats = corpus::build_with(&config, tracer, &reference, harvests).await?;
    eprintln!("{}", serde_json::to_string_pretty(&stats)?);
    for (origin, source) in &stats.sources {
        eprintln!(
            "{origin}: {} functions seen, {} eligible, {} kept ({} ran to the end); {} classes seen, {} eligible, {} kept; {} programs, {} events",
            source.functions_seen,
            source.functions_eligible,
            source.functions_kept,
            source.functions_finished,
            source.classes_seen,
            source.classes_eligible,
            source.classes_kept,
            source.programs_kept,
            source.events
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn train(args: &TrainArgs) -> anyhow::Result<ExitCode> {
    let config = TrainConfig {
        corpus: args.corpus.clone(),
        out: args.out.clone(),
        steps: args.steps,
        batch_size: args.batch_size,
        context: args.context,
        hidden_size: args.hidden_size,
        layers: args.layers,
        heads: args.heads,
        vocab_size: args.vocab_size,
        learning_rate: args.learning_rate,
        warmup_steps: args.warmup_steps,
        weight_decay: 0.1,
        max_grad_norm: 1.0,
        seed: args.seed,
        checkpoint_every: args.checkpoint_every,
        eval_every: args.eval_every,
        stop_after: args.stop_after,
        time_budget: args.minutes.map(|m| m * 60.0),
        device: args.device,
    };
    let state = train::train(&config)?;
    eprintln!(
        "trained {} steps, {} tokens in {:.0} s; checkpoint in {}",
        state.step,
        state.tokens_seen,
        state.seconds,
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// A checkpoint folder written by `train`.
    #[arg(long, value_name = "DIR")]
    pub from: PathBuf,
    /// The model folder to write (config, tokenizer, weights, loss curve, summary).
    #[arg(long, value_name = "DIR")]
    pub to: PathBuf,
    /// Precision of the exported weights (`bf16` halves the bytes; loading converts to f32).
    #[arg(long, value_enum, default_value_t = ExportDType::Bf16)]
    pub dtype: ExportDType,
    /// The largest weight file, in MiB.
    #[arg(long, default_value_t = 16.0)]
    pub shard_mib: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportDType {
    Bf16,
    F32,
}

/// Writes a checkpoint's weights as a model folder in shards of bounded size.
pub fn export(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let dtype = match args.dtype {
        ExportDType::Bf16 => candle_core::DType::BF16,
        ExportDType::F32 => candle_core::DType::F32,
    };
    anyhow::ensure!(args.shard_mib > 0.0, "--shard-mib must be positive");
    let exported = super::export::export(&args.from, &args.to, dtype, (args.shard_mib * 1_048_576.0) as usize)?;
    eprintln!(
        "exported {} parameters ({} tensors, {:.1} MiB) to {} in {} file(s)",
        exported.parameters,
        exported.tensors,
        exported.bytes as f64 / 1_048_576.0,
        args.to.display(),
        exported.shards.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// `check-bounds`: corpora of real trajectories to check the decoding bounds against.
#[derive(Debug, Clone, Args)]
pub struct CheckBoundsArgs {
    /// Trajectory files (a corpus's `train.jsonl`, `heldout.jsonl`, …).
    #[arg(required = true, value_name = "JSONL")]
    pub data: Vec<PathBuf>,
    /// Refusals printed in full.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub show: usize,
}

/// Checks that the decoding bounds admit every real step of the trajectories in
/// `args.data`; prints how many steps they bound, how many values they fix and how many
/// whole answers they force (JSON), and fails when one is refused.
pub fn check_bounds(args: &CheckBoundsArgs) -> anyhow::Result<ExitCode> {
    let (mut steps, mut refused, mut bounded, mut values, mut fixed, mut answered) = (0, 0, 0usize, 0, 0, 0usize);
    for path in &args.data {
        for trajectory in super::eval::load_trajectories(path)? {
            for e in super::eval::examples(&trajectory)? {
                let guide = super::bounds::Guide::after(&e.prefix, e.step_action);
                let bounds = &guide.bounds;
                let truth = replayground_shared::trace_lang::state_text(&e.expected, Some(&e.previous))?;
                steps += 1;
                bounded += usize::from(!bounds.admits("<|line|>100000 0 <module> <|vars|>{}"));
                let forced = super::decode::forced_answer(&guide).map(|s| normalize_state(&s));
                answered += usize::from(forced.as_ref() == Some(&e.expected));
                let shown = replayground_shared::trace_lang::shown_vars(&e.expected).len();
                values += shown;
                fixed += bounds.fixed_values(&e.expected).min(shown);
                if !guide.admits(&truth) {
                    refused += 1;
                    if refused <= args.show {
                        eprintln!(
                            "refused: {truth}\n  {} after {:?}\n{}\n",
                            e.action, e.previous, trajectory.code
                        );
                    }
                }
            }
        }
    }
    let summary = serde_json::json!({
        "steps": steps,
        "refused": refused,
        "bounded": bounded,
        "values": values,
        "values_fixed": fixed,
        "answered_by_bounds_alone": answered,
    });
    writeln!(std::io::stdout().lock(), "{}", serde_json::to_string_pretty(&summary)?)?;
    Ok(if refused == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Redraws `loss.png` from `loss.csv`.
pub fn plot_loss(args: &PlotLossArgs) -> anyhow::Result<ExitCode> {
    let path = super::plot::plot_dir(&args.dir)?;
    eprintln!("wrote {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// Per action: the model's prediction beside the real stop (same fields as `debug`).
pub fn predict(args: &PredictArgs, tree: &StateTree, code: &str) -> anyhow::Result<ExitCode> {
    let actions = Action::parse_list(&args.actions)?;
    let mut debugger = NeuralDebugger::load_on(&args.model, &device::choose(args.sampling.device)?)?;
    let real = trace_lang::record(tree, code, &actions, Direction::Forward);
    let mut out = std::io::stdout().lock();
    for k in 1..real.steps.len() {
        let Some(action) = real.steps[k].action else { continue };
        let prefix = Trajectory {
            code: real.code.clone(),
            direction: Direction::Forward,
            steps: real.steps[..k].to_vec(),
        };
        let prompt = debugger.prompt(&prefix, action, &args.sampling.sampling())?;
        let guide = Guide::after(&prefix, action);
        let prediction = debugger.predict(&prompt, &guide, &args.sampling.sampling(), &mut |_| {})?;
        let expected = normalize_state(&real.steps[k].state);
        let (predicted, error, matches, differences) = match &prediction.state {
            Ok(state) => {
                let state = normalize_state(state);
                let diff = state.differences(&expected);
                (Some(state), None, diff.is_empty(), diff)
            }
            Err(e) => (None, Some(e.clone()), false, vec!["unparsed".to_owned()]),
        };
        let line = serde_json::json!({
            "action": action.name(),
            "predicted": predicted,
            "parse_error": error,
            "real": expected,
            "match": matches,
            "differences": differences,
        });
        writeln!(out, "{line}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `replayground eval`: one JSON report on stdout (a list of reports, one per engine,
/// when several are named).
pub async fn eval(args: EvalArgs, sandbox: Arc<dyn Sandbox>, python: &std::path::Path) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let device = device::choose(args.sampling.device)?;
    let bar = if args.json {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(args.limit as u64)
    };
    let trajectories = match args.suite {
        SuiteName::NextState => {
            let data = args.data.clone().ok_or_else(|| {
                anyhow::anyhow!(
                    "--suite next-state needs --data FILE: a corpus heldout.jsonl (replayground corpus --out DIR)"
                )
            })?;
            Some(
                eval::load_trajectories(&data)?
                    .into_iter()
                    .map(eval::Walk::from)
                    .collect(),
            )
        }
        SuiteName::Real => {
            let dir = args.data.clone().unwrap_or_else(real_bench::default_dir);
            let programs = real_bench::load(&dir)?;
            let tracer = Tracer::new(Arc::clone(&sandbox), python, RunLimits::default());
            Some(real_bench::trajectories(&tracer, &programs, args.program_seed).await?)
        }
        SuiteName::Playground | SuiteName::CruxevalO | SuiteName::CruxevalI => None,
    };
    let runs = if args.suite == SuiteName::Playground {
        let dir = args.data.clone().unwrap_or_else(real_bench::default_dir);
        let mut programs = real_bench::load(&dir)?;
        programs.truncate(args.limit);
        let tracer = Tracer::new(Arc::clone(&sandbox), python, RunLimits::default());
        let traces = real_bench::traces(&tracer, &programs).await?;
        let runs = programs.into_iter().zip(traces);
        runs.map(|(p, trace)| playground_bench::Run { code: p.source, trace })
            .collect()
    } else {
        Vec::new()
    };
    let runs = Arc::new(runs);
    let mut reports = Vec::new();
    for spec in &args.models {
        let engine = super::load_engine(spec, &device, args.max_trajectory_tokens)?;
        bar.reset();
        bar.set_message(engine.name());
        let report = match &trajectories {
            Some(trajectories) => next_state_report(&args, engine, trajectories.clone(), bar.clone()).await?,
            None if args.suite == SuiteName::Playground => {
                let (runs, steps, bar) = (Arc::clone(&runs), args.per_trajectory.unwrap_or(12), bar.clone());
                let model = crate::service::LoadedModel::new(engine);
                let report = tokio::task::spawn_blocking(move || {
                    playground_bench::walk(&model, &runs, steps, &mut |done, total| {
                        bar.set_length(total as u64);
                        bar.set_position(done as u64);
                    })
                })
                .await??;
                serde_json::to_value(&report)?
            }
            None => cruxeval_report(&args, engine, Arc::clone(&sandbox), python, bar.clone()).await?,
        };
        reports.push(report);
    }
    bar.finish_and_clear();
    let json = if let [one] = reports.as_slice() {
        serde_json::to_string_pretty(one)?
    } else {
        serde_json::to_string_pretty(&reports)?
    };
    writeln!(std::io::stdout().lock(), "{json}")?;
    eprintln!(
        "evaluated on {} in {:.1} s",
        device::describe(&device),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

async fn next_state_report(
    args: &EvalArgs,
    engine: Box<dyn Engine>,
    trajectories: Vec<eval::Walk>,
    bar: indicatif::ProgressBar,
) -> anyhow::Result<serde_json::Value> {
    let suite = if args.suite == SuiteName::Real {
        "real"
    } else {
        "next-state"
    };
    let selection = eval::Selection {
        limit: args.limit,
        per_trajectory: args.per_trajectory.unwrap_or(usize::MAX),
    };
    let sampling = args.sampling.sampling();
    let mut report = tokio::task::spawn_blocking(move || {
        let mut engine = engine;
        eval::next_state(
            suite,
            engine.as_mut(),
            &trajectories,
            selection,
            &sampling,
            &mut |done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            },
        )
    })
    .await??;
    if !args.answers {
        report.answers.clear();
    }
    if !args.json {
        eprintln!(
            "{}: {suite} exact match {:.1}% on {} ({:.2} s a step after {:.2} s reading each program; copy baseline {:.1}%, next-line baseline {:.1}%)",
            report.engine,
            100.0 * report.pass_at_1,
            report.n,
            report.seconds_per_step,
            report.program_read_seconds,
            100.0 * report.baselines.get("copy").map_or(0.0, |s| s.accuracy),
            100.0 * report.baselines.get("next_line").map_or(0.0, |s| s.accuracy),
        );
    }
    Ok(serde_json::to_value(&report)?)
}

async fn cruxeval_report(
    args: &EvalArgs,
    engine: Box<dyn Engine>,
    sandbox: Arc<dyn Sandbox>,
    python: &std::path::Path,
    bar: indicatif::ProgressBar,
) -> anyhow::Result<serde_json::Value> {
    let path = match &args.data {
        Some(path) => path.clone(),
        None => cruxeval::default_path()?,
    };
    let mut problems = cruxeval::load(&path)?;
    problems.truncate(args.limit);
    let tracer = Arc::new(Tracer::new(
        Arc::clone(&sandbox),
        python,
        RunLimits {
            max_events: 20_000,
            ..RunLimits::default()
        },
    ));
    let checker = Arc::new(Checker::new(sandbox, python, args.jobs));
    let options = CruxEvalOptions {
        suite: if args.suite == SuiteName::CruxevalO {
            Suite::Output
        } else {
            Suite::Input
        },
        samples: args.samples,
        sampling: args.sampling.sampling(),
        rollout: args.rollout,
        max_rollout_steps: 64,
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg:>10} {bar:40} {pos}/{len} eta {eta}").expect("a valid template"),
    );
    let report = cruxeval::evaluate(
        Arc::new(std::sync::Mutex::new(engine)),
        tracer,
        checker,
        problems,
        options,
        bar,
    )
    .await?;
    if !args.json {
        eprintln!(
            "{} pass@1 {:.1}% on {} problems; baselines: {}",
            report.suite,
            100.0 * report.pass_at_1,
            report.n,
            report
                .baselines
                .iter()
                .map(|(name, s)| format!("{name} {:.1}%", 100.0 * s.pass_at_1))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(serde_json::to_value(&report)?)
}
