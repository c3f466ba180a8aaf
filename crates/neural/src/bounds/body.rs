//! The bodies whose statements run in order, each to its end: the module's and a plain
//! class body's (once), a function's (once per activation, its loops inside its
//! statements). An event in one tells which statements have run and what they bound.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use tree_sitter::Node;

use replayground_shared::trace_lang;
use replayground_shared::{State, StopKind};

use super::{effects, flow, globals, literal};
use super::{hidden, json_contents, line_of};

/// How a statement's lines run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Any other statement that is not compound: it runs once, never looping back to its
    /// first line.
    Simple,
    /// A simple assignment to plain names only (chained, augmented, or one flat tuple or
    /// list of them), with no `:=` and no annotation: it binds them all after everything
    /// in it that can raise, so a run it raises out of shows none of them bound by it.
    Assignment,
    /// A `def` or `class` (decorated or not): the body's events in it come before its
    /// name is bound, which is the last thing it does.
    Definition,
    /// A branch, loop, `try`, `with` or `match`.
    Compound,
}

impl Form {
    /// Not compound and not a definition.
    fn simple(self) -> bool {
        matches!(self, Self::Simple | Self::Assignment)
    }
}

/// One statement of a body that runs once, in order: the module's or a plain class body's.
#[derive(Debug, Clone)]
pub(super) struct Statement {
    pub(super) first: u32,
    pub(super) last: u32,
    /// The names it binds in the body's namespace.
    pub(super) names: HashSet<String>,
    /// The names it binds whenever it completes (none for a branch, loop, `try`, `with`
    /// or `match`: a path through it may skip a binding), less those the tracer hides.
    pub(super) certain: Vec<String>,
    /// A simple statement's stores, in the order they run ([`super::varnames::store_order`]).
    stores: Vec<String>,
    form: Form,
    /// It binds literals and nothing else, so no exception ends the run there.
    pub(super) cannot_raise: bool,
    /// Every instruction it runs is on its first line, so it takes one line event: a
    /// statement on one line, or a `def` whose parameters end on its first line.
    one_line: bool,
    /// It compiles to nothing an event fires on (a docstring, `pass`, `global`).
    silent: bool,
    /// For a `for` loop over plain names that nothing in the text can unbind: the names
    /// each of its iterations binds before the body runs. A line event on its header
    /// that shows none of them is its first (the loop has not begun).
    loop_targets: Vec<String>,
}

impl Statement {
    pub(super) fn holds(&self, line: u32) -> bool {
        (self.first..=self.last).contains(&line)
    }
}

/// The statements of a body that runs once, each in order and to its end (an exception
/// out of one ends the frame): the module, or a plain class body.
#[derive(Debug, Clone, Default)]
pub(super) struct Body(pub(super) Vec<Statement>);

impl Body {
    /// The statements directly under `node` (the module's root, or a class's block).
    pub(super) fn of(node: Node<'_>, source: &[u8]) -> Self {
        let unbinds = may_unbind(node, source);
        let mut cursor = node.walk();
        let statements = node
            .named_children(&mut cursor)
            .filter(|s| s.kind() != "comment")
            .map(|s| Statement {
                first: line_of(s.start_position().row),
                last: line_of(s.end_position().row),
                names: effects::bound_names(s, source),
                certain: if flow::branches(s) {
                    Vec::new()
                } else {
                    let mut names = effects::certain_names(s, source);
                    names.retain(|n| !hidden(n));
                    names
                },
                stores: super::varnames::store_order(s, source),
                form: match s.kind() {
                    "function_definition" | "class_definition" | "decorated_definition" => Form::Definition,
                    _ if flow::is_compound(s) => Form::Compound,
                    _ if binds_at_end(s) => Form::Assignment,
                    _ => Form::Simple,
                },
                cannot_raise: flow::cannot_raise(s),
                silent: flow::is_silent(s),
                one_line: s.start_position().row == s.end_position().row
                    || (s.kind() == "function_definition"
                        && s.child_by_field_name("parameters")
                            .is_some_and(|p| p.end_position().row == s.start_position().row)),
                loop_targets: if unbinds { Vec::new() } else { loop_targets(s, source) },
            })
            .collect();
        Self(statements)
    }

    /// The index of the statement that holds `line`.
    pub(super) fn at(&self, line: u32) -> Option<usize> {
        self.0.iter().position(|s| s.holds(line))
    }

    /// How many statements have run, binding what they bind, by an `event` at `line`:
    /// none before the first (a class's header line), those before the one holding
    /// `line` and that one too unless this is a line event before it binds (the first of
    /// a simple statement, any of a `def` or `class`) or it raised out of its binding
    /// (an exception event, or a return where more statements follow, at an assignment
    /// that binds at its end and shares its lines with no other). `None` where the text
    /// cannot tell.
    fn ran(&self, event: StopKind, line: u32) -> Option<usize> {
        if self.0.first().is_none_or(|s| line < s.first) {
            return Some(0);
        }
        let at = self.at(line)?;
        let statement = &self.0[at];
        let before = (statement.form.simple() && line == statement.first) || statement.form == Form::Definition;
        // Alone on the line: `x = f(); y = g()` may raise out of `y`'s.
        let alone = self.0[at + 1..].iter().all(|s| !s.holds(line));
        let raised = statement.form == Form::Assignment
            && alone
            && match event {
                StopKind::Exception => true,
                StopKind::Return => self.0[at + 1..].iter().any(|s| !s.silent),
                _ => false,
            };
        Some(if (event == StopKind::Line && before) || raised {
            at
        } else {
            at + 1
        })
    }

    /// Whether a run of this body can end in statement `i`: it may raise, or it is the
    /// last that fires events (or a silent one after it), where the body runs to its end.
    pub(super) fn may_end_in(&self, i: usize) -> bool {
        let last = self.0.iter().rposition(|s| !s.silent).unwrap_or(0);
        i >= last || !self.0[i].cannot_raise
    }

    /// The lines a run of this body can end on after statement `from` begins
    /// ([`Self::may_end_in`]).
    pub(super) fn may_end_at(&self, from: usize) -> BTreeSet<u32> {
        let statements = (from..self.0.len()).filter(|&i| self.may_end_in(i));
        statements.flat_map(|i| self.0[i].first..=self.0[i].last).collect()
    }

    /// Whether the statements run by an `event` at `line` may have bound `name`.
    pub(super) fn bound_by(&self, event: StopKind, line: u32, name: &str) -> bool {
        self.ran(event, line)
            .is_none_or(|ran| self.0[..ran].iter().any(|s| s.names.contains(name)))
    }

    /// The lines of the statement that the frame's event `n` stops at, when the frame's
    /// event 0 is its call and each statement before it takes one line event (event 1
    /// is the first statement's, and so on) and can neither call nor raise.
    pub(super) fn straight_event(&self, n: u32) -> Option<(u32, u32)> {
        let at = usize::try_from(n).ok()?.checked_sub(1)?;
        let statement = self.0.get(at)?;
        self.0[..at]
            .iter()
            .all(|s| s.cannot_raise && s.one_line)
            .then_some((statement.first, statement.last))
    }

    /// The lines of the statements whose first event can be the frame's event `n` or an
    /// earlier one: each statement before one that compiles to something takes at least
    /// one event, and those that each take exactly one (a line on one line that cannot
    /// raise, from the first on) fire at their own number only (unless the last, where the
    /// frame returns next).
    pub(super) fn reached_by_event(&self, n: u32) -> BTreeSet<u32> {
        let (mut before, mut straight) = (0_u32, true);
        let mut lines = BTreeSet::new();
        for (i, s) in self.0.iter().enumerate() {
            if before >= n {
                break;
            }
            straight &= s.cannot_raise && s.one_line && !s.silent;
            if !straight || before + 1 == n || i + 1 == self.0.len() {
                lines.extend(s.first..=s.last);
            }
            before += u32::from(!s.silent);
        }
        lines
    }

    /// Stepping back one event of this body's frame from its line event `from`, where the
    /// statement there has run nothing yet (the first line of a simple statement on one
    /// line, or a `for` header whose loop has bound none of its names yet): the statement
    /// before it, which ran last, when it fires events of its own.
    pub(super) fn ran_last_before(&self, from: &State) -> Option<usize> {
        let (line, shown) = (from.line?, trace_lang::shown_vars(from));
        let at = self.at(line)?;
        let statement = &self.0[at];
        let unstarted_loop = line == statement.first
            && !statement.loop_targets.is_empty()
            && statement.loop_targets.iter().all(|t| shown.iter().all(|(n, _)| n != t));
        let fresh = (statement.form.simple() && statement.one_line && line == statement.first) || unstarted_loop;
        let previous = at.checked_sub(1)?;
        (fresh && !self.0[previous].silent).then_some(previous)
    }

    /// The line of statement `index` when it is simple and on one line.
    pub(super) fn simple_line(&self, index: usize) -> Option<u32> {
        let statement = self.0.get(index)?;
        (statement.form.simple() && statement.one_line).then_some(statement.first)
    }

    /// The index of the first statement that may bind `name`.
    pub(super) fn first_binder(&self, name: &str) -> Option<usize> {
        self.0.iter().position(|s| s.names.contains(name))
    }

    /// Whether the statement `at` surely stores `a` after `b` (both, in that order).
    pub(super) fn stores_later(&self, at: usize, a: &str, b: &str) -> bool {
        let stores = &self.0[at].stores;
        let place = |n: &str| stores.iter().position(|s| s == n);
        place(a).zip(place(b)).is_some_and(|(a, b)| a > b)
    }

    /// The index of the first statement that always binds `name` when it completes.
    pub(super) fn certain_binder(&self, name: &str) -> Option<usize> {
        self.0.iter().position(|s| s.certain.iter().any(|c| c == name))
    }

    /// The names the statements before the one holding `line` always bind: each ran to
    /// its end, so an event there (not the call) shows them.
    pub(super) fn required(&self, event: StopKind, line: u32) -> impl Iterator<Item = &str> {
        let done = match self.at(line) {
            Some(at) if event != StopKind::Call => at,
            _ => 0,
        };
        self.0[..done].iter().flat_map(|s| s.certain.iter().map(String::as_str))
    }
}

/// Whether `statement` is a [`Form::Assignment`]: every store it makes comes after all
/// of its evaluation, and none of them can raise.
fn binds_at_end(statement: Node<'_>) -> bool {
    let Some(mut node) = statement
        .named_child(0)
        .filter(|_| statement.kind() == "expression_statement")
    else {
        return false;
    };
    if statement.named_child_count() != 1 || super::varnames::contains(statement, "named_expression") {
        return false;
    }
    let plain = |target: Node<'_>| match target.kind() {
        "identifier" => true,
        "pattern_list" | "tuple_pattern" | "list_pattern" => {
            flow::named(target).iter().all(|t| t.kind() == "identifier")
        }
        _ => false,
    };
    loop {
        // An annotation is evaluated after the store, and it may raise.
        if !matches!(node.kind(), "assignment" | "augmented_assignment")
            || node.child_by_field_name("type").is_some()
            || !node.child_by_field_name("left").is_some_and(plain)
        {
            return false;
        }
        match node.child_by_field_name("right") {
            Some(right) if matches!(right.kind(), "assignment" | "augmented_assignment") => node = right,
            _ => return true,
        }
    }
}

/// Whether a name the body binds could be unbound again: the text holds a `del`, or
/// reaches a namespace as a value (`globals()`, `vars()`, `locals()`, `__dict__`,
/// `sys.modules`).
fn may_unbind(root: Node<'_>, source: &[u8]) -> bool {
    let text = String::from_utf8_lossy(source);
    let reflective = ["globals", "vars", "locals", "__dict__", "modules", "exec", "eval"]
        .iter()
        .any(|word| text.contains(word));
    let mut stack = vec![root];
    let mut deletes = false;
    while let Some(node) = stack.pop() {
        deletes |= node.kind() == "delete_statement";
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    reflective || deletes
}

/// The names a `for` statement's target binds on each iteration, when they are plain
/// names the tracer shows (`for k, v in …`), else none.
fn loop_targets(statement: Node<'_>, source: &[u8]) -> Vec<String> {
    let is_for = statement.kind() == "for_statement" && statement.child(0).is_some_and(|c| c.kind() == "for");
    match statement.child_by_field_name("left") {
        Some(left) if is_for && flow::plain_targets(left) => {
            let names = effects::identifiers(left, source);
            if names.iter().any(|n| hidden(n)) {
                Vec::new()
            } else {
                names
            }
        }
        _ => Vec::new(),
    }
}

/// What an activation of a function may show when it first reaches a line.
#[derive(Debug, Clone, Default)]
pub(super) struct Arrival {
    /// The local names it may have bound.
    pub(super) names: HashSet<String>,
    /// Of those, each one a statement of the body's own (not nested in another) binds to
    /// an immutable literal, which no statement that can run before the line rebinds:
    /// its repr, as the JSON string's contents.
    pub(super) values: HashMap<String, Vec<u8>>,
}

/// For the first line of each statement in the `body` of a function's `def` (the first
/// statement on a line, where several share one), what an activation may show when it
/// first reaches that line: the parameters and what runs before it (Python goes back to
/// an earlier line only by a loop). A compound statement's inner lines get every name
/// it binds (coarse but sound); a loop's, every name the loop binds (an earlier turn may
/// have run any of its body). A name `declared` `global` or `nonlocal` gets no value.
/// See [`super::arrival`].
pub(super) fn first_arrivals(
    function: Node<'_>,
    body: Node<'_>,
    source: &[u8],
    declared: &HashSet<String>,
) -> BTreeMap<u32, Arrival> {
    let mut arrivals = BTreeMap::new();
    let start = Arrival {
        names: effects::parameters(function, source).into_iter().collect(),
        values: HashMap::new(),
    };
    walk(body, source, start, true, declared, &mut arrivals);
    arrivals
}

fn walk(
    block: Node<'_>,
    source: &[u8],
    mut now: Arrival,
    own: bool,
    declared: &HashSet<String>,
    arrivals: &mut BTreeMap<u32, Arrival>,
) {
    for statement in flow::named(block) {
        arrivals
            .entry(line_of(statement.start_position().row))
            .or_insert_with(|| now.clone());
        let names = effects::bound_names(statement, source);
        now.values.retain(|name, _| !names.contains(name));
        if let Some((name, value)) = own.then(|| literal_binding(statement, source)).flatten()
            && !declared.contains(&name)
        {
            now.values.insert(name, value);
        }
        now.names.extend(names);
        let nested = matches!(
            statement.kind(),
            "function_definition" | "class_definition" | "decorated_definition"
        );
        if flow::is_compound(statement) && !nested {
            for inner in blocks(statement) {
                walk(inner, source, now.clone(), false, declared, arrivals);
            }
        }
    }
}

/// `NAME = literal` with an immutable literal: the name and the literal's repr (the JSON
/// string's contents).
fn literal_binding(statement: Node<'_>, source: &[u8]) -> Option<(String, Vec<u8>)> {
    let (name, repr) = literal::assignment(statement, source)?;
    globals::keeps_value(globals::Reads::Anywhere, &repr).then(|| (name.to_owned(), json_contents(&repr)))
}

/// The blocks a compound statement runs (its body, its branches' and clauses' bodies).
fn blocks(statement: Node<'_>) -> Vec<Node<'_>> {
    let mut found = Vec::new();
    let mut stack = vec![statement];
    while let Some(node) = stack.pop() {
        for child in flow::named(node) {
            if child.kind() == "block" {
                found.push(child);
            } else {
                stack.push(child);
            }
        }
    }
    found
}
