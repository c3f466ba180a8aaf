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
use super::code::{CodeFacts, Scope, ScopeKind, hidden};

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

impl CodeFacts {
    /// The names a frame of `function` must show at an `event` at `line`: those the
    /// statements before the one holding `line` always bind, in the body it runs (the
    /// module's, a plain class body's, a function's), and past a function's call event
    /// every parameter it shows (the call bound them all). None in a program that may
    /// unbind a name; in a function, none that `global` or `nonlocal` declares or `del`
    /// unbinds.
    pub(super) fn required<'s>(
        &'s self,
        function: &str,
        event: StopKind,
        line: u32,
    ) -> impl Iterator<Item = &'s str> + use<'s> {
        let (body, scope) = if let Some(body) = self.ordered_body(function, line) {
            (Some(body), None)
        } else {
            let scope = self.scope_at(function, line);
            (scope.and_then(|s| s.statements.as_ref()), scope)
        };
        let in_function = scope.is_some() || body.is_none();
        let unbound = if in_function {
            &self.unbound.in_functions
        } else {
            &self.unbound.in_module
        };
        let parameters = scope
            .filter(|_| event != StopKind::Call)
            .and_then(|s| s.call.as_ref())
            .into_iter()
            .flat_map(|call| call.parameters.iter().map(String::as_str))
            .filter(|p| !hidden(p));
        body.into_iter()
            .flat_map(move |body| body.required(event, line))
            .chain(parameters)
            .filter(|_| self.names_kept)
            .filter(move |name| !(unbound.contains(*name) || in_function && self.declared.contains(*name)))
    }

    /// Whether a frame of `function` stopped at a line event at `line` may show `name`,
    /// as far as the program's `except ... as` handlers tell ([`super::handlers`]).
    pub(super) fn handler_may_show(&self, function: &str, line: u32, name: &str) -> bool {
        let frame = match self.scope_at(function, line) {
            Some(s) if s.kind == ScopeKind::Module => None,
            Some(s) if s.kind == ScopeKind::Function => Some((s.header, s.last)),
            _ => return true,
        };
        self.handlers.may_show(frame, line, name)
    }
}
