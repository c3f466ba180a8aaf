//! State-tree build time and per-action navigation on a 1M-event trace, against a
//! linear scan over the events (the obvious implementation) as the baseline.

use std::collections::BTreeSet;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use replayground_shared::trace::{
    Binding, Event, EventKind, Frame, Outcome, Shape, TRACE_FORMAT_VERSION, Trace, Value,
};
use replayground_shared::{Action, StateTree, Stop};

/// A module that loops calling `f`, which calls `g`: like
/// `for i in range(n): f(i)` with `def f(x): return g(x) + 1` and `def g(y): return y * 2`.
fn synthetic_trace(target_events: usize) -> Trace {
    let mut frames = vec![Frame {
        function: "<module>".into(),
        parent: None,
        depth: 0,
        is_generator: false,
        called_from_library: false,
    }];
    let values = vec![Value {
        repr: "0".into(),
        type_name: "int".into(),
        object_id: 1,
        shape: Shape::Scalar,
    }];
    let mut events = Vec::with_capacity(target_events + 16);
    let ev = |kind, frame, line| Event {
        kind,
        frame,
        line,
        locals: vec![Binding {
            name: "x".into(),
            value: 0,
        }]
        .into(),
        value: None,
        stdout_len: 0,
        stderr_len: 0,
        internal: false,
        generator_exit: false,
    };
    events.push(ev(EventKind::Call, 0, 1));
    while events.len() < target_events {
        events.push(ev(EventKind::Line, 0, 7));
        events.push(ev(EventKind::Line, 0, 8));
        let f = frames.len() as u32;
        frames.push(Frame {
            function: "f".into(),
            parent: Some(0),
            depth: 1,
            is_generator: false,
            called_from_library: false,
        });
        events.push(ev(EventKind::Call, f, 1));
        events.push(ev(EventKind::Line, f, 2));
        let g = frames.len() as u32;
        frames.push(Frame {
            function: "g".into(),
            parent: Some(f),
            depth: 2,
            is_generator: false,
            called_from_library: false,
        });
        events.push(ev(EventKind::Call, g, 4));
        events.push(ev(EventKind::Line, g, 5));
        events.push(ev(EventKind::Return, g, 5));
        events.push(ev(EventKind::Return, f, 2));
    }
    events.push(ev(EventKind::Line, 0, 10));
    events.push(ev(EventKind::Return, 0, 10));
    Trace {
        version: TRACE_FORMAT_VERSION,
        events,
        frames,
        values,
        stdout: String::new(),
        stderr: String::new(),
        outcome: Outcome::Finished,
    }
}

/// The baseline: find the next line event on a breakpoint line by scanning.
fn linear_continue(trace: &Trace, from: usize, breakpoints: &BTreeSet<u32>) -> Stop {
    trace.events[from + 1..]
        .iter()
        .position(|e| e.kind == EventKind::Line && breakpoints.contains(&e.line))
        .map_or(Stop::End, |k| Stop::Event(from + 1 + k))
}

fn bench(c: &mut Criterion) {
    let trace = synthetic_trace(1_000_000);
    let mut group = c.benchmark_group("state_tree_1m_events");
    group.sample_size(10);
    group.bench_function("build", |b| {
        b.iter(|| StateTree::new(black_box(trace.clone())).unwrap());
    });
    group.bench_function("clone_trace_baseline", |b| b.iter(|| black_box(trace.clone())));
    let tree = StateTree::new(trace.clone()).unwrap();
    let start = tree.initial_stop();
    let far: BTreeSet<u32> = [10].into();
    group.sample_size(50);
    group.bench_function("continue_to_last_breakpoint", |b| {
        b.iter(|| tree.step(black_box(start), Action::Continue, &mut far.clone()));
    });
    group.bench_function("continue_linear_scan_baseline", |b| {
        b.iter(|| linear_continue(&trace, black_box(start.event().unwrap()), &far));
    });
    let mid = Stop::Event(trace.events.len() / 2);
    for action in [
        Action::StepInto,
        Action::StepOver,
        Action::StepReturn,
        Action::ReverseStepOver,
        Action::ReverseStepReturn,
    ] {
        group.bench_function(format!("{action}"), |b| {
            b.iter(|| tree.step(black_box(mid), action, &mut BTreeSet::new()));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
