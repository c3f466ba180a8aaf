//! What a statement calls: whether it surely runs the program's code before it
//! completes, and which frame a step into it reaches first.

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::code::{CodeFacts, Scope, ScopeKind};
use super::effects::Program;
use super::flow::{field, is_statement, named, plain_targets, span, statements_at};
use super::shape::{Events, Shape};
use super::{line_of, runs_the_statement};

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
            && (surely_calls(root, self.source.as_bytes(), line, &plain)
                || (starts_class(root, line) && !own_header())
                || self.first_in_order(line).is_some())
    }

    /// The frame a step into the statement a frame of `function` stopped at on `line`
    /// reaches first, when the code tells: the one piece of the program's code the
    /// statement runs ([`Self::first_callee`]), or the first of several, where every
    /// expression Python evaluates before it runs nothing of the program's
    /// ([`first_in_order`]). Its scope's name and first line.
    pub(super) fn first_frame(&self, function: &str, line: u32) -> Option<(String, u32)> {
        self.first_callee(function, line).or_else(|| {
            let (name, at) = self.first_in_order(line)?;
            let first = self.entered(&name, at, line)?.first;
            Some((name, first))
        })
    }

    /// Whether the simple statement alone on `line`, run whole by a frame of `function`
    /// (not a lambda's or a comprehension's, which run part of it), surely runs none of
    /// the program's code: [`evaluated_first`] finds nothing of it to run.
    /// The same for the header of a `for` (its iterable, then each `next` of it) or of an
    /// `if`, `elif` or `while` (its condition, then its truth) written on `line` alone.
    pub(super) fn calls_nothing(&self, function: &str, line: u32) -> bool {
        if !self.names_known || !runs_the_statement(function) {
            return false;
        }
        let (root, source, program) = (self.tree.root_node(), self.source.as_bytes(), &self.program);
        if let Some(statement) = alone_on(root, line) {
            return evaluated_first(statement, source, program) == First::Nothing;
        }
        header_on(root, line).is_some_and(|(value, iterates)| {
            let quiet = if iterates {
                !program.implicit_calls
            } else {
                !program.operator_methods
            };
            evaluated_first(value, source, program) == First::Nothing && quiet
        })
    }

    /// The lines whose statements can make the call event of `function`'s frame that
    /// starts on `first`, when the text tells: a plain function's calls by its name, or
    /// for an `__init__` the calls (and bare `raise`s) of the classes it initialises and
    /// every `….__init__(…)`. Only where no function or class of the program is ever
    /// held as a value, which a library or another name could call.
    pub(super) fn call_sites(&self, function: &str, first: u32) -> Option<BTreeSet<u32>> {
        if !self.names_known || self.program.functions_escape {
            return None;
        }
        let top_level = self
            .scopes
            .iter()
            .any(|s| s.name == function && s.first == first && s.kind == ScopeKind::Function && s.header == first);
        let names: Vec<&str> = if function == "__init__" {
            let inits = self.program.class_inits.iter().filter(|&(_, &at)| at == first);
            inits.map(|(class, _)| class.as_str()).collect()
        } else if top_level && self.program.plain_functions.contains(function) {
            vec![function]
        } else {
            Vec::new()
        };
        if names.is_empty() {
            return None;
        }
        let source = self.source.as_bytes();
        let words = |node: Option<Node<'_>>| node.and_then(|n| n.utf8_text(source).ok()).unwrap_or_default();
        let mut lines = BTreeSet::new();
        let mut stack = vec![self.tree.root_node()];
        while let Some(node) = stack.pop() {
            let callee = field(node, "function");
            let site = match node.kind() {
                "call" => {
                    names.contains(&words(callee).trim())
                        || (function == "__init__"
                            && callee.is_some_and(|c| c.kind() == "attribute")
                            && words(callee.and_then(|c| field(c, "attribute"))) == "__init__")
                }
                "raise_statement" => node
                    .named_child(0)
                    .is_some_and(|e| e.kind() == "identifier" && names.contains(&words(Some(e)))),
                _ => false,
            };
            if site {
                let line = line_of(node.start_position().row);
                lines.insert(line);
                lines.extend(self.statement_lines(line).into_iter().flatten());
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        Some(lines)
    }

    fn first_in_order(&self, line: u32) -> Option<(String, Option<u32>)> {
        let statement = alone_on(self.tree.root_node(), line).filter(|_| self.names_known)?;
        match evaluated_first(statement, self.source.as_bytes(), &self.program) {
            First::Frame(name, at) => Some((name, at)),
            First::Nothing | First::Unknown => None,
        }
    }

    /// The frame a step into the statement a frame of `function` stopped at on `line`
    /// reaches first, when the code tells ([`first_callee`]): its scope's name and
    /// first line.
    pub(super) fn first_callee(&self, function: &str, line: u32) -> Option<(String, u32)> {
        self.one_callee(function, line, Repeats::No)
    }

    /// [`Self::first_callee`], or the one piece of the program's code the statement calls
    /// several times (`[move(a), move(b)]`): the frame it returns from last.
    fn last_callee(&self, function: &str, line: u32) -> Option<(String, u32)> {
        self.one_callee(function, line, Repeats::Allowed)
    }

    fn one_callee(&self, function: &str, line: u32, repeats: Repeats) -> Option<(String, u32)> {
        if !self.surely_calls(function, line) {
            return None;
        }
        let inits = &self.program.class_inits;
        let plain = |name: &str| self.program.plain_functions.contains(name) || inits.contains_key(name);
        let pure = |name: &str| self.program.pure_builtin(name) || (name == "print" && self.program.quiet_print);
        let callees = Callees {
            plain: &plain,
            pure: &pure,
            init: &|name: &str| inits.get(name).copied(),
        };
        let (name, at) = first_callee(self.tree.root_node(), self.source.as_bytes(), line, &callees, repeats)?;
        let scope = self.entered(&name, at, line)?;
        let class = scope.kind == ScopeKind::Class;
        (class || !self.program.implicit_calls).then(|| (name.clone(), scope.first))
    }

    /// The one scope a call that enters `name` on `line` starts a frame of: by its first
    /// line where given (a comprehension, an `__init__`), else a function of that name or
    /// the class whose statement is on `line`.
    fn entered(&self, name: &str, at: Option<u32>, line: u32) -> Option<&Scope> {
        let mut scopes = self.scopes.iter().filter(|s| {
            s.name == name
                && match at {
                    Some(at) => s.first == at,
                    None => s.kind == ScopeKind::Class && s.header == line || s.kind == ScopeKind::Function,
                }
        });
        let scope = scopes.next()?;
        scopes.next().is_none().then_some(scope)
    }

    /// The return a statement that surely calls makes last, a frame of `function` at
    /// `depth` having stopped at it on `line`, when the code tells: its one piece of the
    /// program's code ([`Self::first_callee`]) returning without raising, as it did if the
    /// statement went on: a comprehension on its own line, a function on one of the lines
    /// [`super::flow::normal_return_lines`] finds.
    pub(super) fn last_return(&self, function: &str, line: u32, depth: u32) -> Option<Shape> {
        let (name, first) = self.last_callee(function, line)?;
        let lines = if name.starts_with('<') {
            BTreeSet::from([first])
        } else {
            let scope = self.scopes.iter().find(|s| s.name == name && s.first == first)?;
            scope.normal_returns.clone()?
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

/// Which names a call of can run the program's code ([`first_callee`]).
pub(super) struct Callees<'a> {
    /// A plain function's or a plain class's name: the call surely starts one frame.
    pub(super) plain: &'a dyn Fn(&str) -> bool,
    /// A builtin that runs nothing of the program's.
    pub(super) pure: &'a dyn Fn(&str) -> bool,
    /// A class whose call runs an `__init__` of the program first and last: that `def`'s line.
    pub(super) init: &'a dyn Fn(&str) -> Option<u32>,
}

/// The frame a step into the statement at `line` reaches first, when the text tells: the
/// scope's name, and for a comprehension or an `__init__` its first line (a function is
/// found by its name).
/// That is the body of an undecorated `class` statement whose bases are plain names; or,
/// for a simple statement alone on its line that surely calls (see [`surely_calls`]), the
/// one piece of the program's code it runs: a call of a function `plain` names (of a
/// class `init` names: its `__init__`, which starts first and returns last), or a
/// list, set or dict comprehension (only its first iterable is evaluated outside it),
/// where every other call is to a builtin `pure` names without keyword arguments and
/// nothing else can start a frame (no generator expression, no other callee). The caller
/// makes sure operators and attributes run none of the program's code.
pub(super) fn first_callee(
    root: Node<'_>,
    source: &[u8],
    line: u32,
    callees: &Callees<'_>,
    repeats: Repeats,
) -> Option<(String, Option<u32>)> {
    let Callees { plain, pure, init } = callees;
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
                if let Some(at) = init(name) {
                    entries.push(("__init__".to_owned(), Some(at)));
                } else if plain(name) {
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
    let one = match repeats {
        Repeats::No => entries.len() == 1,
        Repeats::Allowed => !entries.is_empty() && entries.iter().all(|e| *e == entries[0]),
    };
    (one && surely_calls(root, source, line, plain)).then(|| entries.remove(0))
}

/// Whether [`first_callee`] answers for a statement that calls its one piece of the
/// program's code more than once: the frame it enters first and returns from last is that
/// one then, but it is not the statement's only call of it (the call before may have
/// been the same function's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Repeats {
    No,
    Allowed,
}

/// The expression or `return` statement written on `line` alone: no other statement
/// and no compound statement's header shares it, and it spans no other line.
pub(super) fn alone_on(root: Node<'_>, line: u32) -> Option<Node<'_>> {
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

/// What evaluating an expression runs first of the program's code.
#[derive(Debug, PartialEq, Eq)]
enum First {
    /// Nothing of the program's (it may still raise).
    Nothing,
    /// A frame of this scope (a function by its name; a comprehension or an `__init__` by
    /// its first line too), before anything else of the program's.
    Frame(String, Option<u32>),
    /// The text does not tell.
    Unknown,
}

/// What a call's callee is, before its arguments are evaluated.
enum Callee<'s> {
    Named(&'s str),
    /// Code of a library: a method no text of the program defines, or an imported name.
    Library,
    Unknown,
}

/// Whether evaluating `node` surely runs none of the program's code (it may still raise).
pub(super) fn runs_nothing(node: Node<'_>, source: &[u8], program: &Program) -> bool {
    evaluated_first(node, source, program) == First::Nothing
}

/// Whether evaluating a call's arguments surely runs none of the program's code.
pub(super) fn arguments_run_nothing(call: Node<'_>, source: &[u8], program: &Program) -> bool {
    field(call, "arguments").is_some_and(|arguments| {
        named(arguments).into_iter().all(|argument| match argument.kind() {
            "keyword_argument" => field(argument, "value").is_some_and(|v| runs_nothing(v, source, program)),
            "list_splat" | "dictionary_splat" => false,
            _ => runs_nothing(argument, source, program),
        })
    })
}

/// [`First`] for `node`, following Python's order of evaluation: a callee before its
/// arguments, arguments left to right, the call last; operands before their operator.
/// Operators, attributes, subscripts and builtins run nothing of the program's only when
/// it defines no special method, property or generator that they could reach.
fn evaluated_first(node: Node<'_>, source: &[u8], program: &Program) -> First {
    let words = |node: Node<'_>| node.utf8_text(source).unwrap_or_default();
    let in_order = |nodes: Vec<Node<'_>>| {
        for node in nodes {
            match evaluated_first(node, source, program) {
                First::Nothing => {}
                other => return other,
            }
        }
        First::Nothing
    };
    // After operands that run nothing of the program's, the operation itself.
    let operation = |operands: First, quiet: bool| match operands {
        First::Nothing if !quiet => First::Unknown,
        other => other,
    };
    match node.kind() {
        "identifier" | "integer" | "float" | "true" | "false" | "none" | "lambda" => First::Nothing,
        "string" => {
            let parts: Vec<Node<'_>> = named(node)
                .into_iter()
                .filter(|c| c.kind() == "interpolation")
                .collect();
            if parts.is_empty() {
                First::Nothing
            } else {
                let values = parts.into_iter().flat_map(|p| named(p).into_iter().take(1)).collect();
                operation(in_order(values), !program.implicit_calls)
            }
        }
        "expression_statement"
        | "return_statement"
        | "parenthesized_expression"
        | "expression_list"
        | "tuple"
        | "list"
        | "slice"
        | "pair" => in_order(named(node)),
        // Keys are hashed (and compared) as they are stored.
        "dictionary" | "set" => operation(in_order(named(node)), !program.operator_methods),
        "assignment" => {
            let plain_target =
                field(node, "left").is_some_and(|l| l.kind() == "identifier") && field(node, "type").is_none();
            match field(node, "right") {
                Some(right) => operation(evaluated_first(right, source, program), plain_target),
                None => First::Unknown,
            }
        }
        "binary_operator" | "unary_operator" | "not_operator" => {
            operation(in_order(named(node)), !program.operator_methods)
        }
        "comparison_operator" if named(node).len() == 2 => operation(in_order(named(node)), !program.operator_methods),
        // A `defaultdict`'s factory runs on a missing key.
        "subscript" => operation(
            in_order(named(node)),
            !program.operator_methods && !program.defaultdicts,
        ),
        "attribute" => match field(node, "object") {
            Some(object) => operation(evaluated_first(object, source, program), !program.implicit_calls),
            None => First::Unknown,
        },
        "call" => {
            let (Some(function), Some(arguments)) = (field(node, "function"), field(node, "arguments")) else {
                return First::Unknown;
            };
            // A method no text of the program could have defined (`append`, `split`,
            // `items`) is a library's, as is a name only an `import` binds.
            let callee = match function.kind() {
                "identifier" if program.imported.contains(words(function)) => Callee::Library,
                "identifier" => Callee::Named(words(function)),
                "attribute" => match evaluated_first(function, source, program) {
                    First::Nothing => match field(function, "attribute").map(words) {
                        Some(m) if !m.starts_with("__") && !program.attributes.contains(m) => Callee::Library,
                        _ => Callee::Unknown,
                    },
                    other => return other,
                },
                _ => match evaluated_first(function, source, program) {
                    First::Nothing => Callee::Unknown,
                    other => return other,
                },
            };
            if arguments.kind() != "argument_list" {
                return First::Unknown;
            }
            let mut values = Vec::new();
            let mut callbacks = false;
            for argument in named(arguments) {
                match argument.kind() {
                    "keyword_argument" => {
                        let value = field(argument, "value");
                        callbacks |= value.is_none_or(|v| !inert_argument(v, source, program));
                        values.extend(value);
                    }
                    "list_splat" | "dictionary_splat" => return First::Unknown,
                    _ => values.push(argument),
                }
            }
            match in_order(values) {
                First::Nothing => {}
                other => return other,
            }
            let quiet = !program.implicit_calls && !callbacks;
            match callee {
                Callee::Named(name) if program.plain_functions.contains(name) => First::Frame(name.to_owned(), None),
                // It makes a generator object; its code runs at the first `next`.
                Callee::Named(name) if program.generator_functions.contains(name) => First::Nothing,
                Callee::Named(name) if let Some(&init) = program.class_inits.get(name) => {
                    First::Frame("__init__".to_owned(), Some(init))
                }
                Callee::Named(name) if program.pure_builtin(name) && quiet => First::Nothing,
                // A library's code, handed nothing of the program's it could call.
                Callee::Library if quiet && !program.functions_escape && !program.protocol_methods => First::Nothing,
                _ => First::Unknown,
            }
        }
        kind if COMPREHENSIONS.contains(&kind) => {
            let scope = match kind {
                "list_comprehension" => "<listcomp>",
                "set_comprehension" => "<setcomp>",
                _ => "<dictcomp>",
            };
            let first = named(node).into_iter().find(|c| c.kind() == "for_in_clause");
            match first
                .and_then(|f| field(f, "right"))
                .map(|i| evaluated_first(i, source, program))
            {
                Some(First::Nothing) if !program.implicit_calls => {
                    First::Frame(scope.to_owned(), Some(line_of(node.start_position().row)))
                }
                Some(First::Nothing) | None => First::Unknown,
                Some(other) => other,
            }
        }
        _ => First::Unknown,
    }
}

/// The expression a compound statement's header on `line` evaluates, when the header is
/// that line alone: a `for`'s iterable over plain names (and whether it is iterated), or
/// the condition of an `if`, `elif` or `while`.
fn header_on(root: Node<'_>, line: u32) -> Option<(Node<'_>, bool)> {
    let row = usize::try_from(line.checked_sub(1)?).ok()?;
    let mut node = root;
    loop {
        let child = named(node)
            .into_iter()
            .find(|c| c.start_position().row <= row && row <= c.end_position().row)?;
        if child.start_position().row == row {
            let header = match child.kind() {
                "for_statement" if child.child(0).is_some_and(|c| c.kind() == "for") => {
                    let targets = field(child, "left").is_some_and(plain_targets);
                    field(child, "right").filter(|_| targets).map(|r| (r, true))
                }
                "while_statement" | "if_statement" | "elif_clause" => field(child, "condition").map(|c| (c, false)),
                _ => None,
            };
            if let Some((value, iterates)) = header {
                let body = field(child, "body").or_else(|| field(child, "consequence"));
                let alone = value.end_position().row == row && body.is_some_and(|b| b.start_position().row > row);
                return alone.then_some((value, iterates));
            }
        }
        node = child;
    }
}

/// Whether a builtin handed `value` as a keyword argument cannot call the program's code
/// with it: a literal, or a builtin function the program never rebinds (`key=len`).
fn inert_argument(value: Node<'_>, source: &[u8], program: &Program) -> bool {
    match value.kind() {
        "integer" | "float" | "true" | "false" | "none" => true,
        "string" => {
            let mut cursor = value.walk();
            value.named_children(&mut cursor).all(|c| c.kind() != "interpolation")
        }
        "identifier" => program.pure_builtin(value.utf8_text(source).unwrap_or_default()),
        _ => false,
    }
}
