//! What the program's text and the debugger's contract say about the next state before
//! any model is asked, so that decoding never writes a state the debugger could not stop at.
//!
//! From the code (tree-sitter, never a run): the lines that hold code; the scopes a frame
//! can run (the module, each function, lambda, comprehension and class body) and the lines
//! each spans; the names a frame of each scope can show, and in what order. Only the
//! module's frame is at depth 0.
//!
//! From the action and the state it starts at (the rules of [`StateTree::step`]): `step_over`
//! inside a function that is not a generator stays in that frame; `step_return` stops at the
//! frame's own return; `step_into` reaches one frame deeper only through a call event and
//! `reverse_step_into` only through a return event; `continue` and `breakpoint:N` stop at a line of
//! a set breakpoint. A breakpoint set earlier can also stop any forward step, so every step admits
//! those lines too. The end of the program is always admitted (a run can be cut by its limits).
//!
//! [`StateTree::step`]: replayground_shared::StateTree::step

use std::collections::BTreeSet;

use replayground_shared::trace_lang::{self, Direction, Trajectory};
use replayground_shared::{Action, State, StopKind};

mod arguments;
mod arrival;
mod backward;
mod body;
mod builtins;
mod calls;
mod code;
mod computed;
mod constants;
mod decide;
mod effects;
mod evaluate;
mod flow;
mod frame_end;
mod function_reprs;
mod globals;
mod handlers;
mod kept;
mod literal;
mod names;
mod order;
mod program;
mod repr_shape;
mod repr_text;
mod returned;
mod scan;
mod shape;
mod values;
mod varnames;

pub use code::CodeFacts;
use code::{CallNames, MODULE, Scope, ScopeKind, hidden, json_contents, line_of};
use kept::Kept;
pub use scan::Scan;
pub(crate) use scan::unchanged_names;
use shape::{Events, Shape};

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

    /// [`Self::after`] for a caller that may know which breakpoints are set, which an
    /// inverse trajectory does not record (`None`: it does not).
    pub fn after_with_breakpoints(prefix: &'a Trajectory, action: Action, breakpoints: Option<&BTreeSet<u32>>) -> Self {
        Self {
            previous: prefix.steps.last().map(|s| &s.state),
            bounds: Bounds::after_with_breakpoints(prefix, action, breakpoints),
        }
    }

    /// A scan of the answer's line from its first byte, knowing the state it follows.
    pub fn scan(&self) -> Scan<'_> {
        self.bounds.scan().following(self.previous)
    }

    /// Whether a whole state line (with or without its newline) keeps to the bounds.
    pub fn admits(&self, text: &str) -> bool {
        let mut scan = self.scan();
        scan.feed(text.as_bytes()) && scan.finished()
    }

    /// Only the grammar and `previous`: for a caller that knows neither code nor action.
    pub fn unbounded(previous: Option<&'a State>) -> Self {
        Self {
            previous,
            bounds: Bounds::none(),
        }
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
    /// Stepping back onto a callee's return whose value the code and the later state
    /// tell: its depth, and what follows its variables (` <|value|>"REPR"`).
    callee_value: Option<(u32, Vec<u8>)>,
    /// The module runs each top-level statement once, in order: where its frame was last
    /// seen (the statement's index) and whether the answer is later in the run (forward)
    /// or earlier (backward), when every action since says so.
    module_since: Option<(usize, Direction)>,
    /// Stepping back one event from the module's line event at a simple one-line
    /// statement: the statement before it, where the module's answer must be.
    module_back: Option<usize>,
    /// The depth of the frame a forward step starts from ([`arrival`]).
    fresh_below: Option<u32>,
}

/// The breakpoints set at the end of `prefix`: a forward trajectory's own `breakpoint:N`
/// actions (an inverse one does not record which are set), and those the caller knows.
pub fn breakpoints_set(prefix: &Trajectory, known: Option<&BTreeSet<u32>>) -> BTreeSet<u32> {
    let own = prefix.steps.iter().filter_map(|s| match s.action {
        Some(Action::Breakpoint(n)) if prefix.direction == Direction::Forward => Some(n),
        _ => None,
    });
    own.chain(known.into_iter().flatten().copied()).collect()
}

impl Bounds {
    /// No bound at all: what an engine without a code or an action gets.
    pub fn none() -> Self {
        Self {
            facts: None,
            shapes: vec![Shape::anywhere()],
            kept: Vec::new(),
            end_possible: true,
            callee_value: None,
            module_since: None,
            module_back: None,
            fresh_below: None,
        }
    }

    /// The bounds on the state `action` leads to from the last state of `prefix`
    /// (a forward trajectory's own `breakpoint:N` actions count as set breakpoints; an
    /// inverse one does not tell which are set).
    pub fn after(prefix: &Trajectory, action: Action) -> Self {
        Self::after_with_breakpoints(prefix, action, None)
    }

    /// [`Self::after`], with the breakpoints set besides a forward trajectory's own
    /// when the caller knows them (`None`: it does not).
    pub fn after_with_breakpoints(prefix: &Trajectory, action: Action, known: Option<&BTreeSet<u32>>) -> Self {
        let set = breakpoints_set(prefix, known);
        let known = prefix.direction == Direction::Forward || known.is_some();
        let from = prefix.steps.last().map(|s| &s.state);
        // The module runs once: every later state at depth 0 shows its names so far.
        let module = prefix.steps.iter().rposition(|s| s.state.depth == Some(0));
        // The actions since the module's last state: forward ones (no jump) keep it running, reverse ones took it back.
        let later: Vec<Action> = module
            .map(|m| {
                prefix.steps[m + 1..]
                    .iter()
                    .filter_map(|s| s.action)
                    .chain([action])
                    .collect()
            })
            .unwrap_or_default();
        let since = if later.iter().all(|a| moves_forward(*a)) {
            Some(Direction::Forward)
        } else if later.iter().all(|a| a.is_reverse()) {
            Some(Direction::Inverse)
        } else {
            None
        };
        // A forward run since the module's last state: its variables are still bound.
        let earlier_module = module
            .filter(|_| prefix.direction == Direction::Forward && since == Some(Direction::Forward))
            .map(|m| &prefix.steps[m].state);
        let mut bounds = Self::reading_module(
            &prefix.code,
            from,
            prefix.direction,
            action,
            known.then_some(&set),
            earlier_module,
        );
        if let (Some(m), Some(facts)) = (module, &bounds.facts) {
            let at = prefix.steps[m].state.line.and_then(|line| facts.top_level_at(line));
            bounds.module_since = at.zip(since);
        }
        let one_back = matches!(action, Action::ReverseStepInto | Action::ReverseStepOver);
        if let (Some(from), Some(facts), true) =
            (from, &bounds.facts, one_back && prefix.direction == Direction::Inverse)
            && from.depth == Some(0)
            && from.event == StopKind::Line
        {
            bounds.module_back = facts.top_level.ran_last_before(from);
        }
        if let Some(m) = module.filter(|_| bounds.keeps_names(prefix.direction) && since == Some(Direction::Forward))
            && let Some(mut kept) =
                (bounds.facts.as_ref()).and_then(|f| Kept::of(&prefix.steps[m].state, f.unbound.at_depth(0)))
        {
            // Steps that stop at every module event since: the answer, if at the module,
            // is its next event, so only the statement that ran can add names.
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
        bounds.after_callee_returned(prefix, action);
        bounds
    }

    /// The bounds on the state `action` leads to from `from` in a run of `code` with
    /// `breakpoints` set (`None`: not known, as stepping back through a trajectory that
    /// does not record them; `direction`: whether the question steps backwards).
    pub fn new(
        code: &str,
        from: Option<&State>,
        direction: Direction,
        action: Action,
        breakpoints: Option<&BTreeSet<u32>>,
    ) -> Self {
        Self::reading_module(code, from, direction, action, breakpoints, None)
    }

    /// [`Self::new`], where `module` is a state of the module's frame earlier in the same
    /// run than `from`: the variables it shows that no frame can see changed since are
    /// read as shown there ([`globals`]).
    fn reading_module(
        code: &str,
        from: Option<&State>,
        direction: Direction,
        action: Action,
        breakpoints: Option<&BTreeSet<u32>>,
        module: Option<&State>,
    ) -> Self {
        let mut facts = CodeFacts::new(code);
        if let Some(facts) = facts.as_mut() {
            facts.read_module(module, from.filter(|_| direction == Direction::Forward));
        }
        // Forward, every caller knows them (a trajectory records its own).
        let no_breakpoints = breakpoints.is_none_or(BTreeSet::is_empty);
        let shapes = match (from, &facts) {
            (Some(from), Some(facts)) => shapes(direction, from, action, breakpoints, facts),
            _ => vec![Shape::anywhere()],
        };
        let mut bounds = Self {
            facts,
            shapes,
            kept: Vec::new(),
            module_since: None,
            module_back: None,
            callee_value: None,
            fresh_below: from
                .filter(|f| direction == Direction::Forward && moves_forward(action) && f.event != StopKind::End)
                .and_then(|f| f.depth),
            // The end comes last: no step back, and no earlier state of an inverse trajectory.
            end_possible: direction == Direction::Forward && !action.is_reverse(),
        };
        if let Some(from) = from.filter(|_| bounds.keeps_names(direction) && moves_forward(action)) {
            let generator = from.function.as_deref().zip(from.line).is_none_or(|(f, line)| {
                bounds
                    .facts
                    .as_ref()
                    .is_none_or(|facts| facts.may_be_generator(f, line))
            });
            // The same activation goes on: a step into (the very next event, whatever the
            // breakpoints), or one that stays in this frame unless it returns, with no
            // breakpoint that could stop in another activation.
            let same_activation = from.event != StopKind::Return
                && match action {
                    Action::StepInto => true,
                    Action::StepOver | Action::StepReturn => no_breakpoints && !generator,
                    _ => false,
                };
            let module = from.depth == Some(0);
            if (module || same_activation)
                && let Some(mut kept) = bounds
                    .facts
                    .as_ref()
                    .and_then(|f| Kept::of(from, f.unbound.at_depth(from.depth?)))
            {
                let next_event = action == Action::StepInto || (no_breakpoints && action == Action::StepOver);
                bounds.after_statement(&mut kept, from, Some(from), action, next_event);
                bounds.kept.push(kept);
            }
        }
        // A step into a call of a plain function, a plain class or a method of one: its
        // call event shows the arguments.
        if let (Some(from), Some(facts)) = (from, &bounds.facts)
            && direction == Direction::Forward
            && action == Action::StepInto
            && let (Some(depth), Some(entered)) = (
                from.depth,
                facts.call_bindings(from).or_else(|| facts.method_call(from)),
            )
        {
            let values = entered
                .bound
                .into_iter()
                .map(|(name, repr)| (name.into_bytes(), json_contents(&repr)))
                .collect();
            bounds
                .kept
                .push(Kept::called(depth + 1, entered.function, entered.names, values));
        }
        // The frame's next event after a line `return VALUE` whose value the state tells is
        // its return with that value (or a `finally` line first).
        if let (Some(from), Some(facts)) = (from, &bounds.facts)
            && direction == Direction::Forward
            && matches!(action, Action::StepInto | Action::StepOver)
            && let (Some(depth), Some(repr)) = (from.depth, facts.returned(from))
        {
            let mut tail = b" <|value|>\"".to_vec();
            tail.extend(json_contents(&repr));
            tail.push(b'"');
            bounds.callee_value = Some((depth, tail));
        }
        if let Some(from) = from.filter(|f| {
            direction == Direction::Inverse && action == Action::ReverseStepInto && f.event == StopKind::Return
        }) {
            bounds.before_return(from);
            bounds.callee_returned(from);
        }
        if let Some(from) = from.filter(|f| {
            direction == Direction::Inverse
                && action == Action::ReverseStepInto
                && matches!(f.event, StopKind::Line | StopKind::Exception)
        }) {
            bounds.before_line(from);
        }
        bounds
    }

    /// Whether names shown before bound the answer: forward, in a program that never
    /// unbinds one.
    fn keeps_names(&self, direction: Direction) -> bool {
        direction == Direction::Forward && self.facts.as_ref().is_some_and(|f| f.names_kept)
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
                .filter(|(name, _)| k.fixed(state.event, state.line.unwrap_or(0), name.as_bytes()).is_some())
                .count()
        })
    }

    fn kept_for(&self, depth: u32, function: &str) -> Option<&Kept> {
        self.kept.iter().find(|k| k.depth == depth && k.function == function)
    }

    /// A scan of a state line from its first byte.
    pub fn scan(&self) -> Scan<'_> {
        Scan::new(self)
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
                    let runs = self.scope_stops(facts, scope, event, line);
                    let depth_fits = if scope.name == MODULE {
                        shape.admits_depth(0)
                    } else {
                        let min = shape.min_depth.max(1);
                        shape.max_depth.is_none_or(|max| max >= min) && scope.runs_at_depth(min, shape.max_depth)
                    };
                    runs && depth_fits && shape.admits_scope(scope)
                })
            })
    }

    /// Whether a frame of `scope` can stop with `event` at `line`: where it starts (a
    /// call) or runs, and for the module not at a top-level statement it has left behind
    /// (or, stepping back, not yet reached).
    fn scope_stops(&self, facts: &CodeFacts, scope: &Scope, event: StopKind, line: u32) -> bool {
        if event == StopKind::Call {
            return scope.starts_at(line);
        }
        let in_order = || match (self.module_since, facts.top_level_at(line)) {
            (Some((since, Direction::Forward)), Some(at)) => at >= since,
            (Some((since, Direction::Inverse)), Some(at)) => at <= since && self.module_back.is_none_or(|b| at == b),
            _ => true,
        };
        let module_returns = || event != StopKind::Return || facts.module_may_return_at(line);
        facts.runs(scope, line) && (scope.name != MODULE || (in_order() && module_returns()))
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
            .filter(|s| self.scope_stops(facts, s, event, line) && (s.name == MODULE) == (depth == 0))
            .filter(|s| s.runs_at_depth(depth, Some(depth)))
            .filter(|scope| shapes.iter().any(|s| s.admits_scope(scope)))
            .map(|s| s.name.as_str())
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
    /// named `key` (so far) after the names this state wrote (`written`, in order) and
    /// besides those it must or already did show (`taken`).
    #[allow(clippy::too_many_arguments)] // where the frame stopped, and what the state wrote so far
    fn admits_key(
        &self,
        event: StopKind,
        function: &str,
        line: u32,
        key: &[u8],
        written: &[Vec<u8>],
        taken: &dyn Fn(&[u8]) -> bool,
        whole: bool,
    ) -> bool {
        let Some(facts) = self.facts.as_ref().filter(|f| f.names_known) else {
            return true;
        };
        let fits = |n: &str| {
            let bytes = n.as_bytes();
            !hidden(n)
                && (if whole { bytes == key } else { bytes.starts_with(key) })
                && !taken(bytes)
                && facts.in_order(function, event, line, n, written)
                && (event != StopKind::Line || facts.handler_may_show(function, line, n))
        };
        if event == StopKind::Call
            && let Some(call) = self.call_names(function, line)
        {
            return call.parameters.iter().chain(&call.free).any(|n| fits(n));
        }
        // The module has run its top-level statements up to the one holding `line`.
        let bound_by_then = |n: &str| facts.bound_by_then(function, event, line, n);
        let mut scopes = facts.scopes_named(function, line).peekable();
        if scopes.peek().is_none() {
            return true;
        }
        let shown = |s: &Scope, n: &str| fits(n) && bound_by_then(n) && s.arrived(self.fresh_below, event, line, n);
        scopes.any(|s| !s.bounded_names || s.names.iter().any(|n| shown(s, n)))
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

/// Whether `action` runs the program forward from where it is (a jump may go anywhere).
fn moves_forward(action: Action) -> bool {
    !action.is_reverse() && !matches!(action, Action::Jump(_))
}

/// Whether a frame of `function` runs the whole statement its line event stops at: not
/// a lambda's or a comprehension's frame, which runs part of a line after its event.
fn runs_the_statement(function: &str) -> bool {
    function == MODULE || !function.starts_with('<')
}

/// The shapes `action` allows from `from`.
fn shapes(
    direction: Direction,
    from: &State,
    action: Action,
    breakpoints: Option<&BTreeSet<u32>>,
    facts: &CodeFacts,
) -> Vec<Shape> {
    // A run's last event is its module's return (after an exception that ends it, too),
    // and every reverse step but `reverse_continue` goes back one event from the end.
    let one_back = matches!(
        action,
        Action::ReverseStepInto | Action::ReverseStepOver | Action::ReverseStepReturn
    );
    // The run's event n: 0 is the module's call and 1 its first line; every frame below
    // took a call event of its own after that, so it is at most n - 1 deep. While the
    // module's first statements can neither call nor raise, each is one line event.
    if let Action::Jump(n) = action {
        if let Some(lines) = facts.straight_event(n) {
            return vec![Shape {
                function: Some(MODULE.to_owned()),
                lines: Some(lines),
                ..Shape::depths(0, 0, Events::LINE)
            }];
        }
        if n == 0 {
            return vec![Shape::depths(0, 0, Events::ANY)];
        }
        // The module at a statement its earlier ones leave time to reach, or a frame below.
        return vec![
            Shape {
                function: Some(MODULE.to_owned()),
                lines: Some(facts.top_level.reached_by_event(n)),
                ..Shape::depths(0, 0, Events::ANY)
            },
            Shape::depths(1, n - 1, Events::ANY),
        ];
    }
    if direction == Direction::Inverse && one_back && from.event == StopKind::End {
        return vec![facts.module_return(None)];
    }
    let (Some(depth), Some(line), Some(function)) = (from.depth, from.line, from.function.as_deref()) else {
        return vec![Shape::anywhere()];
    };
    if direction == Direction::Inverse {
        return backward::shapes(from, action, breakpoints, facts, (depth, line, function));
    }
    // The module's return is a run's last event: any step on from it ends the run.
    if depth == 0 && from.event == StopKind::Return && !matches!(action, Action::Jump(_)) {
        return Vec::new();
    }
    let mut breakpoints = breakpoints.cloned().unwrap_or_default();
    if let Action::Breakpoint(n) = action {
        breakpoints.insert(n);
    }
    let generator = facts.may_be_generator(function, line);
    let returning = from.event == StopKind::Return;
    // The same frame's next event: a line the blocks lead to, or its return or exception
    // (within the statement it stopped in).
    let ends_at = facts.statement_run(from);
    let same_frame_any = || match facts.flow_lines(from) {
        Some(lines) => vec![
            Shape {
                lines: Some(lines),
                ..Shape::frame_of(from, depth, Events::LINE)
            },
            Shape {
                lines: ends_at.clone(),
                ..Shape::frame_of(from, depth, Events::RETURN.or(Events::EXCEPTION))
            },
        ],
        None => vec![Shape::frame_of(from, depth, Events::ANY.but(Events::CALL))],
    };
    // A condition the state decides over plain values cannot raise: one branch.
    let same_frame = || match facts.decided_lines(from) {
        Some(lines) => vec![Shape {
            lines: Some(lines),
            ..Shape::frame_of(from, depth, Events::LINE)
        }],
        None => same_frame_any(),
    };
    let mut shapes = match action {
        // A step from a return event goes on in the caller (or a call it makes next).
        Action::StepInto if returning => vec![
            Shape::depths(0, depth, Events::ANY),
            Shape::depths(depth + 1, depth + 1, Events::CALL),
        ],
        // Otherwise the very next event: a call one frame deeper (when the statement
        // can make one), or this frame's. A statement that surely calls the program's
        // code reaches that call first, unless it raises before.
        Action::StepInto => {
            let surely_calls =
                from.event == StopKind::Line && runs_the_statement(function) && facts.surely_calls(function, line);
            let mut shapes = if surely_calls {
                vec![Shape {
                    lines: facts.statement_lines(line),
                    ..Shape::frame_of(from, depth, Events::EXCEPTION)
                }]
            } else {
                same_frame()
            };
            let method = (!surely_calls).then(|| facts.method_call(from)).flatten();
            if method.is_some() {
                // The arguments run nothing of the program's: the method's call, unless
                // one raises.
                shapes = vec![Shape {
                    lines: facts.statement_lines(line),
                    ..Shape::frame_of(from, depth, Events::EXCEPTION)
                }];
            }
            let first = match method {
                Some(entered) => Some((entered.function, entered.first)),
                None => surely_calls.then(|| facts.first_frame(function, line)).flatten(),
            };
            if from.event != StopKind::Line {
                shapes.push(Shape::depths(depth + 1, depth + 1, Events::CALL));
            } else if let Some((callee, at)) = first {
                shapes.push(Shape {
                    function: Some(callee),
                    lines: Some(BTreeSet::from([at])),
                    ..Shape::callee(depth, Events::CALL, facts.statement_lines(line))
                });
            } else if surely_calls || facts.may_call(function, line) {
                shapes.push(Shape::callee(depth, Events::CALL, facts.statement_lines(line)));
            }
            shapes
        }
        Action::StepOver | Action::StepReturn if generator => vec![Shape::anywhere()],
        Action::StepOver | Action::StepReturn if returning => vec![Shape::depths(0, depth, Events::ANY)],
        Action::StepOver => same_frame(),
        Action::StepReturn if depth == 0 => vec![facts.module_return(Some(line))],
        Action::StepReturn => vec![Shape::frame_of(from, depth, Events::RETURN)],
        Action::Continue | Action::Breakpoint(_) => Vec::new(),
        _ => return vec![Shape::anywhere()],
    };
    // A step into stops at the very next event whatever the breakpoints (as a step over
    // does from a return event); a step over a statement that runs none of the
    // program's code stops at its frame's next event before any line elsewhere.
    let breakpoints_matter = match action {
        Action::StepInto => false,
        Action::StepOver => {
            let runs_nothing = from.event == StopKind::Line && facts.calls_nothing(function, line);
            !(returning || runs_nothing)
        }
        _ => true,
    };
    if breakpoints_matter && !breakpoints.is_empty() {
        shapes.push(Shape::breakpoint_hit(&breakpoints));
    }
    shapes
}

#[cfg(test)]
mod call_tests;
#[cfg(test)]
mod computed_tests;
#[cfg(test)]
mod frame_end_tests;
#[cfg(test)]
mod frame_tests;
#[cfg(test)]
mod globals_tests;
#[cfg(test)]
mod module_tests;
#[cfg(test)]
mod names_tests;
#[cfg(test)]
mod step_tests;
#[cfg(test)]
mod tests;
