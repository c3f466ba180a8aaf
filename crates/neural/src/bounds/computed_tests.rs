//! What a statement computes from the state it starts at: [`super::computed`].

use replayground_shared::{State, StopKind, Vars};

use super::code::CodeFacts;
use super::computed::Turn;

fn state(line: u32, function: &str, vars: &[(&str, &str)]) -> State {
    let vars = Vars(vars.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect());
    let module = function == "<module>";
    State {
        event: StopKind::Line,
        line: Some(line),
        function: Some(function.to_owned()),
        depth: Some(u32::from(!module)),
        locals: (!module).then(|| vars.clone()),
        globals: module.then_some(vars),
        value: None,
    }
}

fn turn(code: &str, line: u32, function: &str, vars: &[(&str, &str)]) -> Option<Turn> {
    CodeFacts::new(code)
        .expect("parses")
        .loop_turn(&state(line, function, vars))
}

fn next(pairs: &[(&str, &str)]) -> Turn {
    Turn::Next(pairs.iter().map(|(n, r)| ((*n).to_owned(), (*r).to_owned())).collect())
}

#[test]
fn a_for_header_binds_the_next_item_or_ends_the_loop() {
    let code = "wrapped = ['a b', 'c']\nfor line in wrapped:\n    print(line)\nprint('done')\n";
    let list = ("wrapped", "['a b', 'c']");
    assert_eq!(turn(code, 2, "<module>", &[list]), Some(next(&[("line", "'a b'")])));
    assert_eq!(
        turn(code, 2, "<module>", &[list, ("line", "'a b'")]),
        Some(next(&[("line", "'c'")]))
    );
    assert_eq!(turn(code, 2, "<module>", &[list, ("line", "'c'")]), Some(Turn::Done));
    assert_eq!(turn(code, 2, "<module>", &[list, ("line", "'x'")]), None, "not an item");
}

#[test]
fn pairs_ranges_and_words() {
    let code = "def f(d, text, n):\n    for k, v in d.items():\n        pass\n    for i, w in enumerate(text.split(), 1):\n        pass\n    for j in range(1, n, 2):\n        pass\n";
    let vars = [("d", "{'a': [1], 'b': 2}"), ("text", "'x  y'"), ("n", "6")];
    assert_eq!(turn(code, 2, "f", &vars), Some(next(&[("k", "'a'"), ("v", "[1]")])));
    let later = [vars[0], vars[1], vars[2], ("k", "'a'"), ("v", "[1]")];
    assert_eq!(turn(code, 2, "f", &later), Some(next(&[("k", "'b'"), ("v", "2")])));
    assert_eq!(turn(code, 4, "f", &vars), Some(next(&[("i", "1"), ("w", "'x'")])));
    let at_three = [vars[0], vars[1], vars[2], ("j", "3")];
    assert_eq!(turn(code, 6, "f", &at_three), Some(next(&[("j", "5")])));
    let at_five = [vars[0], vars[1], vars[2], ("j", "5")];
    assert_eq!(turn(code, 6, "f", &at_five), Some(Turn::Done));
}

#[test]
fn loops_whose_turn_the_state_cannot_tell() {
    // Entered again by an outer loop: the target shows the last run's item.
    let nested = "for row in [[1], [2]]:\n    for x in row:\n        pass\n";
    assert_eq!(turn(nested, 2, "<module>", &[("row", "[2]"), ("x", "1")]), None);
    // Bound before the loop.
    let bound = "x = 1\nfor x in [1, 2]:\n    pass\n";
    assert_eq!(turn(bound, 2, "<module>", &[("x", "1")]), None);
    // The loop changes what it iterates.
    let grows = "xs = [1]\nfor x in xs:\n    if x < 3:\n        xs.append(x + 1)\n";
    assert_eq!(turn(grows, 2, "<module>", &[("xs", "[1, 2]"), ("x", "1")]), None);
    // A function may change it.
    let global = "def grow():\n    xs.append(0)\nxs = [1]\nfor x in xs:\n    grow()\n";
    assert_eq!(turn(global, 4, "<module>", &[("xs", "[1, 0]"), ("x", "1")]), None);
    // An alias may change it.
    let alias = "xs = [1, 2]\nys = xs\nfor x in xs:\n    ys.pop()\n";
    assert_eq!(turn(alias, 3, "<module>", &[("xs", "[1, 2]"), ("ys", "[1, 2]")]), None);
    // Equal items: which turn is it?
    let same = "for c in 'google':\n    pass\n";
    assert_eq!(turn(same, 1, "<module>", &[("c", "'o'")]), None);
    assert_eq!(turn(same, 1, "<module>", &[]), Some(next(&[("c", "'g'")])));
}

#[test]
fn a_step_from_a_for_header_lands_on_the_next_turn() {
    use replayground_shared::Action;

    use super::tests::after_one;

    let code = "wrapped = ['never trust', 'a program']\nfor line in wrapped:\n    print(line)\nprint(len(wrapped))\n";
    let first = r#"<|line|>2 0 <module> <|vars|>{"wrapped":"['never trust', 'a program']"}"#;
    let over = after_one(code, first, Action::StepOver);
    assert!(over.admits(r#"<|line|>3 0 <module> <|vars|>{"wrapped":"..","line":"'never trust'"}"#));
    assert!(!over.admits(r#"<|line|>3 0 <module> <|vars|>{"wrapped":"..","line":"'a program'"}"#));
    assert!(
        !over.admits(r#"<|line|>4 0 <module> <|vars|>{"wrapped":".."}"#),
        "the loop has items"
    );
    let last = r#"<|line|>2 0 <module> <|vars|>{"wrapped":"['never trust', 'a program']","line":"'a program'"}"#;
    let over = after_one(code, last, Action::StepInto);
    assert!(over.admits(r#"<|line|>4 0 <module> <|vars|>{"wrapped":"..","line":".."}"#));
    assert!(
        !over.admits(r#"<|line|>3 0 <module> <|vars|>{"wrapped":"..","line":".."}"#),
        "it is done"
    );
}

#[test]
fn a_return_line_returns_the_value_the_state_gives() {
    use replayground_shared::Action;

    use super::tests::after_one;

    let code = "def f(a, b):\n    return a + b\n\n\ndef g(xs):\n    return xs\n\n\nf(1, 2)\ng([1])\n";
    let over = after_one(code, r#"<|line|>2 1 f <|vars|>{"a":"1","b":"2"}"#, Action::StepOver);
    assert!(over.admits(r#"<|return|>2 1 f <|vars|>{"a":"..","b":".."} <|value|>"3""#));
    assert!(!over.admits(r#"<|return|>2 1 f <|vars|>{"a":"..","b":".."} <|value|>"12""#));
    let into = after_one(code, r#"<|line|>6 1 g <|vars|>{"xs":"[1]"}"#, Action::StepInto);
    assert!(into.admits(r#"<|return|>6 1 g <|vars|>{"xs":".."} <|value|>"[1]""#));
    assert!(!into.admits(r#"<|return|>6 1 g <|vars|>{"xs":".."} <|value|>"None""#));
}

#[test]
fn one_line_assignments_compute_from_the_state() {
    let code = "def fib(n):\n    a, b = 0, 1\n    a, b = b, a + b\n    total += n\n    s = f'{a}-{b}'\n";
    let facts = CodeFacts::new(code).expect("parses");
    let at = |line, vars: &[(&str, &str)]| facts.computed(&state(line, "fib", vars));
    let swapped = at(3, &[("n", "5"), ("a", "1"), ("b", "2")]);
    assert_eq!(swapped.get("a").map(String::as_str), Some("2"));
    assert_eq!(swapped.get("b").map(String::as_str), Some("3"));
    assert_eq!(
        at(4, &[("total", "10"), ("n", "5")]).get("total").map(String::as_str),
        Some("15")
    );
    assert_eq!(
        at(5, &[("a", "1"), ("b", "2")]).get("s").map(String::as_str),
        Some("'1-2'")
    );
    assert!(at(4, &[("n", "5")]).is_empty(), "total is not shown");
}

#[test]
fn lists_and_dicts_changed_in_place() {
    let code = "lines.append(current)\ncounts[w] = counts.get(w, 0) + 1\nxs[-1] += 2\nlines.append(lines)\n";
    let facts = CodeFacts::new(code).expect("parses");
    let at = |line, vars: &[(&str, &str)]| facts.computed(&state(line, "<module>", vars));
    let vars = [
        ("lines", "['never']"),
        ("current", "'trust'"),
        ("counts", "{'a': 1}"),
        ("w", "'a'"),
        ("xs", "[1, 2]"),
    ];
    assert_eq!(
        at(1, &vars).get("lines").map(String::as_str),
        Some("['never', 'trust']")
    );
    assert_eq!(at(2, &vars).get("counts").map(String::as_str), Some("{'a': 2}"));
    let new_word = [vars[2], ("w", "'b'")];
    assert_eq!(
        at(2, &new_word).get("counts").map(String::as_str),
        Some("{'a': 1, 'b': 1}")
    );
    assert_eq!(at(3, &vars).get("xs").map(String::as_str), Some("[1, 4]"));
    assert!(at(4, &vars).is_empty(), "a list holding itself");
    let methods =
        CodeFacts::new("class Log:\n    def append(self, x):\n        pass\nlines.append(1)\n").expect("parses");
    let vars = [("Log", "<class '__main__.Log'>"), ("lines", "[]")];
    assert!(
        methods.computed(&state(4, "<module>", &vars)).is_empty(),
        "the program defines an append"
    );
}

#[test]
fn a_step_into_a_call_binds_the_parameters_to_the_arguments() {
    use replayground_shared::Action;

    use super::tests::after_one;

    let code = "def f(n, s='x', xs=[]):\n    return n\n\n\nwords = ['a']\nf(len(words) + 2, xs=words)\nf(1, 2, 3, 4)\n";
    let from = r#"<|line|>6 0 <module> <|vars|>{"f":"<function f>","words":"['a']"}"#;
    let into = after_one(code, from, Action::StepInto);
    assert!(into.admits(r#"<|call|>1 1 f <|vars|>{"n":"3","s":"'x'","xs":"['a']"}"#));
    assert!(
        !into.admits(r#"<|call|>1 1 f <|vars|>{"n":"4","s":"'x'","xs":"['a']"}"#),
        "n is 3"
    );
    assert!(
        !into.admits(r#"<|call|>1 1 f <|vars|>{"n":"3","s":"'y'","xs":"['a']"}"#),
        "s is its default"
    );
    assert!(
        !into.admits(r#"<|call|>1 1 f <|vars|>{"n":"3","s":"'x'","xs":"[]"}"#),
        "xs is words"
    );
    // Too many arguments raise: nothing is fixed.
    let from = r#"<|line|>7 0 <module> <|vars|>{"f":"<function f>","words":"['a']"}"#;
    let facts = CodeFacts::new(code).expect("parses");
    let state = replayground_shared::trace_lang::parse_state(from, None).expect("a state");
    assert_eq!(facts.call_bindings(&state), None);
}
