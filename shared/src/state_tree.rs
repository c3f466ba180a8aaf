//! The state tree of a run and the debugger actions that move through it.
//!
//! A [`StateTree`] indexes a [`Trace`]: one node per activation (a call event up to
//! its return event; a generator gets one activation per resumption), whose children
//! are its events and nested activations in execution order. The indexes make every
//! action cost O(log n) (plus O(breakpoints)), never a scan of the trace.
//!
//! Forward actions follow pdb exactly, restricted to the user's file: the code below
//! is a model of `bdb.Bdb`'s stop rules (`stop_here`, `dispatch_call`, `dispatch_line`,
//! `dispatch_return`, `dispatch_exception`, `set_step/next/return/continue`) evaluated
//! over the recorded events instead of a live interpreter. The test suite checks it
//! against bdb itself.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::state::State;
use crate::trace::{EventKind, FrameId, Trace, TraceError};

/// Index of an event in [`Trace::events`].
pub type EventIndex = usize;

/// A debugger command. The forward ones mean what pdb means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "action", content = "line", rename_all = "snake_case")]
pub enum Action {
    /// pdb `step`: stop at the very next event.
    StepInto,
    /// pdb `next`: stop at the next event of this frame (or its caller once it returns).
    StepOver,
    /// pdb `return`: stop when this frame returns.
    StepReturn,
    /// pdb `continue`: run to the next breakpoint or the end.
    Continue,
    /// pdb `break N` then `continue`.
    Breakpoint(u32),
    /// The event before this one.
    ReverseStepInto,
    /// The previous event of this activation (or the caller's, at a call event).
    ReverseStepOver,
    /// The call event of this activation (or the caller's previous event, at a call).
    ReverseStepReturn,
    /// Back to the previous breakpoint hit, or the first stop.
    ReverseContinue,
    /// Straight to an event index.
    Jump(u32),
}

impl Action {
    /// Forward actions, as named on the command line and in the trace language.
    pub const FORWARD_NAMES: [&'static str; 5] = ["step_into", "step_over", "step_return", "continue", "breakpoint:N"];

    pub fn is_reverse(self) -> bool {
        matches!(
            self,
            Self::ReverseStepInto | Self::ReverseStepOver | Self::ReverseStepReturn | Self::ReverseContinue
        )
    }

    /// The name used by the CLI and the trace language: `step_into`, `breakpoint:12`, ...
    pub fn name(self) -> String {
        match self {
            Self::StepInto => "step_into".into(),
            Self::StepOver => "step_over".into(),
            Self::StepReturn => "step_return".into(),
            Self::Continue => "continue".into(),
            Self::Breakpoint(n) => format!("breakpoint:{n}"),
            Self::ReverseStepInto => "reverse_step_into".into(),
            Self::ReverseStepOver => "reverse_step_over".into(),
            Self::ReverseStepReturn => "reverse_step_return".into(),
            Self::ReverseContinue => "reverse_continue".into(),
            Self::Jump(n) => format!("jump:{n}"),
        }
    }

    /// Parses a comma-separated list such as `step_into,step_over,breakpoint:12,continue`.
    pub fn parse_list(text: &str) -> Result<Vec<Action>, ActionParseError> {
        text.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::parse)
            .collect()
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// An action name that is not one of the known debugger commands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown debugger action `{0}`; use step_into, step_over, step_return, continue, breakpoint:N, reverse_step_into, reverse_step_over, reverse_step_return, reverse_continue or jump:N"
)]
pub struct ActionParseError(pub String);

impl std::str::FromStr for Action {
    type Err = ActionParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let number = |arg: &str| arg.trim().parse::<u32>().map_err(|_| ActionParseError(s.to_owned()));
        Ok(match s.trim() {
            "step_into" | "step" | "s" => Self::StepInto,
            "step_over" | "next" | "n" => Self::StepOver,
            "step_return" | "return" | "r" => Self::StepReturn,
            "continue" | "c" => Self::Continue,
            "reverse_step_into" => Self::ReverseStepInto,
            "reverse_step_over" => Self::ReverseStepOver,
            "reverse_step_return" => Self::ReverseStepReturn,
            "reverse_continue" => Self::ReverseContinue,
            other => {
                if let Some(arg) = other
                    .strip_prefix("breakpoint:")
                    .or_else(|| other.strip_prefix("break:"))
                {
                    let line = number(arg)?;
                    if line == 0 {
                        return Err(ActionParseError(s.to_owned()));
                    }
                    Self::Breakpoint(line)
                } else if let Some(arg) = other.strip_prefix("jump:") {
                    Self::Jump(number(arg)?)
                } else {
                    return Err(ActionParseError(s.to_owned()));
                }
            }
        })
    }
}

/// Where the debugger is: at an event, or past the end of the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "at", content = "index", rename_all = "snake_case")]
pub enum Stop {
    Event(EventIndex),
    End,
}

impl Stop {
    pub fn event(self) -> Option<EventIndex> {
        match self {
            Self::Event(i) => Some(i),
            Self::End => None,
        }
    }
}

/// One activation of a frame: from its call event to its return event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activation {
    pub frame: FrameId,
    /// The call event (the first event when a trace starts mid-frame).
    pub start: EventIndex,
    /// The return event; `None` when the trace ended first.
    pub end: Option<EventIndex>,
    pub parent: Option<u32>,
    /// Frames of the user's file below this one on the stack (0 for the module).
    pub depth: u32,
    /// Events and nested activations, in execution order.
    pub children: Vec<TreeChild>,
}

/// A child of an activation in the state tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeChild {
    Event(EventIndex),
    Activation(u32),
}

/// A trace plus the indexes that make debugger actions fast.
#[derive(Debug, Clone)]
pub struct StateTree {
    trace: Trace,
    activations: Vec<Activation>,
    /// Activation each event belongs to.
    activation_of: Vec<u32>,
    /// Sorted event indices of each frame.
    frame_events: Vec<Vec<u32>>,
    /// Sorted indices of the line events of each line.
    line_events: HashMap<u32, Vec<u32>>,
    /// Sorted indices of `StopIteration`/`GeneratorExit` exception events.
    generator_exits: Vec<u32>,
    initial: Stop,
}

/// What the simulated bdb is waiting for (`Bdb._set_stopinfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StopFrame {
    /// `stopframe = None`: stop anywhere (pdb `step`).
    Anywhere,
    /// A frame of the user's file.
    Frame(FrameId),
    /// A frame outside the user's file (bdb's bottom frame, a library caller).
    Foreign,
}

#[derive(Debug, Clone, Copy)]
struct StopInfo {
    stopframe: StopFrame,
    returnframe: Option<FrameId>,
    /// `-1` disables stops in `stopframe` itself, as in bdb.
    stoplineno: i64,
}

impl StateTree {
    /// Indexes `trace`. Fails only for a trace that does not validate.
    pub fn new(trace: Trace) -> Result<Self, TraceError> {
        trace.validate()?;
        let n = trace.events.len();
        let mut activations: Vec<Activation> = Vec::new();
        let mut activation_of = Vec::with_capacity(n);
        let mut frame_events = vec![Vec::new(); trace.frames.len()];
        let mut line_events: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut generator_exits = Vec::new();
        let mut stack: Vec<u32> = Vec::new();
        // Activations of each frame on `stack`: keeps "is this frame open?" O(1), so a
        // forged trace nesting thousands of frames still builds in linear time.
        let mut open_of_frame = vec![0u32; trace.frames.len()];

        for (i, event) in trace.events.iter().enumerate() {
            let idx = i as u32;
            frame_events[event.frame as usize].push(idx);
            match event.kind {
                EventKind::Line => line_events.entry(event.line).or_default().push(idx),
                EventKind::Exception if event.generator_exit => generator_exits.push(idx),
                _ => {}
            }
            // A well-formed trace nests; a truncated or odd one is repaired by popping
            // to the activation of the event's frame, or opening one.
            let opens = event.kind == EventKind::Call || open_of_frame[event.frame as usize] == 0;
            if opens {
                let parent = stack.last().copied();
                let id = activations.len() as u32;
                let depth = parent.map_or(0, |p| activations[p as usize].depth + 1);
                activations.push(Activation {
                    frame: event.frame,
                    start: i,
                    end: None,
                    parent,
                    depth,
                    children: Vec::new(),
                });
                if let Some(p) = parent {
                    activations[p as usize].children.push(TreeChild::Activation(id));
                }
                stack.push(id);
                open_of_frame[event.frame as usize] += 1;
            } else {
                while let Some(&top) = stack.last() {
                    let frame = activations[top as usize].frame;
                    if frame == event.frame {
                        break;
                    }
                    stack.pop();
                    open_of_frame[frame as usize] -= 1;
                }
            }
            let current = *stack.last().expect("an activation was opened or found");
            activations[current as usize].children.push(TreeChild::Event(i));
            activation_of.push(current);
            if event.kind == EventKind::Return {
                activations[current as usize].end = Some(i);
                stack.pop();
                open_of_frame[event.frame as usize] -= 1;
            }
        }

        let initial = (0..n)
            .find(|&i| trace.events[i].kind == EventKind::Line && activations[activation_of[i] as usize].depth == 0)
            .or_else(|| (n > 0).then_some(0))
            .map_or(Stop::End, Stop::Event);

        Ok(Self {
            trace,
            activations,
            activation_of,
            frame_events,
            line_events,
            generator_exits,
            initial,
        })
    }

    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    pub fn into_trace(self) -> Trace {
        self.trace
    }

    pub fn len(&self) -> usize {
        self.trace.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.trace.events.is_empty()
    }

    /// Where pdb first stops: the first line event of the module.
    pub fn initial_stop(&self) -> Stop {
        self.initial
    }

    pub fn activations(&self) -> &[Activation] {
        &self.activations
    }

    /// The root activations (normally one: the module).
    pub fn roots(&self) -> impl Iterator<Item = u32> + '_ {
        self.activations
            .iter()
            .enumerate()
            .filter(|(_, a)| a.parent.is_none())
            .map(|(i, _)| i as u32)
    }

    pub fn activation_of(&self, event: EventIndex) -> u32 {
        self.activation_of[event]
    }

    /// The program state at a stop, as the CLI prints it and the model predicts it.
    pub fn state(&self, stop: Stop) -> State {
        match stop {
            Stop::End => State::end(),
            Stop::Event(i) => State::at_event(&self.trace, i, self.depth_of(i)),
        }
    }

    /// Frames of the user's file below the frame of `event` (0 at module level).
    pub fn depth_of(&self, event: EventIndex) -> u32 {
        self.activations[self.activation_of[event] as usize].depth
    }

    /// Activations from the outermost to the one holding `event`: the call stack.
    pub fn call_stack(&self, event: EventIndex) -> Vec<u32> {
        let mut stack = Vec::new();
        let mut current = Some(self.activation_of[event]);
        while let Some(a) = current {
            stack.push(a);
            current = self.activations[a as usize].parent;
        }
        stack.reverse();
        stack
    }

    /// Lines that have at least one line event (useful breakpoint targets).
    pub fn executed_lines(&self) -> BTreeSet<u32> {
        self.line_events.keys().copied().collect()
    }

    /// The first stop after `from` for `action` with `breakpoints` set (a
    /// [`Action::Breakpoint`] is added to `breakpoints`).
    pub fn step(&self, from: Stop, action: Action, breakpoints: &mut BTreeSet<u32>) -> Stop {
        if let Action::Breakpoint(line) = action {
            breakpoints.insert(line);
        }
        if action.is_reverse() {
            let at = match from {
                Stop::Event(i) => i,
                Stop::End => self.len(),
            };
            return self.step_back(at, action, breakpoints);
        }
        if let Action::Jump(n) = action {
            return if (n as usize) < self.len() {
                Stop::Event(n as usize)
            } else {
                Stop::End
            };
        }
        let Stop::Event(i) = from else { return Stop::End };
        let event = &self.trace.events[i];
        let frame = event.frame;
        let is_gen = |f: FrameId| self.trace.frames[f as usize].is_generator;
        let mut info = match action {
            Action::StepInto => StopInfo {
                stopframe: StopFrame::Anywhere,
                returnframe: None,
                stoplineno: 0,
            },
            Action::StepOver => StopInfo {
                stopframe: StopFrame::Frame(frame),
                returnframe: None,
                stoplineno: 0,
            },
            Action::StepReturn if is_gen(frame) => StopInfo {
                stopframe: StopFrame::Frame(frame),
                returnframe: None,
                stoplineno: -1,
            },
            Action::StepReturn => {
                let f = &self.trace.frames[frame as usize];
                let caller = match f.parent {
                    Some(p) if !f.called_from_library => StopFrame::Frame(p),
                    _ => StopFrame::Foreign,
                };
                StopInfo {
                    stopframe: caller,
                    returnframe: Some(frame),
                    stoplineno: 0,
                }
            }
            Action::Continue | Action::Breakpoint(_) => StopInfo {
                stopframe: StopFrame::Foreign,
                returnframe: None,
                stoplineno: -1,
            },
            _ => unreachable!("reverse actions and jumps are handled above"),
        };
        // bdb.dispatch_return: a `next` issued at a return event of the same frame
        // turns into a `step` once the return completes.
        if event.kind == EventKind::Return && info.stopframe == StopFrame::Frame(frame) && info.stoplineno != -1 {
            info = StopInfo {
                stopframe: StopFrame::Anywhere,
                returnframe: None,
                stoplineno: 0,
            };
        }
        self.next_stop(i, info, breakpoints).map_or(Stop::End, Stop::Event)
    }

    fn next_stop(&self, after: EventIndex, info: StopInfo, breakpoints: &BTreeSet<u32>) -> Option<EventIndex> {
        let events = &self.trace.events;
        if info.stopframe == StopFrame::Anywhere {
            // Every event stops except generator-internal StopIteration.
            return (after + 1..events.len())
                .find(|&j| !(events[j].kind == EventKind::Exception && events[j].internal));
        }
        let mut best: Option<EventIndex> = self.next_breakpoint_hit(after, breakpoints);
        let mut consider = |candidate: Option<EventIndex>| {
            if let Some(c) = candidate {
                best = Some(best.map_or(c, |b| b.min(c)));
            }
        };
        if let StopFrame::Frame(s) = info.stopframe {
            if info.stoplineno != -1 {
                consider(self.next_stop_in_frame(s, after));
            }
            if self.trace.frames[s as usize].is_generator {
                let from = self.generator_exits.partition_point(|&j| (j as usize) <= after);
                consider(
                    self.generator_exits[from..]
                        .iter()
                        .map(|&j| j as usize)
                        .find(|&j| events[j].frame != s),
                );
            }
        }
        if let Some(r) = info.returnframe {
            // `returnframe` is only ever the frame of the current stop, so its return
            // is the end of the current activation (no scan of the frame's events).
            debug_assert_eq!(events[after].frame, r);
            if !self.trace.frames[r as usize].is_generator {
                consider(
                    self.activations[self.activation_of[after] as usize]
                        .end
                        .filter(|&end| end > after),
                );
            }
        }
        best
    }

    /// First event of frame `s` after `after` at which bdb stops when `s` is the
    /// stop frame: generator frames skip their call and return events, and
    /// generator-internal `StopIteration` never stops.
    fn next_stop_in_frame(&self, s: FrameId, after: EventIndex) -> Option<EventIndex> {
        let is_gen = self.trace.frames[s as usize].is_generator;
        self.events_of_frame_after(s, after).find(|&j| {
            let e = &self.trace.events[j];
            match e.kind {
                EventKind::Call | EventKind::Return => !is_gen,
                EventKind::Line => true,
                EventKind::Exception => !e.internal,
            }
        })
    }

    fn events_of_frame_after(&self, frame: FrameId, after: EventIndex) -> impl Iterator<Item = EventIndex> + '_ {
        let list = &self.frame_events[frame as usize];
        let from = list.partition_point(|&j| (j as usize) <= after);
        list[from..].iter().map(|&j| j as usize)
    }

    fn next_breakpoint_hit(&self, after: EventIndex, breakpoints: &BTreeSet<u32>) -> Option<EventIndex> {
        breakpoints
            .iter()
            .filter_map(|line| {
                let list = self.line_events.get(line)?;
                let at = list.partition_point(|&j| (j as usize) <= after);
                list.get(at).map(|&j| j as usize)
            })
            .min()
    }

    fn previous_breakpoint_hit(&self, before: EventIndex, breakpoints: &BTreeSet<u32>) -> Option<EventIndex> {
        breakpoints
            .iter()
            .filter_map(|line| {
                let list = self.line_events.get(line)?;
                let at = list.partition_point(|&j| (j as usize) < before);
                at.checked_sub(1).map(|k| list[k] as usize)
            })
            .max()
    }

    /// Reverse actions: the mirror images of the forward ones. They never go before
    /// the initial stop, which is where a forward session starts.
    fn step_back(&self, at: EventIndex, action: Action, breakpoints: &BTreeSet<u32>) -> Stop {
        let Stop::Event(first) = self.initial else {
            return Stop::End;
        };
        if at <= first {
            return Stop::Event(first);
        }
        let previous = at - 1;
        let target = match action {
            Action::ReverseStepInto => previous,
            Action::ReverseStepOver | Action::ReverseStepReturn if at >= self.len() => previous,
            Action::ReverseStepOver => {
                let activation = &self.activations[self.activation_of[at] as usize];
                let within = if at > activation.start {
                    let list = &self.frame_events[activation.frame as usize];
                    let k = list.partition_point(|&j| (j as usize) < at);
                    Some(list[k - 1] as usize)
                } else {
                    None
                };
                let base = within.unwrap_or(previous);
                self.previous_breakpoint_hit(at, breakpoints)
                    .map_or(base, |b| b.max(base))
            }
            Action::ReverseStepReturn => {
                let activation = &self.activations[self.activation_of[at] as usize];
                let base = if at > activation.start {
                    activation.start
                } else {
                    previous
                };
                self.previous_breakpoint_hit(at, breakpoints)
                    .map_or(base, |b| b.max(base))
            }
            Action::ReverseContinue => self.previous_breakpoint_hit(at, breakpoints).unwrap_or(first),
            _ => unreachable!("only reverse actions reach step_back"),
        };
        Stop::Event(target.max(first))
    }
}

/// A debugging session over a state tree: a position plus breakpoints.
#[derive(Debug, Clone)]
pub struct Debugger<'t> {
    tree: &'t StateTree,
    position: Stop,
    breakpoints: BTreeSet<u32>,
}

impl<'t> Debugger<'t> {
    /// Starts where pdb starts: the first line of the module.
    pub fn new(tree: &'t StateTree) -> Self {
        Self {
            tree,
            position: tree.initial_stop(),
            breakpoints: BTreeSet::new(),
        }
    }

    pub fn position(&self) -> Stop {
        self.position
    }

    pub fn breakpoints(&self) -> &BTreeSet<u32> {
        &self.breakpoints
    }

    pub fn set_breakpoints(&mut self, lines: impl IntoIterator<Item = u32>) {
        self.breakpoints = lines.into_iter().collect();
    }

    pub fn toggle_breakpoint(&mut self, line: u32) -> bool {
        if self.breakpoints.remove(&line) {
            false
        } else {
            self.breakpoints.insert(line);
            true
        }
    }

    /// Applies one action and returns the new position.
    pub fn apply(&mut self, action: Action) -> Stop {
        self.position = self.tree.step(self.position, action, &mut self.breakpoints);
        self.position
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace from `(kind, frame, line)` triples; frame 0 is the module.
    fn trace(frames: &[(&str, Option<u32>, bool)], events: &[(EventKind, u32, u32)]) -> Trace {
        let mut b = crate::test_util::TraceBuilder::new();
        for &(function, parent, is_generator) in frames {
            if is_generator {
                b.generator(function, parent);
            } else {
                b.frame(function, parent);
            }
        }
        for &(kind, frame, line) in events {
            b.event(kind, frame, line, &[]);
        }
        b.build()
    }

    use EventKind::{Call, Line, Return};

    /// `def f(): x = 1` (lines 1-2), then `f()` on line 4 and `y = 2` on line 5.
    fn call_once() -> StateTree {
        let t = trace(
            &[("<module>", None, false), ("f", Some(0), false)],
            &[
                (Call, 0, 1),
                (Line, 0, 1),
                (Line, 0, 4),
                (Call, 1, 1),
                (Line, 1, 2),
                (Return, 1, 2),
                (Line, 0, 5),
                (Return, 0, 5),
            ],
        );
        StateTree::new(t).unwrap()
    }

    fn go(tree: &StateTree, from: usize, action: Action, breakpoints: &[u32]) -> Stop {
        tree.step(Stop::Event(from), action, &mut breakpoints.iter().copied().collect())
    }

    #[test]
    fn forward_actions_follow_pdb() {
        let tree = call_once();
        assert_eq!(tree.initial_stop(), Stop::Event(1));
        assert_eq!(go(&tree, 2, Action::StepInto, &[]), Stop::Event(3));
        assert_eq!(go(&tree, 2, Action::StepOver, &[]), Stop::Event(6));
        assert_eq!(
            go(&tree, 2, Action::StepOver, &[2]),
            Stop::Event(4),
            "a breakpoint inside the callee stops next"
        );
        assert_eq!(go(&tree, 4, Action::StepReturn, &[]), Stop::Event(5));
        assert_eq!(
            go(&tree, 5, Action::StepOver, &[]),
            Stop::Event(6),
            "next at a return behaves as step"
        );
        assert_eq!(go(&tree, 1, Action::Continue, &[]), Stop::End);
        assert_eq!(go(&tree, 1, Action::Breakpoint(5), &[]), Stop::Event(6));
        assert_eq!(go(&tree, 7, Action::StepInto, &[]), Stop::End);
        assert_eq!(tree.step(Stop::End, Action::StepInto, &mut BTreeSet::new()), Stop::End);
    }

    #[test]
    fn reverse_actions_mirror_forward_ones() {
        let tree = call_once();
        assert_eq!(go(&tree, 6, Action::ReverseStepInto, &[]), Stop::Event(5));
        assert_eq!(go(&tree, 6, Action::ReverseStepOver, &[]), Stop::Event(2));
        assert_eq!(go(&tree, 4, Action::ReverseStepReturn, &[]), Stop::Event(3));
        assert_eq!(go(&tree, 3, Action::ReverseStepReturn, &[]), Stop::Event(2));
        assert_eq!(go(&tree, 7, Action::ReverseContinue, &[2]), Stop::Event(4));
        assert_eq!(
            go(&tree, 7, Action::ReverseContinue, &[]),
            Stop::Event(1),
            "no breakpoint: back to the start"
        );
        assert_eq!(
            go(&tree, 1, Action::ReverseStepInto, &[]),
            Stop::Event(1),
            "never before the first stop"
        );
        assert_eq!(
            tree.step(Stop::End, Action::ReverseStepInto, &mut BTreeSet::new()),
            Stop::Event(7)
        );
        assert_eq!(go(&tree, 1, Action::Jump(5), &[]), Stop::Event(5));
        assert_eq!(go(&tree, 1, Action::Jump(99), &[]), Stop::End);
    }

    #[test]
    fn tree_nests_activations_with_depths() {
        let tree = call_once();
        assert_eq!(tree.activations().len(), 2);
        assert_eq!(tree.call_stack(4), vec![0, 1]);
        assert_eq!(tree.depth_of(4), 1);
        assert_eq!(tree.depth_of(6), 0);
        let module = &tree.activations()[0];
        assert_eq!(module.end, Some(7));
        assert_eq!(module.children[3], TreeChild::Activation(1));
        assert_eq!(tree.state(Stop::Event(4)).function.as_deref(), Some("f"));
    }

    /// `for v in gen(): use(v)`: the generator yields twice, resumed from the module.
    fn generator_loop() -> StateTree {
        let t = trace(
            &[("<module>", None, false), ("gen", Some(0), true)],
            &[
                (Call, 0, 1),
                (Line, 0, 5), // 1: for v in gen():
                (Call, 1, 1), // 2
                (Line, 1, 2), // 3: yield 1
                (Return, 1, 2),
                (Line, 0, 6), // 5: use(v)
                (Line, 0, 5),
                (Call, 1, 2), // 7
                (Line, 1, 3), // 8: yield 2
                (Return, 1, 3),
                (Line, 0, 6),
                (Line, 0, 5),
                (Call, 1, 3),
                (Return, 1, 3), // 13: the generator finishes
                (Line, 0, 7),
                (Return, 0, 7),
            ],
        );
        StateTree::new(t).unwrap()
    }

    #[test]
    fn generators_skip_call_and_return_unless_stepping() {
        let tree = generator_loop();
        assert_eq!(
            go(&tree, 3, Action::StepOver, &[]),
            Stop::Event(8),
            "next in a generator skips the yield"
        );
        assert_eq!(
            go(&tree, 3, Action::StepInto, &[]),
            Stop::Event(4),
            "step stops at the yield"
        );
        assert_eq!(
            go(&tree, 3, Action::StepReturn, &[]),
            Stop::End,
            "return in a generator runs on, as pdb does"
        );
        assert_eq!(go(&tree, 3, Action::StepReturn, &[7]), Stop::Event(14));
        assert_eq!(tree.activations().len(), 4);
        assert_eq!(tree.depth_of(8), 1);
    }

    #[test]
    fn actions_parse_from_cli_names() {
        let actions = Action::parse_list("step_into, step_over,step_return,breakpoint:12,continue").unwrap();
        assert_eq!(
            actions,
            vec![
                Action::StepInto,
                Action::StepOver,
                Action::StepReturn,
                Action::Breakpoint(12),
                Action::Continue
            ]
        );
        assert!(
            Action::parse_list("step_into,fly")
                .unwrap_err()
                .to_string()
                .contains("`fly`")
        );
        assert!("breakpoint:0".parse::<Action>().is_err());
        assert!("breakpoint:x".parse::<Action>().is_err());
        for a in actions {
            assert_eq!(a.name().parse::<Action>().unwrap(), a);
        }
    }
}
