//! Back in the caller after a callee's return: the statement that called it completes.

use replayground_shared::trace_lang::{self, Direction, Trajectory};
use replayground_shared::{Action, StopKind};

use super::kept::Kept;
use super::{Bounds, Events, json_contents, runs_the_statement, shapes};

impl Bounds {
    /// Stepping on from the end of `prefix`, a callee's return that the step before
    /// reached from one of its own line events (so it returns normally: a statement that
    /// raised would have stopped at its exception first), to the caller, which stopped
    /// at `NAME = F(...)` (its one frame of the program's is `F`,
    /// [`super::code::CodeFacts::assigned_plain_call`]) before the steps that went into
    /// `F` and stayed in that activation. The statement completes: the caller's next
    /// event is the one a step over it reaches without an exception, and it shows `NAME`
    /// holding the returned value and every number, string, bool or `None` the statement
    /// cannot change as it was (a list `F` was handed may have changed).
    pub(super) fn after_callee_returned(&mut self, prefix: &Trajectory, action: Action) {
        let [.., before, last] = prefix.steps.as_slice() else {
            return;
        };
        let from = &last.state;
        let (Some(depth), Some(value)) = (from.depth, from.value.as_deref()) else {
            return;
        };
        let single = |a: Option<Action>| matches!(a, Some(Action::StepInto | Action::StepOver));
        if prefix.direction != Direction::Forward
            || !matches!(action, Action::StepInto | Action::StepOver)
            || from.event != StopKind::Return
            || depth == 0
            || !single(last.action)
            || before.state.event != StopKind::Line
            || before.state.depth != Some(depth)
            || before.state.function != from.function
        {
            return;
        }
        // The caller: the last state above the callee, every step since staying in one
        // activation at the callee's depth or below it.
        let Some(at) = prefix
            .steps
            .iter()
            .rposition(|s| s.state.depth.is_some_and(|d| d < depth))
        else {
            return;
        };
        let stays = |a: Option<Action>| matches!(a, Some(Action::StepInto | Action::StepOver | Action::StepReturn));
        if !prefix.steps[at + 1..].iter().all(|s| stays(s.action)) {
            return;
        }
        let caller = &prefix.steps[at].state;
        let Some(facts) = self.facts.as_ref().filter(|f| f.names_kept && f.scalars_kept) else {
            return;
        };
        let (Some(line), Some(function)) = (caller.line, caller.function.as_deref()) else {
            return;
        };
        if caller.depth != Some(depth - 1)
            || caller.event != StopKind::Line
            || !runs_the_statement(function)
            || facts.may_be_generator(function, line)
        {
            return;
        }
        let Some((name, callee)) = facts.assigned_plain_call(line) else {
            return;
        };
        let (Some(effects), Some(mut kept)) = (
            facts
                .effects(function, line)
                .filter(|_| from.function.as_deref() == Some(callee.as_str())),
            Kept::of(caller, depth == 1, facts.unbound.at_depth(depth - 1)),
        ) else {
            return;
        };
        let shown = trace_lang::shown_vars(caller);
        for untouched in facts.untouched(&effects, shown, false) {
            if let Some((_, repr)) = shown.iter().find(|(n, _)| n == untouched) {
                let repr = trace_lang::normalize_repr(repr);
                kept.values.insert(untouched.as_bytes().to_vec(), json_contents(&repr));
            }
        }
        let value = trace_lang::normalize_repr(value);
        kept.values.insert(name.as_bytes().to_vec(), json_contents(&value));
        kept.required.push(name.into_bytes());
        kept.fresh = Some(facts.fresh_names(&effects));
        kept.statement_lines = effects.lines;
        let mut next = shapes(Direction::Forward, caller, Action::StepOver, None, facts);
        for shape in &mut next {
            shape.events = shape.events.but(Events::EXCEPTION);
        }
        self.shapes = next;
        self.kept.retain(|k| k.depth != depth - 1);
        self.kept.push(kept);
    }
}
