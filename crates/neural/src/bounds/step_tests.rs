//! Where a step goes from a statement the text tells about: the call a statement
//! surely makes first, and the branch a condition the state decides takes.

use replayground_shared::Action;
use replayground_shared::trace_lang::Direction;

use super::tests::after_one;
use super::*;

#[test]
fn stepping_into_a_statement_that_surely_calls_reaches_the_call_or_its_exception() {
    let code = "def half(x):\n    return x / 2\n\n\ny = half(4)\nz = y + 1\n";
    let into = after_one(
        code,
        r#"<|line|>5 0 <module> <|vars|>{"half":"<function half>"}"#,
        Action::StepInto,
    );
    assert!(into.admits(r#"<|call|>1 1 half <|vars|>{"x":"4"}"#));
    assert!(into.admits(r#"<|exception|>5 0 <module> <|vars|>{"half":".."} <|value|>"NameError('x')""#));
    assert!(
        !into.admits(r#"<|line|>6 0 <module> <|vars|>{"half":"..","y":"2.0"}"#),
        "the call is not stepped over"
    );
    assert!(!into.admits(r#"<|return|>5 0 <module> <|vars|>{"half":".."} <|value|>"None""#));
    // A step over it goes on to the next line.
    let over = after_one(
        code,
        r#"<|line|>5 0 <module> <|vars|>{"half":"<function half>"}"#,
        Action::StepOver,
    );
    assert!(over.admits(r#"<|line|>6 0 <module> <|vars|>{"half":"..","y":"2.0"}"#));

    // A class statement runs its body in a frame of its own, which starts empty.
    let class = "class Tree:\n    def __init__(self, key):\n        self.key = key\n        setattr(self, 'left', None)\n\n\nroot = Tree(5)\n";
    let into = after_one(class, "<|line|>1 0 <module> <|vars|>{}", Action::StepInto);
    assert!(into.admits("<|call|>1 1 Tree <|vars|>{}"));
    assert!(
        !into.admits(r#"<|call|>1 1 Tree <|vars|>{"key":"5"}"#),
        "setattr on an instance binds no name"
    );
    assert!(!into.admits(r#"<|line|>7 0 <module> <|vars|>{"Tree":"<class '__main__.Tree'>"}"#));
    // Its own frame's first line event is on the `class` line, and goes on to its body.
    let body = after_one(class, "<|line|>1 1 Tree <|vars|>{}", Action::StepInto);
    assert!(body.admits("<|line|>2 1 Tree <|vars|>{}"));
    // Unless the program can reach its module object, whose attributes are its globals.
    let reaches = format!(
        "import sys\n{}",
        class.replace("self, 'left'", "sys.modules[__name__], 'left'")
    );
    assert!(!CodeFacts::new(&reaches).expect("parses").names_known);
}

#[test]
fn a_step_into_reaches_the_one_frame_the_statement_starts_first() {
    let code = "class Animal:\n    sound = '...'\n\n\nclass Dog(Animal):\n    sound = 'woof'\n\n\ndef half(x):\n    return x / 2\n\n\ndef twice(x):\n    return 2 * x\n\n\ny = half(4)\nzs = [twice(n) for n in range(2)]\n";
    let classes = r#""Animal":"<class '__main__.Animal'>""#;
    let into = after_one(
        code,
        &format!("<|line|>5 0 <module> <|vars|>{{{classes}}}"),
        Action::StepInto,
    );
    assert!(into.admits("<|call|>5 1 Dog <|vars|>{}"));
    assert!(
        !into.admits("<|call|>1 1 Animal <|vars|>{}"),
        "a base class's body ran before"
    );
    let all =
        format!(r#"{classes},"Dog":"<class '__main__.Dog'>","half":"<function half>","twice":"<function twice>""#);
    let into = after_one(
        code,
        &format!("<|line|>17 0 <module> <|vars|>{{{all}}}"),
        Action::StepInto,
    );
    assert!(into.admits(r#"<|call|>9 1 half <|vars|>{"x":"4"}"#));
    assert!(!into.admits(r#"<|call|>13 1 twice <|vars|>{"x":"4"}"#));
    let all = format!(r#"{all},"y":"2.0""#);
    let into = after_one(
        code,
        &format!("<|line|>18 0 <module> <|vars|>{{{all}}}"),
        Action::StepInto,
    );
    assert!(into.admits(r#"<|call|>18 1 <listcomp> <|vars|>{".0":"<range_iterator object>"}"#));
    assert!(
        !into.admits(r#"<|call|>13 1 twice <|vars|>{"x":"0"}"#),
        "the comprehension's frame calls it, one deeper"
    );
    // A program whose operators may run its own methods does not tell.
    let special = code.replace(
        "    return 2 * x",
        "    return 2 * x\n\n\ndef __add__(a, b):\n    return a",
    );
    let facts = CodeFacts::new(&special).expect("parses");
    assert_eq!(facts.first_callee(MODULE, 21), None);
    assert!(facts.surely_calls(MODULE, 21));
    assert_eq!(facts.first_callee(MODULE, 5), Some(("Dog".to_owned(), 5)));
}

#[test]
fn a_condition_the_state_decides_takes_one_branch() {
    let code = "def to_binary(n):\n    if n < 2:\n        return str(n)\n    return to_binary(n // 2) + str(n % 2)\n\n\ndigits = to_binary(11)\n";
    let over = after_one(code, r#"<|line|>2 1 to_binary <|vars|>{"n":"11"}"#, Action::StepOver);
    assert!(over.admits(r#"<|line|>4 1 to_binary <|vars|>{"n":".."}"#));
    assert!(
        !over.admits(r#"<|line|>3 1 to_binary <|vars|>{"n":".."}"#),
        "11 < 2 is false"
    );
    let over = after_one(code, r#"<|line|>2 1 to_binary <|vars|>{"n":"1"}"#, Action::StepOver);
    assert!(over.admits(r#"<|line|>3 1 to_binary <|vars|>{"n":".."}"#));
    assert!(!over.admits(r#"<|line|>4 1 to_binary <|vars|>{"n":".."}"#));

    let code = "def count(k):\n    i = 0\n    while i < k:\n        i += 1\n    return i\n\n\ncount(2)\n";
    let over = after_one(code, r#"<|line|>3 1 count <|vars|>{"k":"2","i":"2"}"#, Action::StepOver);
    assert!(over.admits(r#"<|line|>5 1 count <|vars|>{"k":"..","i":".."}"#));
    assert!(
        !over.admits(r#"<|line|>4 1 count <|vars|>{"k":"..","i":".."}"#),
        "the loop is done"
    );
    let into = after_one(code, r#"<|line|>3 1 count <|vars|>{"k":"2","i":"1"}"#, Action::StepInto);
    assert!(into.admits(r#"<|line|>4 1 count <|vars|>{"k":"..","i":".."}"#));
    assert!(!into.admits(r#"<|line|>5 1 count <|vars|>{"k":"..","i":".."}"#));

    // A program whose classes may redefine a comparison is not decided.
    let special = format!("{code}\n\nclass Odd(int):\n    def __lt__(self, other):\n        return True\n");
    let over = after_one(
        &special,
        r#"<|line|>3 1 count <|vars|>{"k":"2","i":"2"}"#,
        Action::StepOver,
    );
    assert!(over.admits(r#"<|line|>4 1 count <|vars|>{"k":"..","i":".."}"#));
}

#[test]
fn stepping_back_from_a_fresh_module_statement_reaches_the_one_before() {
    let code = "def total(xs):\n    return sum(xs)\n\n\norders = [1, 2]\ncount = total(orders)\ndone = count > 2\nprint(done)\n";
    let at_7 = r#"<|line|>7 0 <module> <|vars|>{"total":"<function total>","orders":"[1, 2]","count":"3"}"#;
    let back = |action: Action| {
        let mut t = super::tests::trajectory(code, &[(at_7, None)]);
        t.direction = Direction::Inverse;
        Bounds::after(&t, action)
    };
    let over = back(Action::ReverseStepOver);
    assert!(over.admits(r#"<|line|>6 0 <module> <|vars|>{"total":"..","orders":".."}"#));
    assert!(
        !over.admits(r#"<|line|>5 0 <module> <|vars|>{"total":".."}"#),
        "line 6 ran between"
    );
    assert!(!over.admits(r#"<|line|>7 0 <module> <|vars|>{"total":"..","orders":"..","count":".."}"#));
    let into = back(Action::ReverseStepInto);
    assert!(into.admits(r#"<|return|>2 1 total <|vars|>{"xs":"[1, 2]"} <|value|>"3""#));
    assert!(!into.admits(r#"<|line|>5 0 <module> <|vars|>{"total":".."}"#));
}

#[test]
fn stepping_back_into_the_statement_before_reaches_its_line_or_its_last_call() {
    let code = "def total(xs):\n    return sum(xs)\n\n\norders = [1, 2]\ncount = total(orders)\ndone = count > 2\nprint(done)\n";
    let back = |from: &str| {
        let mut t = super::tests::trajectory(code, &[(from, None)]);
        t.direction = Direction::Inverse;
        Bounds::after(&t, Action::ReverseStepInto)
    };
    let into = back(r#"<|line|>7 0 <module> <|vars|>{"total":"<function total>","orders":"[1, 2]","count":"3"}"#);
    assert!(into.admits(r#"<|return|>2 1 total <|vars|>{"xs":"[1, 2]"} <|value|>"3""#));
    assert!(
        !into.admits(r#"<|line|>6 0 <module> <|vars|>{"total":"..","orders":".."}"#),
        "line 6 called total after its line event"
    );
    let into = back(
        r#"<|line|>8 0 <module> <|vars|>{"total":"<function total>","orders":"[1, 2]","count":"3","done":"True"}"#,
    );
    assert!(into.admits(r#"<|line|>7 0 <module> <|vars|>{"total":"..","orders":"..","count":".."}"#));
    assert!(
        !into.admits(r#"<|return|>2 1 total <|vars|>{"xs":"[1, 2]"} <|value|>"3""#),
        "line 7 calls nothing"
    );
}

#[test]
fn stepping_back_into_a_call_that_returned_reaches_a_line_it_returns_from() {
    let code = "def decode(code):\n    out = \"\"\n    for i in range(0, len(code), 2):\n        out += code[i] * int(code[i + 1])\n    return out\n\n\npacked = \"a3\"\nprint(packed, decode(packed))\ndone = 1\n";
    let back = |code: &str, from: &str| {
        let mut t = super::tests::trajectory(code, &[(from, None)]);
        t.direction = Direction::Inverse;
        Bounds::after(&t, Action::ReverseStepInto)
    };
    let vars = r#"{"code":"'a3'","out":"'aaa'","i":"0"}"#;
    // Before the module's next line, and before its return after the call's statement.
    let line_10 = r#"<|line|>10 0 <module> <|vars|>{"decode":"<function decode>","packed":"'a3'"}"#;
    let end = r#"<|return|>9 0 <module> <|vars|>{"decode":"<function decode>","packed":"'a3'"} <|value|>"None""#;
    let ends_with_print = code.replace("done = 1\n", "");
    for (code, from) in [(code, line_10), (ends_with_print.as_str(), end)] {
        let into = back(code, from);
        assert!(
            into.admits(&format!(r#"<|return|>5 1 decode <|vars|>{vars} <|value|>"'aaa'""#)),
            "{from}"
        );
        assert!(
            !into.admits(&format!(r#"<|return|>3 1 decode <|vars|>{vars} <|value|>"None""#)),
            "decode returned, it did not raise, so only from its return statement: {from}"
        );
    }
    // A function that may fall off the end of a loop: its returns are not told.
    let loose = code.replace("    return out\n", "");
    let into = back(&loose, &line_10.replace("10 0", "9 0"));
    assert!(into.admits(&format!(r#"<|return|>3 1 decode <|vars|>{vars} <|value|>"None""#)));
}
