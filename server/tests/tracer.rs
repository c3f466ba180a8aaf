//! What `tracer.py` records for small programs: event sequences, frames, locals, values,
//! output and outcomes. Runs in bubblewrap when it is installed, otherwise directly (these
//! are the test's own programs).

use std::sync::Arc;

use replayground_server::runner::{DEFAULT_PYTHON, Tracer};
use replayground_server::sandbox::{Bubblewrap, BubblewrapConfig, RunLimits, Sandbox, Unsandboxed};
use replayground_shared::trace::Shape;
use replayground_shared::{EventKind, Limit, Outcome, Trace, Value};

fn tracer(limits: RunLimits) -> Tracer {
    let sandbox: Arc<dyn Sandbox> = match Bubblewrap::detect(BubblewrapConfig::default()) {
        Ok(bwrap) => Arc::new(bwrap),
        Err(e) => {
            eprintln!("running the tracer without a sandbox: {e}");
            Arc::new(Unsandboxed::new())
        }
    };
    Tracer::new(sandbox, DEFAULT_PYTHON, limits)
}

async fn trace_with(code: &str, stdin: &str, limits: RunLimits) -> Trace {
    let trace = tracer(limits).trace(code, stdin).await.expect("the sandbox runs");
    trace.validate().expect("a valid trace");
    trace
}

async fn trace(code: &str) -> Trace {
    trace_with(code, "", RunLimits::default()).await
}

/// (kind, function, line) of every event.
fn steps(trace: &Trace) -> Vec<(EventKind, String, u32)> {
    trace
        .events
        .iter()
        .map(|e| (e.kind, trace.frame(e.frame).function.clone(), e.line))
        .collect()
}

/// The value bound to `name` at event `index`.
fn local<'t>(trace: &'t Trace, index: usize, name: &str) -> &'t Value {
    let binding = trace.events[index]
        .locals
        .iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("no local {name} at event {index}"));
    trace.value(binding.value)
}

#[tokio::test]
async fn a_function_call_is_call_line_return() {
    use EventKind::{Call, Line, Return};
    let t = trace("def f(a):\n    b = a + 1\n    return b\n\nx = f(1)\n").await;
    let expected = [
        (Call, "<module>", 1),
        (Line, "<module>", 1),
        (Line, "<module>", 5),
        (Call, "f", 1),
        (Line, "f", 2),
        (Line, "f", 3),
        (Return, "f", 3),
        (Return, "<module>", 5),
    ];
    let expected: Vec<_> = expected.iter().map(|&(k, f, l)| (k, f.to_owned(), l)).collect();
    assert_eq!(steps(&t), expected);
    assert_eq!(t.outcome, Outcome::Finished);

    let f = t.events[3].frame;
    assert_eq!(t.frame(f).depth, 1);
    assert_eq!(t.frame(f).parent, Some(t.events[0].frame));
    assert!(!t.frame(f).called_from_library);
    assert_eq!(local(&t, 3, "a").repr, "1");
    assert_eq!(local(&t, 6, "b").repr, "2");
    assert_eq!(t.value(t.events[6].value.unwrap()).repr, "2");
    assert_eq!(local(&t, 7, "x").repr, "2");
    // Module level: the user's globals, without dunders.
    let names: Vec<&str> = t.events[7].locals.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["f", "x"]);
}

#[tokio::test]
async fn a_generator_keeps_one_frame_across_resumptions() {
    let code = "def gen(n):\n    for i in range(n):\n        yield i\n\nfor v in gen(2):\n    w = v\ndef other():\n    return 1\nother()\n";
    let t = trace(code).await;
    let gen_frames: Vec<usize> = t
        .frames
        .iter()
        .enumerate()
        .filter(|(_, f)| f.function == "gen")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(gen_frames.len(), 1, "{:?}", t.frames);
    let generator = gen_frames[0] as u32;
    assert!(t.frame(generator).is_generator);
    let calls = t
        .events
        .iter()
        .filter(|e| e.frame == generator && e.kind == EventKind::Call)
        .count();
    let returns: Vec<String> = t
        .events
        .iter()
        .filter(|e| e.frame == generator && e.kind == EventKind::Return)
        .map(|e| t.value(e.value.unwrap()).repr.clone())
        .collect();
    assert_eq!(calls, 3, "two yields and the final return");
    assert_eq!(returns, ["0", "1", "None"]);
    // A frame created after the generator finished is a new one, even if Python reuses the address.
    let other = t.frames.iter().position(|f| f.function == "other").unwrap();
    assert_ne!(other as u32, generator);

    // close() at a yield: GeneratorExit in the generator, then its real return.
    let t = trace("def gen():\n    yield 1\n    yield 2\n\ng = gen()\nnext(g)\ng.close()\nh = gen()\nnext(h)\n").await;
    let gens: Vec<u32> = (0..t.frames.len() as u32)
        .filter(|&f| t.frame(f).function == "gen")
        .collect();
    assert_eq!(gens.len(), 2, "a closed generator's frame is not reused");
    let exit = t.events.iter().find(|e| e.kind == EventKind::Exception).unwrap();
    assert!(exit.generator_exit && !exit.internal);
    assert_eq!(t.value(exit.value.unwrap()).type_name, "GeneratorExit");
}

#[tokio::test]
async fn a_class_and_its_instances() {
    let code = "class Point:\n    def __init__(self, x):\n        self.x = x\n        self.tag = 'p'\n\np = Point(3)\n";
    let t = trace(code).await;
    assert!(
        t.frames.iter().any(|f| f.function == "Point"),
        "the class body is a frame"
    );
    let init = t.frames.iter().position(|f| f.function == "__init__").unwrap() as u32;
    assert!(!t.frame(init).called_from_library);
    let last = t.events.len() - 1;
    let p = local(&t, last, "p");
    assert_eq!(p.type_name, "Point");
    let Shape::Object {
        attrs,
        truncated: false,
    } = &p.shape
    else {
        panic!("{:?}", p.shape)
    };
    let attrs: Vec<(&str, &str)> = attrs
        .iter()
        .map(|b| (b.name.as_str(), t.value(b.value).repr.as_str()))
        .collect();
    assert_eq!(attrs, [("x", "3"), ("tag", "'p'")]);
}

#[tokio::test]
async fn a_caught_exception_is_an_event_and_the_run_goes_on() {
    let t = trace("try:\n    1 / 0\nexcept ZeroDivisionError:\n    caught = True\n").await;
    let exc = t.events.iter().find(|e| e.kind == EventKind::Exception).unwrap();
    assert_eq!(exc.line, 2);
    assert_eq!(
        t.value(exc.value.unwrap()).repr,
        "ZeroDivisionError('division by zero')"
    );
    assert!(!exc.generator_exit && !exc.internal);
    assert_eq!(t.outcome, Outcome::Finished);
    assert_eq!(local(&t, t.events.len() - 1, "caught").repr, "True");
}

#[tokio::test]
async fn an_uncaught_exception_ends_the_run_with_its_traceback() {
    use EventKind::{Exception, Return};
    let t = trace("def f():\n    raise ValueError('boom')\n\nf()\n").await;
    assert_eq!(
        t.outcome,
        Outcome::UncaughtException {
            exception_type: "ValueError".into(),
            message: "boom".into(),
            line: Some(2)
        }
    );
    assert!(
        t.stderr.starts_with("Traceback (most recent call last):\n"),
        "{}",
        t.stderr
    );
    assert!(
        t.stderr
            .contains("File \"main.py\", line 2, in f\n    raise ValueError('boom')"),
        "{}",
        t.stderr
    );
    assert!(
        !t.stderr.contains("<string>"),
        "the tracer's own frames are hidden: {}",
        t.stderr
    );
    let kinds: Vec<EventKind> = t.events.iter().rev().take(4).map(|e| e.kind).collect();
    assert_eq!(kinds, [Return, Exception, Return, Exception]);
}

#[tokio::test]
async fn aliases_share_an_object_id() {
    let t = trace("x = [1, 2]\ny = x\nz = [1, 2]\n").await;
    let last = t.events.len() - 1;
    let (x, y, z) = (local(&t, last, "x"), local(&t, last, "y"), local(&t, last, "z"));
    assert_eq!(x.object_id, y.object_id);
    assert_ne!(x.object_id, z.object_id);
    assert_eq!(x.repr, z.repr);
    // Identical values are interned once.
    let binding = |n: &str| t.events[last].locals.iter().find(|b| b.name == n).unwrap().value;
    assert_eq!(binding("x"), binding("y"));
    assert_ne!(binding("x"), binding("z"));
}

#[tokio::test]
async fn containers_have_structured_shapes() {
    let code = "d = {'a': [1, (2, 3)], 'b': {4}}\nlong = list(range(10))\ndeep = [[[[1]]]]\nme = []\nme.append(me)\n";
    let limits = RunLimits {
        max_items: 4,
        max_depth: 3,
        ..RunLimits::default()
    };
    let t = trace_with(code, "", limits).await;
    let last = t.events.len() - 1;
    let d = local(&t, last, "d");
    let Shape::Dict {
        entries,
        truncated: false,
    } = &d.shape
    else {
        panic!("{:?}", d.shape)
    };
    let (k, v) = entries[0];
    assert_eq!(t.value(k).repr, "'a'");
    let Shape::List { items, .. } = &t.value(v).shape else {
        panic!()
    };
    assert!(matches!(t.value(items[1]).shape, Shape::Tuple { .. }));
    assert!(matches!(t.value(entries[1].1).shape, Shape::Set { .. }));

    let long = local(&t, last, "long");
    let Shape::List { items, truncated: true } = &long.shape else {
        panic!("{:?}", long.shape)
    };
    assert_eq!(items.len(), 4);

    // deep[0][0][0] is at depth 3: not expanded.
    let deep = local(&t, last, "deep");
    let mut v = deep;
    for _ in 0..3 {
        let Shape::List { items, .. } = &v.shape else {
            panic!("{:?}", v.shape)
        };
        v = t.value(items[0]);
    }
    assert_eq!(v.shape, Shape::Elided);
    assert_eq!(v.repr, "[1]");

    let me = local(&t, last, "me");
    assert_eq!(me.repr, "[[...]]");
    let Shape::List { items, .. } = &me.shape else { panic!() };
    assert_eq!(t.value(items[0]).shape, Shape::Elided, "a cycle is elided");
}

#[tokio::test]
async fn long_and_hostile_reprs_are_cut_or_replaced() {
    let code = "big = list(range(100000))\ns = 'x' * 5000\nclass Bad:\n    def __repr__(self):\n        raise ValueError('no')\nb = Bad()\n";
    let t = trace_with(
        code,
        "",
        RunLimits {
            repr_chars: 50,
            ..RunLimits::default()
        },
    )
    .await;
    let last = t.events.len() - 1;
    let big = local(&t, last, "big");
    assert_eq!(big.repr.chars().count(), 50);
    assert_eq!(
        big.repr,
        replayground_shared::trace::cut_repr(&format!("{:?}", (0..100).collect::<Vec<_>>()), 50)
    );
    assert_eq!(local(&t, last, "s").repr, format!("'{}...", "x".repeat(46)));
    assert_eq!(local(&t, last, "b").repr, "<repr failed: ValueError>");
    assert_eq!(t.outcome, Outcome::Finished);
}

#[tokio::test]
async fn output_lengths_grow_with_each_print() {
    let t = trace("print('a')\nprint('bé')\nimport sys\nsys.stderr.write('oops\\n')\nx = 1\n").await;
    assert_eq!(t.stdout, "a\nbé\n");
    assert_eq!(t.stderr, "oops\n");
    let lens: Vec<u32> = t.events.iter().map(|e| e.stdout_len).collect();
    assert!(lens.windows(2).all(|w| w[0] <= w[1]), "{lens:?}");
    let at_line = |line: u32| {
        t.events
            .iter()
            .find(|e| e.kind == EventKind::Line && e.line == line)
            .unwrap()
    };
    assert_eq!(at_line(2).stdout_len, 2);
    assert_eq!(at_line(3).stdout_len, 6, "bytes, not characters");
    assert_eq!(at_line(5).stderr_len, 5);
    assert_eq!(t.stdout_at(t.events.len()), "a\nbé\n");
}

#[tokio::test]
async fn stdin_is_the_given_text() {
    let t = trace_with(
        "name = input()\nrest = input('> ')\n",
        "Ada\nLovelace\n",
        RunLimits::default(),
    )
    .await;
    let last = t.events.len() - 1;
    assert_eq!(local(&t, last, "name").repr, "'Ada'");
    assert_eq!(local(&t, last, "rest").repr, "'Lovelace'");
    assert_eq!(t.stdout, "> ");

    let t = trace("input()\n").await;
    assert!(matches!(&t.outcome, Outcome::UncaughtException { exception_type, .. } if exception_type == "EOFError"));
}

#[tokio::test]
async fn sys_exit_is_an_exit_status() {
    let t = trace("import sys\nprint('bye')\nsys.exit(3)\n").await;
    assert_eq!(t.outcome, Outcome::Exited { code: 3 });
    assert_eq!(t.stdout, "bye\n");
    let t = trace("import sys\nsys.exit('fatal')\n").await;
    assert_eq!(t.outcome, Outcome::Exited { code: 1 });
    assert_eq!(t.stderr, "fatal\n");
    assert_eq!(trace("raise SystemExit\n").await.outcome, Outcome::Exited { code: 0 });
}

#[tokio::test]
async fn a_syntax_error_has_a_position_and_no_events() {
    let t = trace("x = 1\nif x\n    pass\n").await;
    let Outcome::SyntaxError { line, column, .. } = &t.outcome else {
        panic!("{:?}", t.outcome)
    };
    assert_eq!(*line, Some(2));
    assert!(column.is_some());
    assert!(t.events.is_empty());
    assert!(t.stderr.contains("SyntaxError"), "{}", t.stderr);
}

#[tokio::test]
async fn callbacks_from_library_code_are_traced() {
    let t = trace("r = sorted([3, 1, 2], key=lambda v: -v)\nimport json\ns = json.dumps([1])\n").await;
    let lambdas: Vec<_> = t.frames.iter().filter(|f| f.function == "<lambda>").collect();
    assert_eq!(lambdas.len(), 3);
    // sorted() is C code: the lambda's caller is the module frame itself.
    assert!(lambdas.iter().all(|f| f.depth == 1 && f.parent == Some(0)));
    // No frame of json's own (library) code is recorded.
    assert!(t.frames.iter().all(|f| f.function != "dumps" && f.function != "encode"));

    let t = trace("import functools\ndef add(a, b):\n    return a + b\nn = functools.reduce(add, [1, 2, 3])\nclass K:\n    def __eq__(self, o):\n        return True\nimport operator\nok = operator.eq(K(), 1)\nimport heapq\nh = heapq.nsmallest(1, [K()], key=lambda k: 0)\n").await;
    let lambda = t.frames.iter().find(|f| f.function == "<lambda>").unwrap();
    assert!(lambda.called_from_library, "heapq.nsmallest is Python code");
}

#[tokio::test]
async fn limits_end_the_trace_with_an_outcome() {
    let t = trace_with(
        "while True:\n    pass\n",
        "",
        RunLimits {
            max_events: 500,
            ..RunLimits::default()
        },
    )
    .await;
    assert!(
        matches!(
            t.outcome,
            Outcome::LimitReached {
                limit: Limit::Events,
                ..
            }
        ),
        "{:?}",
        t.outcome
    );
    assert_eq!(t.events.len(), 500);

    let limits = RunLimits {
        max_output_bytes: 1000,
        ..RunLimits::default()
    };
    let t = trace_with("while True:\n    print('x' * 30)\n", "", limits).await;
    assert!(
        matches!(
            t.outcome,
            Outcome::LimitReached {
                limit: Limit::Output,
                ..
            }
        ),
        "{:?}",
        t.outcome
    );
    assert_eq!(t.stdout.len(), 1000);

    let t = trace("def f(n):\n    return f(n + 1)\nf(0)\n").await;
    assert!(
        matches!(
            t.outcome,
            Outcome::LimitReached {
                limit: Limit::RecursionDepth,
                ..
            }
        ),
        "{:?}",
        t.outcome
    );
    assert!(t.frames.len() > 900);

    let t = trace("x = bytearray(10 * 1024 ** 3)\n").await;
    assert!(
        matches!(
            t.outcome,
            Outcome::LimitReached {
                limit: Limit::Memory,
                ..
            }
        ),
        "{:?}",
        t.outcome
    );
}

#[tokio::test]
async fn raw_writes_to_fd_1_cannot_corrupt_the_trace() {
    let t = trace("import os\nos.write(1, b'{\"t\":\"x\"}\\n')\nos.write(2, b'junk')\nprint('fine')\n").await;
    assert_eq!(t.outcome, Outcome::Finished);
    assert_eq!(t.stdout, "fine\n");
}

#[tokio::test]
async fn mutations_show_at_the_next_step() {
    let t = trace("xs = [1, 2]\nxs.append(3)\nxs[0] = 10\nd = {'a': 1}\nd['a'] = 2\ndone = True\n").await;
    let at_line = |line: u32| {
        t.events
            .iter()
            .position(|e| e.kind == EventKind::Line && e.line == line)
            .unwrap()
    };
    assert_eq!(local(&t, at_line(2), "xs").repr, "[1, 2]");
    assert_eq!(local(&t, at_line(3), "xs").repr, "[1, 2, 3]");
    assert_eq!(local(&t, at_line(4), "xs").repr, "[10, 2, 3]");
    assert_eq!(local(&t, at_line(5), "d").repr, "{'a': 1}");
    assert_eq!(local(&t, at_line(6), "d").repr, "{'a': 2}");
    assert_eq!(
        local(&t, at_line(2), "xs").object_id,
        local(&t, at_line(4), "xs").object_id
    );
}
