//! How frames start and how the module runs: calls, class bodies, the module's order.

use replayground_shared::Action;
use std::collections::BTreeSet;

use replayground_shared::trace_lang::Direction;

use super::tests::{after_one, state, trajectory};
use super::*;

/// The bounds on the state one `reverse_step_into` before `from` in a run of `code`.
fn one_step_back(code: &str, from: &str) -> Bounds {
    Bounds::new(
        code,
        Some(&state(from, None)),
        Direction::Inverse,
        Action::ReverseStepInto,
        &BTreeSet::new(),
    )
}

#[test]
fn a_call_shows_its_parameters_and_then_nothing_new() {
    let code = "def area(w, h=2, *rest, scale: int = 1, **opts):\n    out = w * h\n    return out\n\n\nx = area(3)\n";
    let into = after_one(
        code,
        r#"<|line|>6 0 <module> <|vars|>{"area":"<function area>"}"#,
        Action::StepInto,
    );
    let call = r#"<|call|>1 1 area <|vars|>{"w":"3","h":"2","rest":"()","scale":"1","opts":"{}"}"#;
    assert!(into.admits(call));
    assert!(
        !into.admits(r#"<|call|>1 1 area <|vars|>{"w":"3","h":"2","rest":"()","scale":"1","opts":"{}","out":"6"}"#),
        "a local is not bound yet"
    );
    assert!(
        !into.admits(r#"<|call|>1 1 area <|vars|>{"w":"3","h":"2"}"#),
        "every parameter is bound"
    );
    assert!(
        !into.admits(r#"<|call|>1 1 area <|vars|>{"w":"3","h":"2","rest":"()","scale":"1","opts":"{}","int":"1"}"#),
        "an annotation is not a parameter"
    );
    // The frame's first line shows the same names, unchanged.
    let prefix = trajectory(
        code,
        &[
            (r#"<|line|>6 0 <module> <|vars|>{"area":"<function area>"}"#, None),
            (call, Some(Action::StepInto)),
        ],
    );
    let into = Bounds::after(&prefix, Action::StepInto);
    assert!(into.admits(r#"<|line|>2 1 area <|vars|>{"w":"..","h":"..","rest":"..","scale":"..","opts":".."}"#));
    assert!(!into.admits(r#"<|line|>2 1 area <|vars|>{"w":"4","h":"..","rest":"..","scale":"..","opts":".."}"#));
    assert!(
        !into.admits(r#"<|line|>2 1 area <|vars|>{"w":"..","h":"..","rest":"..","scale":"..","opts":"..","out":"6"}"#)
    );

    // A closure's call also shows the free variables it reads.
    let closure = "def make():\n    count = 0\n    def bump(by):\n        nonlocal count\n        count += by\n        return count\n    return bump\n\n\nb = make()\nb(2)\n";
    let into = after_one(
        closure,
        r#"<|line|>11 0 <module> <|vars|>{"make":"<function make>","b":"<function make.<locals>.bump>"}"#,
        Action::StepInto,
    );
    assert!(into.admits(r#"<|call|>3 1 bump <|vars|>{"by":"2","count":"0"}"#));
    assert!(!into.admits(r#"<|call|>3 1 bump <|vars|>{"by":"2","count":"0","b":"1"}"#));
}

#[test]
fn a_plain_class_body_starts_empty_on_its_first_line_and_binds_its_names() {
    let code = "class Shape:\n    sides = 0\n\n    def area(self):\n        return 0\n\n\ns = Shape()\n";
    let into = after_one(code, "<|line|>1 0 <module> <|vars|>{}", Action::StepInto);
    assert!(into.admits("<|call|>1 1 Shape <|vars|>{}"));
    assert!(!into.admits(r#"<|call|>1 1 Shape <|vars|>{"self":"<__main__.Shape object>"}"#));
    let prefix = trajectory(
        code,
        &[
            ("<|line|>1 0 <module> <|vars|>{}", None),
            ("<|call|>1 1 Shape <|vars|>{}", Some(Action::StepInto)),
        ],
    );
    let into = Bounds::after(&prefix, Action::StepInto);
    assert!(into.admits("<|line|>1 1 Shape <|vars|>{}"));
    assert!(
        !into.admits("<|line|>2 1 Shape <|vars|>{}"),
        "the class line runs first"
    );
    let over = after_one(code, r#"<|line|>4 1 Shape <|vars|>{"sides":"0"}"#, Action::StepOver);
    assert!(
        over.admits(r#"<|return|>4 1 Shape <|vars|>{"sides":"..","area":"<function Shape.area>"} <|value|>"None""#)
    );
    assert!(!over.admits(r#"<|return|>4 1 Shape <|vars|>{"sides":"..","area":"<function area>"} <|value|>"None""#));
    assert!(!over.admits(
        r#"<|return|>4 1 Shape <|vars|>{"sides":"..","area":"<function Shape.area>","s":"1"} <|value|>"None""#
    ));

    // A private name is stored mangled: the names are not bounded then.
    let private = "class Safe:\n    __pin = 1\n\n\ns = Safe()\n";
    let over = after_one(private, "<|line|>2 1 Safe <|vars|>{}", Action::StepOver);
    assert!(over.admits(r#"<|return|>2 1 Safe <|vars|>{"_Safe__pin":"1"} <|value|>"None""#));
}

#[test]
fn a_module_returns_none() {
    let code = "a = 1\nb = [a]\n";
    let back = one_step_back(code, "<|end|>");
    assert!(back.admits(r#"<|return|>2 0 <module> <|vars|>{"a":"1","b":"[1]"} <|value|>"None""#));
    assert!(!back.admits(r#"<|return|>2 0 <module> <|vars|>{"a":"1","b":"[1]"} <|value|>"[1]""#));
    let over = after_one(code, r#"<|line|>2 0 <module> <|vars|>{"a":"1"}"#, Action::StepOver);
    assert!(!over.admits(r#"<|return|>2 0 <module> <|vars|>{"a":"..","b":"[1]"} <|value|>"1""#));
}

#[test]
fn the_module_runs_each_top_level_statement_once_in_order() {
    let code = "def f(n):\n    return n + 1\n\n\na = f(1)\nb = f(a)\nc = [a, b]\n";
    // At line 6 the module has bound f and a, never c.
    let prefix = trajectory(code, &[(r#"<|line|>5 0 <module> <|vars|>{"f":"<function f>"}"#, None)]);
    let into = Bounds::after(&prefix, Action::StepInto);
    assert!(!into.admits(r#"<|line|>6 0 <module> <|vars|>{"f":"..","a":"2","c":"[]"}"#));
    // Once f and a are written no other name can come: the scan says so at the quote
    // (the decoder would otherwise reach a dead end).
    let mut scan = into.scan();
    assert!(!scan.feed(br#"<|line|>6 0 <module> <|vars|>{"f":"..","a":"2",""#));
    // A breakpoint on a line the module has left behind is never hit again.
    let prefix = trajectory(
        code,
        &[
            ("<|line|>1 0 <module> <|vars|>{}", None),
            (
                r#"<|line|>6 0 <module> <|vars|>{"f":"<function f>","a":"2"}"#,
                Some(Action::Breakpoint(6)),
            ),
        ],
    );
    let again = Bounds::after(&prefix, Action::Breakpoint(5));
    assert!(!again.admits(r#"<|line|>5 0 <module> <|vars|>{"f":"<function f>","a":"2"}"#));
    assert!(again.admits("<|end|>"));
    // Stepping back, the module is never at a statement it has not reached.
    let mut back = trajectory(
        code,
        &[(r#"<|line|>6 0 <module> <|vars|>{"f":"<function f>","a":"2"}"#, None)],
    );
    back.direction = Direction::Inverse;
    let before = Bounds::after(&back, Action::ReverseStepInto);
    assert!(!before.admits(r#"<|line|>7 0 <module> <|vars|>{"f":"<function f>","a":"2","b":"3"}"#));
    assert!(before.admits(r#"<|return|>2 1 f <|vars|>{"n":"1"} <|value|>"2""#));
    // A time-travel jump may land anywhere.
    let jump = Bounds::after(&prefix, Action::Jump(2));
    assert!(jump.admits(r#"<|line|>5 0 <module> <|vars|>{"f":"<function f>"}"#));
}

#[test]
fn stepping_back_from_a_line_a_call_or_an_exception_stays_near_its_frame() {
    let code = "def f(n):\n    m = n + 1\n    return m\n\n\ndef g():\n    return f(1) + f(2)\n\n\nx = g()\n";
    let back = |from: &str| one_step_back(code, from);
    // Before f's line 2: f's call, never the caller's line.
    let before = back(r#"<|line|>2 2 f <|vars|>{"n":"1"}"#);
    assert!(before.admits(r#"<|call|>1 2 f <|vars|>{"n":".."}"#));
    assert!(!before.admits("<|line|>7 1 g <|vars|>{}"));
    // Before a call: the caller's line, or the return of the call before it on that line.
    let before = back(r#"<|call|>1 2 f <|vars|>{"n":"2"}"#);
    assert!(before.admits("<|line|>7 1 g <|vars|>{}"));
    assert!(before.admits(r#"<|return|>3 2 f <|vars|>{"n":"1","m":"2"} <|value|>"2""#));
    assert!(!before.admits(r#"<|line|>2 2 f <|vars|>{"n":"1"}"#));
    assert!(!before.admits(r#"<|line|>10 0 <module> <|vars|>{"f":"<function f>","g":"<function g>"}"#));
    // Before an exception: the statement that raised it, or the callee it came out of.
    let before = back(r#"<|exception|>7 1 g <|vars|>{} <|value|>"ZeroDivisionError('division by zero')""#);
    assert!(before.admits("<|line|>7 1 g <|vars|>{}"));
    assert!(before.admits(r#"<|return|>3 2 f <|vars|>{"n":"1","m":"2"} <|value|>"None""#));
    assert!(!before.admits(r#"<|line|>10 0 <module> <|vars|>{"f":"<function f>","g":"<function g>"}"#));
}

#[test]
fn stepping_back_from_a_line_unchanged_names_are_unchanged() {
    let code = "def f(n):\n    m = n + 1\n    k = 2\n    return m * k\n\n\nx = f(1)\n";
    let back = |from: &str| one_step_back(code, from);
    let before = back(r#"<|line|>4 1 f <|vars|>{"n":"1","m":"2","k":"2"}"#);
    // Line 3 binds k alone: n and m were as they are now.
    assert!(before.admits(r#"<|line|>3 1 f <|vars|>{"n":"..","m":".."}"#));
    assert!(!before.admits(r#"<|line|>3 1 f <|vars|>{"n":"..","m":"5"}"#));
    assert!(
        !before.admits(r#"<|line|>3 1 f <|vars|>{"n":"..","m":"..","z":"1"}"#),
        "no name it does not show now"
    );
    let before = back(r#"<|line|>2 1 f <|vars|>{"n":"1"}"#);
    assert!(before.admits(r#"<|call|>1 1 f <|vars|>{"n":".."}"#));
    assert!(!before.admits(r#"<|call|>1 1 f <|vars|>{"n":"0"}"#));
}

#[test]
fn a_key_is_admitted_only_where_one_name_meets_every_bound() {
    let code = "def make():\n    count = 0\n    def bump():\n        nonlocal count\n        count += 1\n        return count\n    return bump\n\n\ntick = make()\nc = tick()\nprint(c)\n";
    let from =
        r#"<|line|>12 0 <module> <|vars|>{"make":"<function make>","tick":"<function make.<locals>.bump>","c":"1"}"#;
    let before = one_step_back(code, from);
    // Back at line 11 the module has not bound `c` yet, and `count` is no global: nothing
    // that starts with `c` can come.
    let mut scan = before.scan();
    assert!(!scan.feed(br#"<|line|>11 0 <module> <|vars|>{"make":"..","tick":"..","c"#));
    assert!(before.admits(r#"<|line|>11 0 <module> <|vars|>{"make":"..","tick":".."}"#));
}
