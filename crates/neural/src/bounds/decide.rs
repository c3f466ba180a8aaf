//! Where a frame's next line event can be after a line event: the blocks' flow
//! ([`super::flow`]), narrowed to one branch where the state before it tells the value of
//! an `if`, `elif` or `while` condition: a comparison, a truth test, `not`, `and` and `or`
//! over literals and the frame's variables whose reprs are plain numbers, strings,
//! `None`, booleans or empty and non-empty builtin containers. Only in a program no class
//! of which could look like one of those or change what an operator does (no
//! `__repr__`, no special method besides `__init__` and `__str__`).

use std::collections::BTreeSet;

use replayground_shared::trace_lang;
use replayground_shared::{State, StopKind};
use tree_sitter::Node;

use super::code::CodeFacts;
use super::flow;

impl CodeFacts {
    /// The lines the same frame's next line event can be at after `from` by the code's
    /// blocks alone, whatever the state's values.
    pub(super) fn flow_lines(&self, from: &State) -> Option<BTreeSet<u32>> {
        let (line, function) = (from.line?, from.function.as_deref()?);
        let (root, source) = (self.tree.root_node(), self.source.as_bytes());
        match from.event {
            StopKind::Line => flow::after_line(root, source, function, line),
            StopKind::Call if !self.may_be_generator(function, line) => flow::after_call(root, source, function, line),
            _ => None,
        }
    }

    /// The lines of `function`'s frame whose line event the code's blocks let a line
    /// event at `line` follow directly (each line whose successors the blocks do not
    /// bound, too), and whether the statement on any of them may call the program's
    /// code. `None` where a frame of that name is not one scope of the text.
    pub(super) fn lines_before(&self, function: &str, line: u32) -> Option<(BTreeSet<u32>, bool)> {
        let mut scopes = self.scopes_named(function, line);
        let scope = scopes.next()?;
        if scopes.next().is_some() || scope.generator {
            return None;
        }
        let (root, source) = (self.tree.root_node(), self.source.as_bytes());
        let before: BTreeSet<u32> = (self.code_lines.iter().copied())
            .filter(|&at| self.runs(scope, at))
            .filter(|&at| flow::after_line(root, source, function, at).is_none_or(|next| next.contains(&line)))
            .collect();
        let calls = before.iter().any(|&at| self.may_call(function, at));
        Some((before, calls))
    }

    /// Where the frame goes on after a line event at a branch's header whose condition
    /// the state decides: a line of the branch taken (a condition over plain values
    /// cannot raise). `None` when it does not tell, or when the frame returns there.
    pub(super) fn decided_lines(&self, from: &State) -> Option<BTreeSet<u32>> {
        let (line, function) = (from.line?, from.function.as_deref()?);
        let (root, source) = (self.tree.root_node(), self.source.as_bytes());
        // Reprs are the values' own, and no operator runs the program's code.
        let plain = self.scalars_kept && !self.program.operator_methods;
        if from.event != StopKind::Line || !plain || flow::after_line(root, source, function, line).is_none() {
            return None;
        }
        let vars = trace_lang::shown_vars(from);
        let shown = |name: &str| vars.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        flow::after_decided(root, line, &|condition| decide(condition, source, &shown)).filter(|l| !l.is_empty())
    }
}

/// A value read from a literal or a repr.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Int(i128),
    Str(String),
    Bool(bool),
    None,
    /// A list, dict, tuple or set, empty or not.
    Container {
        empty: bool,
    },
    /// Anything else: not `None`, and nothing more is known.
    Object,
}

impl Value {
    fn truth(&self) -> Option<bool> {
        match self {
            Self::Int(n) => Some(*n != 0),
            Self::Str(s) => Some(!s.is_empty()),
            Self::Bool(b) => Some(*b),
            Self::None => Some(false),
            Self::Container { empty } => Some(!empty),
            Self::Object => None,
        }
    }
}

/// What `repr` spells, when it is a plain value.
fn from_repr(repr: &str) -> Option<Value> {
    match repr {
        "None" => return Some(Value::None),
        "True" => return Some(Value::Bool(true)),
        "False" => return Some(Value::Bool(false)),
        "[]" | "{}" | "()" | "set()" => return Some(Value::Container { empty: true }),
        _ => {}
    }
    if let Ok(n) = repr.parse::<i128>() {
        return Some(Value::Int(n));
    }
    let quoted = |q: char| repr.len() >= 2 && repr.starts_with(q) && repr.ends_with(q);
    if (quoted('\'') || quoted('"')) && !repr.contains('\\') {
        return Some(Value::Str(repr[1..repr.len() - 1].to_owned()));
    }
    let bracketed = |open: char, close: char| repr.len() > 2 && repr.starts_with(open) && repr.ends_with(close);
    if bracketed('[', ']') || bracketed('(', ')') || bracketed('{', '}') {
        return Some(Value::Container { empty: false });
    }
    // A repr cut short ends in `...`: it may be anything.
    (!repr.ends_with("...")).then_some(Value::Object)
}

/// The value of an operand: a literal, or a variable `vars` shows.
fn value(node: Node<'_>, source: &[u8], vars: &dyn Fn(&str) -> Option<String>) -> Option<Value> {
    let text = node.utf8_text(source).ok()?;
    match node.kind() {
        "integer" => text.replace('_', "").parse().ok().map(Value::Int),
        "string" if !text.contains('\\') && (text.starts_with('\'') || text.starts_with('"')) => {
            let quote = text.chars().next()?;
            let inner = text.trim_matches(quote);
            (!text.starts_with("\"\"\"") && !text.starts_with("'''")).then(|| Value::Str(inner.to_owned()))
        }
        "true" => Some(Value::Bool(true)),
        "false" => Some(Value::Bool(false)),
        "none" => Some(Value::None),
        "identifier" => from_repr(&vars(text)?),
        "unary_operator" if text.starts_with('-') => {
            match value(node.child_by_field_name("argument")?, source, vars)? {
                Value::Int(n) => Some(Value::Int(-n)),
                _ => None,
            }
        }
        "parenthesized_expression" => value(node.named_child(0)?, source, vars),
        _ => None,
    }
}

/// Whether `a OP b` holds, where builtin values decide it without raising.
fn compare(a: &Value, op: &str, b: &Value) -> Option<bool> {
    use std::cmp::Ordering;
    let order = match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        _ => None,
    };
    let same_kind = std::mem::discriminant(a) == std::mem::discriminant(b);
    let with_none = matches!(a, Value::None) || matches!(b, Value::None);
    match op {
        "<" => order.map(|o| o == Ordering::Less),
        "<=" => order.map(|o| o != Ordering::Greater),
        ">" => order.map(|o| o == Ordering::Greater),
        ">=" => order.map(|o| o != Ordering::Less),
        "==" | "!=" => {
            let equal = match (a, b) {
                (Value::Container { .. } | Value::Object, _) | (_, Value::Container { .. } | Value::Object) => {
                    return None;
                }
                _ if same_kind => a == b,
                _ if with_none => false,
                _ => return None,
            };
            Some(equal == (op == "=="))
        }
        "is" | "is not" if with_none => Some((a == b) == (op == "is")),
        _ => None,
    }
}

/// The truth of the condition `node`, when the literals and the variables `vars` shows
/// decide it (`None` otherwise).
pub(super) fn decide(node: Node<'_>, source: &[u8], vars: &dyn Fn(&str) -> Option<String>) -> Option<bool> {
    match node.kind() {
        "parenthesized_expression" => decide(node.named_child(0)?, source, vars),
        "not_operator" => decide(node.child_by_field_name("argument")?, source, vars).map(|b| !b),
        "boolean_operator" => {
            let left = decide(node.child_by_field_name("left")?, source, vars)?;
            let op = node.child_by_field_name("operator")?.kind();
            match (op, left) {
                ("and", false) => Some(false),
                ("or", true) => Some(true),
                _ => decide(node.child_by_field_name("right")?, source, vars),
            }
        }
        "comparison_operator" => {
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
            let mut operands = Vec::new();
            let mut operators = Vec::new();
            for child in &children {
                if child.is_named() {
                    operands.push(value(*child, source, vars)?);
                } else {
                    let op = child.utf8_text(source).ok()?;
                    // `is not` and `not in` come as two tokens.
                    let right_after = operators.len() == operands.len();
                    match (operators.last_mut(), op) {
                        (Some(last), "not") if *last == "is" && right_after => {
                            "is not".clone_into(last);
                        }
                        _ => operators.push(op.to_owned()),
                    }
                }
            }
            if operands.len() != operators.len() + 1 {
                return None;
            }
            let mut all = true;
            for (i, op) in operators.iter().enumerate() {
                all &= compare(&operands[i], op, &operands[i + 1])?;
            }
            Some(all)
        }
        _ => value(node, source, vars)?.truth(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decided(condition: &str, vars: &[(&str, &str)]) -> Option<bool> {
        let code = format!("if {condition}:\n    pass\n");
        let tree = replayground_exec::python::parse(&code).expect("parses");
        let statement = tree.root_node().named_child(0).expect("an if");
        let condition = statement.child_by_field_name("condition").expect("a condition");
        let lookup = |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned());
        decide(condition, code.as_bytes(), &lookup)
    }

    #[test]
    fn plain_values_decide_a_condition() {
        assert_eq!(decided("n < 2", &[("n", "11")]), Some(false));
        assert_eq!(decided("n < 2", &[("n", "1")]), Some(true));
        assert_eq!(decided("0 <= i < len(xs)", &[("i", "0")]), None, "a call");
        assert_eq!(decided("-1 < i <= 3", &[("i", "3")]), Some(true));
        assert_eq!(decided("child is None", &[("child", "None")]), Some(true));
        assert_eq!(decided("child is not None", &[("child", "None")]), Some(false));
        assert_eq!(
            decided("child is None", &[("child", "<__main__.Tree object>")]),
            Some(false)
        );
        assert_eq!(decided("runs and x", &[("runs", "[]")]), Some(false), "short-circuits");
        assert_eq!(decided("runs or x", &[("runs", "[['a', 1]]")]), Some(true));
        assert_eq!(decided("not word", &[("word", "''")]), Some(true));
        assert_eq!(decided("state == 'red'", &[("state", "'red'")]), Some(true));
        assert_eq!(decided("n < limit", &[("n", "3")]), None, "limit is not shown");
        assert_eq!(decided("n < 'a'", &[("n", "3")]), None, "that raises");
        assert_eq!(decided("x == 1", &[("x", "1.0")]), None, "floats are left alone");
        assert_eq!(
            decided("xs == []", &[("xs", "[]")]),
            None,
            "containers are only true or false"
        );
    }
}
