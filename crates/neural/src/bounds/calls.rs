//! What a statement calls: whether it surely runs the program's code before it
//! completes, and which frame a step into it reaches first.

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::code::{CodeFacts, ScopeKind};
use super::flow::{field, is_statement, normal_return_lines, span, statements_at};
use super::line_of;
use super::shape::{Events, Shape};

impl CodeFacts {
    /// Whether the statement a frame of `function` stopped at on `line` surely calls the
    /// program's code before it completes, unless it raises first: a function of the
    /// program (see [`surely_calls`]) or a class body ([`starts_class`]; not
    /// in the class body's own frame, whose first line event is on its `class` line);
    /// false when the code cannot tell.
    pub(super) fn surely_calls(&self, function: &str, line: u32) -> bool {
        let plain = |name: &str| self.program.plain_functions.contains(name);
        let root = self.tree.root_node();
        let own_header = || {
            self.scopes_named(function, line)
                .any(|s| s.kind == ScopeKind::Class && s.header == line)
        };
        self.names_known
            && (surely_calls(root, self.source.as_bytes(), line, &plain) || (starts_class(root, line) && !own_header()))
    }

    /// The frame a step into the statement a frame of `function` stopped at on `line`
    /// reaches first, when the code tells ([`first_callee`]): its scope's name and
    /// first line.
    pub(super) fn first_callee(&self, function: &str, line: u32) -> Option<(String, u32)> {
        if !self.surely_calls(function, line) {
            return None;
        }
        let plain = |name: &str| self.program.plain_functions.contains(name);
        let pure = |name: &str| self.program.pure_builtin(name) || (name == "print" && self.program.quiet_print);
        let (name, at) = first_callee(self.tree.root_node(), self.source.as_bytes(), line, &plain, &pure)?;
        let mut scopes = self.scopes.iter().filter(|s| {
            s.name == name
                && match at {
                    Some(at) => s.first == at,
                    None => s.kind == ScopeKind::Class && s.header == line || s.kind == ScopeKind::Function,
                }
        });
        let scope = scopes.next()?;
        let class = scope.kind == ScopeKind::Class;
        (scopes.next().is_none() && (class || !self.program.implicit_calls)).then(|| (name.clone(), scope.first))
    }

    /// The return a statement that surely calls makes last, a frame of `function` at
    /// `depth` having stopped at it on `line`, when the code tells: its one piece of the
    /// program's code ([`Self::first_callee`]) returning without raising, as it did if the
    /// statement went on: a comprehension on its own line, a function on one of the lines
    /// [`normal_return_lines`] finds.
    pub(super) fn last_return(&self, function: &str, line: u32, depth: u32) -> Option<Shape> {
        let (name, first) = self.first_callee(function, line)?;
        let lines = if name.starts_with('<') {
            BTreeSet::from([first])
        } else {
            normal_return_lines(self.tree.root_node(), self.source.as_bytes(), &name)?
        };
        Some(Shape {
            function: Some(name),
            lines: Some(lines),
            ..Shape::callee(depth, Events::RETURN, self.statement_lines(line))
        })
    }
}

/// The comprehensions that run in a frame of their own as soon as they are evaluated (a
/// generator expression's frame starts only when something iterates it).
const COMPREHENSIONS: [&str; 3] = ["list_comprehension", "set_comprehension", "dictionary_comprehension"];

/// Whether the simple statement at `line`, alone on its line, surely calls a function
/// `plain` names, or a list, set or dict comprehension, before it completes, unless it
/// raises first: on a path every evaluation of it takes (its value, an argument, an
/// operand; never behind `and`, `or`, `if`, a lambda or inside a comprehension). So the
/// frame's next event after its line event is never its return.
pub(super) fn surely_calls(root: Node<'_>, source: &[u8], line: u32, plain: &dyn Fn(&str) -> bool) -> bool {
    let Some(statement) = alone_on(root, line) else {
        return false;
    };
    let mut stack = vec![statement];
    while let Some(node) = stack.pop() {
        let callee = node.child_by_field_name("function");
        let sure_call = node.kind() == "call"
            && callee.is_some_and(|c| c.kind() == "identifier" && plain(c.utf8_text(source).unwrap_or_default()));
        if sure_call || COMPREHENSIONS.contains(&node.kind()) {
            return true;
        }
        let always_evaluated: Vec<Node<'_>> = match node.kind() {
            "assignment" | "augmented_assignment" => node.child_by_field_name("right").into_iter().collect(),
            "keyword_argument" => node.child_by_field_name("value").into_iter().collect(),
            "expression_statement"
            | "return_statement"
            | "call"
            | "argument_list"
            | "binary_operator"
            | "unary_operator"
            | "parenthesized_expression"
            | "tuple"
            | "list"
            | "expression_list"
            | "subscript"
            | "attribute" => {
                let mut cursor = node.walk();
                node.named_children(&mut cursor).collect()
            }
            _ => Vec::new(),
        };
        stack.extend(always_evaluated);
    }
    false
}

/// Whether an undecorated `class` statement starts on `line`: once its bases are
/// evaluated (which may raise), its body runs in a frame of its own, so its line event is
/// followed by that frame's call.
pub(super) fn starts_class(root: Node<'_>, line: u32) -> bool {
    class_starting(root, line).is_some()
}

/// The undecorated `class` statement that starts on `line`.
fn class_starting(root: Node<'_>, line: u32) -> Option<Node<'_>> {
    statements_at(root, line).into_iter().find(|s| {
        s.kind() == "class_definition"
            && line_of(s.start_position().row) == line
            && s.parent().is_none_or(|p| p.kind() != "decorated_definition")
    })
}

/// The frame a step into the statement at `line` reaches first, when the text tells: the
/// scope's name, and for a comprehension its line (a function is found by its name).
/// That is the body of an undecorated `class` statement whose bases are plain names; or,
/// for a simple statement alone on its line that surely calls (see [`surely_calls`]), the
/// one piece of the program's code it runs: a call of a function `plain` names, or a
/// list, set or dict comprehension (only its first iterable is evaluated outside it),
/// where every other call is to a builtin `pure` names without keyword arguments and
/// nothing else can start a frame (no generator expression, no other callee). The caller
/// makes sure operators and attributes run none of the program's code.
pub(super) fn first_callee(
    root: Node<'_>,
    source: &[u8],
    line: u32,
    plain: &dyn Fn(&str) -> bool,
    pure: &dyn Fn(&str) -> bool,
) -> Option<(String, Option<u32>)> {
    let words = |node: Node<'_>| node.utf8_text(source).unwrap_or_default();
    if let Some(class) = class_starting(root, line) {
        let bases_are_names = field(class, "superclasses").is_none_or(|bases| {
            let mut cursor = bases.walk();
            bases.named_children(&mut cursor).all(|b| b.kind() == "identifier")
        });
        let name = words(field(class, "name")?).to_owned();
        return bases_are_names.then_some((name, None));
    }
    let statement = alone_on(root, line)?;
    let mut entries = Vec::new();
    let mut stack = vec![statement];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "call" => {
                let callee = field(node, "function").filter(|c| c.kind() == "identifier")?;
                let name = words(callee);
                let keywords = field(node, "arguments").is_some_and(|a| {
                    let mut cursor = a.walk();
                    a.named_children(&mut cursor).any(|c| c.kind() == "keyword_argument")
                });
                if plain(name) {
                    entries.push((name.to_owned(), None));
                } else if !pure(name) || keywords {
                    return None;
                }
                stack.extend(field(node, "arguments"));
            }
            kind if COMPREHENSIONS.contains(&kind) => {
                let scope = match kind {
                    "list_comprehension" => "<listcomp>",
                    "set_comprehension" => "<setcomp>",
                    _ => "<dictcomp>",
                };
                entries.push((scope.to_owned(), Some(line_of(node.start_position().row))));
                let mut cursor = node.walk();
                let first = node.named_children(&mut cursor).find(|c| c.kind() == "for_in_clause");
                stack.extend(first.and_then(|f| field(f, "right")));
            }
            // A lambda's body runs only when something calls it.
            "lambda" => {}
            "generator_expression" | "await" | "yield" => return None,
            _ => {
                let mut cursor = node.walk();
                stack.extend(node.named_children(&mut cursor));
            }
        }
    }
    (entries.len() == 1 && surely_calls(root, source, line, plain)).then(|| entries.remove(0))
}

/// The expression or `return` statement written on `line` alone: no other statement
/// and no compound statement's header shares it, and it spans no other line.
fn alone_on(root: Node<'_>, line: u32) -> Option<Node<'_>> {
    let chain = statements_at(root, line);
    let (&statement, outer) = chain.split_last()?;
    let shares_line = |sibling: Option<Node<'_>>| sibling.is_some_and(|s| is_statement(s) && span(s).contains(&line));
    let alone = span(statement).len() == 1
        && !outer.iter().any(|o| line_of(o.start_position().row) == line)
        && !shares_line(statement.prev_named_sibling())
        && !shares_line(statement.next_named_sibling());
    (alone && matches!(statement.kind(), "expression_statement" | "return_statement")).then_some(statement)
}

/// The top-level statement on `line` when it is `NAME = F(...)` alone on its line, with
/// `F` a name `plain` accepts: `NAME` and `F`. When it completes, `NAME` holds what `F`
/// returned, and `F`'s return was the module's last event before it.
pub(super) fn assigned_call(
    root: Node<'_>,
    source: &[u8],
    line: u32,
    plain: &dyn Fn(&str) -> bool,
) -> Option<(String, String)> {
    let statement = alone_on(root, line).filter(|s| s.parent().is_some_and(|p| p.id() == root.id()))?;
    let assignment = statement.named_child(0).filter(|a| a.kind() == "assignment")?;
    let (left, right) = (field(assignment, "left")?, field(assignment, "right")?);
    let callee = field(right, "function").filter(|_| right.kind() == "call")?;
    let words = |node: Node<'_>| node.utf8_text(source).unwrap_or_default().to_owned();
    let named = left.kind() == "identifier" && callee.kind() == "identifier" && plain(&words(callee));
    (named && assignment.child_by_field_name("type").is_none()).then(|| (words(left), words(callee)))
}
