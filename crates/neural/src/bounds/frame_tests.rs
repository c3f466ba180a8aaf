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
        None,
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
fn a_plain_class_body_runs_its_statements_once_in_order() {
    let code = "class Shape:\n    sides = 0\n\n    def area(self):\n        return 0\n\n    def name(self):\n        return 'shape'\n\n\ns = Shape()\n";
    let prefix = trajectory(
        code,
        &[
            ("<|line|>1 0 <module> <|vars|>{}", None),
            ("<|call|>1 1 Shape <|vars|>{}", Some(Action::StepInto)),
        ],
    );
    // On its first line nothing has run: no method is bound yet.
    let into = Bounds::after(&prefix, Action::StepInto);
    assert!(!into.admits(r#"<|line|>1 1 Shape <|vars|>{"area":"<function Shape.area>"}"#));
    // At `def area` only `sides` is bound, and it must be shown; `name` comes later.
    let over = after_one(code, "<|line|>2 1 Shape <|vars|>{}", Action::StepOver);
    assert!(over.admits(r#"<|line|>4 1 Shape <|vars|>{"sides":"0"}"#));
    assert!(!over.admits("<|line|>4 1 Shape <|vars|>{}"), "sides ran to its end");
    assert!(!over.admits(r#"<|line|>4 1 Shape <|vars|>{"sides":"0","name":"<function Shape.name>"}"#));
    let later = after_one(code, r#"<|line|>4 1 Shape <|vars|>{"sides":"0"}"#, Action::StepOver);
    assert!(later.admits(r#"<|line|>7 1 Shape <|vars|>{"sides":"..","area":"<function Shape.area>"}"#));
    assert!(!later.admits(r#"<|line|>7 1 Shape <|vars|>{"sides":".."}"#));
    // A class that is not plain (a base from elsewhere) may start with anything.
    let enum_code = "from enum import Enum\n\n\nclass Color(Enum):\n    RED = 1\n\n\nc = Color.RED\n";
    let over = after_one(enum_code, "<|line|>4 1 Color <|vars|>{}", Action::StepOver);
    assert!(over.admits(r#"<|line|>5 1 Color <|vars|>{"_generate_next_value_":"<function>"}"#));
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

#[test]
fn a_functions_frame_never_stops_on_its_header_unless_its_body_is_there() {
    let code = "def pairs(numbers,\n          target=10):\n    return [n for n in numbers if n < target]\n\n\ndef half(x): return x / 2\n\n\nfound = pairs([3, 9])\n";
    let bounds = Bounds::new(
        code,
        Some(&state(
            r#"<|line|>9 0 <module> <|vars|>{"pairs":"<function pairs>","half":"<function half>"}"#,
            None,
        )),
        Direction::Forward,
        Action::Breakpoint(1),
        Some(&BTreeSet::new()),
    );
    assert!(
        !bounds.admits(r#"<|line|>1 1 pairs <|vars|>{"numbers":"[3, 9]","target":"10"}"#),
        "the parameters' line runs in the module's frame"
    );
    assert!(!bounds.admits(r#"<|line|>2 1 pairs <|vars|>{"numbers":"[3, 9]","target":"10"}"#));
    let into = after_one(
        code,
        r#"<|call|>1 1 pairs <|vars|>{"numbers":"[3, 9]","target":"10"}"#,
        Action::StepInto,
    );
    assert!(into.admits(r#"<|line|>3 1 pairs <|vars|>{"numbers":"..","target":".."}"#));
    let one_line = after_one(code, r#"<|call|>6 1 half <|vars|>{"x":"4"}"#, Action::StepInto);
    assert!(
        one_line.admits(r#"<|line|>6 1 half <|vars|>{"x":".."}"#),
        "a body on the `def` line"
    );
}

#[test]
fn every_step_after_the_modules_return_ends_the_run() {
    let code = "x = 1\nprint(x)\n";
    let done = r#"<|return|>2 0 <module> <|vars|>{"x":"1"} <|value|>"None""#;
    for action in [
        Action::StepInto,
        Action::StepOver,
        Action::StepReturn,
        Action::Breakpoint(1),
    ] {
        let bounds = after_one(code, done, action);
        assert!(bounds.admits("<|end|>"), "{action:?}");
        assert!(
            !bounds.admits(r#"<|line|>1 0 <module> <|vars|>{"x":".."}"#),
            "{action:?}"
        );
    }
}

#[test]
fn the_tracer_never_shows_a_dunder_name() {
    let code =
        "class Thermostat:\n    unit = 'C'\n\n    def __init__(self):\n        self.t = 20\n\n\nt = Thermostat()\n";
    let into = after_one(code, r"<|line|>2 1 Thermostat <|vars|>{}", Action::StepInto);
    assert!(into.admits(r#"<|line|>4 1 Thermostat <|vars|>{"unit":"'C'"}"#));
    assert!(
        !into.admits(r#"<|line|>4 1 Thermostat <|vars|>{"unit":"'C'","__init__":"<function Thermostat.__init__>"}"#)
    );
}

#[test]
fn the_module_shows_every_name_the_statements_before_bound() {
    let code = "class Book:\n    pass\n\n\ndef shelve(b):\n    return [b]\n\n\nshelf = shelve(Book())\nprint(shelf)\n";
    // Stepping back from the end: the module's return shows the class, the function and
    // the list.
    let back = one_step_back(code, "<|end|>");
    let all = r#"<|return|>10 0 <module> <|vars|>{"Book":"<class '__main__.Book'>","shelve":"<function shelve>","shelf":"[<__main__.Book object>]"} <|value|>"None""#;
    assert!(back.admits(all));
    assert!(!back.admits(r#"<|return|>10 0 <module> <|vars|>{"shelf":"[<__main__.Book object>]"} <|value|>"None""#));
    // A `def` binds its name only once its line has run.
    let back = one_step_back(
        code,
        r#"<|line|>9 0 <module> <|vars|>{"Book":"<class '__main__.Book'>","shelve":"<function shelve>"}"#,
    );
    assert!(back.admits(r#"<|line|>5 0 <module> <|vars|>{"Book":".."}"#));
    assert!(!back.admits(r#"<|line|>5 0 <module> <|vars|>{"Book":"..","shelve":".."}"#));
}

#[test]
fn a_handlers_name_comes_and_goes_in_its_own_frame_alone() {
    let code = "def parse(s):\n    n = 0\n    try:\n        n = int(s)\n    except ValueError as err:\n        n = -1\n    return n\n\n\nv = parse('x')\n";
    let facts = CodeFacts::new(code).expect("parses");
    assert!(facts.names_kept, "only a function's frame unbinds err");
    assert!(facts.unbound.at_depth(1).contains("err") && facts.unbound.at_depth(0).is_empty());
    let in_class = "class C:\n    try:\n        v = int('x')\n    except ValueError as err:\n        v = 0\n";
    assert!(!CodeFacts::new(in_class).expect("parses").names_kept);
    // Past the handler, err may be gone; every other name stays.
    let over = after_one(
        code,
        r#"<|line|>6 1 parse <|vars|>{"s":"'x'","n":"0","err":"ValueError(\"invalid literal for int() with base 10: 'x'\")"}"#,
        Action::StepOver,
    );
    assert!(over.admits(r#"<|line|>7 1 parse <|vars|>{"s":"..","n":"-1"}"#));
    assert!(!over.admits(r#"<|line|>7 1 parse <|vars|>{"n":"-1"}"#), "s stays");
    // Stepping back into the handler, err may come back.
    let back = one_step_back(code, r#"<|line|>7 1 parse <|vars|>{"s":"'x'","n":"-1"}"#);
    assert!(back.admits(r#"<|line|>6 1 parse <|vars|>{"s":"..","n":"0","err":"ValueError('x')"}"#));
}

#[test]
fn a_number_or_a_string_changes_only_where_it_is_bound() {
    let code = "s = 'a b'\nwords = s.split()\nprint(words)\n";
    let over = after_one(code, r#"<|line|>2 0 <module> <|vars|>{"s":"'a b'"}"#, Action::StepOver);
    assert!(over.admits(r#"<|line|>3 0 <module> <|vars|>{"s":"..","words":"['a', 'b']"}"#));
    assert!(
        !over.admits(r#"<|line|>3 0 <module> <|vars|>{"s":"'a'","words":"['a', 'b']"}"#),
        "a call cannot change a string"
    );
    // A list can change in place; and a class's `__repr__` can look like a number.
    let list = "xs = [1]\nxs.append(2)\nprint(xs)\n";
    let over = after_one(list, r#"<|line|>2 0 <module> <|vars|>{"xs":"[1]"}"#, Action::StepOver);
    assert!(over.admits(r#"<|line|>3 0 <module> <|vars|>{"xs":"[1, 2]"}"#));
    let custom = "class N:\n    def __init__(self):\n        self.v = 1\n\n    def __repr__(self):\n        return str(self.v)\n\n\nn = N()\nn.v = 2\nprint(n)\n";
    let over = after_one(
        custom,
        r#"<|line|>10 0 <module> <|vars|>{"N":"<class '__main__.N'>","n":"1"}"#,
        Action::StepOver,
    );
    assert!(over.admits(r#"<|line|>11 0 <module> <|vars|>{"N":"..","n":"2"}"#));
}

#[test]
fn a_comprehension_runs_where_it_is_written() {
    let code = "xs = [1, 2]\nys = [x * 2 for x in xs]\nzs = [y + 1 for y in ys]\n";
    let into = after_one(
        code,
        r#"<|line|>2 0 <module> <|vars|>{"xs":"[1, 2]"}"#,
        Action::StepInto,
    );
    assert!(into.admits(r#"<|call|>2 1 <listcomp> <|vars|>{".0":"<list_iterator object>"}"#));
    assert!(!into.admits(r#"<|call|>3 1 <listcomp> <|vars|>{".0":"<list_iterator object>"}"#));
    let back = one_step_back(
        code,
        r#"<|return|>3 0 <module> <|vars|>{"xs":"[1, 2]","ys":"[2, 4]","zs":"[3, 5]"} <|value|>"None""#,
    );
    assert!(
        back.admits(r#"<|return|>3 1 <listcomp> <|vars|>{".0":"<list_iterator object>","y":"4"} <|value|>"[3, 5]""#)
    );
    assert!(
        !back.admits(r#"<|return|>2 1 <listcomp> <|vars|>{".0":"<list_iterator object>","x":"2"} <|value|>"[2, 4]""#)
    );
}

#[test]
fn the_module_returns_after_its_last_statement_or_where_one_raised() {
    let code = "prices = {'apple': 0.5}\ncart = [('apple', 4)]\ntotal = prices['apple'] * cart[0][1]\nprint(total)\n";
    let back = one_step_back(code, "<|end|>");
    let at = |line: u32| {
        format!(
            r#"<|return|>{line} 0 <module> <|vars|>{{"prices":"{{'apple': 0.5}}","cart":"[('apple', 4)]"}} <|value|>"None""#
        )
    };
    assert!(back.admits(&at(3)), "a subscript may raise");
    assert!(!back.admits(&at(2)), "binding a literal cannot raise");
    assert!(!back.admits(&at(1)));
    assert!(CodeFacts::new(code).expect("parses").module_may_return_at(4));
    for quiet in [
        "x = 1",
        "x = y = -2.5",
        "x = [(1, 'a'), {2: None}]",
        "pass",
        "def f(a, b=2, *rest, **opts):\n    return a",
        "a, b = 1, 2",
        "(valid, errors) = [], []",
        "a, b = [1, 2]",
    ] {
        let facts = CodeFacts::new(&format!("{quiet}\nprint(1)\n")).expect("parses");
        assert!(!facts.module_may_return_at(1), "{quiet}");
    }
    for loud in [
        "x = y",
        "a, b = 1, 2, 3",
        "a, (b, c) = 1, (2, 3)",
        "a, b = [1, 2, 3]",
        "x: int = 1",
        "x = f'{1}'",
        "import os",
        "def f(a=g()):\n    pass",
        "def f(a: int):\n    pass",
        "@cache\ndef f(a):\n    pass",
        "class A:\n    pass",
    ] {
        let facts = CodeFacts::new(&format!("{loud}\nprint(1)\n")).expect("parses");
        assert!(facts.module_may_return_at(1), "{loud}");
    }
}

#[test]
fn an_objects_repr_names_a_class_of_the_program() {
    let code = "class Book:\n    pass\n\n\ndef make():\n    class Page:\n        pass\n    return Page()\n\n\nb = Book()\np = make()\n";
    let over = after_one(
        code,
        r#"<|line|>11 0 <module> <|vars|>{"Book":"<class '__main__.Book'>","make":"<function make>"}"#,
        Action::StepOver,
    );
    let with = |b: &str| format!(r#"<|line|>12 0 <module> <|vars|>{{"Book":"..","make":"..","b":"{b}"}}"#);
    assert!(over.admits(&with("<__main__.Book object>")));
    assert!(!over.admits(&with("<__main__.Counter object>")), "no class Counter");
    assert!(!over.admits(&with("<__main__.Boo object>")));
    assert!(
        !over.admits(&with("} <|value|>")),
        "the trace language escapes `<|` in a value"
    );
    let facts = CodeFacts::new(code).expect("parses");
    let classes = facts.classes.as_deref();
    assert!(classes.is_some_and(|c| c.iter().any(|n| n == "make.<locals>.Page")));
    assert!(names::repr_prefix_admitted(
        classes,
        b"<__main__.make.<locals>.Page object>"
    ));
    assert!(names::repr_prefix_admitted(classes, b"<class '__main__.Book'>"));
    assert!(!names::repr_prefix_admitted(classes, b"<class '__main__.Shelf'>"));
    assert!(
        names::repr_prefix_admitted(classes, b"[<__main__.Counter object>]"),
        "only a repr's start is read"
    );
    let made = CodeFacts::new("from collections import namedtuple\nP = namedtuple('Point', 'x y')\np = P(1, 2)\n")
        .expect("parses");
    assert!(
        names::repr_prefix_admitted(made.classes.as_deref(), b"<class '__main__.Point'>"),
        "a class made by a call"
    );
    let custom = CodeFacts::new("class A:\n    def __repr__(self):\n        return '<__main__.B>'\n").expect("parses");
    assert!(custom.classes.is_none(), "a `__repr__` may write anything");
}

#[test]
fn a_comprehensions_target_is_not_a_name_of_the_frame_around_it() {
    let facts = CodeFacts::new(
        "cart = [1]\n\n\ndef f(item):\n    return [c for c in [item]]\n\n\ntotals = [f(item) for item in cart]\ng = (x for x in cart)\n",
    )
    .expect("parses");
    let mut module: Vec<&str> = facts.scopes[0].names.iter().map(String::as_str).collect();
    module.sort_unstable();
    assert_eq!(module, ["cart", "f", "g", "totals"]);
    let f = facts.scopes.iter().find(|s| s.name == "f").expect("f's scope");
    assert!(!f.names.contains("c"));
    let listcomp = facts
        .scopes
        .iter()
        .find(|s| s.name == "<listcomp>" && s.first == 8)
        .expect("a listcomp");
    assert!(listcomp.names.contains("item"));
}

#[test]
fn a_key_starts_only_where_a_name_the_tracer_shows_can_follow() {
    let code = "class Animal:\n    def __init__(self, sound):\n        self.sound = sound\n\n    def speak(self):\n        return self.sound\n\n\na = Animal('woof')\n";
    let into = after_one(code, "<|line|>2 1 Animal <|vars|>{}", Action::StepInto);
    let mut scan = into.scan();
    assert!(scan.feed(br"<|line|>5 1 Animal <|vars|>{"));
    assert!(
        !scan.clone().feed(b"\""),
        "line 2 bound only `__init__`, which the tracer hides: no key can follow"
    );
    assert!(scan.feed(b"}"));
}

#[test]
fn a_value_stops_where_the_tracer_cuts_a_repr() {
    use replayground_shared::state::STATE_REPR_CHARS;
    let over = after_one(
        "s = 'x' * 500\nprint(s)\n",
        "<|line|>1 0 <module> <|vars|>{}",
        Action::StepOver,
    );
    let cut = format!("'{}...", "x".repeat(STATE_REPR_CHARS - 4));
    assert!(over.admits(&format!(r#"<|line|>2 0 <module> <|vars|>{{"s":"{cut}"}}"#)));
    let mut scan = over.scan();
    assert!(scan.feed(format!(r#"<|line|>2 0 <module> <|vars|>{{"s":"{cut}"#).as_bytes()));
    assert!(!scan.clone().feed(b"x"), "no 201st character");
    // Escapes count as the one character they stand for (a control character only
    // where a library's objects may print as anything).
    let free = after_one(
        "import pandas\ns = 'x' * 500\nprint(s)\n",
        "<|line|>2 0 <module> <|vars|>{\"pandas\":\"<module 'pandas'>\"}",
        Action::StepOver,
    );
    let escaped = format!("'{}\\u0001\\\"", "x".repeat(STATE_REPR_CHARS - 3));
    assert!(free.admits(&format!(
        r#"<|line|>3 0 <module> <|vars|>{{"pandas":"..","s":"{escaped}"}}"#
    )));
}

#[test]
fn a_value_is_utf8_and_reaches_its_cut_or_its_end_in_time() {
    use replayground_shared::state::STATE_REPR_CHARS;
    let over = after_one(
        "s = ['é'] * 500\nprint(s)\n",
        "<|line|>1 0 <module> <|vars|>{}",
        Action::StepOver,
    );
    let start = r#"<|line|>2 0 <module> <|vars|>{"s":""#;
    let mut scan = over.scan();
    assert!(scan.feed(format!("{start}['é', ").as_bytes()));
    assert!(!scan.clone().feed(&[0xA9]), "a continuation byte starts no character");
    assert!(
        !scan.clone().feed(&[0xC3, b'\'']),
        "a character is not left half written"
    );
    assert!(!scan.clone().feed(&[0xFF]), "no UTF-8 byte");
    assert!(
        !scan.clone().feed(&[b'\'', 0xC3, b'"']),
        "the value does not close mid-character"
    );
    // The tracer's own cut: 197 characters, then `...`.
    let items = "'é', ".repeat(60);
    let kept: String = format!("[{items}").chars().take(STATE_REPR_CHARS - 3).collect();
    let cut = format!("{start}{kept}...\"}}");
    assert!(over.admits(&cut), "{cut}");
    // From the 198th character on, only the cut or what still ends the list in time.
    let mut at_cut = over.scan();
    assert!(at_cut.feed(format!("{start}{kept}").as_bytes()));
    assert!(kept.ends_with(", '"), "{kept}");
    assert!(
        !at_cut.clone().feed(b"xx"),
        "the string and the list cannot close in time"
    );
    assert!(at_cut.clone().feed(b"x']\""), "they can close in exactly the limit");
    assert!(at_cut.clone().feed(b"...\""));
    assert!(!at_cut.clone().feed(b"..x"), "after `..`, the cut's last dot");
    // A repr of exactly the limit that ends in time is still admitted.
    let whole = format!("['{}']", "é".repeat(STATE_REPR_CHARS - 4));
    assert!(over.admits(&format!("{start}{whole}\"}}")), "{whole}");
}

/// `shout` (below `header`, lines of imports or definitions), stepped over from its call.
fn shout_returning(header: &str) -> Bounds {
    let code = "def shout(text):\n    if not text:\n        raise ValueError('empty')\n    return text.upper()\n\n\nresult = shout('hi')\n";
    let first = header.lines().count() + 1;
    after_one(
        &format!("{header}{code}"),
        &format!(r#"<|call|>{first} 1 shout <|vars|>{{"text":"'hi'"}}"#),
        Action::StepReturn,
    )
}

#[test]
fn every_value_keeps_the_shape_of_a_repr_where_the_program_prints_plainly() {
    let out = shout_returning("");
    assert!(out.admits(r#"<|return|>4 1 shout <|vars|>{"text":".."} <|value|>"'HI'""#));
    assert!(
        !out.admits(r#"<|return|>4 1 shout <|vars|>{"text":".."} <|value|>"HI""#),
        "a string without its quotes"
    );
    assert!(!out.admits(r#"<|return|>4 1 shout <|vars|>{"text":".."} <|value|>"['HI'], ['HI']""#));
    assert!(!out.admits(r#"<|return|>4 1 shout <|vars|>{"text":"hi"} <|value|>"'HI'""#));
    let code = "def shout(text):\n    if not text:\n        raise ValueError('empty')\n    return text.upper()\n";
    let into = after_one(code, r#"<|line|>3 1 shout <|vars|>{"text":"''"}"#, Action::StepInto);
    assert!(into.admits(r#"<|exception|>3 1 shout <|vars|>{"text":".."} <|value|>"ValueError('empty')""#));
    assert!(!into.admits(r#"<|exception|>3 1 shout <|vars|>{"text":".."} <|value|>"empty""#));
    assert!(
        shout_returning("import pandas\n").admits(r#"<|return|>5 1 shout <|vars|>{"text":".."} <|value|>"   a\n0  1""#),
        "another library's objects may print as anything"
    );
}

#[test]
fn a_repr_names_only_what_the_program_names_and_escapes_no_control_character() {
    let out = shout_returning("");
    assert!(
        !out.admits(r#"<|return|>4 1 shout <|vars|>{"text":".."} <|value|>"hi[0:2]""#),
        "a string's contents name nothing where the program names nothing by a string"
    );
    assert!(
        !out.admits(r#"<|return|>4 1 shout <|vars|>{"text":".."} <|value|>"'H\u0130'""#),
        "the tracer writes non-ASCII as it is, and a repr escapes control characters itself"
    );
    assert!(!out.admits(r#"<|return|>4 1 shout <|vars|>{"text":".."} <|value|>"'H\nI'""#));
    assert!(out.admits(r#"<|return|>4 1 shout <|vars|>{"text":".."} <|value|>"'Hİ\\n\"'""#));
    let mut scan = out.scan();
    assert!(scan.feed(br#"<|return|>4 1 shout <|vars|>{"text":".."} <|value|>"UU"#));
    assert!(
        !scan.clone().feed(b"\\"),
        "no escape starts where neither `\\\\` nor `\\\"` can follow (it would leave no byte)"
    );
    assert!(
        shout_returning("from collections import namedtuple\nPoint = namedtuple('hi', 'x')\n")
            .admits(r#"<|return|>6 1 shout <|vars|>{"text":".."} <|value|>"hi(x=1)""#),
        "`namedtuple` names a class by a string"
    );
}

#[test]
fn a_value_starts_with_a_dot_only_where_it_may_be_unchanged() {
    let code = "def shout(text):\n    loud = text.upper()\n    return loud\n";
    let call = state(r#"<|call|>1 1 shout <|vars|>{"text":"'hi'"}"#, None);
    let over = Bounds::after(
        &trajectory(code, &[(r#"<|call|>1 1 shout <|vars|>{"text":"'hi'"}"#, None)]),
        Action::StepReturn,
    );
    let mut scan = over.scan().following(Some(&call));
    assert!(scan.feed(br#"<|return|>3 1 shout <|vars|>{"text":"#));
    assert!(scan.clone().feed(br#"".."#), "the call showed `text`");
    assert!(scan.feed(br#""..","loud":""#));
    assert!(
        !scan.clone().feed(b"."),
        "the call showed no `loud`: only `..` starts so, so a `.` would leave no byte"
    );
    assert!(
        over.scan()
            .feed(br#"<|return|>3 1 shout <|vars|>{"text":"..","loud":"."#),
        "the previous state not known"
    );
}

#[test]
fn a_functions_locals_keep_the_order_they_were_first_shown_in() {
    // The tracer's every event brings `f_locals` up to date: a name bound since is added
    // at its end, whatever its place in the code (CPython 3.11 shows `y` before `x`).
    let code = "def f(n):\n    for i in range(2):\n        if i == 1:\n            x = 1\n        y = 2\n    return 0\n\n\nf(3)\n";
    let into = after_one(
        code,
        r#"<|line|>4 1 f <|vars|>{"n":"3","i":"1","y":"2"}"#,
        Action::StepInto,
    );
    assert!(into.admits(r#"<|line|>5 1 f <|vars|>{"n":"..","i":"..","y":"..","x":"1"}"#));
    assert!(!into.admits(r#"<|line|>5 1 f <|vars|>{"n":"..","i":"..","x":"1","y":".."}"#));
    // Stepping back in the same frame, it showed a prefix of its names then.
    let back = one_step_back(code, r#"<|line|>5 1 f <|vars|>{"n":"3","i":"1","y":"2","x":"1"}"#);
    assert!(back.admits(r#"<|line|>4 1 f <|vars|>{"n":"..","i":"..","y":".."}"#));
    assert!(!back.admits(r#"<|line|>4 1 f <|vars|>{"n":"..","y":"..","i":".."}"#));
    assert!(!back.admits(r#"<|line|>4 1 f <|vars|>{"i":"..","n":".."}"#));
    // A program that unbinds a name may show it again at the end.
    let unbinding = code.replace("    return 0\n", "    del y\n    return 0\n");
    let back = one_step_back(&unbinding, r#"<|line|>5 1 f <|vars|>{"n":"3","i":"1","x":"1","y":"2"}"#);
    assert!(back.admits(r#"<|line|>4 1 f <|vars|>{"n":"..","i":"..","x":"..","y":".."}"#));
}
