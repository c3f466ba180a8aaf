//! The order of the names a frame shows. The module's and a plain class body's namespaces
//! are dicts that the statements fill as they run: a name enters where it is first stored,
//! and the names one simple statement stores enter in the order it stores them
//! ([`store_order`]). A function's `f_locals` gets the names bound since its last event
//! added in the order CPython compiles its locals ([`local_order`]).

use replayground_shared::StopKind;

use super::code::{CodeFacts, MODULE, ScopeKind};
#[cfg(doc)]
use super::varnames::{local_order, store_order};

impl CodeFacts {
    /// Whether a frame of `function` at an `event` at `line` may show `name` after the
    /// names `written` before it. A namespace lists a name where it was first bound, so
    /// in a body run once in order (the module, a plain class body) a name an earlier
    /// statement always binds comes before one that only later statements can bind: none
    /// written so far may come after `name`, and every name the frame must show that
    /// comes before it is written already (else the state could not be finished).
    pub(super) fn in_order(&self, function: &str, event: StopKind, line: u32, name: &str, written: &[Vec<u8>]) -> bool {
        let Some(body) = self.ordered_body(function, line).filter(|_| self.namespace_order) else {
            return true;
        };
        // A name `global` lets a function bind may be bound before any statement binds it.
        let first = |n: &str| {
            (function != MODULE || !self.globals.contains(n))
                .then(|| body.first_binder(n))
                .flatten()
        };
        // One statement's names come in the order it stores them.
        let after_written = body.certain_binder(name).is_none_or(|bound| {
            written
                .iter()
                .map(|w| String::from_utf8_lossy(w))
                .all(|w| first(&w).is_none_or(|f| f < bound || (f == bound && !body.stores_later(f, &w, name))))
        });
        let missing_before = first(name).is_some_and(|f| {
            self.required(function, event, line).any(|r| {
                !written.iter().any(|w| w == r.as_bytes())
                    && body
                        .certain_binder(r)
                        .is_some_and(|c| c < f || (c == f && body.stores_later(f, name, r)))
            })
        });
        after_written && !missing_before
    }

    /// The order in which a frame of `function` that stopped at `line` adds the names it
    /// binds (those [`local_order`] tells) to its namespace between two events. Empty
    /// where it cannot tell: the program may unbind a name (a name bound again goes to
    /// the end), or the frame is no plain function's.
    pub(super) fn fresh_order(&self, function: &str, line: u32) -> Vec<Vec<u8>> {
        self.scope_at(function, line)
            .filter(|s| s.kind == ScopeKind::Function && self.names_kept && self.unbound.in_functions.is_empty())
            .and_then(|s| s.local_order.as_ref())
            .map(|order| order.iter().map(|n| n.as_bytes().to_vec()).collect())
            .unwrap_or_default()
    }
}
