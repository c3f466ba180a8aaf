//! A step into a call: the frame it reaches and what its call event shows.

use replayground_shared::Action;

use super::code::CodeFacts;
use super::tests::after_one;

const HEAP: &str = "class Heap:
    def __init__(self, name, limit=3):
        self.items = []
        self.name = name

    def push(self, value, times=1):
        self.items.append(value)
        return len(self.items)


class Named(Heap):
    def label(self):
        return self.name


h = Heap('h')
n = h.push(4)
m = Named('m', limit=5)
m.push(len('ab'), times=2)
total = m.label()
";

fn state(text: &str) -> replayground_shared::State {
    replayground_shared::trace_lang::parse_state(text, None).expect("a state")
}

#[test]
fn a_step_into_a_class_call_reaches_init_with_a_fresh_object_and_the_arguments() {
    let from = r#"<|line|>18 0 <module> <|vars|>{"Heap":"<class '__main__.Heap'>","Named":"<class '__main__.Named'>","h":"<__main__.Heap object>","n":"1"}"#;
    let into = after_one(HEAP, from, Action::StepInto);
    assert!(into.admits(r#"<|call|>2 1 __init__ <|vars|>{"self":"<__main__.Named object>","name":"'m'","limit":"5"}"#));
    assert!(
        !into.admits(r#"<|call|>2 1 __init__ <|vars|>{"name":"'m'","self":"<__main__.Named object>","limit":"5"}"#),
        "parameters come in order"
    );
    assert!(
        !into.admits(r#"<|call|>2 1 __init__ <|vars|>{"self":"<__main__.Heap object>","name":"'m'","limit":"5"}"#),
        "the instance is of the class called"
    );
    assert!(
        !into.admits(r#"<|call|>2 1 __init__ <|vars|>{"self":"<__main__.Named object>","name":"'m'","limit":"3"}"#),
        "limit is given"
    );
    assert!(
        !into.admits(r#"<|call|>2 1 __init__ <|vars|>{"self":"<__main__.Named object>","name":"'m'"}"#),
        "every parameter is shown"
    );
}

#[test]
fn a_step_into_a_method_call_reaches_the_method_its_instance_resolves() {
    let vars = r#"{"Heap":"<class '__main__.Heap'>","Named":"<class '__main__.Named'>","h":"<__main__.Heap object>","n":"1","m":"<__main__.Named object>"}"#;
    let into = after_one(HEAP, &format!("<|line|>19 0 <module> <|vars|>{vars}"), Action::StepInto);
    assert!(into.admits(r#"<|call|>6 1 push <|vars|>{"self":"<__main__.Named object>","value":"2","times":"2"}"#));
    assert!(
        !into.admits(r#"<|call|>6 1 push <|vars|>{"self":"<__main__.Named object>","value":"2","times":"1"}"#),
        "times is given"
    );
    assert!(
        !into.admits(r#"<|call|>7 1 push <|vars|>{"self":"<__main__.Named object>","value":"2","times":"2"}"#),
        "the call event is on the def line"
    );
    assert!(
        !into.admits(r#"<|call|>12 1 label <|vars|>{"self":"<__main__.Named object>"}"#),
        "the method called is push"
    );
    assert!(
        !into.admits(&format!("<|line|>20 0 <module> <|vars|>{vars}")),
        "the call comes first"
    );
    // A subclass's own method, through an assignment.
    let from = format!("<|line|>20 0 <module> <|vars|>{vars}");
    let into = after_one(HEAP, &from, Action::StepInto);
    assert!(into.admits(r#"<|call|>12 1 label <|vars|>{"self":"<__main__.Named object>"}"#));
    // A receiver whose repr says nothing of its class: left to the model.
    let facts = CodeFacts::new(HEAP).expect("parses");
    let unknown = state(r#"<|line|>20 0 <module> <|vars|>{"m":"<object>"}"#);
    assert_eq!(facts.method_call(&unknown), None);
}

#[test]
fn a_method_an_instance_attribute_or_a_decorator_could_replace_is_left_to_the_model() {
    let from = r#"<|line|>7 0 <module> <|vars|>{"C":"<class '__main__.C'>","c":"<__main__.C object>"}"#;
    let cases = [
        (
            "class C:\n    def __init__(self):\n        self.f = print\n\n    def f(self):\n        pass\nc.f()\n",
            "an attribute named f",
        ),
        (
            "class C:\n    def __init__(self):\n        pass\n\n    @staticmethod\n    def f():\n        pass\nc.f()\n",
            "decorated",
        ),
        (
            "class C:\n    def __init__(self):\n        pass\n\n    def f(self):\n        yield 1\nc.f()\n",
            "a generator",
        ),
        (
            "class C:\n    def __init__(self):\n        setattr(self, 'f', 1)\n    def f(self):\n        pass\nc.f()\n",
            "setattr",
        ),
    ];
    for (code, why) in cases {
        let facts = CodeFacts::new(code).expect("parses");
        let line = code.lines().position(|l| l == "c.f()").expect("a call") + 1;
        let from = from.replace("<|line|>7", &format!("<|line|>{line}"));
        assert_eq!(facts.method_call(&state(&from)), None, "{why}");
    }
    let plain = "class C:\n    def __init__(self):\n        pass\n\n    def f(self):\n        pass\nc.f()\n";
    let facts = CodeFacts::new(plain).expect("parses");
    let entered = facts.method_call(&state(from)).expect("a plain method");
    assert_eq!((entered.function.as_str(), entered.first), ("f", 5));
}

#[test]
fn a_class_with_its_own_repr_or_a_builtin_base_binds_nothing() {
    let repr = "class C:\n    def __init__(self, n):\n        self.n = n\n\n    def __repr__(self):\n        return 'C'\n\n\nc = C(1)\n";
    let from = r#"<|line|>9 0 <module> <|vars|>{"C":"<class '__main__.C'>"}"#;
    let facts = CodeFacts::new(repr).expect("parses");
    assert_eq!(facts.call_bindings(&state(from)), None, "self's repr is C's own");
    let error = "class Oops(Exception):\n    def __init__(self, n):\n        self.n = n\n\n\n\n\n\nc = Oops(1)\n";
    let facts = CodeFacts::new(error).expect("parses");
    let from = r#"<|line|>9 0 <module> <|vars|>{"Oops":"<class '__main__.Oops'>"}"#;
    assert_eq!(
        facts.call_bindings(&state(from)),
        None,
        "an exception's repr shows its args"
    );
}

#[test]
fn a_comprehensions_call_event_shows_the_iterator_over_its_first_iterable() {
    let code = "xs = [1, 2]\nd = {'a': 1}\ns = 'ab'\nys = [x * 2 for x in xs]\nzs = {k: v for k, v in d.items()}\nrs = [i for i in range(len(xs))]\ncs = [c for c in s]\n";
    let vars = r#"{"xs":"[1, 2]","d":"{'a': 1}","s":"'ab'"}"#;
    let cases = [
        (4, "<listcomp>", "<list_iterator object>"),
        (5, "<dictcomp>", "<dict_itemiterator object>"),
        (6, "<listcomp>", "<range_iterator object>"),
    ];
    for (line, scope, iterator) in cases {
        let into = after_one(
            code,
            &format!("<|line|>{line} 0 <module> <|vars|>{vars}"),
            Action::StepInto,
        );
        assert!(
            into.admits(&format!(r#"<|call|>{line} 1 {scope} <|vars|>{{".0":"{iterator}"}}"#)),
            "{line}"
        );
        assert!(
            !into.admits(&format!(
                r#"<|call|>{line} 1 {scope} <|vars|>{{".0":"<tuple_iterator object>"}}"#
            )),
            "{line}: the iterator's type is the iterable's"
        );
    }
    // A string's iterator type depends on the Python version: the model's.
    let facts = CodeFacts::new(code).expect("parses");
    let from = state(&format!("<|line|>7 0 <module> <|vars|>{vars}"));
    assert_eq!(facts.call_bindings(&from), None);
}

#[test]
fn a_class_with_special_methods_still_binds_names_and_literals_but_computes_nothing() {
    let code = "class Box:
    def __init__(self, name, n):
        self.name = name

    def __len__(self):
        return 1


size = 2
a = Box('a', size)
b = Box('b', size + 1)
";
    let facts = CodeFacts::new(code).expect("parses");
    let from = state(r#"<|line|>10 0 <module> <|vars|>{"Box":"<class '__main__.Box'>","size":"2"}"#);
    let entered = facts.call_bindings(&from).expect("a name and a literal");
    assert_eq!(
        entered.bound,
        [
            ("self".to_owned(), "<__main__.Box object>".to_owned()),
            ("name".to_owned(), "'a'".to_owned()),
            ("n".to_owned(), "2".to_owned())
        ]
    );
    let from = state(r#"<|line|>11 0 <module> <|vars|>{"Box":"<class '__main__.Box'>","size":"2"}"#);
    assert_eq!(
        facts.call_bindings(&from),
        None,
        "size + 1 could run an operator method before the call"
    );
}

#[test]
fn a_parameter_whose_argument_is_not_known_is_shown_but_not_fixed() {
    let code = "def f(a, b, c=[]):\n    return a\n\n\nf(x, len(x), c=y)\n";
    let facts = CodeFacts::new(code).expect("parses");
    let from = state(r#"<|line|>5 0 <module> <|vars|>{"f":"<function f>","x":"[1]"}"#);
    let entered = facts.call_bindings(&from).expect("a plain call");
    assert_eq!(entered.names, ["a", "b", "c"]);
    assert_eq!(
        entered.bound,
        [("a".to_owned(), "[1]".to_owned()), ("b".to_owned(), "1".to_owned())],
        "y is not shown"
    );
}

const CALLER: &str = "def double(n):
    return n * 2


def main():
    k = 3
    items = [1]
    r = double(k)
    return r


main()
";

/// The steps from `main`'s `r = double(k)` to `double`'s return (`last_action` reaching it).
fn into_double_and_back(last_action: Action) -> replayground_shared::trace_lang::Trajectory {
    super::tests::trajectory(
        CALLER,
        &[
            (r#"<|line|>8 1 main <|vars|>{"k":"3","items":"[1]"}"#, None),
            (r#"<|call|>1 2 double <|vars|>{"n":"3"}"#, Some(Action::StepInto)),
            (r#"<|line|>2 2 double <|vars|>{"n":"3"}"#, Some(Action::StepInto)),
            (
                r#"<|return|>2 2 double <|vars|>{"n":"3"} <|value|>"6""#,
                Some(last_action),
            ),
        ],
    )
}

#[test]
fn a_step_from_a_callees_return_completes_the_assignment_that_called_it() {
    let back = super::Bounds::after(&into_double_and_back(Action::StepInto), Action::StepInto);
    assert!(back.admits(r#"<|line|>9 1 main <|vars|>{"k":"3","items":"[1]","r":"6"}"#));
    assert!(
        back.admits(r#"<|line|>9 1 main <|vars|>{"k":"3","items":"[2]","r":"6"}"#),
        "double could change a list"
    );
    assert!(
        !back.admits(r#"<|line|>9 1 main <|vars|>{"k":"3","items":"[1]","r":"5"}"#),
        "r is what double returned"
    );
    assert!(
        !back.admits(r#"<|line|>9 1 main <|vars|>{"k":"4","items":"[1]","r":"6"}"#),
        "k is a number the statement does not bind"
    );
    assert!(
        !back.admits(r#"<|exception|>8 1 main <|vars|>{"k":"3","items":"[1]"} <|value|>"ValueError()""#),
        "the return was normal"
    );
    // Reached by step_return, the return may be an exception's: nothing is fixed.
    let unknown = super::Bounds::after(&into_double_and_back(Action::StepReturn), Action::StepInto);
    assert!(unknown.admits(r#"<|line|>9 1 main <|vars|>{"k":"3","items":"[1]","r":"5"}"#));
}

#[test]
fn a_return_of_a_call_or_a_class_call_completes_too() {
    let code = "class P:
    def __init__(self, n):
        self.n = n


def make(n):
    return P(n)


def outer():
    p = make(2)
    return p


outer()
";
    let prefix = |steps: &[(&str, Option<Action>)]| super::tests::trajectory(code, steps);
    // `__init__` returns None: `return P(n)` returns the new object.
    let steps = [
        (r#"<|line|>7 2 make <|vars|>{"n":"2"}"#, None),
        (
            r#"<|call|>2 3 __init__ <|vars|>{"self":"<__main__.P object>","n":"2"}"#,
            Some(Action::StepInto),
        ),
        (
            r#"<|line|>3 3 __init__ <|vars|>{"self":"<__main__.P object>","n":"2"}"#,
            Some(Action::StepInto),
        ),
        (
            r#"<|return|>3 3 __init__ <|vars|>{"self":"<__main__.P object>","n":"2"} <|value|>"None""#,
            Some(Action::StepInto),
        ),
    ];
    let back = super::Bounds::after(&prefix(&steps), Action::StepOver);
    assert!(back.admits(r#"<|return|>7 2 make <|vars|>{"n":"2"} <|value|>"<__main__.P object>""#));
    assert!(
        !back.admits(r#"<|return|>7 2 make <|vars|>{"n":"2"} <|value|>"None""#),
        "the call's value is the object"
    );
    assert!(
        !back.admits(r#"<|line|>8 2 make <|vars|>{"n":"2"}"#),
        "make returns next"
    );
    // `p = make(2)` binds what make returned.
    let steps = [
        ("<|line|>11 1 outer <|vars|>{}", None),
        (r#"<|call|>6 2 make <|vars|>{"n":"2"}"#, Some(Action::StepInto)),
        (r#"<|line|>7 2 make <|vars|>{"n":"2"}"#, Some(Action::StepInto)),
        (
            r#"<|return|>7 2 make <|vars|>{"n":"2"} <|value|>"<__main__.P object>""#,
            Some(Action::StepOver),
        ),
    ];
    let back = super::Bounds::after(&prefix(&steps), Action::StepInto);
    assert!(back.admits(r#"<|line|>12 1 outer <|vars|>{"p":"<__main__.P object>"}"#));
    assert!(!back.admits(r#"<|line|>12 1 outer <|vars|>{"p":"None"}"#));
}
