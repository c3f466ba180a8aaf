//! What a stop may look like, before its variables: its event kinds, lines, depths and
//! function. [`super::Bounds`] holds the shapes an action allows.

use std::collections::BTreeSet;

use replayground_shared::{State, StopKind};

use super::{Scope, ScopeKind};

/// Which stop kinds a shape admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Events(u8);

impl Events {
    pub(super) const CALL: Self = Self(1);
    pub(super) const LINE: Self = Self(2);
    pub(super) const RETURN: Self = Self(4);
    pub(super) const EXCEPTION: Self = Self(8);
    pub(super) const ANY: Self = Self(15);

    pub(super) fn has(self, kind: StopKind) -> bool {
        let bit = match kind {
            StopKind::Call => Self::CALL,
            StopKind::Line => Self::LINE,
            StopKind::Return => Self::RETURN,
            StopKind::Exception => Self::EXCEPTION,
            StopKind::End => return false,
        };
        self.0 & bit.0 != 0
    }

    pub(super) fn but(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    pub(super) fn or(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

/// One kind of state the action can lead to.
#[derive(Debug, Clone)]
pub(super) struct Shape {
    pub(super) events: Events,
    /// `None`: any line of code.
    pub(super) lines: Option<BTreeSet<u32>>,
    pub(super) min_depth: u32,
    /// `None`: no bound.
    pub(super) max_depth: Option<u32>,
    /// `None`: any function whose scope holds the line.
    pub(super) function: Option<String>,
    /// A call the statement on these lines makes: a list, set or dict comprehension's
    /// frame only if the comprehension is written there (it runs where it is written).
    pub(super) callee_within: Option<BTreeSet<u32>>,
}

impl Shape {
    pub(super) fn anywhere() -> Self {
        Self {
            events: Events::ANY,
            lines: None,
            min_depth: 0,
            max_depth: None,
            function: None,
            callee_within: None,
        }
    }

    /// A frame one deeper than `depth` that the statement on `lines` called.
    pub(super) fn callee(depth: u32, events: Events, lines: Option<BTreeSet<u32>>) -> Self {
        Self {
            callee_within: lines,
            ..Self::depths(depth + 1, depth + 1, events)
        }
    }

    /// Whether a frame of `scope` can have this shape.
    pub(super) fn admits_scope(&self, scope: &Scope) -> bool {
        self.function.as_deref().is_none_or(|f| f == scope.name)
            && (scope.kind != ScopeKind::Comprehension
                || self
                    .callee_within
                    .as_ref()
                    .is_none_or(|lines| lines.contains(&scope.first)))
    }

    pub(super) fn depths(min: u32, max: u32, events: Events) -> Self {
        Self {
            events,
            min_depth: min,
            max_depth: Some(max),
            ..Self::anywhere()
        }
    }

    /// The same frame as `state`, at one of `events`.
    pub(super) fn frame_of(state: &State, depth: u32, events: Events) -> Self {
        Self {
            events,
            function: state.function.clone(),
            ..Self::depths(depth, depth, events)
        }
    }

    /// A line event at one of `breakpoints`.
    pub(super) fn breakpoint_hit(breakpoints: &BTreeSet<u32>) -> Self {
        Self {
            events: Events::LINE,
            lines: Some(breakpoints.clone()),
            ..Self::anywhere()
        }
    }

    pub(super) fn admits_depth(&self, depth: u32) -> bool {
        depth >= self.min_depth && self.max_depth.is_none_or(|max| depth <= max)
    }
}
