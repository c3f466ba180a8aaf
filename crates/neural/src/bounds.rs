//! What the program's text and the debugger's contract say about the next state before
//! any model is asked, so that decoding never writes a state the debugger could not stop at.
//!
//! From the code (tree-sitter, never a run): the lines that hold code; the scopes a
//! frame can run (the module, each function, lambda, comprehension and class body) and
//! the lines each spans; the names a frame of each scope can show. The module frame is
//! the only one at depth 0.
//!
//! From the action and the state it starts at (the rules of [`StateTree::step`]):
//! `step_over` inside a function that is not a generator stays in that frame;
//! `step_return` stops at the frame's own return; `step_into` reaches one frame deeper
//! only through a call event and `reverse_step_into` only through a return event;
//! `continue` and `breakpoint:N` stop at a line of a set breakpoint. A breakpoint set
//! earlier can also stop any forward step, so every step admits those lines too.
//! The end of the program is always admitted (a run can be cut by its limits).
//!
//! [`StateTree::step`]: replayground_shared::StateTree::step

use std::collections::{BTreeSet, HashSet};

use replayground_shared::trace_lang::{self, Direction, Trajectory};
use replayground_shared::{Action, State, StopKind};
use tree_sitter::Node;

/// The name the module's frame carries.
const MODULE: &str = "<module>";

/// A name a comprehension's frame holds for its iterator.
const ITERATOR_ARGUMENT: &str = ".0";

/// Identifiers that let a program bind names its text never writes: a frame's names
/// cannot be bounded in a program that uses one.
const DYNAMIC_NAMES: [&str; 6] = ["globals", "locals", "vars", "exec", "eval", "setattr"];

/// One scope a frame can run: where it is and what it can bind.
#[derive(Debug, Clone)]
struct Scope {
    name: String,
    first: u32,
    /// The `def` or `class` line (after any decorators).
    header: u32,
    last: u32,
    /// Every identifier inside the scope's text (its nested scopes' too: their free
    /// variables are the scope's cells). A class body's names are not bounded: its
    /// metaclass may fill the namespace first (an `Enum` body starts with
    /// `_generate_next_value_`).
    names: HashSet<String>,
    bounded_names: bool,
    /// A generator's frame is left and resumed, so a step over it can land anywhere.
    generator: bool,
}

impl Scope {
    fn holds(&self, line: u32) -> bool {
        (self.first..=self.last).contains(&line)
    }

    /// Whether a frame of this scope can start (a call event) at `line`: on its first
    /// line (its first decorator's, or its `def`), or anywhere a generator resumes.
    fn starts_at(&self, line: u32) -> bool {
        self.name != MODULE && (line == self.first || line == self.header || (self.generator && self.holds(line)))
    }
}

/// What the program's text says about every state of its runs.
#[derive(Debug, Clone)]
pub struct CodeFacts {
    /// The module first, then every other scope in source order.
    scopes: Vec<Scope>,
    /// Lines holding something other than blanks and a comment.
    code_lines: BTreeSet<u32>,
    /// Whether a frame's names are bounded by its scope's identifiers.
    names_known: bool,
    /// Whether a frame, once it shows a name, shows it from then on: no `del`, no
    /// `except ... as` (whose name Python unbinds), nothing that binds names dynamically.
    names_kept: bool,
    /// The identifiers written on each line.
    names_by_line: std::collections::BTreeMap<u32, Vec<String>>,
    /// Names a `global` or `nonlocal` statement lets another frame bind.
    declared: HashSet<String>,
    tree: tree_sitter::Tree,
    source: String,
}

impl CodeFacts {
    /// The facts of `code`, or `None` when it does not parse cleanly (then nothing is
    /// bounded: a tree with errors would bound the wrong scopes).
    pub fn new(code: &str) -> Option<Self> {
        let tree = replayground_exec::python::parse(code)?;
        let root = tree.root_node();
        if root.has_error() {
            return None;
        }
        let source = code.as_bytes();
        let code_lines = code
            .lines()
            .zip(1u32..)
            .filter(|(text, _)| {
                let text = text.trim();
                !text.is_empty() && !text.starts_with('#')
            })
            .map(|(_, n)| n)
            .collect();
        let mut scopes = vec![Scope {
            name: MODULE.to_owned(),
            first: 1,
            header: 1,
            last: u32::try_from(code.lines().count()).unwrap_or(u32::MAX).max(1),
            names: HashSet::new(),
            bounded_names: true,
            generator: false,
        }];
        let mut names_known = true;
        collect_scopes(root, source, &mut scopes, &mut names_known);
        let names_kept = names_known && !unbinds(root);
        let (names_by_line, declared) = identifiers(root, source);
        Some(Self {
            scopes,
            code_lines,
            names_known,
            names_kept,
            names_by_line,
            declared,
            tree,
            source: code.to_owned(),
        })
    }

    /// The names a frame can newly show at its next event after a line event at `line`:
    /// those the statement there writes, and those other frames may bind in it
    /// (`global`, `nonlocal`).
    fn fresh_names(&self, line: u32) -> Option<HashSet<Vec<u8>>> {
        let lines = flow::ran_lines(self.tree.root_node(), line)?;
        let written = lines.iter().filter_map(|l| self.names_by_line.get(l)).flatten();
        Some(written.chain(&self.declared).map(|n| n.as_bytes().to_vec()).collect())
    }

    /// The lines the same frame's next line event can be at after `from` (a line or
    /// call event), when the code's blocks tell.
    fn next_lines(&self, from: &State) -> Option<BTreeSet<u32>> {
        let (line, function) = (from.line?, from.function.as_deref()?);
        let (root, source) = (self.tree.root_node(), self.source.as_bytes());
        match from.event {
            StopKind::Line => flow::after_line(root, source, function, line),
            StopKind::Call if !self.may_be_generator(function, line) => flow::after_call(root, source, function, line),
            _ => None,
        }
    }

    /// Whether an event of `kind` can happen at `line`: any line of code, and for a call
    /// only where a frame starts.
    fn can_stop(&self, kind: StopKind, line: u32) -> bool {
        self.code_lines.contains(&line) && (kind != StopKind::Call || self.scopes.iter().any(|s| s.starts_at(line)))
    }

    /// The scopes a frame named `function` at `line` can be.
    fn scopes_named<'s>(&'s self, function: &'s str, line: u32) -> impl Iterator<Item = &'s Scope> + 's {
        self.scopes.iter().filter(move |s| s.name == function && s.holds(line))
    }

    /// Whether a frame of a generator (or a scope the text cannot tell) runs `function`.
    fn may_be_generator(&self, function: &str, line: u32) -> bool {
        let mut scopes = self.scopes_named(function, line).peekable();
        scopes.peek().is_none() || scopes.any(|s| s.generator)
    }
}

/// Adds the scopes under `node` to `scopes` (the first being the module's) and every
/// identifier to the scopes that hold it.
fn collect_scopes(node: Node<'_>, source: &[u8], scopes: &mut Vec<Scope>, names_known: &mut bool) {
    let mut stack = vec![node];
    // Every identifier is added afterwards to each scope whose span holds it.
    let mut identifiers: Vec<(usize, String)> = Vec::new();
    let mut spans: Vec<(usize, usize, usize)> = vec![(0, 0, source.len())];
    while let Some(node) = stack.pop() {
        let kind = node.kind();
        if kind == "identifier" {
            let text = node.utf8_text(source).unwrap_or_default().to_owned();
            if DYNAMIC_NAMES.contains(&text.as_str()) {
                *names_known = false;
            }
            identifiers.push((node.start_byte(), text));
        }
        if kind == "wildcard_import" {
            *names_known = false;
        }
        let scope_name = match kind {
            "function_definition" | "class_definition" => node
                .child_by_field_name("name")
                .and_then(|n| n.utf8_text(source).ok())
                .map(str::to_owned),
            "lambda" => Some("<lambda>".to_owned()),
            "list_comprehension" => Some("<listcomp>".to_owned()),
            "set_comprehension" => Some("<setcomp>".to_owned()),
            "dictionary_comprehension" => Some("<dictcomp>".to_owned()),
            "generator_expression" => Some("<genexpr>".to_owned()),
            _ => None,
        };
        if let Some(name) = scope_name {
            // A decorated function's frame starts at its first decorator.
            let outer = node
                .parent()
                .filter(|p| p.kind() == "decorated_definition")
                .unwrap_or(node);
            let mut names = HashSet::new();
            if kind.ends_with("comprehension") || kind == "generator_expression" {
                names.insert(ITERATOR_ARGUMENT.to_owned());
            }
            spans.push((scopes.len(), node.start_byte(), node.end_byte()));
            scopes.push(Scope {
                name,
                first: line_of(outer.start_position().row),
                header: line_of(node.start_position().row),
                last: line_of(node.end_position().row),
                names,
                bounded_names: kind != "class_definition",
                // A coroutine is resumed like a generator.
                generator: kind == "generator_expression"
                    || (kind == "function_definition"
                        && (yields(node) || node.child(0).is_some_and(|c| c.kind() == "async"))),
            });
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    for (at, name) in identifiers {
        for &(scope, start, end) in &spans {
            if (start..end).contains(&at) {
                scopes[scope].names.insert(name.clone());
            }
        }
    }
}

/// The identifiers on each line, and the names `global` and `nonlocal` statements declare.
fn identifiers(root: Node<'_>, source: &[u8]) -> (std::collections::BTreeMap<u32, Vec<String>>, HashSet<String>) {
    let mut by_line: std::collections::BTreeMap<u32, Vec<String>> = std::collections::BTreeMap::new();
    let mut declared = HashSet::new();
    let mut stack = vec![(root, false)];
    while let Some((node, in_declaration)) = stack.pop() {
        if node.kind() == "identifier" {
            let text = node.utf8_text(source).unwrap_or_default().to_owned();
            if in_declaration {
                declared.insert(text.clone());
            }
            by_line
                .entry(line_of(node.start_position().row))
                .or_default()
                .push(text);
        }
        let declaration = in_declaration || matches!(node.kind(), "global_statement" | "nonlocal_statement");
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor).map(|c| (c, declaration)));
    }
    (by_line, declared)
}

/// Whether the program unbinds a name: `del`, or an `except ... as NAME` handler.
fn unbinds(root: Node<'_>) -> bool {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let named_handler = || {
            let mut cursor = node.walk();
            let found = node
                .children(&mut cursor)
                .any(|c| matches!(c.kind(), "as" | "as_pattern"));
            found || node.child_by_field_name("alias").is_some()
        };
        if node.kind() == "delete_statement" || (node.kind().starts_with("except") && named_handler()) {
            return true;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    false
}

fn line_of(row: usize) -> u32 {
    u32::try_from(row + 1).unwrap_or(u32::MAX)
}

/// Whether a function's own body (not a nested function's) yields.
fn yields(function: Node<'_>) -> bool {
    let mut stack = vec![function];
    while let Some(node) = stack.pop() {
        if node.kind() == "yield" {
            return true;
        }
        let nested =
            node.id() != function.id() && matches!(node.kind(), "function_definition" | "lambda" | "class_definition");
        if !nested {
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
    }
    false
}

/// Which stop kinds a shape admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Events(u8);

impl Events {
    const CALL: Self = Self(1);
    const LINE: Self = Self(2);
    const RETURN: Self = Self(4);
    const EXCEPTION: Self = Self(8);
    const ANY: Self = Self(15);

    fn has(self, kind: StopKind) -> bool {
        let bit = match kind {
            StopKind::Call => Self::CALL,
            StopKind::Line => Self::LINE,
            StopKind::Return => Self::RETURN,
            StopKind::Exception => Self::EXCEPTION,
            StopKind::End => return false,
        };
        self.0 & bit.0 != 0
    }

    fn but(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    fn or(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

/// One kind of state the action can lead to.
#[derive(Debug, Clone)]
struct Shape {
    events: Events,
    /// `None`: any line of code.
    lines: Option<BTreeSet<u32>>,
    min_depth: u32,
    /// `None`: no bound.
    max_depth: Option<u32>,
    /// `None`: any function whose scope holds the line.
    function: Option<String>,
}

impl Shape {
    fn anywhere() -> Self {
        Self {
            events: Events::ANY,
            lines: None,
            min_depth: 0,
            max_depth: None,
            function: None,
        }
    }

    fn depths(min: u32, max: u32, events: Events) -> Self {
        Self {
            events,
            min_depth: min,
            max_depth: Some(max),
            ..Self::anywhere()
        }
    }

    /// The same frame as `state`, at one of `events`.
    fn frame_of(state: &State, depth: u32, events: Events) -> Self {
        Self {
            events,
            function: state.function.clone(),
            ..Self::depths(depth, depth, events)
        }
    }

    /// A line event at one of `breakpoints`.
    fn breakpoint_hit(breakpoints: &BTreeSet<u32>) -> Self {
        Self {
            events: Events::LINE,
            lines: Some(breakpoints.clone()),
            ..Self::anywhere()
        }
    }

    fn admits_depth(&self, depth: u32) -> bool {
        depth >= self.min_depth && self.max_depth.is_none_or(|max| depth <= max)
    }
}

/// What the next state may be: the code's facts and the shapes the action allows.
#[derive(Debug, Clone)]
pub struct Bounds {
    facts: Option<CodeFacts>,
    shapes: Vec<Shape>,
    kept: Vec<Kept>,
}

/// Names a frame showed before and must show again, in the same order.
#[derive(Debug, Clone)]
struct Kept {
    depth: u32,
    function: String,
    names: Vec<Vec<u8>>,
    /// New names come only after all of these: the module's globals are a dict, which
    /// keeps insertion order (a function's locals keep the code's order instead).
    appended: bool,
    /// When the answer is the frame's next event after a line event: the only names it
    /// can show besides these.
    fresh: Option<HashSet<Vec<u8>>>,
}

impl Kept {
    fn of(state: &State, appended: bool) -> Option<Self> {
        let vars = if state.depth == Some(0) {
            &state.globals
        } else {
            &state.locals
        };
        Some(Self {
            depth: state.depth?,
            function: state.function.clone()?,
            names: vars.as_ref()?.0.iter().map(|(n, _)| n.as_bytes().to_vec()).collect(),
            appended,
            fresh: None,
        })
    }
}

impl Bounds {
    /// No bound at all: what an engine without a code or an action gets.
    pub fn none() -> Self {
        Self {
            facts: None,
            shapes: vec![Shape::anywhere()],
            kept: Vec::new(),
        }
    }

    /// The bounds on the state `action` leads to from the last state of `prefix`
    /// (a forward trajectory's own `breakpoint:N` actions count as set breakpoints).
    pub fn after(prefix: &Trajectory, action: Action) -> Self {
        let set = prefix
            .steps
            .iter()
            .filter_map(|s| match s.action {
                Some(Action::Breakpoint(n)) if prefix.direction == Direction::Forward => Some(n),
                _ => None,
            })
            .collect();
        let from = prefix.steps.last().map(|s| &s.state);
        let mut bounds = Self::new(&prefix.code, from, prefix.direction, action, &set);
        // The module runs once: every later state at depth 0 shows its names so far.
        let module = prefix.steps.iter().rposition(|s| s.state.depth == Some(0));
        if let Some(m) = module.filter(|_| bounds.keeps_names(prefix.direction))
            && let Some(mut kept) = Kept::of(&prefix.steps[m].state, true)
        {
            // Steps that stop at every module event since: the answer, if at the module,
            // is its next event, so only the statement that ran can add names.
            let later: Vec<Action> = prefix.steps[m + 1..]
                .iter()
                .filter_map(|s| s.action)
                .chain([action])
                .collect();
            let next_event = set.is_empty()
                && matches!(later.first(), Some(Action::StepInto | Action::StepOver))
                && later
                    .iter()
                    .all(|a| matches!(a, Action::StepInto | Action::StepOver | Action::StepReturn));
            kept.fresh = bounds.fresh_after(&prefix.steps[m].state, next_event);
            bounds.kept.retain(|k| k.depth != 0);
            bounds.kept.push(kept);
        }
        bounds
    }

    /// The bounds on the state `action` leads to from `from` in a run of `code` with
    /// `breakpoints` set (`direction`: whether the question steps backwards).
    pub fn new(
        code: &str,
        from: Option<&State>,
        direction: Direction,
        action: Action,
        breakpoints: &BTreeSet<u32>,
    ) -> Self {
        let facts = CodeFacts::new(code);
        let shapes = match (from, &facts) {
            (Some(from), Some(facts)) => shapes(direction, from, action, breakpoints, facts),
            _ => vec![Shape::anywhere()],
        };
        let mut bounds = Self {
            facts,
            shapes,
            kept: Vec::new(),
        };
        if let Some(from) = from.filter(|_| bounds.keeps_names(direction)) {
            let generator = from.function.as_deref().zip(from.line).is_none_or(|(f, line)| {
                bounds
                    .facts
                    .as_ref()
                    .is_none_or(|facts| facts.may_be_generator(f, line))
            });
            // The same activation goes on: a step that stays in this frame unless it
            // returns, with no breakpoint that could stop in another activation.
            let same_activation = breakpoints.is_empty()
                && from.event != StopKind::Return
                && match action {
                    Action::StepInto => true,
                    Action::StepOver | Action::StepReturn => !generator,
                    _ => false,
                };
            let module = from.depth == Some(0);
            if (module || same_activation)
                && let Some(mut kept) = Kept::of(from, module)
            {
                let next_event = breakpoints.is_empty() && matches!(action, Action::StepInto | Action::StepOver);
                kept.fresh = bounds.fresh_after(from, next_event);
                bounds.kept.push(kept);
            }
        }
        bounds
    }

    /// Whether names shown before bound the answer: forward, in a program that never
    /// unbinds one.
    fn keeps_names(&self, direction: Direction) -> bool {
        direction == Direction::Forward && self.facts.as_ref().is_some_and(|f| f.names_kept)
    }

    /// The names the frame of `from` can newly show at its next event (`next_event`:
    /// when the answer is that).
    fn fresh_after(&self, from: &State, next_event: bool) -> Option<HashSet<Vec<u8>>> {
        if !next_event || from.event != StopKind::Line {
            return None;
        }
        self.facts.as_ref()?.fresh_names(from.line?)
    }

    fn kept_for(&self, depth: u32, function: &str) -> Option<&Kept> {
        self.kept.iter().find(|k| k.depth == depth && k.function == function)
    }

    /// A scan of a state line from its first byte.
    pub fn scan(&self) -> Scan<'_> {
        Scan {
            bounds: self,
            stage: Stage::Marker,
            word: Vec::new(),
            event: None,
            line: 0,
            depth: 0,
            function: None,
            keys: Vec::new(),
            kept: None,
            next_kept: 0,
        }
    }

    /// Whether a whole state line (with or without its newline) keeps to the bounds.
    pub fn admits(&self, text: &str) -> bool {
        let mut scan = self.scan();
        scan.feed(text.as_bytes()) && scan.finished()
    }

    fn live(&self, event: StopKind) -> impl Iterator<Item = &Shape> {
        self.shapes.iter().filter(move |s| s.events.has(event))
    }

    fn admits_line(&self, event: StopKind, line: u32) -> bool {
        self.facts.as_ref().is_none_or(|f| f.can_stop(event, line))
            && self
                .live(event)
                .any(|s| s.lines.as_ref().is_none_or(|l| l.contains(&line)))
    }

    fn admits_line_prefix(&self, event: StopKind, digits: &[u8]) -> bool {
        let starts = |n: u32| n.to_string().as_bytes().starts_with(digits);
        let live: Vec<&Shape> = self.live(event).collect();
        match &self.facts {
            Some(facts) => facts.code_lines.iter().any(|&n| {
                starts(n)
                    && facts.can_stop(event, n)
                    && live.iter().any(|s| s.lines.as_ref().is_none_or(|l| l.contains(&n)))
            }),
            None => live
                .iter()
                .any(|s| s.lines.as_ref().is_none_or(|l| l.iter().any(|&n| starts(n)))),
        }
    }

    /// The functions a frame at `depth` stopped at `line` with `event` may run.
    fn functions(&self, event: StopKind, line: u32, depth: u32) -> Option<Vec<&str>> {
        let facts = self.facts.as_ref()?;
        let shapes: Vec<&Shape> = self
            .live(event)
            .filter(|s| s.admits_depth(depth) && s.lines.as_ref().is_none_or(|l| l.contains(&line)))
            .collect();
        let mut names: Vec<&str> = facts
            .scopes
            .iter()
            .filter(|s| {
                let runs = if event == StopKind::Call {
                    s.starts_at(line)
                } else {
                    s.holds(line)
                };
                runs && (s.name == MODULE) == (depth == 0)
            })
            .map(|s| s.name.as_str())
            .filter(|name| shapes.iter().any(|s| s.function.as_deref().is_none_or(|f| f == *name)))
            .collect();
        names.dedup();
        Some(names)
    }

    fn admits_depth_prefix(&self, event: StopKind, line: u32, digits: &[u8]) -> bool {
        // Depths beyond Python's default recursion limit never occur.
        (0..=1_000u32).any(|d| {
            d.to_string().as_bytes().starts_with(digits)
                && self.functions(event, line, d).is_none_or(|f| !f.is_empty())
                && self.live(event).any(|s| s.admits_depth(d))
        })
    }

    /// Whether a frame of `function` at `line` can show a variable named `key` (so far)
    /// besides the names it already showed (`shown`).
    fn admits_key(&self, function: &str, line: u32, key: &[u8], taken: &dyn Fn(&[u8]) -> bool, whole: bool) -> bool {
        let Some(facts) = self.facts.as_ref().filter(|f| f.names_known) else {
            return true;
        };
        let mut scopes = facts.scopes_named(function, line).peekable();
        if scopes.peek().is_none() {
            return true;
        }
        scopes.any(|s| {
            !s.bounded_names
                || s.names.iter().any(|n| {
                    let n = n.as_bytes();
                    (if whole { n == key } else { n.starts_with(key) }) && !taken(n)
                })
        })
    }
}

/// The shapes `action` allows from `from`.
fn shapes(
    direction: Direction,
    from: &State,
    action: Action,
    breakpoints: &BTreeSet<u32>,
    facts: &CodeFacts,
) -> Vec<Shape> {
    let (Some(depth), Some(line), Some(function)) = (from.depth, from.line, from.function.as_deref()) else {
        return vec![Shape::anywhere()];
    };
    if direction == Direction::Inverse {
        return match action {
            // The event before: this frame's, its caller's (at a call), or a callee's return.
            Action::ReverseStepInto => vec![
                Shape::depths(0, depth, Events::ANY),
                Shape::depths(depth + 1, depth + 1, Events::RETURN),
            ],
            _ => vec![Shape::anywhere()],
        };
    }
    let mut breakpoints = breakpoints.clone();
    if let Action::Breakpoint(n) = action {
        breakpoints.insert(n);
    }
    let generator = facts.may_be_generator(function, line);
    let returning = from.event == StopKind::Return;
    // The same frame's next event: a line the blocks lead to, or its return or exception.
    let same_frame = || match facts.next_lines(from) {
        Some(lines) => vec![
            Shape {
                lines: Some(lines),
                ..Shape::frame_of(from, depth, Events::LINE)
            },
            Shape::frame_of(from, depth, Events::RETURN.or(Events::EXCEPTION)),
        ],
        None => vec![Shape::frame_of(from, depth, Events::ANY.but(Events::CALL))],
    };
    let mut shapes = match action {
        // A step from a return event goes on in the caller (or a call it makes next).
        Action::StepInto if returning => vec![
            Shape::depths(0, depth, Events::ANY),
            Shape::depths(depth + 1, depth + 1, Events::CALL),
        ],
        // Otherwise the very next event: a call one frame deeper, or this frame's.
        Action::StepInto => {
            let mut shapes = same_frame();
            shapes.push(Shape::depths(depth + 1, depth + 1, Events::CALL));
            shapes
        }
        Action::StepOver | Action::StepReturn if generator => vec![Shape::anywhere()],
        Action::StepOver | Action::StepReturn if returning => vec![Shape::depths(0, depth, Events::ANY)],
        Action::StepOver => same_frame(),
        Action::StepReturn => vec![Shape::frame_of(from, depth, Events::RETURN)],
        Action::Continue | Action::Breakpoint(_) => Vec::new(),
        _ => return vec![Shape::anywhere()],
    };
    if !breakpoints.is_empty() {
        shapes.push(Shape::breakpoint_hit(&breakpoints));
    }
    shapes
}

/// Where a scan is in a state line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Marker,
    Line,
    Depth,
    Function,
    /// ` <|vars|>` up to the opening brace.
    BeforeVars,
    /// Between entries of the variables' object.
    BetweenEntries,
    Key,
    /// `":"` between a key and its value.
    AfterKey,
    Value {
        escaped: bool,
    },
    /// The value and everything after the variables: not bounded.
    Rest,
    Done,
}

/// An incremental check of a state line against [`Bounds`]; clone it to try a piece.
#[derive(Debug, Clone)]
pub struct Scan<'b> {
    bounds: &'b Bounds,
    stage: Stage,
    /// The marker, number, function or key being written.
    word: Vec<u8>,
    event: Option<StopKind>,
    line: u32,
    depth: u32,
    function: Option<String>,
    keys: Vec<Vec<u8>>,
    /// The names this frame must show again, and how many of them are written.
    kept: Option<&'b Kept>,
    next_kept: usize,
}

impl Scan<'_> {
    /// Reads `bytes`; false once the line cannot keep to the bounds.
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| self.byte(b))
    }

    /// Whether the line written so far is a whole state line.
    pub fn finished(&self) -> bool {
        matches!(self.stage, Stage::Done | Stage::Rest)
    }

    fn byte(&mut self, b: u8) -> bool {
        let bounds = self.bounds;
        match self.stage {
            Stage::Marker => {
                self.word.push(b);
                if !self.word.ends_with(b"|>") {
                    return true;
                }
                let marker = std::mem::take(&mut self.word);
                let event = match marker.as_slice() {
                    b"<|call|>" => StopKind::Call,
                    b"<|line|>" => StopKind::Line,
                    b"<|return|>" => StopKind::Return,
                    b"<|exception|>" => StopKind::Exception,
                    m if m == trace_lang::END.as_bytes() => {
                        self.stage = Stage::Done;
                        return true;
                    }
                    _ => return true,
                };
                self.event = Some(event);
                self.stage = Stage::Line;
                bounds.live(event).next().is_some()
            }
            Stage::Line | Stage::Depth | Stage::Function if b != b' ' => {
                self.word.push(b);
                self.word_admitted(false)
            }
            Stage::Line | Stage::Depth | Stage::Function => {
                let admitted = self.word_admitted(true);
                let word = std::mem::take(&mut self.word);
                let text = String::from_utf8_lossy(&word).into_owned();
                self.stage = match self.stage {
                    Stage::Line => {
                        self.line = text.parse().unwrap_or(0);
                        Stage::Depth
                    }
                    Stage::Depth => {
                        self.depth = text.parse().unwrap_or(0);
                        Stage::Function
                    }
                    _ => {
                        self.kept = bounds.kept_for(self.depth, &text);
                        self.function = Some(text);
                        Stage::BeforeVars
                    }
                };
                admitted
            }
            Stage::BeforeVars => {
                if b == b'{' {
                    self.stage = Stage::BetweenEntries;
                }
                true
            }
            Stage::BetweenEntries => match b {
                // Another entry only where some name can still come.
                b'"' | b',' => {
                    if b == b'"' {
                        self.stage = Stage::Key;
                    }
                    self.key_admitted(&[], false)
                }
                b'}' => {
                    self.stage = Stage::Rest;
                    self.kept_all()
                }
                _ => true,
            },
            Stage::Key if b == b'"' => {
                let key = std::mem::take(&mut self.word);
                let admitted = self.key_admitted(&key, true);
                if self
                    .kept
                    .is_some_and(|k| k.names.get(self.next_kept).is_some_and(|due| *due == key))
                {
                    self.next_kept += 1;
                }
                self.keys.push(key);
                self.stage = Stage::AfterKey;
                admitted
            }
            Stage::Key => {
                self.word.push(b);
                b != b'\\' && self.key_admitted(&self.word, false)
            }
            Stage::AfterKey => {
                if b == b'"' {
                    self.stage = Stage::Value { escaped: false };
                }
                true
            }
            Stage::Value { escaped } => {
                self.stage = match (escaped, b) {
                    (false, b'\\') => Stage::Value { escaped: true },
                    (false, b'"') => Stage::BetweenEntries,
                    _ => Stage::Value { escaped: false },
                };
                true
            }
            Stage::Rest | Stage::Done => true,
        }
    }

    /// Whether the line, depth or function written so far (`whole`: and ended) fits.
    fn word_admitted(&self, whole: bool) -> bool {
        let bounds = self.bounds;
        let Some(event) = self.event else { return true };
        let text = String::from_utf8_lossy(&self.word);
        match self.stage {
            Stage::Line if whole => text.parse().is_ok_and(|line| bounds.admits_line(event, line)),
            Stage::Line => bounds.admits_line_prefix(event, &self.word),
            Stage::Depth if whole => text.parse().is_ok_and(|depth| {
                bounds.live(event).any(|s| s.admits_depth(depth))
                    && bounds.functions(event, self.line, depth).is_none_or(|f| !f.is_empty())
            }),
            Stage::Depth => bounds.admits_depth_prefix(event, self.line, &self.word),
            _ => bounds.functions(event, self.line, self.depth).is_none_or(|names| {
                names.iter().any(|name| {
                    if whole {
                        *name == text
                    } else {
                        name.as_bytes().starts_with(&self.word)
                    }
                })
            }),
        }
    }

    fn key_admitted(&self, key: &[u8], whole: bool) -> bool {
        if whole && self.keys.iter().any(|k| k == key) {
            return false;
        }
        // The next name the frame showed before, or (where new names may come now) a new one.
        let (due, kept) = match self.kept {
            Some(kept) => (kept.names.get(self.next_kept), kept.names.as_slice()),
            None => (None, &[][..]),
        };
        if due.is_some_and(|due| if whole { due == key } else { due.starts_with(key) }) {
            return true;
        }
        let new_allowed = self.kept.is_none_or(|k| !k.appended || due.is_none());
        let taken = |name: &[u8]| self.keys.iter().any(|k| k == name) || kept.iter().any(|k| k == name);
        let fresh = self.kept.and_then(|k| k.fresh.as_ref());
        let fresh_admits = fresh.is_none_or(|names| {
            names
                .iter()
                .any(|n| !taken(n) && if whole { n == key } else { n.starts_with(key) })
        });
        new_allowed
            && fresh_admits
            && (!whole || !taken(key))
            && match &self.function {
                Some(function) => self.bounds.admits_key(function, self.line, key, &taken, whole),
                None => true,
            }
    }

    /// Whether every name the frame must show again has been written.
    fn kept_all(&self) -> bool {
        self.kept.is_none_or(|k| self.next_kept >= k.names.len())
    }
}

mod flow;

#[cfg(test)]
mod tests;
