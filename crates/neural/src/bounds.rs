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

use std::collections::{BTreeSet, HashMap, HashSet};

use replayground_shared::trace_lang::{self, Direction, Trajectory};
use replayground_shared::{Action, State, StopKind};

mod code;
mod effects;
mod flow;
mod literal;
mod scan;

pub use code::CodeFacts;
use code::{CallNames, MODULE, hidden, line_of};
pub use scan::Scan;
use scan::Stage;

/// What an answer is decoded against: the state it follows (which resolves `..`) and
/// what the code and the action allow ([`Bounds`]).
#[derive(Debug, Clone)]
pub struct Guide<'a> {
    pub previous: Option<&'a State>,
    pub bounds: Bounds,
}

impl<'a> Guide<'a> {
    /// The guide for the state `action` leads to from the end of `prefix`.
    pub fn after(prefix: &'a Trajectory, action: Action) -> Self {
        Self {
            previous: prefix.steps.last().map(|s| &s.state),
            bounds: Bounds::after(prefix, action),
        }
    }

    /// Only the grammar and `previous`: for a caller that knows neither code nor action.
    pub fn unbounded(previous: Option<&'a State>) -> Self {
        Self {
            previous,
            bounds: Bounds::none(),
        }
    }
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
    /// Whether the answer may be the end (not when stepping back from it).
    end_possible: bool,
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
    /// Values the statement that ran fixes, as the JSON string's contents: `..` for a
    /// name it cannot change, the repr its text gives a name it binds (a literal, a
    /// `def`, a plain `class`).
    values: HashMap<Vec<u8>, Vec<u8>>,
    /// Names the statement that ran binds whenever it completes, and the lines it spans:
    /// a line event past them, or the frame's return, shows them all.
    required: Vec<Vec<u8>>,
    statement_lines: BTreeSet<u32>,
    /// At the module: the last line of each top-level statement from the one it stopped
    /// in on, with the names it always binds; a module event past that line shows them.
    completed: Vec<(u32, Vec<Vec<u8>>)>,
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
            values: HashMap::new(),
            required: Vec::new(),
            statement_lines: BTreeSet::new(),
            completed: Vec::new(),
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
            end_possible: true,
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
            // `..` is written against the state just before the answer: the module's
            // only when nothing ran in between.
            let previous = (m + 1 == prefix.steps.len()).then_some(&prefix.steps[m].state);
            let module_state = &prefix.steps[m].state;
            bounds.after_statement(&mut kept, module_state, previous, action, next_event);
            if let (Some(facts), Some(line), StopKind::Line) = (&bounds.facts, module_state.line, module_state.event) {
                kept.completed = facts.completed_bindings(line);
            }
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
            end_possible: !(direction == Direction::Inverse && from.is_some_and(|f| f.event == StopKind::End)),
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
                bounds.after_statement(&mut kept, from, Some(from), action, next_event);
                bounds.kept.push(kept);
            }
        }
        if let Some(from) = from.filter(|f| {
            direction == Direction::Inverse && action == Action::ReverseStepInto && f.event == StopKind::Return
        }) {
            bounds.before_return(from);
        }
        bounds
    }

    /// Whether names shown before bound the answer: forward, in a program that never
    /// unbinds one.
    fn keeps_names(&self, direction: Direction) -> bool {
        direction == Direction::Forward && self.facts.as_ref().is_some_and(|f| f.names_kept)
    }

    /// At the frame's next event after the line event `from` (`next_event`: when the
    /// answer is that), fills in `kept`: the names it can newly show and those it must,
    /// and the values the statement that ran fixes. `previous`: the state just before the
    /// answer, when it is `from` (`..` refers to it); otherwise reprs are written out.
    fn after_statement(
        &self,
        kept: &mut Kept,
        from: &State,
        previous: Option<&State>,
        action: Action,
        next_event: bool,
    ) {
        let facts = self.facts.as_ref();
        let effects = facts
            .zip(from.line.zip(from.function.as_deref()))
            .filter(|_| next_event && from.event == StopKind::Line)
            .and_then(|(facts, (line, function))| facts.effects(function, line));
        // Between a call event and its frame's next event nothing runs in the frame (a
        // generator's resumed `yield` may bind, though).
        if let Some(facts) = facts
            && next_event
            && from.event == StopKind::Call
            && let (Some(line), Some(function)) = (from.line, from.function.as_deref())
            && !facts.may_be_generator(function, line)
        {
            kept.fresh = Some(HashSet::new());
            if previous.is_some() {
                for (name, _) in trace_lang::shown_vars(from) {
                    kept.values
                        .insert(name.as_bytes().to_vec(), json_contents(trace_lang::UNCHANGED));
                }
            }
            return;
        }
        let (Some(facts), Some(effects)) = (facts, effects) else {
            return;
        };
        let shown = trace_lang::shown_vars(from);
        for binding in &effects.bindings {
            let name = binding.name.as_bytes().to_vec();
            // A name `global` or `nonlocal` sends to another frame is not this one's.
            if binding.certain
                && !hidden(&binding.name)
                && !facts.declared.contains(&binding.name)
                && !kept.required.contains(&name)
            {
                kept.required.push(name.clone());
            }
            let Some(repr) = binding.repr.as_deref().map(trace_lang::normalize_repr) else {
                continue;
            };
            let before = code::shown_repr(shown, &binding.name);
            // Bound twice, or written over several lines (a line event may come before
            // the name is rebound): left to the model.
            if effects.times_bound(&binding.name) > 1 || (binding.multiline && before.is_some()) {
                continue;
            }
            let value = match previous {
                Some(_) if before.as_deref() == Some(repr.as_str()) => trace_lang::UNCHANGED.to_owned(),
                _ => repr,
            };
            kept.values.insert(name, json_contents(&value));
        }
        // Nothing else changes: no code the step would stop in ran, and a step over hid
        // none either.
        let hidden = action != Action::StepInto && effects.operates && facts.program.hidden_code;
        if previous.is_some() && !hidden {
            for name in facts.untouched(&effects, shown) {
                kept.values
                    .insert(name.as_bytes().to_vec(), json_contents(trace_lang::UNCHANGED));
            }
        }
        kept.fresh = Some(facts.fresh_names(&effects));
        kept.statement_lines = effects.lines;
    }

    /// Stepping back from the return event `from`: the event before it in the same frame
    /// (the line that returned, or its exception) shows no name `from` does not, and
    /// every name the statement there cannot change is `..`. Nothing between the two
    /// events ran code the tracer sees, or that would be the event before.
    fn before_return(&mut self, from: &State) {
        let Some(facts) = self.facts.as_ref().filter(|f| f.names_kept) else {
            return;
        };
        let (Some(line), Some(function)) = (from.line, from.function.as_deref()) else {
            return;
        };
        let effects = facts
            .effects(function, line)
            .filter(|_| !facts.may_be_generator(function, line));
        let (Some(effects), Some(mut kept)) = (effects, Kept::of(from, false)) else {
            return;
        };
        kept.fresh = Some(kept.names.drain(..).collect());
        for name in facts.untouched(&effects, trace_lang::shown_vars(from)) {
            kept.values
                .insert(name.as_bytes().to_vec(), json_contents(trace_lang::UNCHANGED));
        }
        self.kept.push(kept);
    }

    /// How many variables of `state`'s frame these bounds fix the value of (before the
    /// model writes anything): what a checker reports.
    pub fn fixed_values(&self, state: &State) -> usize {
        let (Some(depth), Some(function)) = (state.depth, state.function.as_deref()) else {
            return 0;
        };
        self.kept_for(depth, function).map_or(0, |k| {
            trace_lang::shown_vars(state)
                .iter()
                .filter(|(name, _)| k.values.contains_key(name.as_bytes()))
                .count()
        })
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
            value: None,
            value_at: 0,
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
        match &self.facts {
            Some(facts) => facts.can_stop(event, line) && self.fits(facts, event, line),
            None => self
                .live(event)
                .any(|s| s.lines.as_ref().is_none_or(|l| l.contains(&line))),
        }
    }

    /// Whether some shape and some scope that can run `line` agree on a frame for it:
    /// the shape's function, and a depth the shape allows (0 for the module, more for
    /// any other scope). A line none agrees on would leave the depth nothing to write.
    fn fits(&self, facts: &CodeFacts, event: StopKind, line: u32) -> bool {
        self.live(event)
            .filter(|s| s.lines.as_ref().is_none_or(|l| l.contains(&line)))
            .any(|shape| {
                facts.scopes.iter().any(|scope| {
                    let runs = if event == StopKind::Call {
                        scope.starts_at(line)
                    } else {
                        facts.runs(scope, line)
                    };
                    let depth_fits = if scope.name == MODULE {
                        shape.admits_depth(0)
                    } else {
                        shape.max_depth.is_none_or(|max| max >= shape.min_depth.max(1))
                    };
                    runs && depth_fits && shape.function.as_deref().is_none_or(|f| f == scope.name)
                })
            })
    }

    fn admits_line_prefix(&self, event: StopKind, digits: &[u8]) -> bool {
        let starts = |n: u32| n.to_string().as_bytes().starts_with(digits);
        match &self.facts {
            Some(facts) => facts
                .code_lines
                .iter()
                .any(|&n| starts(n) && facts.can_stop(event, n) && self.fits(facts, event, n)),
            None => self
                .live(event)
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
                    facts.runs(s, line)
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

    /// Whether a frame of `function` stopped with `event` at `line` can show a variable
    /// named `key` (so far) besides the names it already showed (`shown`).
    fn admits_key(
        &self,
        event: StopKind,
        function: &str,
        line: u32,
        key: &[u8],
        taken: &dyn Fn(&[u8]) -> bool,
        whole: bool,
    ) -> bool {
        let Some(facts) = self.facts.as_ref().filter(|f| f.names_known) else {
            return true;
        };
        let fits = |n: &str| {
            let n = n.as_bytes();
            (if whole { n == key } else { n.starts_with(key) }) && !taken(n)
        };
        if event == StopKind::Call
            && let Some(call) = self.call_names(function, line)
        {
            return call.parameters.iter().chain(&call.free).any(|n| fits(n));
        }
        let mut scopes = facts.scopes_named(function, line).peekable();
        if scopes.peek().is_none() {
            return true;
        }
        scopes.any(|s| !s.bounded_names || s.names.iter().any(|n| fits(n)))
    }

    /// The names a frame of `function` shows at a call event at `line`, when the text
    /// tells (one scope starts there, and it is not a generator).
    fn call_names<'s>(&'s self, function: &'s str, line: u32) -> Option<&'s CallNames> {
        let facts = self.facts.as_ref().filter(|f| f.names_known)?;
        let mut starting = facts.scopes_named(function, line).filter(|s| s.starts_at(line));
        let scope = starting.next()?;
        starting.next().is_none().then_some(())?;
        scope.call.as_ref()
    }
}

/// A value as the trace language writes it inside a JSON string.
fn json_contents(value: &str) -> Vec<u8> {
    let quoted = serde_json::to_string(value).expect("a string always serialises");
    quoted[1..quoted.len() - 1].replace("<|", "\\u003c|").into_bytes()
}

/// The shapes `action` allows from `from`.
fn shapes(
    direction: Direction,
    from: &State,
    action: Action,
    breakpoints: &BTreeSet<u32>,
    facts: &CodeFacts,
) -> Vec<Shape> {
    // A run's last event is its module's return (after an exception that ends it, too).
    if direction == Direction::Inverse && action == Action::ReverseStepInto && from.event == StopKind::End {
        return vec![Shape {
            function: Some(MODULE.to_owned()),
            ..Shape::depths(0, 0, Events::RETURN)
        }];
    }
    let (Some(depth), Some(line), Some(function)) = (from.depth, from.line, from.function.as_deref()) else {
        return vec![Shape::anywhere()];
    };
    if direction == Direction::Inverse {
        let generator = facts.may_be_generator(function, line);
        return match action {
            // Before a return: the statement that returned (its line, or its exception;
            // a generator may return right after it resumed), or a callee's return.
            Action::ReverseStepInto if from.event == StopKind::Return => {
                let mut shapes = vec![Shape {
                    lines: facts.statement_lines(line),
                    ..Shape::frame_of(
                        from,
                        depth,
                        Events::LINE
                            .or(Events::EXCEPTION)
                            .or(if generator { Events::CALL } else { Events::LINE }),
                    )
                }];
                if facts.may_call(function, line) {
                    shapes.push(Shape::depths(depth + 1, depth + 1, Events::RETURN));
                }
                shapes
            }
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
        // Otherwise the very next event: a call one frame deeper (when the statement
        // can make one), or this frame's.
        Action::StepInto => {
            let mut shapes = same_frame();
            if from.event != StopKind::Line || facts.may_call(function, line) {
                shapes.push(Shape::depths(depth + 1, depth + 1, Events::CALL));
            }
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

#[cfg(test)]
mod tests;
