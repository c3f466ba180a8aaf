//! CruxEval (Gu et al., 2024) for the neural debugger: evaluation only, never training.
//!
//! Each problem is a function `f`, an input and an output. The program the debugger
//! sees is the function followed by `result = f(INPUT)`, as the training programs call
//! their functions.
//!
//! - `cruxeval-o`: from the real states up to the call of `f` (the input is given), the
//!   model rolls the debugger forward to `f`'s return event (one `step_return`, or
//!   `step_over` after `step_over`); the value it writes there is its answer.
//! - `cruxeval-i`: the code ends with `result = f(??)`; from the program's last state
//!   (where `result` holds the output) the model steps backwards into `f`'s return and
//!   back to its call; the arguments it writes there are its answer.
//!
//! Every answer is checked by really running `f` in the sandbox (`f(INPUT) == ANSWER`,
//! or `f(ANSWER) == OUTPUT`), and so is every problem's own answer: a problem whose
//! dataset output is not what `f` returns is left out and counted. Simple baselines
//! are checked the same way in the same run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use indicatif::ProgressBar;
use replayground_shared::trace_lang::{Direction, Step, Trajectory};
use replayground_shared::{Action, State, StateTree, StopKind};
use serde::{Deserialize, Serialize};
use tokio::task::JoinSet;

use super::infer::{Candidate, Engine, Guide, Sampling};
use replayground_exec::runner::Tracer;

mod checker;

pub use checker::{Check, Checker};

/// Where CruxEval lives, relative to the checkout (evaluation data is kept beside it).
pub const DEFAULT_PATH: &str = "../shared/data/cruxeval/cruxeval.jsonl";

/// The written stand-in for the unknown input of `cruxeval-i` (CruxEval's own notation).
pub const UNKNOWN_INPUT: &str = "??";

/// One CruxEval problem.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Problem {
    pub id: String,
    pub code: String,
    pub input: String,
    pub output: String,
}

/// Which half of CruxEval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suite {
    /// Predict the output from the input.
    Output,
    /// Predict an input from the output.
    Input,
}

impl Suite {
    pub fn name(self) -> &'static str {
        match self {
            Self::Output => "cruxeval-o",
            Self::Input => "cruxeval-i",
        }
    }
}

/// How `cruxeval-o` rolls the debugger from the call to the return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rollout {
    /// One `step_return`: the model writes the return state at once.
    #[default]
    StepReturn,
    /// `step_over` until `f` returns, each predicted state feeding the next prediction.
    StepOver,
}

/// Problems that could not be read or used.
#[derive(Debug, thiserror::Error)]
pub enum CruxEvalError {
    #[error(
        "CruxEval is not at {0}; pass --data FILE (cruxeval.jsonl from facebookresearch/cruxeval, one problem per line)"
    )]
    Missing(String),
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: not a CruxEval problem ({message}); each line needs code, input, output and id")]
    Malformed { path: String, line: usize, message: String },
}

/// The default data file: beside the checkout as run from its root, else beside the
/// checkout this binary was built from.
pub fn default_path() -> Result<PathBuf, CruxEvalError> {
    let candidates = [
        PathBuf::from(DEFAULT_PATH),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(DEFAULT_PATH),
    ];
    candidates.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        CruxEvalError::Missing(
            candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" or "),
        )
    })
}

/// Reads a CruxEval JSONL file.
pub fn load(path: &Path) -> Result<Vec<Problem>, CruxEvalError> {
    let shown = path.display().to_string();
    let data = std::fs::read_to_string(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            CruxEvalError::Missing(shown.clone())
        } else {
            CruxEvalError::Read {
                path: shown.clone(),
                source,
            }
        }
    })?;
    data.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line).map_err(|e| CruxEvalError::Malformed {
                path: shown.clone(),
                line: n + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

/// The program the debugger runs: the function, then a call written as the
/// training programs write theirs.
pub fn program(code: &str, input: &str) -> String {
    format!("{}\n\n\nresult = f({input})\n", code.trim_end())
}

/// What the real execution says about a problem.
#[derive(Debug, Clone)]
struct Truth {
    /// Real states: the first, the call line, the call of `f`, its return, the end of the module.
    steps: Vec<Step>,
    program: String,
}

/// A problem's real states (or why it cannot be used), and the results of its checks:
/// the dataset's own answer first, then the baselines.
type RealRun = (Result<Truth, Skip>, Vec<bool>);

/// Why a problem was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
enum Skip {
    /// `f(input) != output` when really run.
    DatasetMismatch,
    /// The real run did not call and return from `f` as the suite needs.
    Untraceable,
    /// The code contains `<|`, which the trace language reserves.
    Unwritable,
}

/// A baseline's score.
#[derive(Debug, Default, Clone, Copy, Serialize, PartialEq)]
pub struct BaselineScore {
    pub n: usize,
    pub passed: usize,
    pub pass_at_1: f64,
}

/// The JSON `replayground eval --suite cruxeval-o|cruxeval-i` prints.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CruxEvalReport {
    pub suite: &'static str,
    pub engine: String,
    /// Problems scored (after those left out).
    pub n: usize,
    /// Samples per problem, and the k of `pass_at_k` (k = samples).
    pub samples: usize,
    pub k: usize,
    pub pass_at_1: f64,
    pub pass_at_k: f64,
    /// Problems with at least one passing sample.
    pub solved: usize,
    /// The ids of the problems solved, so that runs can be compared problem by problem
    /// (say, leaving out those whose answers were read while building the bounds).
    pub solved_ids: Vec<String>,
    pub temperature: f64,
    pub top_p: Option<f64>,
    pub seed: u64,
    pub rollout: Option<Rollout>,
    /// Samples that did not parse, or did not reach the state holding the answer
    /// (each counted wrong).
    pub parse_failures: usize,
    /// Why samples did not parse (see the next-state report).
    pub parse_failure_reasons: BTreeMap<&'static str, usize>,
    pub no_answer: usize,
    pub problems_in_file: usize,
    pub skipped: BTreeMap<String, usize>,
    pub baselines: BTreeMap<&'static str, BaselineScore>,
    pub tokens_generated: usize,
}

/// How to evaluate.
#[derive(Debug, Clone)]
pub struct CruxEvalOptions {
    pub suite: Suite,
    pub samples: usize,
    pub sampling: Sampling,
    pub rollout: Rollout,
    /// `step_over` predictions at most before a rollout gives up.
    pub max_rollout_steps: usize,
}

/// pass@k from `n` samples of which `c` passed (the unbiased estimator of Chen et al.,
/// 2021: 1 - C(n-c, k) / C(n, k), as a stable product).
pub fn pass_at_k(n: usize, c: usize, k: usize) -> f64 {
    if n == 0 || k == 0 {
        return 0.0;
    }
    if n - c < k {
        return 1.0;
    }
    1.0 - ((n - c + 1)..=n).map(|i| 1.0 - k as f64 / i as f64).product::<f64>()
}

/// The baselines' answers: (name, check) for a problem.
fn baselines(suite: Suite, problem: &Problem) -> Vec<(&'static str, Check)> {
    match suite {
        Suite::Output => vec![
            (
                "input_unchanged",
                Check {
                    args: problem.input.clone(),
                    expected: problem.input.clone(),
                },
            ),
            (
                "first_argument",
                Check {
                    args: problem.input.clone(),
                    expected: format!("(lambda *a, **k: a[0] if a else None)({})", problem.input),
                },
            ),
        ],
        Suite::Input => vec![(
            "output_as_input",
            Check {
                args: problem.output.clone(),
                expected: problem.output.clone(),
            },
        )],
    }
}

/// The real states of a problem's program, or why it cannot be used.
async fn truth(tracer: &Tracer, problem: &Problem) -> anyhow::Result<Result<Truth, Skip>> {
    let program = program(&problem.code, &problem.input);
    if program.contains("<|") {
        return Ok(Err(Skip::Unwritable));
    }
    let Ok(trace) = tracer.trace(&program, "").await else {
        return Ok(Err(Skip::Untraceable));
    };
    let Ok(tree) = StateTree::new(trace) else {
        return Ok(Err(Skip::Untraceable));
    };
    let call_line = program.lines().count() as u32;
    let actions = [
        Action::Breakpoint(call_line),
        Action::StepInto,
        Action::StepReturn,
        Action::StepOver,
    ];
    let recorded = replayground_shared::trace_lang::record(&tree, &program, &actions, Direction::Forward);
    let steps = recorded.steps;
    let is = |k: usize, event: StopKind, function: &str, depth: u32| {
        steps.get(k).is_some_and(|s| {
            s.state.event == event && s.state.function.as_deref() == Some(function) && s.state.depth == Some(depth)
        })
    };
    let usable = steps.len() == 5
        && steps[1].state.line == Some(call_line)
        && is(2, StopKind::Call, "f", 1)
        && is(3, StopKind::Return, "f", 1)
        && is(4, StopKind::Return, "<module>", 0);
    Ok(if usable {
        Ok(Truth { steps, program })
    } else {
        Err(Skip::Untraceable)
    })
}

/// The answer a sampled state holds, as a Python expression: `f`'s return value, or
/// the arguments of its call in order.
fn answer(suite: Suite, state: &State) -> Option<String> {
    if state.function.as_deref() != Some("f") || state.depth != Some(1) {
        return None;
    }
    match suite {
        Suite::Output if state.event == StopKind::Return => state.value.clone(),
        Suite::Input if state.event == StopKind::Call => Some(
            state
                .locals
                .as_ref()?
                .0
                .iter()
                .map(|(_, repr)| repr.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        ),
        _ => None,
    }
}

/// The model's answers to one problem: one per sample (`None`: no usable answer).
fn model_answers(
    debugger: &mut dyn Engine,
    options: &CruxEvalOptions,
    truth: &Truth,
    problem: &Problem,
    counts: &mut Counts,
) -> anyhow::Result<Vec<Option<String>>> {
    let suite = options.suite;
    let mut answers = Vec::with_capacity(options.samples);
    for i in 0..options.samples as u64 {
        let sampling = Sampling {
            seed: options.sampling.seed.wrapping_add(i),
            ..options.sampling
        };
        let state = match suite {
            Suite::Output => roll_forward(debugger, options, truth, &sampling, counts)?,
            Suite::Input => roll_backward(debugger, truth, problem, &sampling, counts)?,
        };
        let answer = state.as_ref().and_then(|s| answer(suite, s));
        if state.is_some() && answer.is_none() {
            counts.no_answer += 1;
        }
        answers.push(answer);
    }
    Ok(answers)
}

#[derive(Debug, Default)]
struct Counts {
    parse_failures: usize,
    reasons: BTreeMap<&'static str, usize>,
    no_answer: usize,
    tokens: usize,
}

/// One prediction, decoded within `guide`; `None` (and counted) when it does not parse.
fn predict_one(
    debugger: &mut dyn Engine,
    prefix: &Trajectory,
    action: Action,
    guide: &Guide<'_>,
    sampling: &Sampling,
    counts: &mut Counts,
) -> anyhow::Result<Option<State>> {
    let prompt = debugger.prompt(prefix, action, sampling)?;
    let mut candidate: Vec<Candidate> = debugger.sample(&prompt, guide, sampling, 1)?;
    let candidate = candidate.pop().expect("one sample asked for");
    counts.tokens += debugger.count_tokens(&candidate.text)?;
    tracing::debug!(prompt_tail = %prompt.chars().rev().take(300).collect::<String>().chars().rev().collect::<String>(), text = %candidate.text, error = ?candidate.error, "sample");
    if let Some(error) = &candidate.error {
        counts.parse_failures += 1;
        *counts.reasons.entry(super::eval::failure_reason(error)).or_default() += 1;
    }
    Ok(candidate.state)
}

/// `cruxeval-o`: from the real call of `f`, the model's state at `f`'s return.
fn roll_forward(
    debugger: &mut dyn Engine,
    options: &CruxEvalOptions,
    truth: &Truth,
    sampling: &Sampling,
    counts: &mut Counts,
) -> anyhow::Result<Option<State>> {
    let mut prefix = Trajectory {
        code: truth.program.clone(),
        direction: Direction::Forward,
        steps: truth.steps[..3].to_vec(),
    };
    match options.rollout {
        Rollout::StepReturn => {
            let guide = Guide::after(&prefix, Action::StepReturn);
            predict_one(debugger, &prefix, Action::StepReturn, &guide, sampling, counts)
        }
        Rollout::StepOver => {
            for _ in 0..options.max_rollout_steps {
                let guide = Guide::after(&prefix, Action::StepOver);
                let Some(state) = predict_one(debugger, &prefix, Action::StepOver, &guide, sampling, counts)? else {
                    return Ok(None);
                };
                let left_f = state.depth != Some(1)
                    || matches!(state.event, StopKind::Return | StopKind::Exception | StopKind::End);
                if left_f {
                    return Ok(Some(state));
                }
                prefix.steps.push(Step {
                    action: Some(Action::StepOver),
                    state,
                });
            }
            Ok(None)
        }
    }
}

/// `cruxeval-i`: from the program's last state (`result` holds the output), the
/// model's state at the call of `f`, two reverse steps back.
///
/// The model reads `f(??)`; the bounds read the program with `f(...)`, which parses,
/// calls `f` and binds nothing, and know that no breakpoint is set. So the first step
/// can only be `f`'s return (or an exception) and the second only `f`'s call, showing
/// its parameters: what is left to the model is the values, the answer.
fn roll_backward(
    debugger: &mut dyn Engine,
    truth: &Truth,
    problem: &Problem,
    sampling: &Sampling,
    counts: &mut Counts,
) -> anyhow::Result<Option<State>> {
    let mut prefix = Trajectory {
        code: program(&problem.code, UNKNOWN_INPUT),
        direction: Direction::Inverse,
        steps: vec![Step {
            action: None,
            state: truth.steps[4].state.clone(),
        }],
    };
    let no_breakpoints = BTreeSet::new();
    let mut step_back = |prefix: &Trajectory, action: Action, counts: &mut Counts| {
        let parsed = Trajectory {
            code: program(&problem.code, "..."),
            ..prefix.clone()
        };
        let guide = Guide::after_with_breakpoints(&parsed, action, Some(&no_breakpoints));
        predict_one(debugger, prefix, action, &guide, sampling, counts)
    };
    let Some(returned) = step_back(&prefix, Action::ReverseStepInto, counts)? else {
        return Ok(None);
    };
    prefix.steps.push(Step {
        action: Some(Action::ReverseStepInto),
        state: returned,
    });
    step_back(&prefix, Action::ReverseStepReturn, counts)
}

/// The check of a model's answer.
fn answer_check(suite: Suite, problem: &Problem, answer: &str) -> Check {
    match suite {
        Suite::Output => Check {
            args: problem.input.clone(),
            expected: answer.to_owned(),
        },
        Suite::Input => Check {
            args: answer.to_owned(),
            expected: problem.output.clone(),
        },
    }
}

/// Evaluates `problems` (after `--limit`), showing progress on `bar`.
pub async fn evaluate(
    debugger: Arc<Mutex<Box<dyn Engine>>>,
    tracer: Arc<Tracer>,
    checker: Arc<Checker>,
    problems: Vec<Problem>,
    options: CruxEvalOptions,
    bar: ProgressBar,
) -> anyhow::Result<CruxEvalReport> {
    anyhow::ensure!(options.samples > 0, "--samples must be at least 1");
    anyhow::ensure!(
        options.samples == 1 || options.sampling.temperature > 0.0,
        "{} samples at temperature 0 would all be the same answer; pass --temperature (e.g. 0.8)",
        options.samples
    );
    let suite = options.suite;
    let engine = debugger
        .lock()
        .map_err(|_| anyhow::anyhow!("the model panicked in an earlier request"))?
        .name();
    let problems = Arc::new(problems);

    // 1. Ground truth: trace each program and check the dataset's answer and the baselines.
    bar.set_length(problems.len() as u64);
    bar.set_message("real runs");
    let mut set = JoinSet::new();
    for (i, problem) in problems.iter().cloned().enumerate() {
        let (tracer, checker) = (Arc::clone(&tracer), Arc::clone(&checker));
        set.spawn(async move {
            let truth = {
                let _slot = checker.slots.acquire().await?;
                truth(&tracer, &problem).await?
            };
            let mut checks = vec![Check {
                args: problem.input.clone(),
                expected: problem.output.clone(),
            }];
            checks.extend(baselines(suite, &problem).into_iter().map(|(_, c)| c));
            let results = checker.check(&problem.code, &checks).await?;
            anyhow::Ok((i, truth, results))
        });
    }
    let mut real: Vec<Option<RealRun>> = vec![None; problems.len()];
    while let Some(joined) = set.join_next().await {
        let (i, truth, results) = joined??;
        real[i] = Some((truth, results));
        bar.inc(1);
    }

    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    let mut baseline_scores: BTreeMap<&'static str, BaselineScore> = BTreeMap::new();
    let mut kept: Vec<(usize, Truth)> = Vec::new();
    for (i, entry) in real.into_iter().enumerate() {
        let (truth, results) = entry.expect("every job reports");
        let skip = if results.first() == Some(&true) {
            truth.as_ref().err().copied()
        } else {
            Some(Skip::DatasetMismatch)
        };
        if let Some(skip) = skip {
            let name = serde_json::to_value(skip)?.as_str().unwrap_or_default().to_owned();
            *skipped.entry(name).or_default() += 1;
            continue;
        }
        for ((name, _), passed) in baselines(suite, &problems[i]).into_iter().zip(&results[1..]) {
            let score = baseline_scores.entry(name).or_default();
            score.n += 1;
            score.passed += usize::from(*passed);
            score.pass_at_1 = score.passed as f64 / score.n as f64;
        }
        kept.push((i, truth.expect("skipped above")));
    }

    // 2. The model's answers (one blocking thread: the model is the bottleneck).
    bar.set_position(0);
    bar.set_length(kept.len() as u64);
    bar.set_message("model");
    let (answers, counts) = {
        let (problems, options, bar) = (Arc::clone(&problems), options.clone(), bar.clone());
        let kept = kept.clone();
        tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
            let mut debugger = debugger
                .lock()
                .map_err(|_| anyhow::anyhow!("the model panicked in an earlier request"))?;
            let mut counts = Counts::default();
            let mut answers = Vec::with_capacity(kept.len());
            for (i, truth) in &kept {
                answers.push(model_answers(
                    &mut **debugger,
                    &options,
                    truth,
                    &problems[*i],
                    &mut counts,
                )?);
                bar.inc(1);
            }
            Ok((answers, counts))
        })
        .await??
    };

    // 3. Check the answers by really running `f`.
    bar.set_position(0);
    bar.set_message("checks");
    let mut set = JoinSet::new();
    for (slot, ((i, _), answers)) in kept.iter().zip(answers).enumerate() {
        let problem = problems[*i].clone();
        let checker = Arc::clone(&checker);
        set.spawn(async move {
            let checks: Vec<Check> = answers
                .iter()
                .flatten()
                .map(|a| answer_check(suite, &problem, a))
                .collect();
            let results = checker.check(&problem.code, &checks).await?;
            let mut results = results.into_iter();
            let passed: Vec<bool> = answers
                .iter()
                .map(|a| a.is_some() && results.next().unwrap_or(false))
                .collect();
            anyhow::Ok((slot, passed))
        });
    }
    let mut passed: Vec<Vec<bool>> = vec![Vec::new(); kept.len()];
    while let Some(joined) = set.join_next().await {
        let (slot, result) = joined??;
        passed[slot] = result;
        bar.inc(1);
    }
    bar.finish_and_clear();

    let n = kept.len();
    let k = options.samples;
    let mean = |f: &dyn Fn(&Vec<bool>) -> f64| {
        if n == 0 {
            0.0
        } else {
            passed.iter().map(f).sum::<f64>() / n as f64
        }
    };
    Ok(CruxEvalReport {
        engine,
        suite: suite.name(),
        n,
        samples: k,
        k,
        pass_at_1: mean(&|p| pass_at_k(p.len(), p.iter().filter(|x| **x).count(), 1)),
        pass_at_k: mean(&|p| pass_at_k(p.len(), p.iter().filter(|x| **x).count(), k)),
        solved: passed.iter().filter(|p| p.iter().any(|x| *x)).count(),
        solved_ids: kept
            .iter()
            .zip(&passed)
            .filter(|(_, p)| p.iter().any(|x| *x))
            .map(|((i, _), _)| problems[*i].id.clone())
            .collect(),
        temperature: options.sampling.temperature,
        top_p: options.sampling.top_p,
        seed: options.sampling.seed,
        rollout: (suite == Suite::Output).then_some(options.rollout),
        parse_failures: counts.parse_failures,
        parse_failure_reasons: counts.reasons,
        no_answer: counts.no_answer,
        problems_in_file: problems.len(),
        skipped,
        baselines: baseline_scores,
        tokens_generated: counts.tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_at_k_is_the_unbiased_estimator() {
        assert!((pass_at_k(1, 1, 1) - 1.0).abs() < 1e-12);
        assert!(pass_at_k(1, 0, 1).abs() < 1e-12);
        assert!((pass_at_k(5, 1, 1) - 0.2).abs() < 1e-12);
        // 1 - C(3,2)/C(5,2) = 1 - 3/10.
        assert!((pass_at_k(5, 2, 2) - 0.7).abs() < 1e-12);
        assert!((pass_at_k(5, 4, 2) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn answers_come_from_the_return_value_or_the_call_arguments() {
        let state = |event, value: Option<&str>| State {
            event,
            line: Some(1),
            function: Some("f".into()),
            depth: Some(1),
            locals: Some(replayground_shared::Vars(vec![
                ("a".into(), "'x'".into()),
                ("b".into(), "[1, 2]".into()),
            ])),
            globals: None,
            value: value.map(str::to_owned),
        };
        assert_eq!(
            answer(Suite::Output, &state(StopKind::Return, Some("3"))).as_deref(),
            Some("3")
        );
        assert_eq!(answer(Suite::Output, &state(StopKind::Line, None)), None);
        assert_eq!(
            answer(Suite::Input, &state(StopKind::Call, None)).as_deref(),
            Some("'x', [1, 2]")
        );
        assert_eq!(
            program("def f(x):\n    return x\n", "1"),
            "def f(x):\n    return x\n\n\nresult = f(1)\n"
        );
    }
}
