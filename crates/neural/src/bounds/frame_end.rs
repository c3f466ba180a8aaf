//! Where a frame's line event leads within the frame, where the flow of blocks
//! ([`super::flow::after_line`]) does not tell or tells only part: a class body's first
//! line event (on its `class` line, or its first decorator's) goes on to its body's first
//! statement, and a frame returns or raises right after a line event only within the
//! statement it stopped at.

use std::collections::BTreeSet;

use replayground_shared::{State, StopKind};
use tree_sitter::Node;

use super::code::{CodeFacts, ScopeKind, line_of};
use super::flow::{self, field};
use super::runs_the_statement;

impl CodeFacts {
    /// The class `function` whose body's frame stops first at `line`: its `class` line, or
    /// its first decorator's.
    fn class_header(&self, function: &str, line: u32) -> Option<Node<'_>> {
        let root = self.tree.root_node();
        let deepest = *flow::statements_at(root, line).last()?;
        let class = match deepest.kind() {
            "decorated_definition" => field(deepest, "definition")?,
            _ => deepest,
        };
        let named = field(class, "name").and_then(|n| n.utf8_text(self.source.as_bytes()).ok());
        (class.kind() == "class_definition" && named == Some(function) && line_of(deepest.start_position().row) == line)
            .then_some(class)
    }

    /// The lines a class body's frame goes on to after its first line event, at `line`:
    /// its first statement's (binding `__module__` and `__qualname__` there cannot raise).
    pub(super) fn after_class_header(&self, function: &str, line: u32) -> Option<BTreeSet<u32>> {
        flow::entry_of(field(self.class_header(function, line)?, "body"))
    }

    /// The lines where the frame stopped at `from` can return or raise before its next line
    /// event, after a line event: [`CodeFacts::module_statement_run`] for the module,
    /// [`CodeFacts::frame_statement_run`] for any other frame.
    pub(super) fn statement_run(&self, from: &State) -> Option<BTreeSet<u32>> {
        if from.event != StopKind::Line {
            return None;
        }
        match (from.depth?, from.line?) {
            (0, line) => self.module_statement_run(line),
            (_, line) => self.frame_statement_run(from.function.as_deref()?, line),
        }
    }

    /// The lines where a frame of `function` (not the module: see
    /// [`CodeFacts::module_statement_run`]) stopped by a line event at `line` can return
    /// or raise before its next line event: none on a class body's first line; those of
    /// the simple statement there and of any that start on a line it ends on (falling off
    /// the end returns on the last statement's line), or a definition's header. `None`
    /// where the text does not tell: a branch's or a loop's header, a lambda's or
    /// comprehension's frame, or inside a `with` or a `try` with a `finally` (their exits
    /// run between a `return` and the frame's return event).
    pub(super) fn frame_statement_run(&self, function: &str, line: u32) -> Option<BTreeSet<u32>> {
        if self.class_header(function, line).is_some() {
            return Some(BTreeSet::new());
        }
        if !runs_the_statement(function) {
            return None;
        }
        let root = self.tree.root_node();
        let statement = *flow::statements_at(root, line).last()?;
        if inside_an_exit(statement) {
            return None;
        }
        // A definition binds its name at its header (its decorators' lines too).
        if matches!(
            statement.kind(),
            "function_definition" | "class_definition" | "decorated_definition"
        ) {
            return flow::ran_lines(root, line);
        }
        if flow::is_compound(statement) {
            return None;
        }
        let siblings = flow::statements(statement.parent()?);
        let at = siblings.iter().position(|s| s.id() == statement.id())?;
        let mut lines = flow::span(statement);
        for next in &siblings[at + 1..] {
            if lines
                .last()
                .is_some_and(|&last| line_of(next.start_position().row) > last)
            {
                break;
            }
            lines.extend(flow::span(*next));
        }
        Some(lines)
    }

    /// Whether a frame of `function` returning at `line` is a plain class body's that
    /// returns `None`: its text names neither `super` nor `__class__` (for which the body
    /// returns the `__class__` cell).
    pub(super) fn class_body_returns_none(&self, function: &str, line: u32) -> bool {
        let mut scopes = self.scopes_named(function, line);
        let (Some(scope), None) = (scopes.next(), scopes.next()) else {
            return false;
        };
        if scope.kind != ScopeKind::Class || scope.body.is_none() || !self.runs(scope, line) {
            return false;
        }
        let Some(&class) = flow::statements_at(self.tree.root_node(), scope.header).last() else {
            return false;
        };
        let source = self.source.as_bytes();
        let mut stack = vec![class];
        while let Some(node) = stack.pop() {
            if node.kind() == "identifier" && matches!(node.utf8_text(source), Ok("super" | "__class__")) {
                return false;
            }
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
        true
    }
}

/// Whether `statement` lies in a `with` block or a `try` with a `finally`, within its frame.
fn inside_an_exit(statement: Node<'_>) -> bool {
    let mut node = statement;
    while let Some(parent) = node.parent() {
        match parent.kind() {
            "function_definition" | "class_definition" | "lambda" | "module" => return false,
            "with_statement" => return true,
            "try_statement" if flow::named(parent).iter().any(|c| c.kind() == "finally_clause") => return true,
            _ => node = parent,
        }
    }
    false
}
