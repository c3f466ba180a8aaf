//! Module variables read in other frames as the module showed them.

use std::collections::HashMap;

use replayground_shared::Action;

use super::Bounds;
use super::code::CodeFacts;
use super::globals::Reads;
use super::tests::trajectory;

const LIGHTS: &str = "NEXT = {'red': 'green', 'green': 'red'}
TABLE = [(10, 'X'), (5, 'V')]
LIMIT = 3


def run(state):
    state = NEXT[state]
    for value, symbol in TABLE:
        pass
    return state


run('red')
";

fn reads(code: &str) -> HashMap<String, Reads> {
    let facts = CodeFacts::new(code).expect("parses");
    super::globals::module_reads(facts.tree.root_node(), code.as_bytes(), &facts.program)
}

#[test]
fn a_module_variable_bound_once_and_only_read_is_read_as_the_module_showed_it() {
    let module = r#"<|line|>13 0 <module> <|vars|>{"NEXT":"{'red': 'green', 'green': 'red'}","TABLE":"[(10, 'X'), (5, 'V')]","LIMIT":"3","run":"<function run>"}"#;
    let steps = [
        (module, None),
        (r#"<|call|>6 1 run <|vars|>{"state":"'red'"}"#, Some(Action::StepInto)),
        (r#"<|line|>7 1 run <|vars|>{"state":"'red'"}"#, Some(Action::StepInto)),
    ];
    let over = Bounds::after(&trajectory(LIGHTS, &steps), Action::StepOver);
    assert!(over.admits(r#"<|line|>8 1 run <|vars|>{"state":"'green'"}"#));
    assert!(
        !over.admits(r#"<|line|>8 1 run <|vars|>{"state":"'red'"}"#),
        "NEXT['red'] is 'green'"
    );
    // The loop's first turn over the module's TABLE.
    let steps = [
        (module, None),
        (r#"<|call|>6 1 run <|vars|>{"state":"'red'"}"#, Some(Action::StepInto)),
        (r#"<|line|>7 1 run <|vars|>{"state":"'red'"}"#, Some(Action::StepInto)),
        (r#"<|line|>8 1 run <|vars|>{"state":"'green'"}"#, Some(Action::StepInto)),
    ];
    let into = Bounds::after(&trajectory(LIGHTS, &steps), Action::StepInto);
    let turn = |value: &str, symbol: &str| {
        format!(r#"<|line|>9 1 run <|vars|>{{"state":"..","value":"{value}","symbol":"{symbol}"}}"#)
    };
    assert!(into.admits(&turn("10", "'X'")));
    assert!(!into.admits(&turn("5", "'V'")), "the first item is (10, 'X')");
    // Without a state of the module's: `run`'s frame runs after its `def`, which comes
    // after the literal assignments, so the text tells what TABLE and NEXT hold.
    let function_alone = Bounds::after(&trajectory(LIGHTS, &steps[1..]), Action::StepInto);
    assert!(function_alone.admits(&turn("10", "'X'")));
    assert!(!function_alone.admits(&turn("5", "'V'")), "TABLE's literal is read");
    // A breakpoint set on the way changes nothing: a step into stops at the very next event.
    let via_breakpoint = [
        (module, None),
        (
            r#"<|line|>8 1 run <|vars|>{"state":"'green'"}"#,
            Some(Action::Breakpoint(8)),
        ),
    ];
    let into = Bounds::after(&trajectory(LIGHTS, &via_breakpoint), Action::StepInto);
    assert!(into.admits(&turn("10", "'X'")));
    assert!(!into.admits(&turn("5", "'V'")));
    // Nor does a state of the module's from before the assignments hide them.
    let mut from_the_start = vec![("<|line|>1 0 <module> <|vars|>{}", None)];
    from_the_start.extend_from_slice(&steps[1..]);
    let into = Bounds::after(&trajectory(LIGHTS, &from_the_start), Action::StepInto);
    assert!(!into.admits(&turn("5", "'V'")));
    let alone = [(r#"<|line|>7 1 run <|vars|>{"state":"'red'"}"#, None)];
    let over = Bounds::after(&trajectory(LIGHTS, &alone), Action::StepOver);
    assert!(over.admits(r#"<|line|>8 1 run <|vars|>{"state":"'green'"}"#));
    assert!(!over.admits(r#"<|line|>8 1 run <|vars|>{"state":"'red'"}"#));
    // A function defined before the assignment could run before it: nothing is known.
    let early = "def run(state):\n    state = NEXT[state]\n    return state\n\n\nNEXT = {'red': 'green'}\nrun('red')\n";
    let alone = [(r#"<|line|>2 1 run <|vars|>{"state":"'red'"}"#, None)];
    let over = Bounds::after(&trajectory(early, &alone), Action::StepOver);
    assert!(over.admits(r#"<|line|>3 1 run <|vars|>{"state":"'red'"}"#));
    // Nor where the value could change (a method that changes it).
    let changed = LIGHTS.replace("run('red')", "TABLE.append((1, 'I'))\nrun('red')");
    let changed = Bounds::after(&trajectory(&changed, &steps[1..]), Action::StepInto);
    assert!(changed.admits(&turn("5", "'V'")));
}

#[test]
fn a_variable_the_program_could_change_or_hand_on_is_not_read() {
    assert_eq!(
        reads(LIGHTS),
        HashMap::from([
            ("NEXT".to_owned(), Reads::Inert),
            ("TABLE".to_owned(), Reads::Inert),
            ("LIMIT".to_owned(), Reads::Inert),
        ])
    );
    let cases = [
        ("XS = [1]\nXS.append(2)\n", "a method that changes it"),
        ("XS = [1]\nXS[0] = 2\n", "an item stored"),
        ("XS = [1]\ndef f():\n    global XS\n    XS = []\n", "a global statement"),
        ("XS = [1]\nXS = [2]\n", "bound twice"),
        ("XS = [1]\nfor XS in range(2):\n    pass\n", "a loop's target"),
        ("XS = [1]\ndef f(XS):\n    return XS\n", "a parameter"),
        ("XS = [1]\nprint(globals())\n", "globals()"),
        ("XS = [1]\ndel XS\n", "deleted"),
    ];
    for (code, why) in cases {
        assert!(!reads(code).contains_key("XS"), "{why}");
    }
    // Handed to a function or to another name: only an immutable value keeps.
    assert_eq!(reads("XS = [1]\nf(XS)\n").get("XS"), Some(&Reads::Anywhere));
    assert_eq!(reads("XS = [1]\nys = XS\n").get("XS"), Some(&Reads::Anywhere));
    let mut facts = CodeFacts::new("XS = [1]\nN = 2\nys = XS + [N]\n").expect("parses");
    let module =
        replayground_shared::trace_lang::parse_state(r#"<|line|>3 0 <module> <|vars|>{"XS":"[1]","N":"2"}"#, None)
            .expect("a state");
    facts.read_module(Some(&module), None);
    assert_eq!(facts.module_values, vec![("N".to_owned(), "2".to_owned())]);
}
