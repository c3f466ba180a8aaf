//! `cargo xtask test`: every check CI runs, in order, stopping at the first failure.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::project::{Project, format_duration, run};
use crate::{architecture, cuda, frontend, gpu_train, neural_mode, postgres, repro_real, setup};

const WASM: &str = "wasm32-unknown-unknown";

type Check = fn(&Project) -> Result<()>;

/// A failure `test` has already explained, so `main` only sets the exit status.
#[derive(Debug)]
pub(crate) struct Reported;

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a check failed (see above)")
    }
}

impl std::error::Error for Reported {}

/// Cheap checks first, so a formatting slip fails in seconds rather than after the builds.
const CHECKS: [(&str, Check); 14] = [
    ("setup", setup::setup_for_tests),
    ("fmt", fmt),
    ("architecture", architecture::check),
    ("clippy", clippy),
    ("clippy (wasm)", clippy_wasm),
    ("check (cuda)", cuda::check),
    ("test", cargo_test),
    ("gpu-train (smoke)", gpu_train_smoke),
    ("check shared (wasm)", check_shared_wasm),
    ("build frontend", build_frontend),
    ("browser tests", browser_tests),
    ("end-to-end tests", end_to_end),
    ("neural mode (default engine)", neural_mode::check),
    ("repro-real (CI subset)", repro_real::ci_subset),
];

/// A cold `cargo xtask test` wrote 4.2 GB under the target directory (measured on a clean
/// clone, 2026-11-29), plus room to spare; with less, the linker dies mid-build with a
/// bus error.
const COLD_BUILD_BYTES: u64 = 6 << 30;

pub(crate) fn test(project: &Project) -> Result<()> {
    let started = Instant::now();
    let target = project.target_dir();
    match free_disk(&target) {
        Some(free) if free < COLD_BUILD_BYTES => println!(
            "xtask test: WARNING: only {} free under {} and a cold run writes about {}; \
             a full disk shows up as the linker failing with a bus error",
            gib(free),
            target.display(),
            gib(COLD_BUILD_BYTES)
        ),
        Some(free) => println!("xtask test: {} free under {}", gib(free), target.display()),
        None => {}
    }
    let mut timings: Vec<(&str, Duration)> = Vec::new();
    for (i, (name, check)) in CHECKS.iter().enumerate() {
        println!("\n==> [{}/{}] {name}", i + 1, CHECKS.len());
        let step_started = Instant::now();
        let result = check(project);
        let took = step_started.elapsed();
        timings.push((name, took));
        match result {
            Ok(()) => println!("<== {name}: ok in {}", format_duration(took)),
            Err(error) => {
                println!("<== {name}: FAILED after {}: {error:#}", format_duration(took));
                println!(
                    "\nxtask test: FAILED at {name} ({}) | {}",
                    format_duration(started.elapsed()),
                    summary(&timings)
                );
                if let Some(free) = free_disk(&target) {
                    println!(
                        "xtask test: {} free under {} at the failure",
                        gib(free),
                        target.display()
                    );
                }
                return Err(Reported.into());
            }
        }
    }
    println!(
        "\nxtask test: all {} steps ok ({}) | {}",
        timings.len(),
        format_duration(started.elapsed()),
        summary(&timings)
    );
    Ok(())
}

/// Free bytes on the file system holding `path` (or its nearest existing parent),
/// from coreutils' `df`; `None` when it cannot tell.
fn free_disk(path: &Path) -> Option<u64> {
    let existing = path.ancestors().find(|dir| dir.exists())?;
    let output = Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(existing)
        .output()
        .ok()?;
    String::from_utf8(output.stdout)
        .ok()?
        .lines()
        .nth(1)?
        .trim()
        .parse()
        .ok()
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
}

fn summary(timings: &[(&str, Duration)]) -> String {
    timings
        .iter()
        .map(|(name, took)| format!("{name} {}", format_duration(*took)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn fmt(project: &Project) -> Result<()> {
    run(project.cargo()?.args(["fmt", "--all", "--", "--check"]))
}

fn clippy(project: &Project) -> Result<()> {
    run(project
        .cargo()?
        .args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]))
}

fn clippy_wasm(project: &Project) -> Result<()> {
    run(project.cargo()?.args([
        "clippy",
        "-p",
        "replayground-frontend",
        "--target",
        WASM,
        "--all-targets",
        // Lint the browser benchmarks too; they are compiled here but never run.
        "--features",
        "browser-bench",
        "--",
        "-D",
        "warnings",
    ]))
}

/// All Rust tests; the store and API tests also run on a throwaway Postgres when one
/// can be started (otherwise the reason is printed and they use SQLite only). `setup`
/// installed bubblewrap, so a sandbox test that finds none fails instead of skipping.
fn cargo_test(project: &Project) -> Result<()> {
    let mut cmd = project.cargo()?;
    cmd.args(["test", "--workspace"])
        .env("REPLAYGROUND_TEST_REQUIRE_SANDBOX", "1");
    let cluster = match postgres::Cluster::start() {
        Ok(cluster) => {
            println!("postgres: throwaway cluster at {}", cluster.url);
            cmd.env(postgres::URL_VARIABLE, &cluster.url);
            Some(cluster)
        }
        Err(why) => {
            println!("postgres: not tested: {why:#}");
            None
        }
    };
    let result = run(&mut cmd);
    drop(cluster);
    result
}

/// The GPU training bundle's `run.sh`, run here on the CPU with a tiny model and a small
/// corpus: everything the GPU machine would run except CUDA itself.
fn gpu_train_smoke(project: &Project) -> Result<()> {
    let out = tempfile::tempdir()?;
    gpu_train::gpu_train(
        project,
        &gpu_train::Options {
            out: out.path().join("bundle"),
            corpus: None,
            programs: 300,
            // The real code takes longer to trace than the rest of the smoke run.
            generated_only: true,
            corpus_args: Vec::new(),
            smoke: true,
        },
    )
}

fn check_shared_wasm(project: &Project) -> Result<()> {
    run(project
        .cargo()?
        .args(["check", "-p", "replayground-shared", "--target", WASM]))
}

fn build_frontend(project: &Project) -> Result<()> {
    frontend::build(project, true)?;
    frontend::check_playground_wasm_size(project)
}

/// The page in headless Chromium against the real server (tests/e2e).
fn end_to_end(project: &Project) -> Result<()> {
    frontend::e2e(project, false)
}

/// The frontend's wasm-bindgen-test tests, headless in Debian's Chromium: every file of
/// frontend/tests except the timed benchmarks (`bench`, built only with `browser-bench`;
/// cargo's `--test '*'` would refuse it for the missing feature).
fn browser_tests(project: &Project) -> Result<()> {
    let mut tests: Vec<String> = std::fs::read_dir(project.root.join("frontend/tests"))?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let path = entry.path();
            let stem = path.file_stem()?.to_str()?.to_owned();
            (path.extension()? == "rs" && stem != "bench").then_some(stem)
        })
        .collect();
    tests.sort();
    let mut cmd = project.cargo()?;
    cmd.args(["test", "-p", "replayground-frontend", "--target", WASM]);
    for test in &tests {
        cmd.args(["--test", test]);
    }
    run(cmd
        .env("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER", "wasm-bindgen-test-runner")
        .env("CHROMEDRIVER", "/usr/bin/chromedriver"))
}
