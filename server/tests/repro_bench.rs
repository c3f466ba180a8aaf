//! The reproduction benchmark on the repository's own suite (tests/repro-suite), in the
//! real sandbox: the suite is well formed, cases needing a package the sandbox lacks are
//! skipped with a visible count, and every stage stays at or above the floor measured
//! for it (README, "Reproduction benchmark"), so a regression fails here.
//!
//! The floors are for this test's configuration, which keeps it within about two minutes:
//! the rule-based generator, BM25 retrieval without the sentence embedder (candle's BERT
//! is too slow in a debug build to embed the whole suite), and at most 3 contexts × 3
//! attempts of 10 s each per case. `replayground bench-repro` measures the defaults.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use replayground_server::repro::agent::{AgentConfig, AgentDeps};
use replayground_server::repro::bench::{
    BenchConfig, BenchSummary, Variant, load_suite, probe_packages, run_suite, select_split,
};
use replayground_server::runner::DEFAULT_PYTHON;
use replayground_server::sandbox::RunLimits;
use replayground_shared::repro::SymptomClass;

// Measured with this configuration on 2026-11-29, 16:20 UTC (README, "Reproduction
// benchmark"), each floor one or two cases below the measurement so that timing noise
// passes and a regression does not. Raise them when the agent improves.
/// Measured 1.00 (30/30).
const SYMPTOM_ACCURACY_FLOOR: f64 = 0.93;
/// Measured 0.96 (24/25).
const RECALL_AT_5_FLOOR: f64 = 0.88;
/// Measured 0.76 (19/25).
const RULES_REPRODUCTION_FLOOR: f64 = 0.68;
/// Measured 1.00 (5/5).
const LOOP_RECALL_FRAMEWORKS_FLOOR: f64 = 0.8;

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/repro-suite")
}

/// tests/repro-real: real reports, split into development and held-out cases.
fn real_suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/repro-real")
}

fn needs_framework(requires: &[String]) -> bool {
    requires.iter().any(|p| p == "torch" || p == "tensorflow")
}

#[test]
fn the_suite_has_enough_well_formed_cases() {
    // load_suite parses every case.json (symptom names included) and checks that the files
    // it names exist in the case's project.
    let cases = load_suite(&suite_dir()).expect("every case of the suite loads");
    assert!(
        cases.len() >= 25,
        "the suite has {} cases; the benchmark needs at least 25",
        cases.len()
    );
    let numpy_only = cases.iter().filter(|c| c.truth.requires == ["numpy"]).count();
    let frameworks = cases.iter().filter(|c| needs_framework(&c.truth.requires)).count();
    assert!(
        numpy_only >= 18,
        "{numpy_only} numpy-only cases; at least 18 must run on a bare machine"
    );
    assert!(frameworks >= 5, "{frameworks} PyTorch/TensorFlow cases; at least 5");
    for case in &cases {
        assert_ne!(
            case.truth.symptom,
            SymptomClass::Unknown,
            "{}: the truth must name a class",
            case.name
        );
        if let Some(project) = &case.project {
            let files = project.python_files().count();
            assert!(
                (3..=12).contains(&files),
                "{}: a project has 3 to 12 Python files, not {files}",
                case.name
            );
        }
    }
    let classes: BTreeSet<SymptomClass> = cases.iter().map(|c| c.truth.symptom).collect();
    assert!(
        classes.len() >= 8,
        "the suite covers only {} symptom classes: {classes:?}",
        classes.len()
    );
}

/// The restructuring keeps the rules' `crash` over an LLM's other class where the rules
/// found the exception a report names (`restructure.rs`). Checked on the reports that may
/// be read: `tests/repro-suite` and `tests/repro-real`'s development split (never the
/// held-out cases): every one the rules call a crash of a named exception is one.
#[test]
fn a_crash_whose_exception_the_rules_name_is_a_crash_in_truth() {
    use replayground_server::repro::report::ParsedReport;
    use replayground_server::repro::restructure::restructure_rules;
    let real = real_suite_dir();
    let development = select_split(&real, load_suite(&real).expect("the real suite loads"), "development")
        .expect("the development split exists");
    let cases: Vec<_> = load_suite(&suite_dir())
        .expect("the suite loads")
        .into_iter()
        .chain(development)
        .collect();
    let mut named = 0;
    for case in &cases {
        let rules = restructure_rules(&ParsedReport::from(case.report.clone()));
        if rules.symptom.class == SymptomClass::Crash && rules.symptom.error_type.is_some() {
            named += 1;
            assert_eq!(case.truth.symptom, SymptomClass::Crash, "{}", case.name);
        }
    }
    assert!(named >= 20, "only {named} of {} reports name their crash", cases.len());
}

#[test]
fn the_real_suite_splits_into_development_and_held_out_cases() {
    // tests/repro-real: the cases looked at while building the agent, and the others,
    // which nothing was fitted to. Every case is in exactly one.
    let dir = real_suite_dir();
    let all: BTreeSet<String> = load_suite(&dir)
        .expect("the real suite loads")
        .into_iter()
        .map(|c| c.name)
        .collect();
    let split = |name| -> BTreeSet<String> {
        select_split(&dir, load_suite(&dir).expect("the real suite loads"), name)
            .expect("the split exists")
            .into_iter()
            .map(|c| c.name)
            .collect()
    };
    let (development, held_out) = (split("development"), split("held_out"));
    assert!(
        development.is_disjoint(&held_out),
        "{:?}",
        development.intersection(&held_out)
    );
    assert_eq!(&development | &held_out, all, "every case is in one split");
    // 20 until 2026-12-03, when 14 moved to development (its transcript showed the agent
    // accepting a Keras error for another reason) and 18 made way for the new case 38; 30
    // from 2026-12-03 (late afternoon), with the 11 posts that need pandas, scikit-learn or torchvision;
    // 29 from 2026-12-04, when 45 moved to development (its wrong acceptance made the agent
    // refuse a run that reads as a warning for a silent bug) and no unconverted post was left;
    // 28 from 2026-12-05, when 34 moved to development (its wrong acceptance, a run whose
    // script printed the report's words itself, made the agent blank a script's own text).
    assert!(held_out.len() >= 28, "{} held-out cases", held_out.len());
    // Those posts are also a split of their own, so that cases no rule has met are reported apart.
    let batch = split("held_out_b");
    assert!(batch.len() >= 10 && batch.is_subset(&held_out), "{batch:?}");

    // `cargo xtask test` runs the `ci` cases with TensorFlow alone installed.
    let ci = select_split(&dir, load_suite(&dir).expect("the real suite loads"), "ci").expect("a ci split");
    assert!(ci.len() >= 3, "{} ci cases", ci.len());
    for case in &ci {
        assert_eq!(
            case.truth.requires.iter().filter(|p| *p != "numpy").collect::<Vec<_>>(),
            ["tensorflow"],
            "{}: the CI subset has TensorFlow and numpy only",
            case.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_stays_above_its_measured_floors() {
    let started = Instant::now();
    let cases = load_suite(&suite_dir()).expect("every case of the suite loads");
    let sandbox = common::real_sandbox();
    let python = PathBuf::from(DEFAULT_PYTHON);
    let agent = AgentConfig {
        attempts_per_context: 3,
        max_contexts: 3,
        run_limits: RunLimits {
            wall_time: Duration::from_secs(10),
            ..AgentConfig::default().run_limits
        },
        ..AgentConfig::default()
    };
    let frameworks: BTreeSet<String> = ["torch".to_owned(), "tensorflow".to_owned()].into();
    let available = probe_packages(sandbox.as_ref(), &python, &agent.run_limits, &frameworks).await;
    let config = BenchConfig {
        deps: AgentDeps::without_models(sandbox, python, None),
        agent,
        llms: Vec::new(),
        variants: vec![Variant::full()],
        concurrency: 2,
        transcripts: None,
    };
    let results = tokio::time::timeout(Duration::from_secs(600), run_suite(cases, config, &mut |_| {}))
        .await
        .expect("the benchmark finishes within 10 minutes");
    let summary = BenchSummary::new("tests/repro-suite", results);
    eprintln!("{}", summary.table());
    eprintln!("benchmark took {:.1}s", started.elapsed().as_secs_f64());

    let mut expected_skips = 0;
    for result in &summary.results {
        let missing = result
            .requires
            .iter()
            .any(|p| available.get(p).is_some_and(Option::is_some));
        if missing {
            expected_skips += 1;
            assert!(
                result.skipped.is_some() && result.runs.is_empty(),
                "{} needs a missing package but ran",
                result.case
            );
        } else {
            assert!(
                result.skipped.is_none(),
                "{} was skipped: {:?}",
                result.case,
                result.skipped
            );
            assert_eq!(result.runs.len(), 1, "{}: one run of the full agent", result.case);
        }
        assert!(result.error.is_none(), "{}: {:?}", result.case, result.error);
    }
    assert_eq!(summary.skipped, expected_skips);
    assert_eq!(summary.skipped_reasons.values().sum::<usize>(), expected_skips);

    let rules = summary
        .reproduction
        .iter()
        .find(|r| r.variant == "full" && r.generator == "rules")
        .expect("a rules row");
    let checks = [
        (
            "symptom classification accuracy",
            summary.symptom_rules.rate,
            SYMPTOM_ACCURACY_FLOOR,
        ),
        (
            "retrieval recall@5",
            summary.retrieval_recall_at_5.rate,
            RECALL_AT_5_FLOOR,
        ),
        (
            "reproduction rate of the rules generator",
            rules.reproduced.rate,
            RULES_REPRODUCTION_FLOOR,
        ),
        (
            "training-loop recall on PyTorch/TensorFlow projects",
            summary.training_loops_frameworks.recall.rate,
            LOOP_RECALL_FRAMEWORKS_FLOOR,
        ),
    ];
    for (what, measured, floor) in checks {
        assert!(
            measured >= floor,
            "{what} fell to {measured:.2}, below its floor {floor:.2}"
        );
    }
    // A reproduction counts only when observed: approximated runs never count.
    for run in summary.results.iter().flat_map(|r| &r.runs) {
        assert!(!(run.reproduced && run.approximated));
    }
}

/// An interpreter the sandbox cannot start (here: behind a folder closed to its uids, as a
/// virtual environment made from pyenv's Python in root's home is) makes every package
/// unavailable with the sandbox's own words, instead of every run reading as a silent
/// crash; Debian's Python starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interpreter_the_sandbox_cannot_start_is_named_not_run() {
    use replayground_server::repro::checks::check_interpreter;
    use std::os::unix::fs::PermissionsExt as _;
    let sandbox = common::real_sandbox();
    let limits = AgentConfig::default().run_limits;
    check_interpreter(sandbox.as_ref(), Path::new(DEFAULT_PYTHON), &limits)
        .await
        .expect("Debian's Python starts in the sandbox");

    let closed = std::env::temp_dir().join(format!("replayground-closed-{}", std::process::id()));
    std::fs::create_dir_all(closed.join("bin")).unwrap();
    std::os::unix::fs::symlink(DEFAULT_PYTHON, closed.join("bin/python3")).unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
    // The sandbox runs programs as other uids when this test runs as root (CI); otherwise
    // as this user, who may enter the folder: a path that does not exist stands in.
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    let python = if root {
        closed.join("bin/python3")
    } else {
        closed.join("missing/python3")
    };
    let broken = check_interpreter(sandbox.as_ref(), &python, &limits).await;
    let packages: BTreeSet<String> = ["numpy".to_owned()].into();
    let probed = probe_packages(sandbox.as_ref(), &python, &limits, &packages).await;
    std::fs::remove_dir_all(&closed).unwrap();
    let message = broken.expect_err("the interpreter cannot start");
    assert!(message.contains("cannot start"), "{message}");
    assert_eq!(probed["numpy"].as_deref(), Some(message.as_str()));
}
