use replayground_shared::trace_lang::{self, Direction, Step, Trajectory};
use replayground_shared::{Action, State};

use super::*;

const BANK: &str = "\
class Account:
    def __init__(self, owner):
        self.owner = owner
        self.balance = 0

    def deposit(self, amount):
        self.balance += amount
        return self.balance


def squares(n):
    for i in range(n):
        yield i * i


acct = Account(\"ada\")
acct.deposit(25)
total = sum(x for x in squares(3))
double = lambda v: v * 2
";

pub(super) fn state(text: &str, previous: Option<&State>) -> State {
    trace_lang::parse_state(text, previous).unwrap_or_else(|(_, e)| panic!("{e}: {text}"))
}

pub(super) fn trajectory(code: &str, lines: &[(&str, Option<Action>)]) -> Trajectory {
    let mut steps: Vec<Step> = Vec::new();
    for (text, action) in lines {
        let previous = steps.last().map(|s| s.state.clone());
        steps.push(Step {
            action: *action,
            state: state(text, previous.as_ref()),
        });
    }
    Trajectory {
        code: code.to_owned(),
        direction: Direction::Forward,
        steps,
    }
}

#[test]
fn the_code_tells_scopes_lines_and_names() {
    let facts = CodeFacts::new(BANK).expect("parses");
    let names: Vec<&str> = facts.scopes.iter().map(|s| s.name.as_str()).collect();
    for expected in [
        "<module>",
        "Account",
        "__init__",
        "deposit",
        "squares",
        "<genexpr>",
        "<lambda>",
    ] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    let deposit = facts.scopes_named("deposit", 7).next().expect("deposit holds line 7");
    assert_eq!((deposit.first, deposit.last), (6, 8));
    assert!(deposit.names.contains("amount") && deposit.names.contains("self"));
    assert!(!deposit.names.contains("owner_name"));
    assert!(facts.may_be_generator("squares", 12), "squares yields");
    assert!(!facts.may_be_generator("deposit", 7));
    assert!(facts.may_be_generator("<genexpr>", 18));
    let coroutine = CodeFacts::new("async def tick():\n    return 1\n").expect("parses");
    assert!(
        coroutine.may_be_generator("tick", 2),
        "a coroutine resumes like a generator"
    );
    assert!(!facts.code_lines.contains(&5), "a blank line holds no code");
    assert!(facts.code_lines.contains(&16));
    assert!(facts.names_known);
    assert!(!CodeFacts::new("from os import *\nx = 1\n").expect("parses").names_known);
    let handler = "try:\n    x = int('a')\nexcept (TypeError, ValueError) as err:\n    x = 0\n";
    let handler = CodeFacts::new(handler).expect("parses");
    assert!(
        handler.names_kept && handler.unbound.at_depth(0).contains("err"),
        "`as err` unbinds err"
    );
    assert!(CodeFacts::new(BANK).expect("parses").names_kept);
    assert!(CodeFacts::new("def f(:\n").is_none(), "a syntax error bounds nothing");
}

#[test]
fn a_state_outside_the_code_is_refused() {
    let prefix = trajectory(
        BANK,
        &[(
            r#"<|line|>16 0 <module> <|vars|>{"Account":"<class '__main__.Account'>"}"#,
            None,
        )],
    );
    let bounds = Bounds::after(&prefix, Action::Jump(40));
    // Line 17 is the module's: no method runs it, and only the module is at depth 0.
    assert!(bounds.admits(
        r#"<|line|>17 0 <module> <|vars|>{"Account":"..","squares":"<function squares>","acct":"<__main__.Account object>"}"#
    ));
    assert!(
        !bounds.admits(r#"<|line|>17 0 <module> <|vars|>{"Account":"..","acct":"<__main__.Account object>"}"#),
        "the module has run `def squares` by line 17"
    );
    assert!(!bounds.admits(r#"<|line|>17 1 deposit <|vars|>{"amount":"25"}"#));
    assert!(
        !bounds.admits(r#"<|line|>7 0 deposit <|vars|>{"amount":"25"}"#),
        "a function at depth 0"
    );
    assert!(!bounds.admits(r"<|line|>5 1 deposit <|vars|>{}"), "line 5 is blank");
    assert!(!bounds.admits(r"<|line|>99 0 <module> <|vars|>{}"), "past the end");
    assert!(!bounds.admits(r"<|line|>7 1 withdraw <|vars|>{}"), "no such function");
    assert!(
        !bounds.admits(r#"<|line|>7 1 deposit <|vars|>{"amount":"25","w":"0.0"}"#),
        "deposit names no w"
    );
    assert!(
        !bounds.admits(r#"<|line|>7 1 deposit <|vars|>{"amount":"25","amount":"26"}"#),
        "a name twice"
    );
    assert!(bounds.admits(r#"<|line|>7 1 deposit <|vars|>{"self":"<__main__.Account object>","amount":"25"}"#));
    assert!(bounds.admits(r#"<|call|>18 1 <genexpr> <|vars|>{".0":"<generator object>"}"#));
    assert!(bounds.admits("<|end|>"));
    // A frame starts on its first line: a call event elsewhere is refused.
    assert!(bounds.admits(r#"<|call|>6 1 deposit <|vars|>{"self":"<__main__.Account object>","amount":"25"}"#));
    assert!(!bounds.admits(r#"<|call|>7 1 deposit <|vars|>{"self":"<__main__.Account object>","amount":"25"}"#));
    assert!(!bounds.admits(r"<|call|>6 1 __init__ <|vars|>{}"));
    assert!(
        bounds.admits(r#"<|call|>13 2 squares <|vars|>{"n":"3","i":"0"}"#),
        "a generator resumes anywhere"
    );
    // A prefix is judged as far as it goes: `1` may still become 12, 16 or 17.
    let mut scan = bounds.scan();
    assert!(scan.feed(b"<|line|>1"));
    assert!(!scan.clone().feed(b"5 "), "line 15 is blank");
    assert!(scan.feed(b"7 0 <mod"));
}

#[test]
fn the_action_bounds_the_frame_depth_and_event() {
    let inside = [
        (
            r#"<|line|>17 0 <module> <|vars|>{"acct":"<__main__.Account object>"}"#,
            None,
        ),
        (
            r#"<|call|>6 1 deposit <|vars|>{"self":"<__main__.Account object>","amount":"25"}"#,
            Some(Action::StepInto),
        ),
        (
            r#"<|line|>7 1 deposit <|vars|>{"self":"..","amount":".."}"#,
            Some(Action::StepInto),
        ),
    ];
    let prefix = trajectory(BANK, &inside);
    let over = Bounds::after(&prefix, Action::StepOver);
    assert!(over.admits(r#"<|line|>8 1 deposit <|vars|>{"self":"..","amount":".."}"#));
    assert!(
        !over.admits(r#"<|line|>17 0 <module> <|vars|>{"acct":".."}"#),
        "next stays in deposit"
    );
    assert!(!over.admits(r"<|call|>2 2 __init__ <|vars|>{}"));
    assert!(over.admits("<|end|>"), "a run cut by its limits ends anywhere");
    let out = Bounds::after(&prefix, Action::StepReturn);
    assert!(out.admits(r#"<|return|>8 1 deposit <|vars|>{"self":"..","amount":".."} <|value|>"25""#));
    assert!(
        !out.admits(r#"<|line|>8 1 deposit <|vars|>{"self":"..","amount":".."}"#),
        "return stops at the return"
    );
    // The return is deposit's, so a line outside deposit leaves no depth to write.
    assert!(
        !out.scan().feed(b"<|return|>17 "),
        "line 17 is the module's, not deposit's"
    );
    let into = Bounds::after(&trajectory(BANK, &inside[..1]), Action::StepInto);
    assert!(into.admits(r#"<|call|>6 1 deposit <|vars|>{"self":"<__main__.Account object>","amount":"25"}"#));
    assert!(
        !into.admits(r#"<|line|>7 1 deposit <|vars|>{"self":"<__main__.Account object>","amount":"25"}"#),
        "a deeper frame starts with its call event"
    );
    let mut with_break = inside.to_vec();
    with_break[2].1 = Some(Action::Breakpoint(7));
    let cont = Bounds::after(&trajectory(BANK, &with_break), Action::Continue);
    assert!(cont.admits(r#"<|line|>7 1 deposit <|vars|>{"self":"..","amount":".."}"#));
    assert!(
        !cont.admits(r#"<|line|>8 1 deposit <|vars|>{"self":"..","amount":".."}"#),
        "no breakpoint at 8"
    );
    let over = Bounds::after(&trajectory(BANK, &with_break), Action::StepOver);
    assert!(
        !over.admits(r#"<|line|>7 2 deposit <|vars|>{"self":"<__main__.Account object>","amount":"30"}"#),
        "only the module calls deposit"
    );
    let paying = format!("{BANK}\n\ndef pay(a):\n    return a.deposit(30)\n");
    let over = Bounds::after(&trajectory(&paying, &with_break), Action::StepOver);
    assert!(
        over.admits(r#"<|line|>7 2 deposit <|vars|>{"self":"<__main__.Account object>","amount":"30"}"#),
        "a breakpoint stops a step in any frame"
    );
    assert!(!over.admits(r#"<|line|>3 2 __init__ <|vars|>{"self":"<__main__.Account object>"}"#));
}

#[test]
fn a_generator_step_is_not_bounded_to_its_frame() {
    let prefix = trajectory(
        BANK,
        &[
            (r"<|line|>18 0 <module> <|vars|>{}", None),
            (r#"<|line|>12 2 squares <|vars|>{"n":"3"}"#, Some(Action::Jump(9))),
        ],
    );
    let over = Bounds::after(&prefix, Action::StepOver);
    assert!(over.admits(r#"<|line|>18 1 <genexpr> <|vars|>{".0":"<generator object>","x":"0"}"#));
}

const FLOW: &str = "\
def total(xs):
    s = 0
    for x in xs:
        if x < 0:
            continue
        elif x > 100:
            break
        else:
            s += x
    else:
        s += 1
    return s


def safe(a, b):
    try:
        q = a / b
    except ZeroDivisionError:
        q = None
    finally:
        print(\"done\")
    return q


n = total([1, 2])
while n:
    n -= 1
print(safe(1, 0))
";

#[test]
fn the_blocks_tell_where_a_frame_goes_next() {
    let facts = CodeFacts::new(FLOW).expect("parses");
    let next = |event: &str, line: u32, function: &str| {
        let from = state(&format!("<|{event}|>{line} 1 {function} <|vars|>{{}}"), None);
        facts
            .flow_lines(&from)
            .map(|lines| lines.into_iter().collect::<Vec<u32>>())
    };
    let at = |line, function| next("line", line, function);
    // A `def` line leads to the statement after the whole function.
    assert_eq!(at(1, "<module>"), Some(vec![15]));
    assert_eq!(next("call", 1, "total"), Some(vec![2]));
    assert_eq!(at(2, "total"), Some(vec![3]));
    // A loop header: its body, or its `else` once it runs out.
    assert_eq!(at(3, "total"), Some(vec![4, 11]));
    // An `if` goes into its body or on to the `elif`; the `elif` to its body or the `else`.
    assert_eq!(at(4, "total"), Some(vec![5, 6]));
    assert_eq!(at(6, "total"), Some(vec![7, 9]));
    assert_eq!(at(5, "total"), Some(vec![3]), "continue: back to the header");
    assert_eq!(at(7, "total"), Some(vec![12]), "break: past the loop and its else");
    assert_eq!(at(9, "total"), Some(vec![3]), "the end of the body: the header");
    assert_eq!(at(11, "total"), Some(vec![12]));
    assert_eq!(at(12, "total"), Some(vec![]), "return: no line of this frame follows");
    assert_eq!(at(16, "safe"), Some(vec![17]));
    assert_eq!(at(17, "safe"), Some(vec![21]), "no exception: on to finally");
    assert_eq!(at(19, "safe"), Some(vec![21]));
    assert_eq!(at(21, "safe"), Some(vec![22]));
    assert_eq!(
        at(18, "safe"),
        Some(vec![19, 20, 21]),
        "an `except` line: its handler, or on to the `finally`"
    );
    assert_eq!(at(26, "<module>"), Some(vec![27, 28]));
    assert_eq!(at(27, "<module>"), Some(vec![26]), "`while n:` tests n on its line");
    let multi = CodeFacts::new("total = sum(\n    [1, 2],\n)\nprint(total)\n").expect("parses");
    let from = state("<|line|>1 0 <module> <|vars|>{}", None);
    assert_eq!(
        multi.flow_lines(&from).map(|l| l.into_iter().collect::<Vec<u32>>()),
        Some(vec![1, 2, 3, 4]),
        "a statement over three lines may fire on each"
    );
    assert_eq!(at(28, "<module>"), Some(vec![]));
    assert_eq!(at(2, "safe"), None, "line 2 is not safe's");
}

#[test]
fn a_step_over_a_def_lands_after_its_body() {
    let prefix = trajectory(FLOW, &[("<|line|>1 0 <module> <|vars|>{}", None)]);
    let over = Bounds::after(&prefix, Action::StepOver);
    assert!(over.admits(r#"<|line|>15 0 <module> <|vars|>{"total":"<function total>"}"#));
    assert!(!over.admits(r#"<|line|>2 0 <module> <|vars|>{"total":"<function total>"}"#));
    assert!(!over.admits(r#"<|line|>2 1 total <|vars|>{"xs":"[]"}"#));
}

#[test]
fn a_class_body_may_hold_names_its_metaclass_gives() {
    let code = "from enum import Enum\n\n\nclass Colour(Enum):\n    RED = 1\n";
    let prefix = trajectory(
        code,
        &[(r#"<|line|>4 0 <module> <|vars|>{"Enum":"<enum 'Enum'>"}"#, None)],
    );
    let into = Bounds::after(&prefix, Action::StepInto);
    assert!(
        into.admits(r#"<|call|>4 1 Colour <|vars|>{"_generate_next_value_":"<function Enum._generate_next_value_>"}"#)
    );
}

#[test]
fn names_shown_before_are_shown_again_in_their_order() {
    let code = "a = 1\nb = [a]\nc = a + 1\nprint(a, b, c)\n";
    let prefix = trajectory(
        code,
        &[
            (r#"<|line|>2 0 <module> <|vars|>{"a":"1"}"#, None),
            (
                r#"<|line|>3 0 <module> <|vars|>{"a":"..","b":"[1]"}"#,
                Some(Action::StepOver),
            ),
        ],
    );
    let over = Bounds::after(&prefix, Action::StepOver);
    assert!(over.admits(r#"<|line|>4 0 <module> <|vars|>{"a":"..","b":"..","c":"2"}"#));
    assert!(
        !over.admits(r#"<|line|>4 0 <module> <|vars|>{"a":"..","c":"2"}"#),
        "b dropped"
    );
    assert!(
        !over.admits(r#"<|line|>4 0 <module> <|vars|>{"b":"..","a":"..","c":"2"}"#),
        "order changed"
    );
    assert!(
        !over.admits(r#"<|line|>4 0 <module> <|vars|>{"a":"..","c":"2","b":".."}"#),
        "a new name first"
    );
    // Only what line 1 writes can be new at the next event.
    let first = trajectory(code, &[("<|line|>1 0 <module> <|vars|>{}", None)]);
    let over = Bounds::after(&first, Action::StepOver);
    assert!(over.admits(r#"<|line|>2 0 <module> <|vars|>{"a":"1"}"#));
    assert!(
        !over.admits(r#"<|line|>2 0 <module> <|vars|>{"a":"1","b":"[1]"}"#),
        "line 2 has not run"
    );
    let mut scan = over.scan();
    assert!(scan.feed(br#"<|line|>2 0 <module> <|vars|>{"a":"1""#));
    assert!(!scan.clone().feed(b","), "no name can follow a: the entries must end");
    assert!(scan.feed(b"}"));
    let breakpoint = Bounds::after(&first, Action::Breakpoint(4));
    assert!(breakpoint.admits(r#"<|line|>4 0 <module> <|vars|>{"a":"1","b":"[1]","c":"2"}"#));
    // A program that unbinds a name is held to the others.
    let unbinding = format!("{code}del b\n");
    let prefix = Trajectory {
        code: unbinding,
        ..prefix
    };
    let over = Bounds::after(&prefix, Action::StepOver);
    assert!(over.admits(r#"<|line|>4 0 <module> <|vars|>{"a":"..","c":"2"}"#));
    assert!(!over.admits(r#"<|line|>4 0 <module> <|vars|>{"c":"2"}"#), "a stays");
}

#[test]
fn a_functions_locals_keep_their_order_and_new_ones_may_come_between() {
    let prefix = trajectory(
        BANK,
        &[
            (
                r#"<|line|>17 0 <module> <|vars|>{"acct":"<__main__.Account object>"}"#,
                None,
            ),
            (
                r#"<|call|>6 1 deposit <|vars|>{"self":"<__main__.Account object>","amount":"25"}"#,
                Some(Action::StepInto),
            ),
        ],
    );
    let into = Bounds::after(&prefix, Action::StepInto);
    assert!(into.admits(r#"<|line|>7 1 deposit <|vars|>{"self":"..","amount":".."}"#));
    assert!(
        !into.admits(r#"<|line|>7 1 deposit <|vars|>{"amount":".."}"#),
        "self dropped"
    );
    assert!(
        !into.admits(r#"<|line|>7 1 deposit <|vars|>{"amount":"..","self":".."}"#),
        "order changed"
    );
}

#[test]
fn every_state_of_the_worked_examples_is_admitted() {
    for text in crate::in_context::EXAMPLES {
        let trajectory = trace_lang::parse(text).expect("valid");
        assert_every_step_admitted(&trajectory);
    }
}

/// Every step of `trajectory` keeps to the bounds its prefix and action give.
fn assert_every_step_admitted(trajectory: &Trajectory) {
    for e in crate::eval::examples(trajectory).expect("serialises") {
        let bounds = Bounds::after(&e.prefix, e.step_action);
        let text = trace_lang::state_text(&e.expected, Some(&e.previous)).expect("writes");
        assert!(
            bounds.admits(&text),
            "step {} ({}) refused: {text}\nafter {:?}\n{}",
            e.horizon,
            e.action,
            e.previous,
            trajectory.code
        );
    }
}

/// The bounds after one `step` from the line event `from` of `code`.
pub(super) fn after_one(code: &str, from: &str, step: Action) -> Bounds {
    Bounds::after(&trajectory(code, &[(from, None)]), step)
}

/// The bounds on the state a reverse `step` leads to from `from` alone (breakpoints not known).
pub(super) fn before_one(code: &str, from: &str, step: Action) -> Bounds {
    Bounds::new(code, Some(&state(from, None)), Direction::Inverse, step, None)
}

#[test]
fn a_def_binds_its_name_alone_with_the_functions_repr() {
    let code = "def scale(n, k=2):\n    return n * k\n\n\nx = scale(3)\n";
    let over = after_one(code, "<|line|>1 0 <module> <|vars|>{}", Action::StepOver);
    assert!(over.admits(r#"<|line|>5 0 <module> <|vars|>{"scale":"<function scale>"}"#));
    assert!(
        !over.admits(r#"<|line|>5 0 <module> <|vars|>{"scale":"<function scale>","n":"3"}"#),
        "a parameter is not the module's"
    );
    assert!(
        !over.admits(r#"<|line|>5 0 <module> <|vars|>{"scale":"<function f>"}"#),
        "the wrong repr"
    );
    assert!(
        !over.admits("<|line|>5 0 <module> <|vars|>{}"),
        "past the def, its name is bound"
    );

    let nested = "def outer():\n    def inner():\n        return 1\n    f = lambda: 2\n    return inner\n\n\nouter()\n";
    let from = "<|line|>2 1 outer <|vars|>{}";
    let over = after_one(nested, from, Action::StepOver);
    assert!(over.admits(r#"<|line|>4 1 outer <|vars|>{"inner":"<function outer.<locals>.inner>"}"#));
    assert!(!over.admits(r#"<|line|>4 1 outer <|vars|>{"inner":"<function inner>"}"#));
    let from = r#"<|line|>4 1 outer <|vars|>{"inner":"<function outer.<locals>.inner>"}"#;
    let over = after_one(nested, from, Action::StepOver);
    assert!(over.admits(r#"<|line|>5 1 outer <|vars|>{"inner":"..","f":"<function outer.<locals>.<lambda>>"}"#));
}

#[test]
fn a_literal_fixes_its_repr_and_an_inert_statement_changes_nothing_else() {
    let code = "a = 1\nwords = ['x', \"it's\"]\nt, u = 2.50, None\nb = a + 1\nprint(a, b)\n";
    let over = after_one(code, "<|line|>1 0 <module> <|vars|>{}", Action::StepOver);
    assert!(over.admits(r#"<|line|>2 0 <module> <|vars|>{"a":"1"}"#));
    assert!(!over.admits(r#"<|line|>2 0 <module> <|vars|>{"a":"1.0"}"#));
    let over = after_one(code, r#"<|line|>2 0 <module> <|vars|>{"a":"1"}"#, Action::StepOver);
    assert!(over.admits(r#"<|line|>3 0 <module> <|vars|>{"a":"..","words":"['x', \"it's\"]"}"#));
    assert!(
        !over.admits(r#"<|line|>3 0 <module> <|vars|>{"a":"2","words":"['x', \"it's\"]"}"#),
        "a is unchanged"
    );
    let from = r#"<|line|>3 0 <module> <|vars|>{"a":"1","words":"['x']"}"#;
    let over = after_one(code, from, Action::StepOver);
    assert!(over.admits(r#"<|line|>4 0 <module> <|vars|>{"a":"..","words":"..","t":"2.5","u":"None"}"#));
    // A value the state's whole numbers give is fixed too; the names it does not bind stay.
    let from = r#"<|line|>4 0 <module> <|vars|>{"a":"1","words":"['x']","t":"2.5","u":"None"}"#;
    let over = after_one(code, from, Action::StepOver);
    assert!(over.admits(r#"<|line|>5 0 <module> <|vars|>{"a":"..","words":"..","t":"..","u":"..","b":"2"}"#));
    assert!(!over.admits(r#"<|line|>5 0 <module> <|vars|>{"a":"..","words":"..","t":"..","u":"..","b":"7"}"#));
    assert!(!over.admits(r#"<|line|>5 0 <module> <|vars|>{"a":"1","words":"..","t":"..","u":"..","b":"2"}"#));
    // An exception on the line may come before the binding.
    assert!(over.admits(
        r#"<|exception|>4 0 <module> <|vars|>{"a":"..","words":"..","t":"..","u":".."} <|value|>"TypeError('E')""#
    ));
}

#[test]
fn calls_stores_and_hidden_methods_leave_values_to_the_model() {
    let code = "xs = [1]\nys = xs\nxs.append(2)\nys[0] = 5\nn = len(xs)\n";
    let from = r#"<|line|>3 0 <module> <|vars|>{"xs":"[1]","ys":"[1]"}"#;
    let over = after_one(code, from, Action::StepOver);
    assert!(
        over.admits(r#"<|line|>4 0 <module> <|vars|>{"xs":"[1, 2]","ys":"[1, 2]"}"#),
        "a method call"
    );
    let from = r#"<|line|>4 0 <module> <|vars|>{"xs":"[1, 2]","ys":"[1, 2]"}"#;
    let over = after_one(code, from, Action::StepOver);
    assert!(
        over.admits(r#"<|line|>5 0 <module> <|vars|>{"xs":"[5, 2]","ys":"[5, 2]"}"#),
        "a store"
    );
    let from = r#"<|line|>5 0 <module> <|vars|>{"xs":"[5, 2]","ys":"[5, 2]"}"#;
    let over = after_one(code, from, Action::StepOver);
    assert!(
        !over.admits(r#"<|line|>5 0 <module> <|vars|>{"xs":"[5]","ys":"..","n":"2"}"#),
        "len changes nothing"
    );

    let code = "class V:\n    def __add__(self, o):\n        return self\n\n\nv = V()\nw = v + v\nprint(w)\n";
    let from = r#"<|line|>7 0 <module> <|vars|>{"V":"<class '__main__.V'>","v":"<__main__.V object>"}"#;
    let over = after_one(code, from, Action::StepOver);
    assert!(
        over.admits(r#"<|line|>8 0 <module> <|vars|>{"V":"<class 'x'>","v":"..","w":"<__main__.V object>"}"#),
        "a step over may hide the program's own __add__"
    );
    let into = after_one(code, from, Action::StepInto);
    assert!(
        !into.admits(r#"<|line|>8 0 <module> <|vars|>{"V":"<class 'x'>","v":"..","w":"<__main__.V object>"}"#),
        "a step into would have stopped in it"
    );
}

#[test]
fn stepping_back_from_the_end_or_a_return_stays_with_the_statement_that_returned() {
    let code = "def half(x):\n    return x / 2\n\n\nh = half(4)\nprint(h)\n";
    let backwards = |text: &str| {
        let mut t = trajectory(code, &[(text, None)]);
        t.direction = Direction::Inverse;
        Bounds::after(&t, Action::ReverseStepInto)
    };
    let from_end = backwards("<|end|>");
    assert!(from_end.admits(r#"<|return|>6 0 <module> <|vars|>{"half":"<function half>","h":"2.0"} <|value|>"None""#));
    assert!(!from_end.admits(r#"<|line|>6 0 <module> <|vars|>{"half":"<function half>","h":"2.0"}"#));
    assert!(!from_end.admits(r#"<|return|>2 1 half <|vars|>{"x":"4"} <|value|>"2.0""#));
    assert!(
        !from_end.scan().feed(b"<|line|"),
        "refused before its last byte, leaving the decoder a choice"
    );
    assert!(from_end.scan().feed(b"<|return|"));
    assert!(
        !from_end.scan().feed(b"<|end|"),
        "the end comes after the end of nothing"
    );
    assert!(
        !from_end.admits(r#"<|return|>2 0 <module> <|vars|>{"half":"<function half>","h":"2.0"} <|value|>"None""#),
        "the module never stops inside a function's body"
    );

    let from_return =
        backwards(r#"<|return|>6 0 <module> <|vars|>{"half":"<function half>","h":"2.0"} <|value|>"None""#);
    assert!(from_return.admits(r#"<|line|>6 0 <module> <|vars|>{"half":"..","h":".."}"#));
    assert!(
        !from_return.admits(r#"<|line|>6 0 <module> <|vars|>{"half":"..","h":"4"}"#),
        "print changes nothing"
    );
    assert!(
        !from_return.admits(r#"<|line|>5 0 <module> <|vars|>{"half":".."}"#),
        "another line"
    );
    assert!(
        !from_return.admits(r#"<|line|>6 0 <module> <|vars|>{"half":"..","y":"1"}"#),
        "a name not shown after"
    );

    let from_callee =
        backwards(r#"<|return|>5 0 <module> <|vars|>{"half":"<function half>","h":"2.0"} <|value|>"None""#);
    assert!(from_callee.admits(r#"<|return|>2 1 half <|vars|>{"x":"4"} <|value|>"2.0""#));
    assert!(
        !from_callee.admits(r#"<|line|>5 0 <module> <|vars|>{"half":".."}"#),
        "half(4) surely ran between the line and the return"
    );
    assert!(
        !from_callee.admits(r#"<|exception|>5 0 <module> <|vars|>{"half":".."}"#),
        "h is shown, so the statement completed"
    );
    assert!(!from_callee.admits(r#"<|return|>2 1 half <|vars|>{"x":"4"} <|value|>"4""#));
}

#[test]
fn only_a_statement_that_may_skip_its_call_returns_right_after_its_line() {
    let code = "\
def half(x):
    return x / 2


def twice(x):
    yield x


def lazy(flag):
    if flag: return half(1)
    return flag and half(2)


a = half(4)
b = twice(1)
c = [half(n) for n in (1,)]
d = half(1); e = 2
print(half(2))
";
    let facts = CodeFacts::new(code).expect("parses");
    let surely: Vec<u32> = (1..=18).filter(|&line| facts.surely_calls(MODULE, line)).collect();
    assert_eq!(
        surely,
        vec![14, 16, 18],
        "not a generator, a one-line if or a shared line; a comprehension runs its own frame"
    );
    let shadowed = "def f(x):\n    return x\n\n\ndef g(f):\n    return f(1)\n\n\ny = g(f)\n";
    let facts = CodeFacts::new(shadowed).expect("parses");
    assert!(!facts.surely_calls("g", 6), "a parameter named f may be anything");
    assert!(facts.surely_calls(MODULE, 9));
    let rebound = "def f(x):\n    return x\n\n\nf = print\ny = f(1)\n";
    assert!(!CodeFacts::new(rebound).expect("parses").surely_calls(MODULE, 6));

    let inline = "def f(x):\n    return x\n\n\ny = f(1) + (lambda: 2)() + sum([n for n in (3,)])\n";
    for frame in ["<lambda>", "<listcomp>"] {
        let returned = format!(r#"<|return|>5 1 {frame} <|vars|>{{}} <|value|>"2""#);
        let mut t = trajectory(inline, &[(&returned, None)]);
        t.direction = Direction::Inverse;
        let back = Bounds::after(&t, Action::ReverseStepInto);
        assert!(
            back.admits(&format!("<|line|>5 1 {frame} <|vars|>{{}}")),
            "{frame} runs part of the line after its own line event"
        );
    }
}

#[test]
fn stepping_back_out_of_a_function_lands_on_its_call_unless_a_breakpoint_came_between() {
    let code = "def shout(text):\n    loud = text.upper()\n    return loud + '!'\n\n\nresult = shout(...)\n";
    let returned = r#"<|return|>3 1 shout <|vars|>{"text":"'hi'","loud":"'HI'"} <|value|>"'HI!'""#;
    let end = r#"<|return|>6 0 <module> <|vars|>{"shout":"<function shout>","result":"'HI!'"} <|value|>"None""#;
    let mut t = trajectory(code, &[(end, None), (returned, Some(Action::ReverseStepInto))]);
    t.direction = Direction::Inverse;
    let none_set = Bounds::after_with_breakpoints(&t, Action::ReverseStepReturn, Some(&BTreeSet::new()));
    assert!(none_set.admits(r#"<|call|>1 1 shout <|vars|>{"text":"'hi'"}"#));
    assert!(
        !none_set.admits(r#"<|call|>1 1 shout <|vars|>{"text":"'hi'","loud":"'HI'"}"#),
        "a call shows only the parameters"
    );
    assert!(!none_set.admits(r#"<|line|>2 1 shout <|vars|>{"text":"'hi'"}"#));
    assert!(!none_set.admits(r#"<|line|>6 0 <module> <|vars|>{"shout":".."}"#));
    let set = Bounds::after_with_breakpoints(&t, Action::ReverseStepReturn, Some(&BTreeSet::from([2])));
    assert!(set.admits(r#"<|line|>2 1 shout <|vars|>{"text":"'hi'"}"#));
    assert!(!set.admits(r#"<|line|>3 1 shout <|vars|>{"text":"'hi'","loud":"'HI'"}"#));
    let unknown = Bounds::after(&t, Action::ReverseStepReturn);
    assert!(
        unknown.admits(r#"<|line|>3 1 shout <|vars|>{"text":"'hi'","loud":"'HI'"}"#),
        "an inverse trajectory does not tell where breakpoints are"
    );
    assert!(!unknown.admits(r#"<|line|>6 0 <module> <|vars|>{"shout":".."}"#));

    let mut first = trajectory(code, &[(end, None)]);
    first.direction = Direction::Inverse;
    let from_end = Bounds::after_with_breakpoints(&first, Action::ReverseStepInto, Some(&BTreeSet::new()));
    assert!(from_end.admits(returned));
    assert!(
        !from_end.admits(r#"<|line|>6 0 <module> <|vars|>{"shout":"..","result":"'HI!'"}"#),
        "shout(...) ran between the line and the return"
    );
    assert!(
        !from_end.admits(r#"<|exception|>6 0 <module> <|vars|>{"shout":".."}"#),
        "result is shown and nothing before binds it: the statement completed"
    );
    assert!(
        !from_end.admits(r#"<|return|>3 1 shout <|vars|>{"text":"'hi'","loud":"'HI'"} <|value|>"'HI'""#),
        "shout returned what result holds"
    );
    assert!(
        !from_end.admits(r#"<|return|>2 1 shout <|vars|>{"text":"'hi'"} <|value|>"'HI!'""#),
        "a value other than None comes from a return statement"
    );
    let rebinding = code.replace("result = shout", "result = 0\nresult = shout");
    let end = end.replace("6 0", "7 0");
    let mut maybe_raised = trajectory(&rebinding, &[(&end, None)]);
    maybe_raised.direction = Direction::Inverse;
    let maybe_raised = Bounds::after(&maybe_raised, Action::ReverseStepInto);
    assert!(
        maybe_raised
            .admits(r#"<|exception|>7 0 <module> <|vars|>{"shout":"..","result":".."} <|value|>"AttributeError()""#),
        "result may be the earlier binding's, shout having raised"
    );
}

#[test]
fn a_module_event_past_top_level_statements_shows_what_they_bind() {
    let code = "a = 1\nb = [a]\n\n\ndef f():\n    return 2\n\n\nif a:\n    c = 3\nprint(a, b)\n";
    let to_end = after_one(code, "<|line|>1 0 <module> <|vars|>{}", Action::Breakpoint(11));
    assert!(to_end.admits(r#"<|line|>11 0 <module> <|vars|>{"a":"1","b":"[1]","f":"<function f>","c":"3"}"#));
    assert!(
        to_end.admits(r#"<|line|>11 0 <module> <|vars|>{"a":"1","b":"[1]","f":"<function f>"}"#),
        "an if may skip"
    );
    assert!(
        !to_end.admits(r#"<|line|>11 0 <module> <|vars|>{"a":"1","f":"<function f>"}"#),
        "b was bound"
    );
    assert!(
        !to_end.admits(r#"<|line|>11 0 <module> <|vars|>{"a":"1","b":"[1]"}"#),
        "so was f"
    );
}
