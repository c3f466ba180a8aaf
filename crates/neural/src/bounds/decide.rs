//! Where a frame's next line event can be after a line event: the blocks' flow
//! ([`super::flow`]), narrowed to one branch where the state before it tells the value of
//! an `if`, `elif` or `while` condition: a comparison, a truth test, `not`, `and` and `or`
//! over literals and the frame's variables whose reprs are plain numbers, strings,
//! `None`, booleans or empty and non-empty builtin containers. Only in a program no class
//! of which could look like one of those or change what an operator does (no
//! `__repr__`, no special method besides `__init__` and `__str__`).

use std::collections::BTreeSet;

use replayground_shared::{State, StopKind};
use tree_sitter::Node;

use super::code::CodeFacts;
use super::computed::Turn;
use super::evaluate::{self, Env};
use super::flow;

impl CodeFacts {
    /// The lines the same frame's next line event can be at after `from` by the code's
    /// blocks alone, whatever the state's values.
    pub(super) fn flow_lines(&self, from: &State) -> Option<BTreeSet<u32>> {
        let (line, function) = (from.line?, from.function.as_deref()?);
        let (root, source) = (self.tree.root_node(), self.source.as_bytes());
        match from.event {
            StopKind::Line => {
                flow::after_line(root, source, function, line).or_else(|| self.after_class_header(function, line))
            }
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
        if from.event != StopKind::Line
            || !self.plain_values()
            || flow::after_line(root, source, function, line).is_none()
        {
            return None;
        }
        let env = self.env(from);
        let decided = |node: Node<'_>| match node.kind() {
            "for_statement" => self.loop_turn(from).map(|turn| turn != Turn::Done),
            _ => decide(node, source, &env),
        };
        flow::after_decided(root, line, &decided).filter(|l| !l.is_empty())
    }
}

/// The truth of the condition `node`, when the literals and the variables `env` shows
/// decide it (`None` otherwise).
pub(super) fn decide(node: Node<'_>, source: &[u8], env: &Env<'_>) -> Option<bool> {
    evaluate::value(node, source, env)?.truth()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decided(condition: &str, vars: &[(&str, &str)]) -> Option<bool> {
        let code = format!("if {condition}:\n    pass\n");
        let tree = replayground_exec::python::parse(&code).expect("parses");
        let statement = tree.root_node().named_child(0).expect("an if");
        let condition = statement.child_by_field_name("condition").expect("a condition");
        let vars: Vec<(String, String)> = vars.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect();
        let program = super::super::effects::Program::default();
        let env = Env {
            vars: &vars,
            outer: &[],
            program: &program,
        };
        decide(condition, code.as_bytes(), &env)
    }

    #[test]
    fn plain_values_decide_a_condition() {
        assert_eq!(decided("n < 2", &[("n", "11")]), Some(false));
        assert_eq!(decided("n < 2", &[("n", "1")]), Some(true));
        assert_eq!(decided("0 <= i < len(xs)", &[("i", "0")]), None, "xs is not shown");
        assert_eq!(
            decided("0 <= i < len(xs)", &[("i", "2"), ("xs", "[1, 2]")]),
            Some(false)
        );
        assert_eq!(
            decided(
                "current and len(current) + 1 + len(word) > width",
                &[("current", "'never trust'"), ("word", "'a'"), ("width", "12")]
            ),
            Some(true)
        );
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
