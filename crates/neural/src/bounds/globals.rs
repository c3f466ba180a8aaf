//! Module variables a function's frame reads as the module last showed them.
//!
//! A function's state shows only its own variables, so an expression such as
//! `TRANSITIONS[state]` or a loop over `TABLE` in a function could not be evaluated. But a
//! name the module binds once, by one top-level assignment, and that nothing else ever
//! binds, mutates or hands on, keeps the object the module's state showed: every frame
//! that reads it later in the run reads that value (`CodeFacts::read_module`).

use std::collections::HashMap;

use tree_sitter::Node;

use super::effects::Program;
use super::flow::{field, named};
use super::literal;
use super::values::{Kind, Value, from_repr};

/// How the text reads a module variable besides its one assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reads {
    /// Only where no value could change or be handed on (iterated, indexed, tested,
    /// measured): a list or dict of immutable items keeps its value too.
    Inert,
    /// Also where an object could be handed on (an argument, a return value, another
    /// name): only an immutable value surely keeps it.
    Anywhere,
}

/// Builtins that read an argument without changing it or keeping it anywhere the
/// program could change it from.
const READING_BUILTINS: [&str; 19] = [
    "len",
    "sorted",
    "list",
    "tuple",
    "set",
    "frozenset",
    "min",
    "max",
    "sum",
    "any",
    "all",
    "enumerate",
    "zip",
    "reversed",
    "str",
    "repr",
    "print",
    "bool",
    "dict",
];

/// Methods of the builtin containers that only read.
const READING_METHODS: [&str; 7] = ["get", "keys", "items", "values", "count", "index", "copy"];

/// The module variables bound once by a top-level `NAME = …` and otherwise only read,
/// each with how it is read. Empty where the text could reach the module's namespace
/// another way (`globals()`, `exec`, `eval`, `vars()`, `__dict__`, `import *`).
pub(super) fn module_reads(root: Node<'_>, source: &[u8], program: &Program) -> HashMap<String, Reads> {
    let text = String::from_utf8_lossy(source);
    if [
        "globals(",
        "exec(",
        "eval(",
        "vars(",
        "__dict__",
        "import *",
        "setattr(",
        "sys.modules",
    ]
    .iter()
    .any(|w| text.contains(w))
    {
        return HashMap::new();
    }
    let words = |node: Node<'_>| node.utf8_text(source).unwrap_or_default();
    let mut assigned: HashMap<&str, Option<usize>> = HashMap::new();
    for statement in named(root) {
        let assignment = statement.named_child(0).filter(|a| a.kind() == "assignment");
        let target = assignment
            .filter(|a| field(*a, "type").is_none() && field(*a, "right").is_some_and(|r| r.kind() != "assignment"))
            .and_then(|a| field(a, "left"))
            .filter(|l| l.kind() == "identifier" && statement.kind() == "expression_statement");
        if let Some(target) = target {
            // A second top-level assignment: bound more than once.
            let seen = assigned.entry(words(target)).or_insert(Some(target.id()));
            if *seen != Some(target.id()) {
                *seen = None;
            }
        }
    }
    let mut reads: HashMap<String, Reads> = assigned
        .iter()
        .filter(|(name, binding)| binding.is_some() && !name.starts_with("__"))
        .map(|(name, _)| ((*name).to_owned(), Reads::Inert))
        .collect();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        stack.extend(named(node));
        if node.kind() != "identifier" {
            continue;
        }
        let name = words(node);
        let Some(&current) = reads.get(name) else {
            continue;
        };
        if assigned.get(name) == Some(&Some(node.id())) {
            continue;
        }
        match read_kind(node, source, program) {
            Some(Read::NotTheName | Read::Inert) => {}
            Some(Read::Value) => {
                if current == Reads::Inert {
                    reads.insert(name.to_owned(), Reads::Anywhere);
                }
            }
            None => {
                reads.remove(name);
            }
        }
    }
    reads
}

/// The module variables read as `reads` ([`module_reads`]) that a frame in the module's
/// top-level statement number `at` reads with the value the text alone gives them, for
/// a question whose steps show no state of the module's that holds them: those bound by
/// a top-level `NAME = literal` (which cannot raise) before that statement. A frame
/// there runs only once that statement runs (a function's `def` binds it only then),
/// after every statement before it.
pub(super) fn text_values(
    root: Node<'_>,
    source: &[u8],
    reads: &HashMap<String, Reads>,
    at: usize,
) -> Vec<(String, String)> {
    named(root)
        .into_iter()
        .take(at)
        .filter_map(|statement| {
            let (name, repr) = literal::assignment(statement, source)?;
            keeps_value(*reads.get(name)?, &repr).then(|| (name.to_owned(), repr))
        })
        .collect()
}

/// What one occurrence of a name is.
enum Read {
    /// An attribute's or a keyword's name, not a reference to the variable.
    NotTheName,
    /// A read that changes and hands on nothing.
    Inert,
    /// A read whose object may be handed on.
    Value,
}

/// How the identifier `node` uses its name; `None` where it may bind it, change the
/// object or where the text does not tell.
fn read_kind(node: Node<'_>, source: &[u8], program: &Program) -> Option<Read> {
    let parent = node.parent()?;
    let is = |name: &str| field(parent, name).is_some_and(|f| f.id() == node.id());
    let read = match parent.kind() {
        "attribute" if is("attribute") => Read::NotTheName,
        "keyword_argument" if is("name") => Read::NotTheName,
        "for_statement" | "for_in_clause" if is("right") => Read::Inert,
        "subscript" if is("value") && !stored(parent) => Read::Inert,
        "comparison_operator" | "not_operator" | "interpolation" => Read::Inert,
        "if_statement" | "elif_clause" | "while_statement" if is("condition") => Read::Inert,
        "argument_list" => {
            let call = parent.parent()?;
            let function = field(call, "function")?;
            let name = function.utf8_text(source).ok()?;
            if function.kind() == "identifier" && READING_BUILTINS.contains(&name) && program.builtin(name) {
                Read::Inert
            } else {
                Read::Value
            }
        }
        "attribute" if is("object") => {
            let method = field(parent, "attribute")?.utf8_text(source).ok()?;
            let called = parent
                .parent()
                .is_some_and(|c| c.kind() == "call" && field(c, "function").is_some_and(|f| f.id() == parent.id()));
            if !(called && READING_METHODS.contains(&method) && program.builtin(method)) {
                return None;
            }
            Read::Inert
        }
        "assignment" | "augmented_assignment" if is("right") => Read::Value,
        "keyword_argument" if is("value") => Read::Value,
        "subscript" if is("subscript") => Read::Value,
        "binary_operator"
        | "unary_operator"
        | "boolean_operator"
        | "return_statement"
        | "parenthesized_expression"
        | "list"
        | "tuple"
        | "set"
        | "pair"
        | "conditional_expression"
        | "expression_list" => {
            if stored(parent) {
                return None;
            }
            Read::Value
        }
        _ => return None,
    };
    Some(read)
}

/// Whether `node` is (part of) what an assignment, a `for`, a `with … as`, or a `del`
/// stores to.
fn stored(mut node: Node<'_>) -> bool {
    while let Some(parent) = node.parent() {
        let is_left = field(parent, "left").is_some_and(|l| l.id() == node.id());
        match parent.kind() {
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "tuple"
            | "list"
            | "parenthesized_expression"
            | "expression_list" => node = parent,
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => return is_left,
            "delete_statement" | "as_pattern" | "as_pattern_target" => return true,
            _ => return false,
        }
    }
    false
}

/// Whether `value` is immutable all the way down: a number, string, bool, `None`, or a
/// tuple of such.
fn immutable(value: &Value) -> bool {
    match value {
        Value::Int(_) | Value::Str(_) | Value::Bool(_) | Value::None => true,
        Value::Container(d) if d.kind == Kind::Tuple => items_immutable(value),
        _ => false,
    }
}

/// Whether every item of a container (a dict's keys and values) is [`immutable`].
fn items_immutable(value: &Value) -> bool {
    let Value::Container(display) = value else {
        return false;
    };
    let Some(items) = &display.items else {
        return false;
    };
    items.iter().all(|item| {
        let parts = match display.kind {
            Kind::Dict => match super::values::key_value(item) {
                Some((k, v)) => vec![k, v],
                None => return false,
            },
            _ => vec![item.clone()],
        };
        parts.iter().all(|p| from_repr(p).is_some_and(|v| immutable(&v)))
    })
}

/// Whether a module variable read as `reads` keeps the value `repr` for every frame
/// that reads it later: an immutable value always, a list, dict or set of immutable
/// items where nothing could hand it on.
pub(super) fn keeps_value(reads: Reads, repr: &str) -> bool {
    from_repr(repr).is_some_and(|value| immutable(&value) || (reads == Reads::Inert && items_immutable(&value)))
}
