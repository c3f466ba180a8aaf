//! Where a frame goes right after a line event: a class body's first line, and the
//! statement a frame returns or raises in ([`super::frame_end`]).

use replayground_shared::Action;

use super::Bounds;
use super::tests::{after_one, before_one, trajectory};

#[test]
fn a_class_body_goes_from_its_class_line_to_its_first_statement_and_returns_none() {
    let code = "class Node:\n    def __init__(self, value):\n        self.value = value\n\n\nclass Leaf(Node):\n    def __init__(self):\n        super().__init__(0)\n\n\nroot = Node(1)\n";
    let header = |class: &str, line: u32| {
        trajectory(
            code,
            &[
                (&format!("<|line|>{line} 0 <module> <|vars|>{{}}"), None),
                (
                    &format!("<|call|>{line} 1 {class} <|vars|>{{}}"),
                    Some(Action::StepInto),
                ),
                (
                    &format!("<|line|>{line} 1 {class} <|vars|>{{}}"),
                    Some(Action::StepInto),
                ),
            ],
        )
    };
    let prefix = header("Node", 1);
    for action in [Action::StepInto, Action::StepOver] {
        let next = Bounds::after(&prefix, action);
        assert!(next.admits("<|line|>2 1 Node <|vars|>{}"));
        assert!(!next.admits("<|line|>1 1 Node <|vars|>{}"), "the class line runs once");
        assert!(
            !next.admits(r#"<|return|>1 1 Node <|vars|>{} <|value|>"None""#),
            "binding __module__ cannot end the body"
        );
    }
    // The body returns on its last statement's line (the tracer hides `__init__`), with
    // None...
    let last = after_one(code, "<|line|>2 1 Node <|vars|>{}", Action::StepInto);
    assert!(last.admits(r#"<|return|>2 1 Node <|vars|>{} <|value|>"None""#));
    assert!(!last.admits(r#"<|return|>2 1 Node <|vars|>{} <|value|>"1""#));
    // ...but one whose methods call super() returns its __class__ cell.
    let cell = after_one(code, "<|line|>7 1 Leaf <|vars|>{}", Action::StepInto);
    assert!(cell.admits(r#"<|return|>7 1 Leaf <|vars|>{} <|value|>"<cell: empty>""#));
}

#[test]
fn a_function_returns_or_raises_right_after_a_line_only_within_its_statement() {
    let code = "def pick(xs, k):\n    first = xs[k]\n    if first:\n        return first\n    total = sum(xs); return total\n\n\ndef read(path):\n    with open(path) as f:\n        return f.read()\n\n\npick([1], 0)\n";
    let from = |line: u32, vars: &str| format!("<|line|>{line} 1 pick <|vars|>{vars}");
    let at_2 = after_one(code, &from(2, r#"{"xs":"[1]","k":"0"}"#), Action::StepInto);
    let raised = |line: u32| {
        format!(
            r#"<|exception|>{line} 1 pick <|vars|>{{"xs":"..","k":".."}} <|value|>"IndexError('list index out of range')""#
        )
    };
    assert!(at_2.admits(&raised(2)));
    assert!(!at_2.admits(&raised(3)), "raised elsewhere than in its statement");
    let at_4 = after_one(code, &from(4, r#"{"xs":"[1]","k":"0","first":"1"}"#), Action::StepOver);
    assert!(at_4.admits(r#"<|return|>4 1 pick <|vars|>{"xs":"..","k":"..","first":".."} <|value|>"1""#));
    assert!(!at_4.admits(r#"<|return|>5 1 pick <|vars|>{"xs":"..","k":"..","first":".."} <|value|>"1""#));
    // Two statements on one line: either may end the frame.
    let at_5 = after_one(code, &from(5, r#"{"xs":"[1]","k":"0","first":"0"}"#), Action::StepOver);
    assert!(at_5.admits(r#"<|return|>5 1 pick <|vars|>{"xs":"..","k":"..","first":"..","total":"1"} <|value|>"1""#));
    // Inside a `with`, the manager's exit runs between the `return` and the return event.
    let in_with = after_one(
        code,
        r#"<|line|>10 1 read <|vars|>{"path":"'x'","f":"<_io.TextIOWrapper>"}"#,
        Action::StepOver,
    );
    assert!(in_with.admits(r#"<|return|>9 1 read <|vars|>{"path":"..","f":".."} <|value|>"''""#));
}

#[test]
fn no_step_back_and_no_earlier_state_of_an_inverse_trajectory_is_the_end() {
    let code = "x = 1\nprint(x)\n";
    for action in [
        Action::ReverseStepInto,
        Action::ReverseStepOver,
        Action::ReverseContinue,
    ] {
        let back = before_one(code, r#"<|line|>2 0 <module> <|vars|>{"x":"1"}"#, action);
        assert!(!back.admits("<|end|>"), "{action:?}");
        assert!(back.admits("<|line|>1 0 <module> <|vars|>{}"), "{action:?}");
    }
    // Forward, a run can end.
    let on = after_one(code, r#"<|line|>2 0 <module> <|vars|>{"x":"1"}"#, Action::Continue);
    assert!(on.admits("<|end|>"));
}

#[test]
fn a_class_bodys_last_definition_returns_on_its_header() {
    let code = "class Node:\n    def __init__(self, value):\n        self.value = value\n\n\nroot = Node(1)\n";
    let last = after_one(code, "<|line|>2 1 Node <|vars|>{}", Action::StepInto);
    assert!(last.admits(r#"<|return|>2 1 Node <|vars|>{} <|value|>"None""#));
    assert!(!last.admits(r#"<|return|>1 1 Node <|vars|>{} <|value|>"None""#));
}

#[test]
fn stepping_back_past_a_statement_that_calls_one_function_twice_reaches_its_return() {
    let code =
        "def move(x):\n    return x + 1\n\n\ndef other():\n    return 0\n\n\nout = [move(1), move(2)]\nprint(out)\n";
    let back = before_one(
        code,
        r#"<|line|>10 0 <module> <|vars|>{"move":"<function move>","other":"<function other>","out":"[2, 3]"}"#,
        Action::ReverseStepInto,
    );
    assert!(back.admits(r#"<|return|>2 1 move <|vars|>{"x":"2"} <|value|>"3""#));
    assert!(
        !back.admits(r#"<|return|>6 1 other <|vars|>{} <|value|>"0""#),
        "other is never called"
    );
    assert!(!back.admits(r#"<|line|>9 0 <module> <|vars|>{"move":"<function move>","other":"<function other>"}"#));
}
