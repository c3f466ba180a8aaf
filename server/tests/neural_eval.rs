//! The neural debugger's evaluation suites with the shipped model, through the real
//! sandbox: reports are reproducible run to run, and the CruxEval baselines and the
//! dataset check come from really running `f`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use indicatif::ProgressBar;
use replayground_server::neural::corpus::{CorpusConfig, build};
use replayground_server::neural::cruxeval::{
    self, Checker, CruxEvalError, CruxEvalOptions, CruxEvalReport, Problem, Rollout, Suite,
};
use replayground_server::neural::dedup::Reference;
use replayground_server::neural::eval;
use replayground_server::neural::infer::{Guide, NeuralDebugger, Sampling};
use replayground_server::neural::policy::Policy;
use replayground_server::runner::{DEFAULT_PYTHON, Tracer};
use replayground_server::sandbox::{Bubblewrap, BubblewrapConfig, RunLimits, Sandbox, Unsandboxed};

fn sandbox() -> Arc<dyn Sandbox> {
    match Bubblewrap::detect(BubblewrapConfig::default()) {
        Ok(bwrap) => Arc::new(bwrap),
        // Only this file's own fixtures and the shipped model's literal answers run here.
        Err(_) => Arc::new(Unsandboxed::new()),
    }
}

fn model_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/neural-debugger-tiny")
}

fn problem(id: &str, code: &str, input: &str, output: &str) -> Problem {
    Problem {
        id: id.into(),
        code: code.into(),
        input: input.into(),
        output: output.into(),
    }
}

/// Made for this test: each baseline's outcome follows from what `f` does.
fn fixtures() -> Vec<Problem> {
    vec![
        // Returns its argument: every baseline passes.
        problem("same", "def f(x):\n    return x", "[1, 2]", "[1, 2]"),
        // Returns the first of two: only "first argument" passes.
        problem("first", "def f(a, b):\n    return a", "'q', 3", "'q'"),
        // Doubles: no baseline passes.
        problem("double", "def f(n):\n    return n * 2", "4", "8"),
        // The stated output is wrong: left out as a dataset mismatch.
        problem("wrong", "def f(s):\n    return s.upper()", "'ab'", "'ab'"),
    ]
}

async fn run(suite: Suite, samples: usize, temperature: f64) -> CruxEvalReport {
    let sandbox = sandbox();
    let tracer = Arc::new(Tracer::new(Arc::clone(&sandbox), DEFAULT_PYTHON, RunLimits::default()));
    let checker = Arc::new(Checker::new(sandbox, DEFAULT_PYTHON, 2));
    let debugger = NeuralDebugger::load(&model_dir()).expect("the shipped model loads");
    let options = CruxEvalOptions {
        suite,
        samples,
        sampling: Sampling {
            temperature,
            top_p: Some(0.95),
            seed: 5,
            max_tokens: 48,
            ..Sampling::default()
        },
        rollout: Rollout::StepReturn,
        max_rollout_steps: 8,
    };
    cruxeval::evaluate(
        Arc::new(Mutex::new(Box::new(debugger))),
        tracer,
        checker,
        fixtures(),
        options,
        ProgressBar::hidden(),
    )
    .await
    .expect("the suite runs")
}

#[tokio::test]
async fn cruxeval_o_baselines_and_the_dataset_check_come_from_real_runs() {
    let report = run(Suite::Output, 1, 0.0).await;
    assert_eq!(report.suite, "cruxeval-o");
    assert_eq!(report.problems_in_file, 4);
    assert_eq!(report.skipped.get("dataset_mismatch"), Some(&1), "{report:?}");
    assert_eq!(report.n, 3);
    let unchanged = report.baselines["input_unchanged"];
    let first = report.baselines["first_argument"];
    assert_eq!((unchanged.n, unchanged.passed), (3, 1), "{report:?}");
    assert_eq!((first.n, first.passed), (3, 2), "{report:?}");
    assert!((first.pass_at_1 - 2.0 / 3.0).abs() < 1e-12);
    assert!((0.0..=1.0).contains(&report.pass_at_1));
    assert!(report.parse_failures + report.no_answer <= report.n);
    assert!(report.solved as f64 <= report.n as f64 * report.pass_at_k + 1e-9);
    assert_eq!(report.solved_ids.len(), report.solved);
    assert!(
        report
            .solved_ids
            .iter()
            .all(|id| ["same", "first", "double"].contains(&id.as_str())),
        "{report:?}"
    );
}

#[tokio::test]
async fn cruxeval_i_samples_k_inputs_reproducibly_and_checks_them_by_running_f() {
    let a = run(Suite::Input, 2, 0.8).await;
    assert_eq!(a.suite, "cruxeval-i");
    assert_eq!((a.n, a.samples, a.k), (3, 2, 2));
    // The output fed back in only works for the function that returns its argument.
    let baseline = a.baselines["output_as_input"];
    assert_eq!((baseline.n, baseline.passed), (3, 1), "{a:?}");
    assert!(a.pass_at_k >= a.pass_at_1);
    // The bounds leave the first step back only f's return and the second only f's call:
    // every answer that parses holds arguments.
    assert_eq!(a.no_answer, 0, "{a:?}");
    let b = run(Suite::Input, 2, 0.8).await;
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap(),
        "the same seed gives the same report"
    );
}

#[test]
fn a_missing_cruxeval_file_says_how_to_point_at_one() {
    let err = cruxeval::load(Path::new("/nonexistent/cruxeval.jsonl")).unwrap_err();
    assert!(matches!(err, CruxEvalError::Missing(_)));
    assert!(err.to_string().contains("--data FILE"), "{err}");
}

#[tokio::test]
async fn next_state_reports_are_identical_run_to_run() {
    let corpus = tempfile::tempdir().unwrap();
    let config = CorpusConfig {
        out: corpus.path().to_path_buf(),
        programs: 30,
        seed: 21,
        trajectories_per_program: 2,
        jobs: 2,
        policy: Policy::default(),
        heldout_every: 3,
    };
    let tracer = Arc::new(Tracer::new(sandbox(), DEFAULT_PYTHON, RunLimits::default()));
    build(&config, tracer, &Reference::default())
        .await
        .expect("the corpus builds");
    let trajectories: Vec<_> = eval::load_trajectories(&corpus.path().join("heldout.jsonl"))
        .unwrap()
        .into_iter()
        .map(eval::Walk::from)
        .collect();
    let mut debugger = NeuralDebugger::load(&model_dir()).unwrap();
    let mut report = || {
        let r = eval::next_state(
            "next-state",
            &mut debugger,
            &trajectories,
            eval::Selection::first(8),
            &Sampling::default(),
            &mut |_, _| {},
        )
        .unwrap();
        // Everything but the wall clock.
        let r = eval::NextStateReport {
            seconds_per_step: 0.0,
            program_read_seconds: 0.0,
            warm_up_seconds: 0.0,
            ..r
        };
        serde_json::to_string(&r).unwrap()
    };
    let (first, second) = (report(), report());
    assert_eq!(first, second);
    let parsed: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(parsed["n"], 8);
    // Every `..` the decoder allows resolves: failures can only be answers cut by the budget.
    let reasons = parsed["parse_failure_reasons"].as_object().unwrap();
    assert!(reasons.keys().all(|k| k == "token_budget"), "{reasons:?}");
}

/// The rollout the reproduction agent uses for code that cannot run: from the first
/// statement, each predicted state feeds the next. What the tiny model predicts is a
/// guess; what is checked is that the rollout is well formed and deterministic.
#[test]
fn a_rollout_steps_a_program_in_the_models_head() {
    use replayground_server::neural::rollout::{RolloutEnd, first_state, roll_out};
    use replayground_shared::StopKind;

    let mut debugger = NeuralDebugger::load(&model_dir()).expect("the shipped model loads");
    let code = "total = 0\nfor i in range(3):\n    total += i\nprint(total)\n";
    let rollout = roll_out(&mut debugger, code, 12, &Sampling::default()).unwrap();
    assert_eq!(rollout.states[0], first_state(code).unwrap());
    assert!(rollout.states.len() >= 2 && rollout.states.len() <= 13, "{rollout:?}");
    let last = rollout.last();
    match &rollout.end {
        RolloutEnd::Finished => assert!(matches!(last.event, StopKind::Return | StopKind::End), "{rollout:?}"),
        RolloutEnd::Raised(line) => {
            assert_eq!(last.event, StopKind::Exception);
            assert!(!line.is_empty());
        }
        RolloutEnd::StepLimit => assert_eq!(rollout.states.len(), 13),
        RolloutEnd::Unparsable(why) => assert!(!why.is_empty()),
    }
    // Module-level steps stay at module level until the end.
    for state in &rollout.states[..rollout.states.len() - 1] {
        assert_eq!(state.depth, Some(0), "{rollout:?}");
    }
    let again = roll_out(&mut debugger, code, 12, &Sampling::default()).unwrap();
    assert_eq!(again, rollout, "greedy rollouts are deterministic");
    eprintln!("rollout: {:?} after {} states", rollout.end, rollout.states.len());
}

fn realistic_programs() -> Vec<replayground_server::neural::real_bench::Program> {
    use replayground_server::neural::real_bench;
    real_bench::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(real_bench::DEFAULT_DIR),
    )
    .unwrap()
}

/// Each realistic program with the tree of its real run.
async fn realistic_runs() -> Vec<(
    replayground_server::neural::real_bench::Program,
    replayground_shared::StateTree,
)> {
    let tracer = Tracer::new(sandbox(), DEFAULT_PYTHON, RunLimits::default());
    let mut runs = Vec::new();
    for program in realistic_programs() {
        let trace = tracer.trace(&program.source, "").await.unwrap();
        runs.push((program, replayground_shared::StateTree::new(trace).unwrap()));
    }
    runs
}

/// The realistic benchmark: every hand-written program traces for real, the seeded
/// action scripts are the same run to run, and the report scores each field.
#[tokio::test]
async fn the_realistic_benchmark_traces_every_program_and_scores_each_field() {
    use replayground_server::neural::real_bench;

    let programs = realistic_programs();
    let tracer = Tracer::new(sandbox(), DEFAULT_PYTHON, RunLimits::default());
    let first = real_bench::trajectories(&tracer, &programs, 1).await.unwrap();
    let again = real_bench::trajectories(&tracer, &programs, 1).await.unwrap();
    let texts = |walks: &[eval::Walk]| -> Vec<(String, Option<std::collections::BTreeSet<u32>>)> {
        walks
            .iter()
            .map(|w| {
                let text = replayground_shared::trace_lang::serialize(&w.trajectory).unwrap();
                (text, w.breakpoints.clone())
            })
            .collect()
    };
    // Written in the trace language, which leaves out object addresses.
    assert_eq!(texts(&first), texts(&again), "the same seed asks the same questions");
    assert_eq!(first.len(), programs.len());
    // An inverse trajectory does not record its breakpoints: the walk hands them on.
    for walk in &first {
        let inverse = walk.trajectory.direction == replayground_shared::trace_lang::Direction::Inverse;
        assert_eq!(walk.breakpoints.is_some(), inverse);
    }
    let examples: usize = first.iter().map(|w| w.trajectory.steps.len() - 1).sum();
    assert!(examples >= 200, "{examples} examples");
    let mut debugger = NeuralDebugger::load(&model_dir()).unwrap();
    let report = eval::next_state(
        "real",
        &mut debugger,
        &first,
        eval::Selection::first(10),
        &Sampling::default(),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!((report.suite, report.n), ("real", 10));
    assert_eq!(report.engine, "neural-debugger-tiny");
    assert_eq!(report.fields.line.n, 10);
    assert!(report.fields.variables.n >= 10, "{:?}", report.fields);
    assert!(
        report.fields.line.exact as f64 >= report.pass_at_1 * 10.0 - 1e-9,
        "{report:?}"
    );
    assert_eq!(report.answers.len(), 10);
    let matched = report.answers.iter().filter(|a| a.matches).count();
    assert!((matched as f64 - report.pass_at_1 * 10.0).abs() < 1e-9, "{report:?}");
    assert!(
        report.answers.iter().all(|a| a.expected.starts_with("<|")),
        "{:?}",
        report.answers
    );
}

/// What the code and the action allow never excludes what really happens: every step of
/// 20 seeded trajectories of each realistic program (forward and backward) keeps to the
/// bounds its prefix gives (a backward one's both without and with the breakpoints its
/// walk set, which the benchmark hands on), and the bounds do refuse something in most of
/// them.
#[tokio::test]
async fn the_decoding_bounds_admit_every_real_step_of_the_realistic_programs() {
    use rand::SeedableRng as _;
    use replayground_server::neural::bounds::Guide;
    use replayground_shared::trace_lang;

    let (mut steps, mut bounded) = (0, 0);
    for (program, tree) in realistic_runs().await {
        for seed in 0..20 {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let (trajectory, breakpoints) = Policy::default().walk(&tree, &program.source, &mut rng);
            for e in eval::examples(&trajectory).unwrap() {
                let guide = Guide::after(&e.prefix, e.step_action);
                let truth = trace_lang::state_text(&e.expected, Some(&e.previous)).unwrap();
                let known = Guide::after_with_breakpoints(&e.prefix, e.step_action, Some(&breakpoints));
                let inverse = trajectory.direction == trace_lang::Direction::Inverse;
                assert!(
                    guide.admits(&truth) && (!inverse || known.admits(&truth)),
                    "{}: {} from {:?} refused the real {truth}",
                    program.name,
                    e.action,
                    e.previous
                );
                steps += 1;
                // A line the program does not have is refused unless nothing is bounded.
                bounded += usize::from(!guide.bounds.admits("<|line|>100000 0 <module> <|vars|>{}"));
            }
        }
    }
    assert!(steps >= 5_000, "{steps} steps checked");
    assert!(bounded * 10 >= steps * 9, "only {bounded} of {steps} steps bounded");
}

/// The stepwise engine's stopping rules are pdb's: from every stop of every realistic
/// program's real run, each multi-event action the rules accept (`step_over`,
/// `step_return`, `continue` and `breakpoint:N` on each executed line, with a breakpoint
/// already set) walked one real `step_into` at a time lands where the debugger does; and
/// they accept most of the starts.
#[tokio::test]
async fn stepping_into_until_the_stop_rule_holds_lands_where_the_debugger_stops() {
    use replayground_server::neural::bounds::CodeFacts;
    use replayground_server::neural::stepwise::StopRule;
    use replayground_shared::{Action, Stop};
    use std::collections::BTreeSet;

    let (mut judged, mut asked) = (0, 0);
    for (program, tree) in realistic_runs().await {
        let facts = CodeFacts::new(&program.source);
        let lines: Vec<u32> = tree.executed_lines().into_iter().collect();
        let mut actions = vec![Action::StepOver, Action::StepReturn, Action::Continue];
        actions.extend(lines.iter().map(|&l| Action::Breakpoint(l)));
        let set = BTreeSet::from([lines[lines.len() / 2]]);
        for i in 0..tree.len() {
            let at = Stop::Event(i);
            let from = tree.state(at);
            for &action in &actions {
                let expected = tree.step(at, action, &mut set.clone());
                asked += 1;
                let Some(rule) = StopRule::new(facts.as_ref(), &from, action, &set) else {
                    continue;
                };
                judged += 1;
                assert_eq!(
                    rule.walk(&tree, at),
                    expected,
                    "{}: {action} from event {i} ({from:?})",
                    program.name
                );
            }
        }
    }
    assert!(
        judged * 10 >= asked * 8,
        "the rules judged only {judged} of {asked} starts"
    );
}

/// The worked examples the code LLM's prompt teaches with are what the real tracer and
/// debugger write: each forward one replays from the program's first stop, each inverse
/// one from the stop its first state shows, action by action, to the same states.
#[tokio::test]
async fn the_prompts_worked_examples_are_the_real_debuggers_states() {
    use replayground_server::neural::in_context::EXAMPLES;
    use replayground_shared::trace_lang::{self, Direction};
    use replayground_shared::{StateTree, Stop};

    let tracer = Tracer::new(sandbox(), DEFAULT_PYTHON, RunLimits::default());
    for example in EXAMPLES {
        let trajectory = trace_lang::parse(example).unwrap();
        let tree = StateTree::new(tracer.trace(&trajectory.code, "").await.unwrap()).unwrap();
        let text = |state: &replayground_shared::State| trace_lang::state_text(state, None).unwrap();
        let first = text(&trajectory.steps[0].state);
        let mut at = match trajectory.direction {
            Direction::Forward => tree.initial_stop(),
            Direction::Inverse => (0..tree.len())
                .map(Stop::Event)
                .chain([Stop::End])
                .find(|&stop| text(&tree.state(stop)) == first)
                .expect("the inverse example starts at a stop of its run"),
        };
        let mut breakpoints = std::collections::BTreeSet::new();
        for (i, step) in trajectory.steps.iter().enumerate() {
            if let Some(action) = step.action {
                at = tree.step(at, action, &mut breakpoints);
            }
            assert_eq!(text(&tree.state(at)), text(&step.state), "state {i} of\n{example}");
        }
    }
}

/// A code LLM prompted in context walks a trajectory reusing the cache of the previous
/// prompt; answering the last step from a cold start gives the same state.
#[test]
fn the_in_context_llm_answers_the_same_with_and_without_its_prompt_cache() {
    use replayground_server::neural::in_context::{InContextDebugger, locate};
    use replayground_server::neural::infer::Engine;
    use replayground_shared::trace_lang::{self, Direction};
    use replayground_shared::{Action, StateTree};

    let path = locate("qwen-0.5b").expect("`cargo xtask setup` installs the embedded model");
    let code = "x = 2\ny = x * 3\nprint(y)\n";
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let trace = runtime
        .block_on(Tracer::new(sandbox(), DEFAULT_PYTHON, RunLimits::default()).trace(code, ""))
        .unwrap();
    let tree = StateTree::new(trace).unwrap();
    let walk = trace_lang::record(&tree, code, &[Action::StepOver, Action::StepOver], Direction::Forward);
    let sampling = Sampling::default();
    let mut warm = InContextDebugger::load(&path, &candle_core::Device::Cpu).unwrap();
    let mut answers = Vec::new();
    for k in 1..walk.steps.len() {
        let prefix = eval::prefix(&walk, k);
        let action = walk.steps[k].action.unwrap();
        let prompt = warm.prompt(&prefix, action, &sampling).unwrap();
        answers.push(
            warm.predict(&prompt, &Guide::after(&prefix, action), &sampling, &mut |_| {})
                .unwrap(),
        );
    }
    let last = walk.steps.len() - 1;
    let mut cold = InContextDebugger::load(&path, &candle_core::Device::Cpu).unwrap();
    let (prefix, action) = (eval::prefix(&walk, last), walk.steps[last].action.unwrap());
    let prompt = cold.prompt(&prefix, action, &sampling).unwrap();
    let fresh = cold
        .predict(&prompt, &Guide::after(&prefix, action), &sampling, &mut |_| {})
        .unwrap();
    let cached = answers.last().unwrap();
    assert!(cached.state.is_ok(), "every answer parses: {cached:?}");
    assert_eq!(cached.state, fresh.state, "{} vs {}", cached.text, fresh.text);
    assert!(answers.iter().all(|a| a.state.is_ok()), "{answers:?}");
}

/// The embedded code LLM's worked examples are read once and kept, so however long they
/// grow they never crowd a program out: every realistic program's first question (the
/// page's first step into) fits the engine's context, and so does a question far into
/// its run, with the whole program and at least its last state in the prompt.
#[tokio::test]
async fn every_realistic_program_fits_the_embedded_llms_prompt_after_its_worked_examples() {
    use replayground_server::neural::in_context::{DEFAULT_MAX_TRAJECTORY_TOKENS, locate};
    use replayground_server::neural::predict::{self, Question};
    use replayground_server::neural::service::LoadedModel;
    use replayground_shared::{Action, Stop};
    use std::collections::BTreeSet;

    let path = locate("qwen-0.5b").expect("`cargo xtask setup` installs the embedded model");
    let engine = replayground_server::neural::load_engine(
        &path.to_string_lossy(),
        &candle_core::Device::Cpu,
        DEFAULT_MAX_TRAJECTORY_TOKENS,
    )
    .unwrap();
    let model = LoadedModel::new(engine);
    let runs = realistic_runs().await;
    assert!(runs.len() >= 40);
    for (program, tree) in runs {
        let trace = tree.trace().clone();
        let first = predict::prepare_first_step(&model, trace.clone(), &program.source)
            .unwrap_or_else(|e| panic!("{}: {e:?}", program.name));
        assert!(
            first
                .prompt()
                .contains(program.source.trim_end().lines().last().unwrap())
        );
        let mut at = tree.initial_stop();
        for _ in 0..30 {
            let next = tree.step(at, Action::StepInto, &mut BTreeSet::new());
            if next == at || next == Stop::End {
                break;
            }
            at = next;
        }
        let question = Question {
            at_event: at.event().unwrap_or(tree.len()) as u32,
            action: Action::StepOver,
            samples: 1,
            breakpoints: BTreeSet::new(),
        };
        if tree.step(at, Action::StepOver, &mut BTreeSet::new()) != at {
            predict::prepare(&model, trace, &program.source, question)
                .unwrap_or_else(|e| panic!("{} at {at:?}: {e:?}", program.name));
        }
    }
}
