//! Traces written by hand for tests and benchmarks, behind the `test-util` feature (and
//! always in this crate's own tests): frames, scalar values and events without spelling
//! out every field.
//!
//! ```
//! use replayground_shared::EventKind::{Call, Line, Return};
//! use replayground_shared::test_util::TraceBuilder;
//!
//! let mut b = TraceBuilder::new();
//! let module = b.frame("<module>", None);
//! let two = b.int(2);
//! b.event(Call, module, 1, &[]);
//! b.event(Line, module, 1, &[("x", two)]);
//! b.returning(module, 1, &[("x", two)], None);
//! let trace = b.build();
//! assert_eq!((trace.frames.len(), trace.events.len()), (1, 3));
//! assert_eq!(trace.events[2].kind, Return);
//! ```

use std::sync::Arc;

use crate::trace::{Binding, Event, EventKind, Frame, FrameId, Outcome, Shape, Trace, Value, ValueId};

/// Builds a [`Trace`] that ends [`Outcome::Finished`] unless [`TraceBuilder::outcome`]
/// says otherwise. Object ids are the value ids plus one: every value a distinct object.
#[derive(Debug, Clone)]
pub struct TraceBuilder {
    trace: Trace,
}

impl Default for TraceBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl TraceBuilder {
    pub fn new() -> Self {
        Self {
            trace: Trace::empty(Outcome::Finished),
        }
    }

    /// A frame of the user's file called from `parent` (its depth follows the parent's).
    pub fn frame(&mut self, function: &str, parent: Option<FrameId>) -> FrameId {
        self.push_frame(function, parent, false)
    }

    /// A generator frame.
    pub fn generator(&mut self, function: &str, parent: Option<FrameId>) -> FrameId {
        self.push_frame(function, parent, true)
    }

    fn push_frame(&mut self, function: &str, parent: Option<FrameId>, is_generator: bool) -> FrameId {
        let depth = parent.map_or(0, |p| self.trace.frames[p as usize].depth + 1);
        self.trace.frames.push(Frame {
            function: function.into(),
            parent,
            depth,
            is_generator,
            called_from_library: false,
        });
        (self.trace.frames.len() - 1) as FrameId
    }

    /// A scalar value with this repr and type name.
    pub fn value(&mut self, repr: &str, type_name: &str) -> ValueId {
        let id = self.trace.values.len() as ValueId;
        self.trace.values.push(Value {
            repr: repr.into(),
            type_name: type_name.into(),
            object_id: u64::from(id) + 1,
            shape: Shape::Scalar,
        });
        id
    }

    /// An `int`.
    pub fn int(&mut self, n: i64) -> ValueId {
        self.value(&n.to_string(), "int")
    }

    /// An event with these locals and no value.
    pub fn event(&mut self, kind: EventKind, frame: FrameId, line: u32, locals: &[(&str, ValueId)]) -> &mut Event {
        self.push_event(kind, frame, line, locals, None)
    }

    /// A `return` event, with the returned value.
    pub fn returning(
        &mut self,
        frame: FrameId,
        line: u32,
        locals: &[(&str, ValueId)],
        value: Option<ValueId>,
    ) -> &mut Event {
        self.push_event(EventKind::Return, frame, line, locals, value)
    }

    fn push_event(
        &mut self,
        kind: EventKind,
        frame: FrameId,
        line: u32,
        locals: &[(&str, ValueId)],
        value: Option<ValueId>,
    ) -> &mut Event {
        let locals: Arc<[Binding]> = locals
            .iter()
            .map(|&(name, value)| Binding {
                name: name.into(),
                value,
            })
            .collect();
        self.trace.events.push(Event {
            kind,
            frame,
            line,
            locals,
            value,
            stdout_len: 0,
            stderr_len: 0,
            internal: false,
            generator_exit: false,
        });
        self.trace.events.last_mut().expect("just pushed")
    }

    /// How the run ended.
    pub fn outcome(&mut self, outcome: Outcome) -> &mut Self {
        self.trace.outcome = outcome;
        self
    }

    /// The trace as built so far (e.g. to count its events).
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    pub fn build(self) -> Trace {
        self.trace
    }
}
