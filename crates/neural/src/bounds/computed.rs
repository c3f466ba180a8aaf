//! What a statement computes from the state it starts at ([`super::evaluate`]): the values a
//! one-line assignment binds (`total += x`, `a, b = b, a + b`, `current = f"{current}
//! {word}"`), a list or dict it changes in place (`xs.append(x)`, `d[k] = v`), the value a
//! `return` line returns, and what the next turn of a `for` loop binds, or that the loop
//! is done.
//!
//! A `for` header's turn is told from the loop's target: while the loop has not bound it
//! yet the frame does not show it, and after that it shows the item the last turn bound.
//! That holds for a loop no other loop of its frame encloses (so it is entered once per
//! activation) whose target names nothing else of the frame binds, on an iterable the
//! state shows whole: a list, tuple, string, dict or set, `range`, `enumerate`, `zip`,
//! `reversed`, `dict.items()`/`keys()`/`values()`, or a value a builtin makes (`sorted(xs)`,
//! `text.split()`). A container the loop iterates must not change meanwhile: neither the
//! loop nor any other function names it, and no other variable shows the same repr (an
//! alias could).

use std::collections::HashMap;

use replayground_shared::state::STATE_REPR_CHARS;
use replayground_shared::trace_lang::{self, normalize_repr};
use replayground_shared::{State, StopKind};
use tree_sitter::Node;

use super::code::{CodeFacts, hidden, line_of};
use super::effects::{bound_names, identifiers};
use super::evaluate::{self, Env};
use super::flow::{self, named};
use super::globals;
use super::runs_the_statement;
use super::values::{Kind, Value, arithmetic, from_repr, key_value, tuple_items};

/// Longest loop whose items are listed here.
const MAX_TURNS: i128 = 10_000;

/// What a `for` header's line leads to next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Turn {
    /// Another turn, binding these names to these reprs.
    Next(Vec<(String, String)>),
    /// The loop is done: no name is bound again.
    Done,
}

/// Scopes of their own inside a frame's text.
const NESTED_SCOPES: [&str; 8] = [
    "function_definition",
    "class_definition",
    "lambda",
    "list_comprehension",
    "set_comprehension",
    "dictionary_comprehension",
    "generator_expression",
    "decorated_definition",
];

impl CodeFacts {
    /// Whether the state's reprs are the values' own and no operator runs the program's code.
    pub(super) fn plain_values(&self) -> bool {
        self.scalars_kept && !self.program.operator_methods
    }

    /// Takes the module's variables from `module`, a state of its frame earlier in the
    /// same run, that any later frame reads as shown there ([`globals::module_reads`]),
    /// and, for a function's frame stepping forward from `from`, those it reads with the
    /// value the text alone gives them ([`globals::text_values`]) that `module` does not
    /// show (it may come before their assignment).
    pub(super) fn read_module(&mut self, module: Option<&State>, from: Option<&State>) {
        if !self.plain_values() {
            return;
        }
        let (root, source) = (self.tree.root_node(), self.source.as_bytes());
        let module = module.filter(|m| m.depth == Some(0));
        let function_line = from.filter(|f| f.depth.is_some_and(|d| d > 0)).and_then(|f| f.line);
        let at = function_line.and_then(|line| self.top_level.at(line));
        if module.is_none() && at.is_none() {
            return;
        }
        let reads = globals::module_reads(root, source, &self.program);
        if let Some(module) = module {
            let kept =
                |(name, repr): &&(String, String)| reads.get(name).is_some_and(|r| globals::keeps_value(*r, repr));
            self.module_values = trace_lang::shown_vars(module).iter().filter(kept).cloned().collect();
        }
        if let Some(at) = at {
            for (name, repr) in globals::text_values(root, source, &reads, at) {
                if !self.module_values.iter().any(|(n, _)| *n == name) {
                    self.module_values.push((name, repr));
                }
            }
        }
    }

    /// What an expression at `from` is evaluated against: its frame's variables.
    pub(super) fn env<'a>(&'a self, from: &'a State) -> Env<'a> {
        Env {
            vars: trace_lang::shown_vars(from),
            outer: &self.module_values,
            program: &self.program,
        }
    }

    /// The statement whose line event `from` is, when the frame runs all of it and the
    /// state's values can be read.
    fn statement_at<'t>(&'t self, from: &State) -> Option<Node<'t>> {
        let function = from.function.as_deref()?;
        if from.event != StopKind::Line || !self.plain_values() || !runs_the_statement(function) {
            return None;
        }
        flow::statements_at(self.tree.root_node(), from.line?).last().copied()
    }

    /// The names a one-line assignment at `from`'s line binds, with the reprs the state's
    /// values give them.
    pub(super) fn computed(&self, from: &State) -> HashMap<String, String> {
        let mut out = HashMap::new();
        let Some(statement) = self.statement_at(from) else {
            return out;
        };
        let row = statement.start_position().row;
        let alone = |sibling: Option<Node<'_>>| {
            sibling.is_none_or(|s| s.end_position().row < row || s.start_position().row > row)
        };
        if statement.kind() != "expression_statement"
            || statement.end_position().row != row
            || !alone(statement.prev_named_sibling())
            || !alone(statement.next_named_sibling())
            || statement.named_child_count() != 1
        {
            return out;
        }
        let Some(assignment) = statement.named_child(0) else {
            return out;
        };
        if assignment.kind() == "call" {
            out.extend(self.appended(assignment, trace_lang::shown_vars(from)));
            return out;
        }
        let source = self.source.as_bytes();
        let env = self.env(from);
        let shown = |name: &str| env.var(name);
        let (Some(left), Some(right)) = (
            assignment.child_by_field_name("left"),
            assignment.child_by_field_name("right"),
        ) else {
            return out;
        };
        let name = |node: Node<'_>| {
            (node.kind() == "identifier")
                .then(|| node.utf8_text(source).ok())
                .flatten()
        };
        let repr_of = |node: Node<'_>| evaluate::repr_of(node, source, &env);
        match assignment.kind() {
            "assignment" if left.kind() == "identifier" => {
                if let (Some(target), Some(repr)) = (name(left), repr_of(right)) {
                    out.insert(target.to_owned(), repr);
                }
            }
            "assignment" | "augmented_assignment" if left.kind() == "subscript" => {
                out.extend(self.stored(assignment, left, right, &env, &repr_of));
            }
            "assignment" if matches!(left.kind(), "pattern_list" | "tuple_pattern") => {
                // Every value is computed before any name is bound.
                let targets: Option<Vec<&str>> = named(left).into_iter().map(name).collect();
                let values: Option<Vec<String>> = (right.kind() == "expression_list")
                    .then(|| {
                        named(right)
                            .into_iter()
                            .map(|v| evaluate::value(v, source, &env)?.repr())
                            .collect()
                    })
                    .flatten();
                if let (Some(targets), Some(values)) = (targets, values)
                    && targets.len() == values.len()
                {
                    out.extend(targets.into_iter().map(str::to_owned).zip(values));
                }
            }
            "augmented_assignment" => {
                let operator = assignment
                    .child_by_field_name("operator")
                    .and_then(|o| o.utf8_text(source).ok());
                let computed = name(left).zip(operator).and_then(|(target, operator)| {
                    let old = from_repr(&shown(target)?)?;
                    let new = arithmetic(
                        &old,
                        operator.strip_suffix('=')?,
                        &evaluate::value(right, source, &env)?,
                    )?;
                    Some((target.to_owned(), new.repr()?))
                });
                out.extend(computed);
            }
            _ => {}
        }
        out
    }

    /// The repr a one-line `return VALUE` at `from`'s line returns, where the state tells
    /// it (a name's repr as shown, or a value computed from them), in a frame that is not a
    /// generator's.
    pub(super) fn returned(&self, from: &State) -> Option<String> {
        let statement = self.statement_at(from)?;
        let (function, line) = (from.function.as_deref()?, from.line?);
        if statement.kind() != "return_statement"
            || statement.end_position().row != statement.start_position().row
            || self.may_be_generator(function, line)
        {
            return None;
        }
        let source = self.source.as_bytes();
        let value = statement.named_child(0)?;
        let repr = evaluate::repr_of(value, source, &self.env(from))?;
        (!repr.ends_with("...") && repr.chars().count() + 3 < STATE_REPR_CHARS).then(|| normalize_repr(&repr))
    }

    /// `name.append(value)` on a list the state shows whole: its repr with the value's
    /// added.
    fn appended(&self, call: Node<'_>, vars: &[(String, String)]) -> Option<(String, String)> {
        let source = self.source.as_bytes();
        let function = call.child_by_field_name("function")?;
        let arguments = named(call.child_by_field_name("arguments")?);
        let receiver = function.child_by_field_name("object")?;
        let method = function.child_by_field_name("attribute")?.utf8_text(source).ok()?;
        let [argument] = arguments.as_slice() else {
            return None;
        };
        if function.kind() != "attribute"
            || receiver.kind() != "identifier"
            || method != "append"
            || !self.program.builtin(method)
        {
            return None;
        }
        let list = receiver.utf8_text(source).ok()?;
        let env = Env {
            vars,
            outer: &self.module_values,
            program: &self.program,
        };
        let shown = |name: &str| env.var(name);
        let old = shown(list)?;
        let Value::Container(display) = from_repr(&old)? else {
            return None;
        };
        // A list appended to itself holds itself: left to the model.
        if argument.kind() == "identifier" && argument.utf8_text(source).ok()? == list {
            return None;
        }
        let item = evaluate::repr_of(*argument, source, &env)?;
        let mut items = display.items.filter(|_| display.kind == Kind::List)?;
        items.push(item);
        Some((list.to_owned(), whole(format!("[{}]", items.join(", ")), items.len())?))
    }

    /// `name[key] = value` (or `op=`) on a dict or list the state shows whole: its repr
    /// with that item set.
    fn stored(
        &self,
        assignment: Node<'_>,
        left: Node<'_>,
        right: Node<'_>,
        env: &Env<'_>,
        repr_of: &dyn Fn(Node<'_>) -> Option<String>,
    ) -> Option<(String, String)> {
        let source = self.source.as_bytes();
        let target = left.child_by_field_name("value")?;
        let mut cursor = left.walk();
        let indices: Vec<Node<'_>> = left.children_by_field_name("subscript", &mut cursor).collect();
        let [index] = indices.as_slice() else {
            return None;
        };
        let name = (target.kind() == "identifier")
            .then(|| target.utf8_text(source).ok())
            .flatten()?;
        let Value::Container(display) = from_repr(&env.var(name)?)? else {
            return None;
        };
        let key = evaluate::value(*index, source, env)?;
        let key_repr = key.repr().filter(|_| matches!(key, Value::Int(_) | Value::Str(_)))?;
        let mut items = display.items.clone()?;
        // The item as it was, and where it is.
        let (at, old) = match display.kind {
            Kind::Dict => {
                let pairs: Vec<(String, String)> = items.iter().map(|i| key_value(i)).collect::<Option<_>>()?;
                if !pairs
                    .iter()
                    .all(|(k, _)| matches!(from_repr(k), Some(Value::Int(_) | Value::Str(_))))
                {
                    return None;
                }
                match pairs.iter().position(|(k, _)| *k == key_repr) {
                    Some(at) => (Some(at), Some(pairs[at].1.clone())),
                    None => (None, None),
                }
            }
            Kind::List => {
                let Value::Int(i) = key else { return None };
                let len = i128::try_from(items.len()).ok()?;
                let at = usize::try_from(if i < 0 { i + len } else { i })
                    .ok()
                    .filter(|&at| at < items.len())?;
                (Some(at), Some(items[at].clone()))
            }
            Kind::Tuple | Kind::Set => return None,
        };
        let new = if assignment.kind() == "augmented_assignment" {
            let operator = assignment.child_by_field_name("operator")?.utf8_text(source).ok()?;
            let by = evaluate::value(right, source, env)?;
            arithmetic(&from_repr(&old?)?, operator.strip_suffix('=')?, &by)?.repr()?
        } else {
            repr_of(right)?
        };
        let item = if display.kind == Kind::Dict {
            format!("{key_repr}: {new}")
        } else {
            new
        };
        match at {
            Some(at) => items[at] = item,
            None => items.push(item),
        }
        let (open, close) = if display.kind == Kind::Dict {
            ('{', '}')
        } else {
            ('[', ']')
        };
        Some((
            name.to_owned(),
            whole(format!("{open}{}{close}", items.join(", ")), items.len())?,
        ))
    }

    /// What the `for` header whose line event `from` is leads to, where the state tells.
    pub(super) fn loop_turn(&self, from: &State) -> Option<Turn> {
        let statement = self.statement_at(from)?;
        let source = self.source.as_bytes();
        let body = statement.child_by_field_name("body")?;
        let line = from.line?;
        if statement.kind() != "for_statement"
            || line_of(statement.start_position().row) != line
            || line_of(body.start_position().row) <= line
            || !statement.utf8_text(source).ok()?.starts_with("for")
        {
            return None;
        }
        // Entered once per activation: no loop of the frame encloses it.
        let mut scope = statement.parent()?;
        loop {
            match scope.kind() {
                "for_statement" | "while_statement" | "class_definition" => return None,
                "function_definition" | "module" => break,
                _ => scope = scope.parent()?,
            }
        }
        let left = statement.child_by_field_name("left")?;
        let targets: Vec<&str> = match left.kind() {
            "identifier" => vec![left.utf8_text(source).ok()?],
            "pattern_list" | "tuple_pattern" => named(left)
                .into_iter()
                .map(|n| (n.kind() == "identifier").then(|| n.utf8_text(source).ok()).flatten())
                .collect::<Option<_>>()?,
            _ => return None,
        };
        let in_body = bound_names(body, source);
        let before = mentioned_before(scope, statement, source);
        if targets
            .iter()
            .any(|t| hidden(t) || self.declared.contains(*t) || in_body.contains(*t) || before.iter().any(|b| b == t))
        {
            return None;
        }
        let env = self.env(from);
        let shown = |name: &str| env.var(name);
        let iterable = statement.child_by_field_name("right")?;
        // What the iterable reads must be as it was when the loop started.
        for name in identifiers(iterable, source) {
            let Some(repr) = shown(&name) else {
                continue;
            };
            let immutable = matches!(
                from_repr(&repr)?,
                Value::Int(_) | Value::Str(_) | Value::Bool(_) | Value::None
            ) || repr.starts_with('(');
            let changes = self.declared.contains(&name)
                || in_body.contains(&name)
                || (!immutable
                    && (mentions(body, &name, source, true)
                        || nested_mentions(scope, &name, source)
                        || env
                            .vars
                            .iter()
                            .any(|(n, r)| *n != name && normalize_repr(r) == normalize_repr(&repr))));
            if changes {
                return None;
            }
        }
        let items = turns(iterable, source, &env)?;
        // The reprs each turn binds the targets to.
        let bound = |item: &String| -> Option<Vec<String>> {
            match targets.len() {
                1 => Some(vec![item.clone()]),
                n => tuple_items(item, n),
            }
        };
        let now: Vec<Option<String>> = targets.iter().map(|t| shown(t).map(|r| normalize_repr(&r))).collect();
        let next = if now.iter().all(Option::is_none) {
            0
        } else {
            let now: Vec<String> = now.into_iter().collect::<Option<_>>()?;
            let mut matching = items.iter().enumerate().filter(|(_, item)| {
                bound(item).is_some_and(|b| b.iter().map(|r| normalize_repr(r)).eq(now.iter().cloned()))
            });
            let (at, _) = matching.next()?;
            matching.next().is_none().then_some(())?;
            at + 1
        };
        match items.get(next) {
            Some(item) => Some(Turn::Next(
                targets.iter().map(|t| (*t).to_owned()).zip(bound(item)?).collect(),
            )),
            None => Some(Turn::Done),
        }
    }
}

/// A container's repr, where the tracer writes it whole: few enough items, short enough.
fn whole(repr: String, items: usize) -> Option<String> {
    (items <= 64 && repr.chars().count() + 3 < STATE_REPR_CHARS).then_some(repr)
}

/// The names `scope`'s own code (not its nested scopes') mentions before `statement`.
fn mentioned_before(scope: Node<'_>, statement: Node<'_>, source: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    let mut stack = named(scope);
    while let Some(node) = stack.pop() {
        if node.start_byte() >= statement.start_byte() || NESTED_SCOPES.contains(&node.kind()) {
            continue;
        }
        if node.kind() == "identifier" {
            names.push(node.utf8_text(source).unwrap_or_default().to_owned());
        }
        stack.extend(named(node));
    }
    names
}

/// Whether an identifier `name` occurs under `node` (in its nested scopes too, when
/// `nested`).
fn mentions(node: Node<'_>, name: &str, source: &[u8], nested: bool) -> bool {
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        if node.kind() == "identifier" && node.utf8_text(source).is_ok_and(|t| t == name) {
            return true;
        }
        if nested || !NESTED_SCOPES.contains(&node.kind()) {
            stack.extend(named(node));
        }
    }
    false
}

/// Whether a scope nested in `scope` (a function or class the frame could call) names `name`.
fn nested_mentions(scope: Node<'_>, name: &str, source: &[u8]) -> bool {
    let mut stack = named(scope);
    while let Some(node) = stack.pop() {
        if NESTED_SCOPES.contains(&node.kind()) {
            if mentions(node, name, source, true) {
                return true;
            }
            continue;
        }
        stack.extend(named(node));
    }
    false
}

/// The reprs of the items iterating `node` yields, in order, where the state tells them.
fn turns(node: Node<'_>, source: &[u8], env: &Env<'_>) -> Option<Vec<String>> {
    if node.kind() == "call"
        && let Some(items) = call_turns(node, source, env)
    {
        return Some(items);
    }
    // A value: a container, a string, or what a builtin makes (`sorted(xs)`, `s.split()`).
    evaluate::value(node, source, env)?.iterated()
}

fn call_turns(node: Node<'_>, source: &[u8], env: &Env<'_>) -> Option<Vec<String>> {
    let function = node.child_by_field_name("function")?;
    let arguments = named(node.child_by_field_name("arguments")?);
    if arguments
        .iter()
        .any(|a| matches!(a.kind(), "keyword_argument" | "list_splat" | "dictionary_splat"))
    {
        return None;
    }
    if function.kind() == "attribute" {
        let receiver = evaluate::value(function.child_by_field_name("object")?, source, env)?;
        let method = function.child_by_field_name("attribute")?.utf8_text(source).ok()?;
        if !env.builtin(method) || !arguments.is_empty() {
            return None;
        }
        return match (&receiver, method) {
            (Value::Container(d), "items" | "keys" | "values") if d.kind == Kind::Dict => {
                let pairs: Vec<(String, String)> =
                    d.items.as_ref()?.iter().map(|i| key_value(i)).collect::<Option<_>>()?;
                Some(
                    pairs
                        .into_iter()
                        .map(|(k, v)| match method {
                            "items" => format!("({k}, {v})"),
                            "keys" => k,
                            _ => v,
                        })
                        .collect(),
                )
            }
            _ => None,
        };
    }
    let name = function.utf8_text(source).ok()?;
    if function.kind() != "identifier" || !env.builtin(name) {
        return None;
    }
    let nested = |i: usize| turns(*arguments.get(i)?, source, env);
    let int = |i: usize| match evaluate::value(*arguments.get(i)?, source, env)? {
        Value::Int(n) => Some(n),
        _ => None,
    };
    match (name, arguments.len()) {
        ("range", 1..=3) => {
            let (start, stop, step) = match arguments.len() {
                1 => (0, int(0)?, 1),
                2 => (int(0)?, int(1)?, 1),
                _ => (int(0)?, int(1)?, int(2)?),
            };
            if step == 0 || (stop - start) / step > MAX_TURNS {
                return None;
            }
            let mut out = Vec::new();
            let mut at = start;
            while (step > 0 && at < stop) || (step < 0 && at > stop) {
                out.push(at.to_string());
                at += step;
            }
            Some(out)
        }
        ("enumerate", 1 | 2) => {
            let start = if arguments.len() == 2 { int(1)? } else { 0 };
            let items = nested(0)?;
            Some(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| format!("({}, {item})", start + i128::try_from(i).unwrap_or(i128::MAX)))
                    .collect(),
            )
        }
        ("zip", 1..) => {
            let all: Vec<Vec<String>> = (0..arguments.len()).map(nested).collect::<Option<_>>()?;
            let shortest = all.iter().map(Vec::len).min()?;
            Some(
                (0..shortest)
                    .map(|i| {
                        let parts: Vec<&str> = all.iter().map(|items| items[i].as_str()).collect();
                        if parts.len() == 1 {
                            format!("({},)", parts[0])
                        } else {
                            format!("({})", parts.join(", "))
                        }
                    })
                    .collect(),
            )
        }
        ("reversed", 1) => {
            let mut items = nested(0)?;
            items.reverse();
            Some(items)
        }
        _ => None,
    }
}
