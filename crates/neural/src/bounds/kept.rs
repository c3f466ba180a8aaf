//! What a frame showed before says about its next state: the names it must show again,
//! the names it may newly show, and the values the code that ran in between fixes.

use std::collections::{BTreeSet, HashMap, HashSet};

use replayground_shared::trace_lang;
use replayground_shared::{Action, State, StopKind};

use super::computed::Turn;
use super::names::Unbound;
use super::{Bounds, Events, Shape, calls, code, flow, hidden, json_contents};

/// Names a frame showed before and must show again, in the same order.
#[derive(Debug, Clone)]
pub(super) struct Kept {
    pub(super) depth: u32,
    pub(super) function: String,
    pub(super) names: Vec<Vec<u8>>,
    /// New names come only after all of these: the module's globals are a dict, which
    /// keeps insertion order, and so is a function's `f_locals`, which the tracer's every
    /// event brings up to date (a name bound since is added at its end).
    pub(super) appended: bool,
    /// When the answer is the frame's next event: the order in which names new since
    /// `names` come (each one's place, where the code tells: [`super::varnames`]).
    pub(super) fresh_order: Vec<Vec<u8>>,
    /// Stepping back in the same frame: the names the frame shows are a prefix of these
    /// (it unbinds none, and a namespace only ever adds names at its end).
    pub(super) prefix: bool,
    /// When the answer is the frame's next event after a line event: the only names it
    /// can show besides these.
    pub(super) fresh: Option<HashSet<Vec<u8>>>,
    /// Values the statement that ran fixes, as the JSON string's contents: `..` for a
    /// name it cannot change, the repr its text gives a name it binds (a literal, a
    /// `def`, a plain `class`).
    pub(super) values: HashMap<Vec<u8>, Vec<u8>>,
    /// Names the statement that ran binds whenever it completes, and the lines it spans:
    /// a line event past them, or the frame's return, shows them all.
    pub(super) required: Vec<Vec<u8>>,
    pub(super) statement_lines: BTreeSet<u32>,
    /// At the module: the last line of each top-level statement from the one it stopped
    /// in on, with the names it always binds; a module event past that line shows them.
    pub(super) completed: Vec<(u32, Vec<Vec<u8>>)>,
    /// Stepping back: the names that are `..` at a line or exception event on each line
    /// (those the statement there cannot change), and whether a call event shows every
    /// name `..` (nothing ran between a call and its frame's first line).
    pub(super) unchanged_at: HashMap<u32, HashSet<Vec<u8>>>,
    pub(super) call_unchanged: bool,
    /// Names the frame may show or not, wherever names may come: those the program can
    /// unbind in a function's frame (`del`, `except ... as`).
    pub(super) optional: HashSet<Vec<u8>>,
}

impl Kept {
    /// The value (the JSON string's contents) the bounds fix for `name` at an `event` at
    /// `line` of this frame, if any.
    pub(super) fn fixed(&self, event: StopKind, line: u32, name: &[u8]) -> Option<&[u8]> {
        let unchanged = match event {
            StopKind::Call => self.call_unchanged,
            StopKind::Line | StopKind::Exception => {
                self.unchanged_at.get(&line).is_some_and(|names| names.contains(name))
            }
            _ => false,
        };
        if unchanged {
            Some(trace_lang::UNCHANGED.as_bytes())
        } else {
            self.values.get(name).map(Vec::as_slice)
        }
    }

    /// What `state` says its frame's next state shows, in a program that may unbind the
    /// names `unbound` in that frame (they are `optional`, not kept). New names come last
    /// (`appended`) unless it shows one of them now: a name it keeps may then come after
    /// one it lost.
    pub(super) fn of(state: &State, unbound: &HashSet<String>) -> Option<Self> {
        let vars = if state.depth == Some(0) {
            &state.globals
        } else {
            &state.locals
        };
        let (optional, names): (Vec<&str>, Vec<&str>) = vars
            .as_ref()?
            .0
            .iter()
            .map(|(n, _)| n.as_str())
            .partition(|n| unbound.contains(*n));
        Some(Self {
            appended: optional.is_empty(),
            prefix: false,
            fresh_order: Vec::new(),
            depth: state.depth?,
            function: state.function.clone()?,
            names: names.into_iter().map(|n| n.as_bytes().to_vec()).collect(),
            optional: optional.into_iter().map(|n| n.as_bytes().to_vec()).collect(),
            fresh: None,
            values: HashMap::new(),
            required: Vec::new(),
            statement_lines: BTreeSet::new(),
            completed: Vec::new(),
            unchanged_at: HashMap::new(),
            call_unchanged: false,
        })
    }

    /// A frame the answer may start (a callee's call event): it shows `names` (every
    /// parameter, in order) and nothing else, unless `names` is empty (the text does not
    /// tell them); `values` are those the call fixes.
    pub(super) fn called(depth: u32, function: String, names: Vec<String>, values: HashMap<Vec<u8>, Vec<u8>>) -> Self {
        Self {
            depth,
            function,
            fresh: (!names.is_empty()).then(HashSet::new),
            names: names.into_iter().map(String::into_bytes).collect(),
            appended: false,
            prefix: false,
            fresh_order: Vec::new(),
            values,
            required: Vec::new(),
            statement_lines: BTreeSet::new(),
            completed: Vec::new(),
            unchanged_at: HashMap::new(),
            call_unchanged: false,
            optional: HashSet::new(),
        }
    }

    /// Stepping back from `from`: the frame's event before it shows no name `from` does
    /// not. Where the program unbinds no name in such a frame, it shows a prefix of them
    /// (names are only ever added at the namespace's end); otherwise any of them, in any
    /// order, and any name the program unbinds.
    fn before(from: &State, unbound: &Unbound) -> Option<Self> {
        let unbound = unbound.at_depth(from.depth?);
        let mut kept = Self::of(from, unbound)?;
        if unbound.is_empty() {
            kept.prefix = true;
            kept.fresh = Some(HashSet::new());
        } else {
            kept.fresh = Some(kept.names.drain(..).collect());
            kept.optional = unbound.iter().map(|n| n.as_bytes().to_vec()).collect();
        }
        Some(kept)
    }
}

impl Bounds {
    /// At the frame's next event after the line event `from` (`next_event`: when the
    /// answer is that), fills in `kept`: the names it can newly show and those it must,
    /// and the values the statement that ran fixes. `previous`: the state just before the
    /// answer, when it is `from` (`..` refers to it); otherwise reprs are written out.
    pub(super) fn after_statement(
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
        // What the state's values give the names the statement binds: a loop's next item,
        // a one-line assignment's value.
        let mut computed = facts.computed(from);
        if let Some(Turn::Next(bound)) = facts.loop_turn(from) {
            for (name, _) in &bound {
                let name = name.as_bytes().to_vec();
                if !kept.required.contains(&name) {
                    kept.required.push(name);
                }
            }
            computed.extend(bound);
        }
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
            let repr = binding
                .repr
                .as_deref()
                .or(computed.get(&binding.name).map(String::as_str));
            let Some(repr) = repr.map(trace_lang::normalize_repr) else {
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
        // Nothing else changes where no code the step would stop in ran and a step over
        // hid none either; a number, a string, a bool or `None` changes only by a binding.
        let hidden = action != Action::StepInto && effects.operates && facts.program.hidden_code;
        if previous.is_some() {
            for name in facts.untouched(&effects, shown, !hidden) {
                kept.values
                    .insert(name.as_bytes().to_vec(), json_contents(trace_lang::UNCHANGED));
            }
        }
        // A list or dict the statement changes in place (`xs.append(x)`, `d[k] = v`).
        for (name, repr) in &computed {
            if effects.times_bound(name) == 0 && !facts.declared.contains(name) {
                let Some(before) = code::shown_repr(shown, name) else {
                    continue;
                };
                let repr = trace_lang::normalize_repr(repr);
                let value = if previous.is_some() && before == repr {
                    trace_lang::UNCHANGED.to_owned()
                } else {
                    repr
                };
                kept.values.insert(name.as_bytes().to_vec(), json_contents(&value));
            }
        }
        kept.fresh = Some(facts.fresh_names(&effects));
        if let (Some(function), Some(line)) = (from.function.as_deref(), from.line) {
            kept.fresh_order = facts.fresh_order(function, line);
        }
        kept.statement_lines = effects.lines;
    }

    /// Stepping back from the return event `from`: the event before it in the same frame
    /// (the line that returned, or its exception) shows no name `from` does not, and
    /// every name the statement there cannot change is `..`. Nothing between the two
    /// events ran code the tracer sees, or that would be the event before.
    pub(super) fn before_return(&mut self, from: &State) {
        let Some(facts) = self.facts.as_ref().filter(|f| f.names_kept) else {
            return;
        };
        let (Some(line), Some(function)) = (from.line, from.function.as_deref()) else {
            return;
        };
        let effects = facts
            .effects(function, line)
            .filter(|_| !facts.may_be_generator(function, line));
        let (Some(effects), Some(mut kept)) = (effects, Kept::before(from, &facts.unbound)) else {
            return;
        };
        for name in facts.untouched(&effects, trace_lang::shown_vars(from), true) {
            kept.values
                .insert(name.as_bytes().to_vec(), json_contents(trace_lang::UNCHANGED));
        }
        self.kept.push(kept);
    }

    /// Stepping back from the module's return `from` right after `NAME = f(...)`, when
    /// `from` shows `NAME` and nothing before that statement could bind it: the statement
    /// completed, so the event before is `f`'s return, with `NAME`'s value (at a line of
    /// its `return VALUE` statements unless that value is `None`).
    pub(super) fn callee_returned(&mut self, from: &State) {
        let Some(facts) = self.facts.as_ref().filter(|f| f.names_kept) else {
            return;
        };
        let (Some(0), Some(line)) = (from.depth, from.line) else {
            return;
        };
        let (root, source) = (facts.tree.root_node(), facts.source.as_bytes());
        let plain = |name: &str| facts.program.plain_functions.contains(name);
        let Some((name, callee)) = calls::assigned_call(root, source, line, &plain) else {
            return;
        };
        let shown = trace_lang::shown_vars(from);
        let Some(repr) =
            code::shown_repr(shown, &name).filter(|_| !facts.bound_by_then(code::MODULE, StopKind::Line, line, &name))
        else {
            return;
        };
        let lines = (repr != "None").then(|| flow::value_return_lines(root, source, &callee));
        self.shapes = vec![Shape {
            function: Some(callee),
            lines,
            ..Shape::depths(1, 1, Events::RETURN)
        }];
        let mut tail = b" <|value|>\"".to_vec();
        tail.extend(json_contents(&repr));
        tail.push(b'"');
        self.callee_value = Some((1, tail));
    }

    /// Stepping back from the line or exception event `from`: the event before it in the
    /// same frame (its call, or the statement that ran last) shows no name `from` does
    /// not; at a call every name is `..`, and at a line every name the statement there
    /// cannot change. The statement ran no code the tracer sees, or that code's return
    /// would be the event before.
    pub(super) fn before_line(&mut self, from: &State) {
        let Some(facts) = self.facts.as_ref().filter(|f| f.names_kept) else {
            return;
        };
        let (Some(line), Some(function)) = (from.line, from.function.as_deref()) else {
            return;
        };
        if facts.may_be_generator(function, line) {
            return;
        }
        let Some(mut kept) = Kept::before(from, &facts.unbound) else {
            return;
        };
        kept.call_unchanged = true;
        let shown = trace_lang::shown_vars(from);
        for scope in facts.scopes_named(function, line) {
            for &at in facts.code_lines.iter().filter(|&&at| facts.runs(scope, at)) {
                if let Some(effects) = facts.effects(function, at) {
                    let names = facts.untouched(&effects, shown, true);
                    kept.unchanged_at
                        .insert(at, names.into_iter().map(|n| n.as_bytes().to_vec()).collect());
                }
            }
        }
        self.kept.push(kept);
    }
}
