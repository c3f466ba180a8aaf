//! The names a function's frame can show the first time an activation reaches a line.
//!
//! Python's only way back to an earlier line is a loop, so before an activation first
//! reaches a statement it has run only statements written before it, and (any number of
//! times) the loops it sits in. A stop there can show the parameters, the names those
//! bind, and the free variables, never a name only later statements bind: stopping at a
//! breakpoint on `for value, symbol in TABLE:` in a call that has just begun, neither
//! `value` nor `symbol` is bound yet.

use replayground_shared::StopKind;

use super::body::Arrival;
use super::code::Scope;

impl Scope {
    /// What a frame of this scope may show at an `event` at `line` after a forward step
    /// from a frame at depth `from` (`None`: not such a step), where that is the first
    /// time an activation reaches `line`: none of its frames can be on the stack when
    /// the step starts (it starts at the module's, or below every depth this scope runs
    /// at), so the activation that stops there has begun since.
    pub(super) fn first_arrival(&self, from: Option<u32>, event: StopKind, line: u32) -> Option<&Arrival> {
        let fresh = from.is_some_and(|d| d == 0 || !self.runs_at_depth(0, Some(d)));
        (event == StopKind::Line && fresh)
            .then(|| self.first_arrivals.as_ref()?.get(&line))
            .flatten()
    }

    /// Whether a frame of this scope can show `name` (see [`Self::first_arrival`]):
    /// besides what it may have bound, a free variable.
    pub(super) fn arrived(&self, from: Option<u32>, event: StopKind, line: u32, name: &str) -> bool {
        self.first_arrival(from, event, line).is_none_or(|arrival| {
            arrival.names.contains(name) || self.call.as_ref().is_some_and(|c| c.free.contains(name))
        })
    }
}
