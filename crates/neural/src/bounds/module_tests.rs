//! The module's frame across several statements: what a step over shows.

use replayground_shared::Action;

use replayground_shared::trace_lang::Direction;

use super::Bounds;
use super::tests::{after_one, trajectory};

const PAY: &str = include_str!("../../../../tests/neural-real/programs/25_custom_exception.py");

#[test]
fn a_step_over_a_def_keeps_the_class_before_it() {
    let prefix = trajectory(
        PAY,
        &[
            ("<|line|>1 0 <module> <|vars|>{}", Some(Action::StepOver)),
            (
                r#"<|line|>7 0 <module> <|vars|>{"InsufficientFunds":"<class '__main__.InsufficientFunds'>"}"#,
                None,
            ),
        ],
    );
    let over = Bounds::after(&prefix, Action::StepOver);
    assert!(over.admits(r#"<|line|>13 0 <module> <|vars|>{"InsufficientFunds":"..","pay":"<function pay>"}"#));
    assert!(
        !over.admits(r#"<|line|>13 0 <module> <|vars|>{"pay":"<function pay>"}"#),
        "the class the module showed is shown again"
    );
}

#[test]
fn the_module_may_lose_only_the_names_it_unbinds() {
    let code = "a = 1\ntry:\n    b = int('x')\nexcept ValueError as err:\n    b = 0\n    d = 1\nc = 2\nx = 3\ndel x\nprint(a, b, c)\n";
    let facts = super::CodeFacts::new(code).expect("parses");
    assert!(facts.names_kept);
    let err = r#""err":"ValueError(\"invalid literal for int() with base 10: 'x'\")""#;
    // In the handler, err is shown; a name bound there comes after it (a dict keeps order).
    let handling = after_one(
        code,
        &format!(r#"<|line|>5 0 <module> <|vars|>{{"a":"1",{err}}}"#),
        Action::StepOver,
    );
    assert!(handling.admits(r#"<|line|>6 0 <module> <|vars|>{"a":"..","err":"..","b":"0"}"#));
    // Past the handler: err is gone; the others stay, in their order.
    let over = after_one(
        code,
        &format!(r#"<|line|>6 0 <module> <|vars|>{{"a":"1",{err},"b":"0"}}"#),
        Action::StepOver,
    );
    assert!(over.admits(r#"<|line|>7 0 <module> <|vars|>{"a":"..","b":"..","d":"1"}"#));
    assert!(
        !over.admits(r#"<|line|>7 0 <module> <|vars|>{"b":"..","d":"1"}"#),
        "a stays"
    );
    assert!(
        !over.admits(r#"<|line|>7 0 <module> <|vars|>{"a":"..","d":"1"}"#),
        "b stays"
    );
    // `del x` at the module: past it, x is not required although `x = 3` always binds it.
    let deleted = after_one(
        code,
        r#"<|line|>9 0 <module> <|vars|>{"a":"1","b":"0","d":"1","c":"2","x":"3"}"#,
        Action::StepOver,
    );
    assert!(deleted.admits(r#"<|line|>10 0 <module> <|vars|>{"a":"..","b":"..","d":"..","c":".."}"#));
    assert!(
        !deleted.admits(r#"<|line|>10 0 <module> <|vars|>{"a":"..","b":"..","c":".."}"#),
        "d stays"
    );
}

#[test]
fn a_jump_to_event_n_is_at_most_n_minus_one_deep() {
    // `import` may raise, so the module's events past its first line are not foretold.
    let code = "import math\n\n\ndef f(n):\n    return g(n)\n\n\ndef g(n):\n    return math.floor(n)\n\n\nf(1)\n";
    let from = "<|line|>9 2 g <|vars|>{\"n\":\"1\"}";
    let jump = |n| after_one(code, from, Action::Jump(n));
    assert!(jump(1).admits("<|line|>1 0 <module> <|vars|>{}"));
    assert!(
        !jump(1).admits("<|call|>4 1 f <|vars|>{\"n\":\"1\"}"),
        "event 1 is the first line"
    );
    assert!(jump(2).admits("<|call|>4 1 f <|vars|>{\"n\":\"1\"}"));
    assert!(
        !jump(2).admits("<|call|>8 2 g <|vars|>{\"n\":\"1\"}"),
        "two calls take two events after the first line"
    );
    assert!(jump(3).admits("<|call|>8 2 g <|vars|>{\"n\":\"1\"}"));
}

#[test]
fn a_jump_into_the_statements_that_neither_call_nor_raise_lands_on_their_lines() {
    let code = "def f(n):\n    return g(n)\n\n\ndef g(n):\n    return n\n\n\nlimit = 3\nf(limit)\n";
    let from = "<|line|>6 2 g <|vars|>{\"n\":\"3\"}";
    let jump = |n| after_one(code, from, Action::Jump(n));
    assert!(jump(2).admits("<|line|>5 0 <module> <|vars|>{\"f\":\"<function f>\"}"));
    assert!(!jump(2).admits("<|line|>9 0 <module> <|vars|>{\"f\":\"<function f>\"}"));
    assert!(!jump(2).admits("<|call|>1 1 f <|vars|>{\"n\":\"3\"}"));
    let fourth = "<|line|>10 0 <module> <|vars|>{\"f\":\"<function f>\",\"g\":\"<function g>\",\"limit\":\"3\"}";
    assert!(jump(4).admits(fourth));
    assert!(!jump(3).admits(fourth), "event 3 is the assignment's line");
    assert!(
        jump(5).admits("<|call|>1 1 f <|vars|>{\"n\":\"3\"}"),
        "past them, any frame"
    );
}

#[test]
fn an_object_of_the_main_module_is_of_a_class_the_program_writes() {
    let code = "def merge(intervals):\n    return intervals\n\n\nbusy = merge([(9, 11)])\nprint(busy)\n";
    let over = after_one(code, "<|line|>1 0 <module> <|vars|>{}", Action::StepOver);
    let mut scan = over.scan();
    assert!(scan.feed(br#"<|line|>5 0 <module> <|vars|>{"merge":"<functi"#));
    let mut scan = over.scan();
    assert!(
        !scan.feed(br#"<|line|>5 0 <module> <|vars|>{"merge":"<__main__.m"#),
        "no class is named like a function"
    );
    let made = "from collections import namedtuple\nP = namedtuple('Pair', 'a b')\np = P(1, 2)\n";
    let facts = super::CodeFacts::new(made).expect("parses");
    assert!(facts.classes.as_ref().is_some_and(|c| c.iter().any(|c| c == "Pair")));
}

#[test]
fn a_def_bound_once_at_the_module_always_shows_its_repr() {
    use replayground_shared::trace_lang::{Direction, Trajectory};
    let code = "class Shop:\n    pass\n\n\ndef restock(n):\n    return n + 1\n\n\nstock = restock(1)\nprint(stock)\n";
    let end = super::tests::trajectory(code, &[("<|end|>", None)]);
    let end = Trajectory {
        direction: Direction::Inverse,
        ..end
    };
    let back = super::Guide::after(&end, Action::ReverseStepInto);
    let last = r#"<|return|>10 0 <module> <|vars|>{"Shop":"<class '__main__.Shop'>","restock":"<function restock>","stock":"2"} <|value|>"None""#;
    assert!(back.admits(last));
    assert!(
        !back.admits(&last.replace("<function restock>", "2")),
        "restock is only ever the function"
    );
    assert!(!back.admits(&last.replace("<class '__main__.Shop'>", "<class '__main__.Other'>")));
    // After a state of the module that shows it, it is unchanged.
    let after_call =
        r#"<|line|>9 0 <module> <|vars|>{"Shop":"<class '__main__.Shop'>","restock":"<function restock>"}"#;
    let over = after_one(code, after_call, Action::StepOver);
    assert!(over.admits(r#"<|line|>10 0 <module> <|vars|>{"Shop":"..","restock":"..","stock":"2"}"#));
    // A name bound twice is left to the model.
    let twice = format!("{code}restock = None\n");
    let again = super::tests::trajectory(&twice, &[("<|end|>", None)]);
    let again = Trajectory {
        direction: Direction::Inverse,
        ..again
    };
    let back = super::Guide::after(&again, Action::ReverseStepInto);
    assert!(back.admits(r#"<|return|>11 0 <module> <|vars|>{"Shop":"<class '__main__.Shop'>","restock":"None","stock":"2"} <|value|>"None""#));
}

#[test]
fn a_function_shows_what_its_statements_before_this_one_bound() {
    let code = "def total(items):\n    acc = 0\n    n = len(items)\n    for x in items:\n        acc += x\n    return acc / n\n\n\nprint(total([1, 2]))\n";
    let bounds = after_one(
        code,
        r#"<|call|>1 1 total <|vars|>{"items":"[1, 2]"}"#,
        Action::Breakpoint(6),
    );
    assert!(bounds.admits(r#"<|line|>6 1 total <|vars|>{"items":"..","acc":"3","n":"2","x":"2"}"#));
    assert!(
        bounds.admits(r#"<|line|>6 1 total <|vars|>{"items":"..","acc":"3","n":"2"}"#),
        "the loop may never bind x"
    );
    assert!(
        !bounds.admits(r#"<|line|>6 1 total <|vars|>{"items":"..","acc":"3","x":"2"}"#),
        "n was bound before the loop"
    );
}

#[test]
fn a_function_need_not_show_a_name_it_declares_or_deletes() {
    let code = "def f():\n    global seen\n    seen = 1\n    tmp = 2\n    del tmp\n    return seen\n\n\nf()\n";
    let into = after_one(code, "<|call|>1 1 f <|vars|>{}", Action::Breakpoint(6));
    assert!(into.admits("<|line|>6 1 f <|vars|>{}"));
}

#[test]
fn the_module_lists_its_names_in_the_order_its_statements_first_bind_them() {
    let code = "scores = [3, 1]\n\n\ndef top(xs):\n    return max(xs)\n\n\nbest = top(scores)\nif best > 2:\n    flag = True\nprint(best)\n";
    let mut prefix = trajectory(code, &[("<|end|>", None)]);
    prefix.direction = Direction::Inverse;
    let bounds = Bounds::after(&prefix, Action::ReverseStepInto);
    let end = |vars: &str| format!("<|return|>11 0 <module> <|vars|>{{{vars}}} <|value|>\"None\"");
    assert!(bounds.admits(&end(
        r#""scores":"[3, 1]","top":"<function top>","best":"3","flag":"True""#
    )));
    assert!(
        !bounds.admits(&end(
            r#""top":"<function top>","scores":"[3, 1]","best":"3","flag":"True""#
        )),
        "scores is always bound before top"
    );
    assert!(
        !bounds.admits(&end(
            r#""scores":"[3, 1]","top":"<function top>","flag":"True","best":"3""#
        )),
        "best is always bound before the branch can bind flag"
    );
}

#[test]
fn a_name_is_refused_before_an_earlier_name_the_module_must_show() {
    let code = "orders = [1, 2]\n\n\ndef total(rows):\n    return sum(rows)\n\n\ncount = total(orders)\nprint(count)\n";
    let prefix = trajectory(code, &[("<|line|>1 0 <module> <|vars|>{}", None)]);
    let bounds = Bounds::after(&prefix, Action::Jump(4));
    let mut scan = bounds.scan();
    assert!(scan.feed(br#"<|line|>9 0 <module> <|vars|>{""#));
    assert!(
        !scan.clone().feed(br#"total""#),
        "orders must come first, and nothing can come before it once total is written"
    );
    assert!(scan.feed(br#"orders":"[1, 2]","total":"<function total>","count":"3"}"#));
}

#[test]
fn a_step_from_a_module_line_raises_or_returns_only_in_that_statement() {
    let code = "def f():\n    return 1\n\n\nx = f(); y = [\n    1,\n]\nz = x + y\nprint(z)\n";
    let step = |from: &str, action| after_one(code, from, action);
    let from_def = step("<|line|>1 0 <module> <|vars|>{}", Action::StepInto);
    let mut scan = from_def.scan();
    assert!(
        !scan.feed(b"<|return|>9"),
        "a later statement starts with its own line event"
    );
    assert!(from_def.admits(r#"<|exception|>1 0 <module> <|vars|>{} <|value|>"NameError('x')""#));
    let from_x = step(r#"<|line|>5 0 <module> <|vars|>{"f":"<function f>"}"#, Action::StepOver);
    for line in [5, 6] {
        let exception =
            format!(r#"<|exception|>{line} 0 <module> <|vars|>{{"f":"..","x":"1"}} <|value|>"MemoryError()""#);
        assert!(from_x.admits(&exception), "{exception}");
    }
    assert!(!from_x.admits(r#"<|exception|>8 0 <module> <|vars|>{"f":"..","x":"1","y":"[1]"} <|value|>"TypeError()""#));
}

#[test]
fn names_one_statement_binds_enter_the_module_in_the_order_it_stores_them() {
    let code = "def pair():\n    return 'nut', 1\n\n\nitem, position = pair()\nfirst = last = item\nprint(item)\n";
    let over = after_one(
        code,
        r#"<|line|>5 0 <module> <|vars|>{"pair":"<function pair>"}"#,
        Action::StepOver,
    );
    assert!(over.admits(r#"<|line|>6 0 <module> <|vars|>{"pair":"..","item":"'nut'","position":"1"}"#));
    assert!(!over.admits(r#"<|line|>6 0 <module> <|vars|>{"pair":"..","position":"1","item":"'nut'"}"#));
    let chained = after_one(
        code,
        r#"<|line|>6 0 <module> <|vars|>{"pair":"<function pair>","item":"'nut'","position":"1"}"#,
        Action::StepOver,
    );
    assert!(chained.admits(
        r#"<|line|>7 0 <module> <|vars|>{"pair":"..","item":"..","position":"..","first":"'nut'","last":"'nut'"}"#
    ));
    assert!(!chained.admits(
        r#"<|line|>7 0 <module> <|vars|>{"pair":"..","item":"..","position":"..","last":"'nut'","first":"'nut'"}"#
    ));
    // A `:=` may store on one branch only: its statement's order is left open.
    let walrus = "flag = True\na, b = (c := 1) if flag else 0, 2\nprint(a)\n";
    let over = after_one(
        walrus,
        r#"<|line|>2 0 <module> <|vars|>{"flag":"True"}"#,
        Action::StepOver,
    );
    assert!(over.admits(r#"<|line|>3 0 <module> <|vars|>{"flag":"..","c":"1","a":"1","b":"2"}"#));
}

#[test]
fn the_module_returns_where_a_statement_may_raise_or_at_its_last_and_a_raising_assignment_binds_nothing() {
    let code =
        "def check(r):\n    return r\n\n\nrecords = [1, 2]\nvalid, errors = [], []\nout = check(records)\nprint(out)\n";
    let names = r#""check":"<function check>","records":"[1, 2]","valid":"[]","errors":"[]""#;
    let back_from_end = super::tests::before_one(code, "<|end|>", Action::ReverseStepInto);
    let from_5 = after_one(
        code,
        r#"<|line|>5 0 <module> <|vars|>{"check":"<function check>"}"#,
        Action::StepReturn,
    );
    for bounds in [&back_from_end, &from_5] {
        let returned = |line: u32, out: bool| {
            let out = if out { r#","out":"[1, 2]""# } else { "" };
            bounds.admits(&format!(
                r#"<|return|>{line} 0 <module> <|vars|>{{{names}{out}}} <|value|>"None""#
            ))
        };
        assert!(returned(8, true), "the run ended");
        assert!(returned(7, false), "`check` raised");
        assert!(
            !returned(6, false),
            "more follows, and an assignment that raised bound nothing"
        );
        let at_6 = r#"<|return|>6 0 <module> <|vars|>{"check":"<function check>","records":"[1, 2]"} <|value|>"None""#;
        assert!(!bounds.admits(at_6), "unpacking as many literals as names cannot raise");
        assert!(
            !returned(7, true),
            "an assignment that raised bound nothing, and one that did not goes on to line 8"
        );
    }
    // The last statement may have completed: its names may be bound at the return.
    let last = code.replace("print(out)\n", "");
    let back = super::tests::before_one(&last, "<|end|>", Action::ReverseStepInto);
    assert!(back.admits(&format!(
        r#"<|return|>7 0 <module> <|vars|>{{{names},"out":"[1, 2]"}} <|value|>"None""#
    )));
    // A module's annotation is evaluated after the store: `out: T = …` may raise with
    // `out` bound (CPython 3.11: `x: Undefined = 1` binds `x`, then raises NameError).
    let annotated = code.replace("out = check(records)", "out: Checked = check(records)");
    let back = super::tests::before_one(&annotated, "<|end|>", Action::ReverseStepInto);
    assert!(back.admits(&format!(
        r#"<|return|>7 0 <module> <|vars|>{{{names},"out":"[1, 2]"}} <|value|>"None""#
    )));
    // Two statements on one line: the second may be the one that raised.
    let shared = code.replace("out = check(records)\n", "out = check(records); n = len(out)\n");
    let back = super::tests::before_one(&shared, "<|end|>", Action::ReverseStepInto);
    assert!(back.admits(&format!(
        r#"<|return|>7 0 <module> <|vars|>{{{names},"out":"[1, 2]"}} <|value|>"None""#
    )));
}
