//! Where a step goes from a statement the text tells about: the call a statement
//! surely makes first, and the branch a condition the state decides takes.

use replayground_shared::Action;
use replayground_shared::trace_lang::Direction;

use super::tests::{after_one, before_one, state};
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

#[test]
fn a_step_into_a_class_call_reaches_its_init_first_even_among_other_calls() {
    let code = "class Playlist:\n    def __init__(self, name):\n        self.name = name\n        self.songs = []\n\n    def add(self, title):\n        self.songs.append(title)\n        return self\n\n    def __len__(self):\n        return len(self.songs)\n\n\nmix = Playlist('road trip').add('Intro')\ncount = len(mix)\n";
    let from = r#"<|line|>14 0 <module> <|vars|>{"Playlist":"<class '__main__.Playlist'>"}"#;
    let into = after_one(code, from, Action::StepInto);
    assert!(into.admits(r#"<|call|>2 1 __init__ <|vars|>{"self":"<__main__.Playlist object>","name":"'road trip'"}"#));
    assert!(
        !into.admits("<|call|>1 1 Playlist <|vars|>{}"),
        "the class body ran before"
    );
    assert!(
        !into.admits(r#"<|call|>6 1 add <|vars|>{"self":"<__main__.Playlist object>","title":"'Intro'"}"#),
        "`add` is called on what the class call returns"
    );
    // A subclass without its own `__init__` runs its base's; one with a `__new__` of the
    // program's, or a base the program does not define, does not tell.
    let derived = format!("{code}\n\nclass Mixtape(Playlist):\n    pass\n\n\ntape = Mixtape('b-sides')\n");
    let facts = CodeFacts::new(&derived).expect("parses");
    assert_eq!(facts.first_frame(MODULE, 22), Some(("__init__".to_owned(), 2)));
    let created = derived.replace(
        "    pass\n",
        "    def __new__(cls, name):\n        return super().__new__(cls)\n",
    );
    let facts = CodeFacts::new(&created).expect("parses");
    assert_eq!(facts.first_frame(MODULE, 23), None);
    let enum_like = "from enum import Enum\n\n\nclass Color(Enum):\n    def __init__(self, code):\n        self.code = code\n\n\nred = Color(1)\n";
    let facts = CodeFacts::new(enum_like).expect("parses");
    assert_eq!(facts.first_frame(MODULE, 9), None);
    // An argument that runs the program's code runs first.
    let nested = "def title(s):\n    return s.title()\n\n\nclass Tag:\n    def __init__(self, name):\n        self.name = name\n\n\ntag = Tag(title('x'))\n";
    let facts = CodeFacts::new(nested).expect("parses");
    assert_eq!(facts.first_frame(MODULE, 10), Some(("title".to_owned(), 1)));
}

#[test]
fn a_builtin_handed_only_builtins_and_literals_calls_nothing_of_the_program() {
    let code = "def group(words):\n    return [[w] for w in words]\n\n\ngrouped = group(['a', 'bc'])\nlargest = max(grouped, key=len)\nordered = sorted(grouped, key=lambda g: -len(g))\nprint(largest, end='')\n";
    let grouped = r#""group":"<function group>","grouped":"[['a'], ['bc']]""#;
    let into = after_one(
        code,
        &format!("<|line|>6 0 <module> <|vars|>{{{grouped}}}"),
        Action::StepInto,
    );
    assert!(into.admits(r#"<|line|>7 0 <module> <|vars|>{"group":"..","grouped":"..","largest":"['a']"}"#));
    assert!(
        !into.admits(r#"<|call|>1 1 group <|vars|>{"words":"['a', 'bc']"}"#),
        "`key=len` calls no function of the program"
    );
    let facts = CodeFacts::new(code).expect("parses");
    assert!(facts.calls_nothing(MODULE, 6));
    assert!(facts.calls_nothing(MODULE, 8), "`end=''` is a literal");
    assert!(!facts.calls_nothing(MODULE, 7), "a lambda handed as `key` runs");
    assert!(facts.may_call(MODULE, 7));
    assert!(!facts.calls_nothing(MODULE, 5));
    // A lambda's own frame runs part of its line, not the statement that defined it.
    assert!(!facts.calls_nothing("<lambda>", 7));
    // Operators may run the program's special methods, a `defaultdict`'s factory its code.
    let special = format!("{code}\n\nclass Box:\n    def __lt__(self, other):\n        return True\n");
    assert!(!CodeFacts::new(&special).expect("parses").calls_nothing(MODULE, 6));
    let factory = "from collections import defaultdict\n\n\ndef zero():\n    return 0\n\n\ncounts = defaultdict(zero)\nn = counts['a']\n";
    assert!(!CodeFacts::new(factory).expect("parses").calls_nothing(MODULE, 9));
}

#[test]
fn a_header_over_builtins_calls_nothing_of_the_program() {
    let code = "def average(scores):\n    return sum(scores) / len(scores)\n\n\nclasses = {'math': [90, 72], 'art': []}\nreport = {}\nfor subject, scores in classes.items():\n    if scores:\n        report[subject] = average(scores)\n    while not report:\n        break\n";
    let facts = CodeFacts::new(code).expect("parses");
    for header in [7, 8, 10] {
        assert!(facts.calls_nothing(MODULE, header), "line {header}");
    }
    assert!(!facts.calls_nothing(MODULE, 9));
    let vars = r#""average":"<function average>","classes":"{'math': [90, 72], 'art': []}","report":"{}""#;
    let into = after_one(
        code,
        &format!("<|line|>7 0 <module> <|vars|>{{{vars}}}"),
        Action::StepInto,
    );
    assert!(into.admits(r#"<|line|>8 0 <module> <|vars|>{"average":"..","classes":"..","report":"..","subject":"'math'","scores":"[90, 72]"}"#));
    assert!(
        !into.admits(r#"<|call|>1 1 average <|vars|>{"scores":"[90, 72]"}"#),
        "the loop's header calls no function of the program"
    );
    // Iterating may resume a generator of the program; a truth test may run `__len__`.
    let generator = format!("{code}\n\ndef gen():\n    yield 1\n");
    assert!(!CodeFacts::new(&generator).expect("parses").calls_nothing(MODULE, 7));
    let sized = format!("{code}\n\nclass Box:\n    def __len__(self):\n        return 0\n");
    assert!(!CodeFacts::new(&sized).expect("parses").calls_nothing(MODULE, 8));
}

#[test]
fn a_library_handed_nothing_it_could_call_back_runs_nothing_of_the_program() {
    let code = "from collections import deque\n\n\ndef wrap(text):\n    lines = []\n    for word in text.split():\n        lines.append(word.upper())\n    return lines\n\n\nq = deque(maxlen=2)\nq.append(wrap('a b'))\n";
    let facts = CodeFacts::new(code).expect("parses");
    for line in [5, 6, 7, 11] {
        assert!(facts.calls_nothing("wrap", line) || line == 11, "line {line}");
    }
    assert!(facts.calls_nothing(MODULE, 11), "an imported class handed a literal");
    assert!(!facts.calls_nothing(MODULE, 12), "`wrap` runs first");
    assert_eq!(facts.first_frame(MODULE, 12), Some(("wrap".to_owned(), 4)));
    // A method the program defines may be the one called; a function held as a value
    // (here by a lambda) may be what the library calls back; so may a method a library
    // calls by its name.
    let method = code.replace(
        "def wrap(text):",
        "class Words:\n    def upper(self):\n        return self\n\n\ndef wrap(text):",
    );
    // `lines.append(word.upper())`, five lines down.
    assert!(!CodeFacts::new(&method).expect("parses").calls_nothing("wrap", 12));
    let escaping = format!("{code}shout = lambda s: s.upper()\n");
    assert!(!CodeFacts::new(&escaping).expect("parses").calls_nothing("wrap", 6));
    let held = format!("{code}handlers = [wrap]\n");
    assert!(!CodeFacts::new(&held).expect("parses").calls_nothing("wrap", 6));
    let file_like = "import json\n\n\nclass Sink:\n    def write(self, s):\n        return len(s)\n\n\nsink = Sink()\njson.dump([1], sink)\n";
    assert!(!CodeFacts::new(file_like).expect("parses").calls_nothing(MODULE, 10));
    let plain_sink = file_like.replace("def write", "def push");
    assert!(CodeFacts::new(&plain_sink).expect("parses").calls_nothing(MODULE, 10));
    let dunder = "class A:\n    def __init__(self, x):\n        self.x = x\n\n\na = A(1)\nb = a.__class__(2)\n";
    assert!(!CodeFacts::new(dunder).expect("parses").calls_nothing(MODULE, 7));
}

#[test]
fn stepping_back_from_a_call_reaches_a_statement_that_makes_it() {
    let code = "def evaluate(cs, x):\n    result = 0\n    for c in cs:\n        result = result * x + c\n    return result\n\n\ndef derivative(cs):\n    return [c * 2 for c in cs]\n\n\npoly = [2, 5]\nvalues = [evaluate(poly, x) for x in range(2)]\nslope = evaluate(derivative(poly), 1)\nfirst = evaluate(poly, 0)\n";
    let facts = CodeFacts::new(code).expect("parses");
    assert_eq!(facts.call_sites("evaluate", 1), Some(BTreeSet::from([13, 14, 15])));
    let back = |from: &str| before_one(code, from, Action::ReverseStepInto);
    let bounds = back(r#"<|call|>1 1 evaluate <|vars|>{"cs":"[4, 10]","x":"1"}"#);
    assert!(bounds.admits(r#"<|line|>14 0 <module> <|vars|>{"evaluate":"<function evaluate>","derivative":"<function derivative>","poly":"[2, 5]","values":"[2, 7]"}"#));
    assert!(bounds.admits(r#"<|return|>9 1 derivative <|vars|>{"cs":"[2, 5]"} <|value|>"[4, 10]""#));
    assert!(
        !bounds.admits("<|line|>1 0 <module> <|vars|>{}"),
        "line 1 makes no call of `evaluate`"
    );
    let inner = back(r#"<|call|>1 2 evaluate <|vars|>{"cs":"[2, 5]","x":"0"}"#);
    assert!(inner.admits(r#"<|line|>13 1 <listcomp> <|vars|>{".0":"<range_iterator object>","x":"0"}"#));
    // A function only ever called where it is the statement's one call: its caller's line.
    let single = "def half(x):\n    return x / 2\n\n\na = half(4)\nb = half(a)\n";
    let back = before_one(
        single,
        r#"<|call|>1 1 half <|vars|>{"x":"2.0"}"#,
        Action::ReverseStepInto,
    );
    assert!(back.admits(r#"<|line|>6 0 <module> <|vars|>{"half":"<function half>","a":"2.0"}"#));
    assert!(!back.admits(r#"<|return|>2 1 half <|vars|>{"x":"4"} <|value|>"2.0""#));
    // Held as a value, a function may be called from anywhere.
    let held = format!("{single}f = half\n");
    assert_eq!(CodeFacts::new(&held).expect("parses").call_sites("half", 1), None);
}

#[test]
fn a_dataclass_body_may_hold_a_field_object() {
    let code = "from dataclasses import dataclass, field\n\n\n@dataclass\nclass Recipe:\n    items: list = field(default_factory=list)\n\n    def scaled(self):\n        return self\n\n\nr = Recipe()\n";
    let from = r#"<|line|>4 0 <module> <|vars|>{"dataclass":"<function dataclass>","field":"<function field>"}"#;
    let back = before_one(code, from, Action::ReverseStepInto);
    let field = "Field(name=None,type=None,default=<dataclasses._MISSING_TYPE object>,default_factory=<class 'list'>,init=True,repr=True,hash=None,compare=True,metadata=mappingproxy({}),kw_only=<d...";
    assert!(back.admits(&format!(
        r#"<|return|>8 1 Recipe <|vars|>{{"items":"{field}","scaled":"<function Recipe.scaled>"}} <|value|>"None""#
    )));
}

#[test]
fn stepping_back_from_a_line_reaches_a_line_the_blocks_lead_from() {
    let code = "def check(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x\n\n\nvalid, errors = [], []\nfor x in [1, -2]:\n    try:\n        valid.append(check(x))\n    except ValueError as exc:\n        errors.append(str(exc))\nprint(valid, errors)\n";
    let back = |from: &str| before_one(code, from, Action::ReverseStepInto);
    let vars = r#""check":"<function check>","valid":"[]","errors":"[]","x":"1""#;
    let into_try = back(&format!("<|line|>10 0 <module> <|vars|>{{{vars}}}"));
    let same = r#""check":"..","valid":"..","errors":"..","x":"..""#;
    assert!(into_try.admits(&format!("<|line|>9 0 <module> <|vars|>{{{same}}}")));
    assert!(
        !into_try.admits(&format!("<|line|>11 0 <module> <|vars|>{{{same}}}")),
        "a handler does not lead into the `try` body"
    );
    assert!(
        !into_try.admits(r#"<|return|>4 1 check <|vars|>{"x":"1"} <|value|>"1""#),
        "`try:` calls nothing"
    );
    // The loop's header follows the end of its body or a handler, and what they called.
    let header = back(&format!("<|line|>8 0 <module> <|vars|>{{{vars}}}"));
    assert!(header.admits(&format!("<|line|>10 0 <module> <|vars|>{{{same}}}")));
    assert!(header.admits(&format!("<|line|>12 0 <module> <|vars|>{{{same}}}")));
    assert!(header.admits(r#"<|return|>4 1 check <|vars|>{"x":"1"} <|value|>"1""#));
    assert!(!header.admits(&format!("<|line|>13 0 <module> <|vars|>{{{same}}}")));
}

#[test]
fn stepping_back_to_a_frames_start_stops_only_in_it_or_deeper() {
    let code = "def evaluate(cs, x):\n    result = 0\n    for c in cs:\n        result = result * x + c\n    return result\n\n\nvalues = [evaluate([1, 2], x) for x in range(2)]\n";
    let from = r#"<|line|>4 2 evaluate <|vars|>{"cs":"[1, 2]","x":"0","result":"0","c":"1"}"#;
    let back = before_one(code, from, Action::ReverseStepReturn);
    assert!(back.admits(r#"<|call|>1 2 evaluate <|vars|>{"cs":"[1, 2]","x":"0"}"#));
    assert!(back.admits(r#"<|line|>3 2 evaluate <|vars|>{"cs":"..","x":"..","result":"0"}"#));
    assert!(
        !back.admits(r#"<|line|>8 2 <listcomp> <|vars|>{".0":"<range_iterator object>","x":"0"}"#),
        "another frame at this depth cannot run while this one does"
    );
    assert!(!back.admits(r#"<|line|>8 1 <listcomp> <|vars|>{".0":"<range_iterator object>","x":"0"}"#));
}

#[test]
fn a_breakpoint_elsewhere_stops_no_step_into_and_no_step_over_a_statement_that_calls_nothing() {
    let code = "def f(n):\n    total = n + 1\n    total = total * 2\n    return total\n\n\nf(1)\n";
    let steps = [
        ("<|line|>7 0 <module> <|vars|>{\"f\":\"<function f>\"}", None),
        (
            "<|line|>3 1 f <|vars|>{\"n\":\"1\",\"total\":\"2\"}",
            Some(Action::Breakpoint(3)),
        ),
    ];
    let prefix = super::tests::trajectory(code, &steps);
    let again = "<|line|>3 1 f <|vars|>{\"n\":\"..\",\"total\":\"..\"}";
    for action in [Action::StepInto, Action::StepOver] {
        let bounds = super::Bounds::after(&prefix, action);
        assert!(
            bounds.admits("<|line|>4 1 f <|vars|>{\"n\":\"..\",\"total\":\"4\"}"),
            "{action}"
        );
        assert!(!bounds.admits(again), "{action}: line 3 does not run again");
    }
    assert!(super::Bounds::after(&prefix, Action::Continue).admits(again));
}

#[test]
fn a_line_that_only_continues_a_string_never_fires() {
    // Python places a string at its first line: the assignment fires once, on line 1.
    let code = "raw = \"\"\"a\nb\n\"\"\"\n\n\ndef parse(t):\n    return t\n";
    let into = after_one(code, "<|line|>1 0 <module> <|vars|>{}", Action::StepInto);
    assert!(into.admits(r#"<|line|>6 0 <module> <|vars|>{"raw":"'a\\nb\\n'"}"#));
    assert!(
        !into.admits("<|line|>1 0 <module> <|vars|>{}"),
        "the statement does not fire again"
    );
    assert!(
        !into.admits("<|line|>2 0 <module> <|vars|>{}"),
        "a string's second line"
    );
    assert!(!into.admits("<|line|>3 0 <module> <|vars|>{}"), "its closing quotes");
    // An f-string's replacement field on a later line is code, and may fire.
    let tree = replayground_exec::python::parse("x = f\"\"\"a\\n{\n1 +\n 2}b\n\"\"\"\n").expect("parses");
    assert_eq!(super::flow::span(tree.root_node()), BTreeSet::from([1, 2, 3]));
}

#[test]
fn a_jump_lands_where_the_statements_before_leave_time_to_reach() {
    let code = "orders = [{'id': 1}, {'id': 2}]\nlimit = 3\n\n\ndef total(rows):\n    return len(rows)\n\n\nshipped = [r['id'] for r in orders]\ncount = total(orders)\nprint(count)\n";
    let start = "<|line|>1 0 <module> <|vars|>{}";
    let jump = after_one(code, start, Action::Jump(20));
    assert!(!jump.admits(start), "line 1 runs once, as event 1");
    assert!(
        !jump.admits(r#"<|line|>2 0 <module> <|vars|>{"orders":"[{'id': 1}, {'id': 2}]"}"#),
        "line 2 runs once, as event 2"
    );
    assert!(jump.admits(r#"<|line|>11 0 <module> <|vars|>{"orders":"[{'id': 1}, {'id': 2}]","limit":"3","total":"<function total>","shipped":"[1, 2]","count":"2"}"#));
    assert!(jump.admits(r#"<|line|>6 1 total <|vars|>{"rows":"[{'id': 1}, {'id': 2}]"}"#));
    // By event 4 the module cannot have reached its last statement: three come before it.
    let early = after_one(code, start, Action::Jump(4));
    assert!(!early.admits(r#"<|line|>11 0 <module> <|vars|>{"orders":"[{'id': 1}, {'id': 2}]","limit":"3","total":"<function total>","shipped":"[1, 2]","count":"2"}"#));
}

#[test]
fn calling_a_generator_function_starts_no_frame_until_something_iterates_it() {
    let code = "def fibonacci():\n    a, b = 0, 1\n    while True:\n        yield a\n        a, b = b, a + b\n\n\ndef take(gen, n):\n    return [next(gen) for _ in range(n)]\n\n\nfirst = take(fibonacci(), 7)\ng = fibonacci()\ntotal = sum(fibonacci())\nfor x in fibonacci():\n    break\n";
    let facts = CodeFacts::new(code).expect("parses");
    // The generator object is made first, then `take` runs: its call is the first event.
    assert_eq!(facts.first_frame(MODULE, 12), Some(("take".to_owned(), 8)));
    let into = after_one(
        code,
        r#"<|line|>12 0 <module> <|vars|>{"fibonacci":"<function fibonacci>","take":"<function take>"}"#,
        Action::StepInto,
    );
    assert!(into.admits(r#"<|call|>8 1 take <|vars|>{"gen":"<generator object fibonacci>","n":"7"}"#));
    assert!(
        !into.admits(r#"<|call|>8 1 take <|vars|>{"gen":"<class '__main__ fibonacci'>","n":"7"}"#),
        "the argument is the generator the call made"
    );
    assert!(
        !into.admits("<|call|>1 1 fibonacci <|vars|>{}"),
        "the generator's code waits for a `next`"
    );
    // Making one runs nothing of the program's; iterating one does.
    assert!(facts.calls_nothing(MODULE, 13));
    assert!(!facts.calls_nothing(MODULE, 14));
    assert_eq!(facts.first_frame(MODULE, 14), None);
    assert!(!facts.calls_nothing(MODULE, 15));
}

#[test]
fn stepping_back_from_a_loop_header_before_its_first_iteration_reaches_the_statement_before() {
    let code = "class Heap:\n    def __init__(self):\n        self.items = []\n\n\nheap = Heap()\nfor value in [7, 3]:\n    heap.items.append(value)\nprint(heap.items)\n";
    let back = |from: &str, action: Action| {
        let mut t = super::tests::trajectory(code, &[(from, None)]);
        t.direction = Direction::Inverse;
        Bounds::after(&t, action)
    };
    // `value` is not bound yet: the loop has not begun, and `heap = Heap()` ran last.
    let first = r#"<|line|>7 0 <module> <|vars|>{"Heap":"<class '__main__.Heap'>","heap":"<__main__.Heap object>"}"#;
    let into = back(first, Action::ReverseStepInto);
    assert!(into.admits(r#"<|return|>3 1 __init__ <|vars|>{"self":"<__main__.Heap object>"} <|value|>"None""#));
    assert!(
        !into.admits(r#"<|line|>6 0 <module> <|vars|>{"Heap":".."}"#),
        "the statement before surely calls"
    );
    assert!(!into.admits(r#"<|line|>8 0 <module> <|vars|>{"Heap":"..","heap":"..","value":"7"}"#));
    // Later arrivals come from the loop's body.
    let again = r#"<|line|>7 0 <module> <|vars|>{"Heap":"<class '__main__.Heap'>","heap":"<__main__.Heap object>","value":"7"}"#;
    let into = back(again, Action::ReverseStepInto);
    assert!(into.admits(r#"<|line|>8 0 <module> <|vars|>{"Heap":"..","heap":"..","value":".."}"#));
    // A `del` anywhere could unbind the loop's name: the absence tells nothing.
    let deleting = code.replace("print(heap.items)", "del value");
    let mut t = super::tests::trajectory(&deleting, &[(first, None)]);
    t.direction = Direction::Inverse;
    let into = Bounds::after(&t, Action::ReverseStepInto);
    assert!(into.admits(r#"<|line|>8 0 <module> <|vars|>{"Heap":"..","heap":"..","value":".."}"#));
}

#[test]
fn a_while_loops_turn_ends_at_its_header_unless_the_condition_is_a_constant() {
    let code = "def run(ticks):\n    elapsed = 0\n    while elapsed < ticks:\n        elapsed += 20\n        note = elapsed\n    while True:\n        elapsed -= 1\n        if elapsed < 0:\n            break\n    return elapsed\n\n\nrun(60)\n";
    let from = r#"<|line|>5 1 run <|vars|>{"ticks":"60","elapsed":"20"}"#;
    let over = after_one(code, from, Action::StepOver);
    assert!(over.admits(r#"<|line|>3 1 run <|vars|>{"ticks":"..","elapsed":"..","note":"20"}"#));
    assert!(
        !over.admits(r#"<|line|>4 1 run <|vars|>{"ticks":"..","elapsed":"..","note":"20"}"#),
        "the condition is tested again on the header's line"
    );
    // `while True:` compiles to no test: the turn goes straight back into the body.
    let from = r#"<|line|>8 1 run <|vars|>{"ticks":"60","elapsed":"59","note":"60"}"#;
    let over = after_one(code, from, Action::StepOver);
    assert!(over.admits(r#"<|line|>7 1 run <|vars|>{"ticks":"..","elapsed":"..","note":".."}"#));
}

#[test]
fn a_breakpoint_in_a_call_begun_since_shows_only_the_names_bound_before_its_line() {
    let code = "TABLE = [(10, 'X'), (5, 'V')]\n\n\ndef to_roman(n):\n    out = ''\n    for value, symbol in TABLE:\n        while n >= value:\n            out += symbol\n            n -= value\n    done = True\n    return out\n\n\nyears = [14, 9]\nnumerals = [to_roman(y) for y in years]\n";
    let module = r#"<|line|>15 0 <module> <|vars|>{"TABLE":"[(10, 'X'), (5, 'V')]","to_roman":"<function to_roman>","years":"[14, 9]"}"#;
    let hit = after_one(code, module, Action::Breakpoint(6));
    assert!(hit.admits(r#"<|line|>6 2 to_roman <|vars|>{"n":"14","out":"''"}"#));
    assert!(
        !hit.admits(r#"<|line|>6 2 to_roman <|vars|>{"n":"14","out":"''","value":"10","symbol":"'X'"}"#),
        "the loop has not begun in a call that has just begun"
    );
    assert!(
        !hit.admits(r#"<|line|>6 2 to_roman <|vars|>{"n":"14","out":"'X'"}"#),
        "`out = ''` ran, and nothing before the loop rebinds it"
    );
    // Inside the loop any of its names may be bound (an earlier turn), not a later line's.
    let body = after_one(code, module, Action::Breakpoint(8));
    assert!(body.admits(r#"<|line|>8 2 to_roman <|vars|>{"n":"14","out":"''","value":"10","symbol":"'X'"}"#));
    assert!(
        body.admits(r#"<|line|>8 2 to_roman <|vars|>{"n":"4","out":"'X'","value":"5","symbol":"'V'"}"#),
        "an earlier turn may have rebound `out`"
    );
    assert!(
        !body.admits(r#"<|line|>8 2 to_roman <|vars|>{"n":"14","out":"''","value":"10","symbol":"'X'","done":"True"}"#)
    );
    // From inside the function, its own activation may loop back to the header.
    let inside = after_one(
        code,
        r#"<|line|>9 2 to_roman <|vars|>{"n":"4","out":"'X'","value":"10","symbol":"'X'"}"#,
        Action::Breakpoint(6),
    );
    assert!(inside.admits(r#"<|line|>6 2 to_roman <|vars|>{"n":"4","out":"'X'","value":"10","symbol":"'X'"}"#));
    // A generator's frame may have been suspended with its names bound.
    let generator = code.replace("    return out\n", "    yield out\n");
    let resumed = after_one(&generator, module, Action::Breakpoint(6));
    assert!(resumed.admits(r#"<|line|>6 2 to_roman <|vars|>{"n":"14","out":"''","value":"10","symbol":"'X'"}"#));
}

#[test]
fn a_match_statements_case_patterns_bind_names_so_the_frames_names_are_not_bounded() {
    let code = "def area(shape):\n    match shape:\n        case (w, h):\n            size = w * h\n        case _:\n            size = 0\n    return size\n\n\nprint(area((2, 3)))\n";
    let inner = after_one(code, r#"<|line|>3 1 area <|vars|>{"shape":"(2, 3)"}"#, Action::StepInto);
    assert!(inner.admits(r#"<|line|>4 1 area <|vars|>{"shape":"..","w":"2","h":"3"}"#));
    let module = r#"<|line|>10 0 <module> <|vars|>{"area":"<function area>"}"#;
    let hit = after_one(code, module, Action::Breakpoint(4));
    assert!(hit.admits(r#"<|line|>4 1 area <|vars|>{"shape":"(2, 3)","w":"2","h":"3"}"#));
}

#[test]
fn names_new_at_a_frames_next_event_come_in_the_order_the_code_first_meets_them() {
    let code = "TABLE = [(10, 'X'), (5, 'V')]\n\n\ndef to_roman(n):\n    out = ''\n    for value, symbol in TABLE:\n        while n >= value:\n            out += symbol\n            n -= value\n    return out\n\n\nprint(to_roman(14))\n";
    let header = r#"<|line|>6 1 to_roman <|vars|>{"n":"14","out":"''"}"#;
    let into = after_one(code, header, Action::StepInto);
    assert!(into.admits(r#"<|line|>7 1 to_roman <|vars|>{"n":"..","out":"..","value":"10","symbol":"'X'"}"#));
    assert!(
        !into.admits(r#"<|line|>7 1 to_roman <|vars|>{"n":"..","out":"..","symbol":"'X'","value":"10"}"#),
        "`for value, symbol in TABLE` stores `value` first"
    );
    let mut scan = into.scan();
    assert!(
        !scan.feed(br#"<|line|>7 1 to_roman <|vars|>{"n":"..","out":"..","symbol"#),
        "`value` must come, and before `symbol`"
    );
    // A step that may cross several of the frame's events (a continue) leaves it open.
    let far = Bounds::new(
        code,
        Some(&state(header, None)),
        Direction::Forward,
        Action::Continue,
        Some(&BTreeSet::from([7])),
    );
    assert!(far.admits(r#"<|line|>7 1 to_roman <|vars|>{"n":"..","out":"..","symbol":"'X'","value":"10"}"#));
}

#[test]
fn stepping_back_past_a_class_call_reaches_its_init_and_no_other_method() {
    let code = "class Heap:\n    def __init__(self):\n        self.items = []\n\n    def push(self, value):\n        self.items.append(value)\n        return len(self.items)\n\n\nheap = Heap()\nfor value in [7, 3]:\n    heap.push(value)\nprint(heap.items)\n";
    let back = |code: &str, from: &str| {
        let mut t = super::tests::trajectory(code, &[(from, None)]);
        t.direction = Direction::Inverse;
        Bounds::after(&t, Action::ReverseStepInto)
    };
    // The loop has not begun: `heap = Heap()` ran last, and its last frame was `__init__`.
    let header = r#"<|line|>11 0 <module> <|vars|>{"Heap":"<class '__main__.Heap'>","heap":"<__main__.Heap object>"}"#;
    let init_return = r#"<|return|>3 1 __init__ <|vars|>{"self":"<__main__.Heap object>"} <|value|>"None""#;
    let push_return = r#"<|return|>7 1 push <|vars|>{"self":"<__main__.Heap object>","value":"7"} <|value|>"1""#;
    let into = back(code, header);
    assert!(into.admits(init_return));
    assert!(
        !into.admits(push_return),
        "the statement before calls no method but __init__"
    );
    // Before `__init__`'s call: the line that calls the class, not one calling a method.
    let call = r#"<|call|>2 1 __init__ <|vars|>{"self":"<__main__.Heap object>"}"#;
    let into = back(code, call);
    assert!(into.admits(r#"<|line|>10 0 <module> <|vars|>{"Heap":"<class '__main__.Heap'>"}"#));
    assert!(
        !into.admits(r#"<|line|>12 0 <module> <|vars|>{"Heap":"..","heap":"..","value":"7"}"#),
        "calling a method by its attribute does not let the method escape"
    );
    // A method held as a value may be anything's callee: the callers are not told.
    let held = code.replace("print(heap.items)", "add = heap.push\nprint(heap.items)");
    let into = back(&held, call);
    assert!(into.admits(r#"<|line|>12 0 <module> <|vars|>{"Heap":"..","heap":"..","value":"7"}"#));
}
