//! Tracer throughput and sandbox start-up, each against a baseline measured in the same run.
//!
//! - `tracer/traced` vs `tracer/untraced`: a loop-heavy program under the tracer and as
//!   plain `python3 -c` in the same sandbox; throughput is in trace events per second.
//! - `startup/sandboxed_empty` vs `startup/bare_python`: an empty program in the sandbox
//!   vs spawning `python3 -c pass` directly; `startup/traced_empty` adds the tracer.
//!
//! At the end the ratios (traced / untraced, sandboxed / bare) are printed from medians
//! of a few extra runs. Uses bubblewrap when installed, otherwise runs unsandboxed.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use replayground_server::runner::{DEFAULT_PYTHON, Tracer};
use replayground_server::sandbox::{Bubblewrap, BubblewrapConfig, Job, RunLimits, Sandbox, Termination, Unsandboxed};
use replayground_shared::Outcome;
use tokio::runtime::Runtime;

const LOOP_PROGRAM: &str = "\
def step(i, acc):
    return (acc + i * i) % 1000003

total = 0
items = []
for i in range(6000):
    total = step(i, total)
    if i % 100 == 0:
        items.append(total)
";

fn sandbox() -> (Arc<dyn Sandbox>, &'static str) {
    match Bubblewrap::detect(BubblewrapConfig::default()) {
        Ok(bwrap) => (Arc::new(bwrap), "bubblewrap"),
        Err(e) => {
            eprintln!("benchmarking without a sandbox: {e}");
            (Arc::new(Unsandboxed::new()), "no sandbox")
        }
    }
}

fn limits() -> RunLimits {
    RunLimits {
        max_events: 10_000_000,
        ..RunLimits::default()
    }
}

fn untraced_job(code: &str) -> Job {
    Job {
        program: PathBuf::from(DEFAULT_PYTHON),
        args: vec![OsString::from("-s"), OsString::from("-c"), OsString::from(code)],
        stdin: Vec::new(),
        limits: limits(),
    }
}

fn run_traced(rt: &Runtime, tracer: &Tracer, code: &str) -> usize {
    let trace = rt.block_on(tracer.trace(code, "")).expect("the sandbox runs");
    assert_eq!(trace.outcome, Outcome::Finished);
    trace.events.len()
}

fn run_untraced(rt: &Runtime, sandbox: &Arc<dyn Sandbox>, code: &str) {
    let report = rt
        .block_on(sandbox.run(untraced_job(code), &mut replayground_server::sandbox::discard))
        .expect("the sandbox runs");
    assert_eq!(report.termination, Termination::Exited(0), "{}", report.stderr);
}

fn run_bare(rt: &Runtime) {
    let status = rt
        .block_on(async {
            tokio::process::Command::new(DEFAULT_PYTHON)
                .args(["-s", "-c", "pass"])
                .status()
                .await
        })
        .expect("python3 runs");
    assert!(status.success());
}

fn median(mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..7)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let (sandbox, kind) = sandbox();
    let tracer = Tracer::new(Arc::clone(&sandbox), DEFAULT_PYTHON, limits());
    let events = run_traced(&rt, &tracer, LOOP_PROGRAM);

    let mut group = c.benchmark_group("tracer");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Elements(events as u64));
    group.bench_function("traced", |b| b.iter(|| run_traced(&rt, &tracer, LOOP_PROGRAM)));
    group.bench_function("untraced", |b| b.iter(|| run_untraced(&rt, &sandbox, LOOP_PROGRAM)));
    group.finish();

    let mut group = c.benchmark_group("startup");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("bare_python", |b| b.iter(|| run_bare(&rt)));
    group.bench_function("sandboxed_empty", |b| b.iter(|| run_untraced(&rt, &sandbox, "pass")));
    group.bench_function("traced_empty", |b| b.iter(|| run_traced(&rt, &tracer, "pass")));
    group.finish();

    let traced = median(|| {
        run_traced(&rt, &tracer, LOOP_PROGRAM);
    });
    let untraced = median(|| run_untraced(&rt, &sandbox, LOOP_PROGRAM));
    let bare = median(|| run_bare(&rt));
    let sandboxed = median(|| run_untraced(&rt, &sandbox, "pass"));
    let traced_empty = median(|| {
        run_traced(&rt, &tracer, "pass");
    });
    let tracing_only = traced.saturating_sub(traced_empty).as_secs_f64();
    eprintln!("\nsummary ({kind}, medians of 7 runs):");
    eprintln!(
        "  tracer: {events} events in {traced:.1?} = {:.0} events/s end to end, {:.0} events/s past start-up",
        events as f64 / traced.as_secs_f64(),
        events as f64 / tracing_only.max(1e-9),
    );
    eprintln!(
        "  overhead: traced / untraced (same sandbox) = {:.1}x ({traced:.1?} vs {untraced:.1?})",
        traced.as_secs_f64() / untraced.as_secs_f64()
    );
    eprintln!(
        "  start-up: sandboxed empty / bare python3 -c pass = {:.2}x ({sandboxed:.1?} vs {bare:.1?}); traced empty {traced_empty:.1?}",
        sandboxed.as_secs_f64() / bare.as_secs_f64()
    );
}

criterion_group!(tracer_benches, benches);
criterion_main!(tracer_benches);
