//! The names a frame shows that the program's text decides beyond its scopes: parameters
//! past a call, a handler's name, the qualified names in a function's repr, and where a
//! decorated definition starts.

use replayground_shared::Action;

use super::tests::{after_one, before_one};

#[test]
fn past_its_call_a_function_always_shows_its_parameters() {
    let code = "def make(start, step):\n    count = start\n    def tick():\n        nonlocal count\n        count += step\n        return count\n    return tick\n\n\ntick = make(10, 5)\nprint(tick())\n";
    let back = before_one(
        code,
        r#"<|line|>11 0 <module> <|vars|>{"make":"<function make>","tick":"<function make.<locals>.tick>"}"#,
        Action::ReverseStepInto,
    );
    let whole = r#"<|return|>7 1 make <|vars|>{"start":"10","step":"5","count":"10","tick":"<function make.<locals>.tick>"} <|value|>"<function make.<locals>.tick>""#;
    assert!(back.admits(whole));
    assert!(
        !back.admits(
            r#"<|return|>7 1 make <|vars|>{"count":"10","tick":"<function make.<locals>.tick>"} <|value|>"<function make.<locals>.tick>""#
        ),
        "the parameters are bound until the frame returns"
    );
    assert!(
        !back.admits(
            r#"<|return|>7 1 make <|vars|>{"start":"10","step":"5","count":"10","tick":"<function make.tick>"} <|value|>"<function make.<locals>.tick>""#
        ),
        "a nested function's name holds its enclosing function's locals"
    );
    // A parameter the body deletes may be gone.
    let deleting = "def f(a, b):\n    del a\n    return b\n\n\nx = f(1, 2)\nprint(x)\n";
    let back = before_one(
        deleting,
        r#"<|line|>7 0 <module> <|vars|>{"f":"<function f>","x":"2"}"#,
        Action::ReverseStepInto,
    );
    assert!(back.admits(r#"<|return|>3 1 f <|vars|>{"b":"2"} <|value|>"2""#));
}

#[test]
fn a_handlers_name_is_not_bound_on_its_except_line() {
    let code = "def safe(line):\n    try:\n        return int(line)\n    except ValueError as exc:\n        return f'bad: {exc}'\n\n\nprint(safe('4, five'))\n";
    let at = after_one(
        code,
        r#"<|line|>8 0 <module> <|vars|>{"safe":"<function safe>"}"#,
        Action::Breakpoint(4),
    );
    assert!(at.admits(r#"<|line|>4 1 safe <|vars|>{"line":"'4, five'"}"#));
    assert!(!at.admits(r#"<|line|>4 1 safe <|vars|>{"line":"'4, five'","exc":"ValueError('x')"}"#));
    let inside = after_one(
        code,
        r#"<|line|>8 0 <module> <|vars|>{"safe":"<function safe>"}"#,
        Action::Breakpoint(5),
    );
    assert!(inside.admits(r#"<|line|>5 1 safe <|vars|>{"line":"'4, five'","exc":"ValueError('x')"}"#));
}

#[test]
fn a_decorated_definition_starts_on_its_first_decorator() {
    let code =
        "from dataclasses import dataclass\n\n\n@dataclass\nclass Reading:\n    city: str\n\n\nr = Reading('Oslo')\n";
    let over = after_one(code, "<|line|>1 0 <module> <|vars|>{}", Action::StepOver);
    assert!(over.admits(r#"<|line|>4 0 <module> <|vars|>{"dataclass":"<function dataclass>"}"#));
    assert!(!over.admits(r#"<|line|>5 0 <module> <|vars|>{"dataclass":"<function dataclass>"}"#));
}
