//! The ground-truth record of one program run, as produced by the sandboxed tracer.
//!
//! A [`Trace`] is a flat list of [`Event`]s in execution order, restricted to the
//! user's file. Values are interned in [`Trace::values`] so that an unchanged local
//! costs one integer per event and aliasing is visible: two names bound to the same
//! Python object share an [`Value::object_id`].
//!
//! The JSON form of this type is the wire format between the tracer, the server, the
//! browser and the CLI. It is versioned by [`TRACE_FORMAT_VERSION`]; a reader refuses
//! a trace of another version with a clear error instead of misreading it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Bumped whenever the JSON form of [`Trace`] changes incompatibly.
pub const TRACE_FORMAT_VERSION: u32 = 1;

/// Index into [`Trace::values`].
pub type ValueId = u32;
/// Index into [`Trace::frames`].
pub type FrameId = u32;

/// One complete (or limit-truncated) run of a program under the tracer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Always [`TRACE_FORMAT_VERSION`] for traces this crate writes.
    pub version: u32,
    /// Every traced event of the user's file, in execution order.
    pub events: Vec<Event>,
    /// One entry per Python frame object of the user's file. A generator keeps one
    /// frame across all of its resumptions, exactly as pdb sees it.
    pub frames: Vec<Frame>,
    /// Interned values referenced by events and by other values.
    pub values: Vec<Value>,
    /// Everything the program wrote to `sys.stdout` (capped, see [`Outcome`]).
    pub stdout: String,
    /// Everything the program wrote to `sys.stderr`, tracebacks included.
    pub stderr: String,
    /// Why the trace ended.
    pub outcome: Outcome,
}

/// What the tracer saw happen, as `sys.settrace` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    Call,
    Line,
    Return,
    Exception,
}

impl EventKind {
    pub const ALL: [EventKind; 4] = [Self::Call, Self::Line, Self::Return, Self::Exception];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Call => "call",
            Self::Line => "line",
            Self::Return => "return",
            Self::Exception => "exception",
        }
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `sys.settrace` event in the user's file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub kind: EventKind,
    /// The frame the event happened in.
    pub frame: FrameId,
    /// 1-based line number in the user's file.
    pub line: u32,
    /// Local variables after the previous step (module level: the user's globals),
    /// dunder names excluded, in definition order. Shared between consecutive events
    /// whose locals did not change, so memory follows changes, not steps.
    pub locals: Arc<[Binding]>,
    /// `return`: the returned value; `exception`: the exception instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<ValueId>,
    /// Bytes of [`Trace::stdout`] written before this event.
    pub stdout_len: u32,
    /// Bytes of [`Trace::stderr`] written before this event.
    pub stderr_len: u32,
    /// An exception event pdb reports as "Internal StopIteration": a generator's
    /// `StopIteration` without a traceback, raised by `yield from` machinery.
    #[serde(default, skip_serializing_if = "is_false")]
    pub internal: bool,
    /// `exception` events only: the exception's type is `StopIteration` or
    /// `GeneratorExit` (pdb stops on those when returning out of a generator).
    #[serde(default, skip_serializing_if = "is_false")]
    pub generator_exit: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_false(b: &bool) -> bool {
    !*b
}

/// A name bound to a value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    pub name: String,
    pub value: ValueId,
}

/// A Python frame object of the user's file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// The code object's name: `<module>`, a function name, `<lambda>`, `<listcomp>`...
    pub function: String,
    /// The nearest enclosing frame of the user's file, if any (library frames between
    /// the two are invisible).
    pub parent: Option<FrameId>,
    /// 0 for the module, +1 per frame of the user's file.
    pub depth: u32,
    /// A generator or coroutine frame: pdb treats its call and return events specially.
    pub is_generator: bool,
    /// The Python frame directly below it was library code (a callback), so pdb's
    /// `return` has no user frame to stop in after the return event.
    #[serde(default, skip_serializing_if = "is_false")]
    pub called_from_library: bool,
}

/// A snapshot of one Python object when it was recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Value {
    /// `repr(obj)`, cut to the tracer's configured length (a cut ends in `...`).
    pub repr: String,
    /// `type(obj).__name__`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// `id(obj)`: equal ids at one event mean the same object (aliasing).
    pub object_id: u64,
    /// Structure of containers and user objects, nested to the configured depth.
    #[serde(default, skip_serializing_if = "Shape::is_scalar")]
    pub shape: Shape,
}

/// How a value is built from other values.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// Numbers, strings, `None`, functions, ... : the repr says it all.
    #[default]
    Scalar,
    List {
        items: Vec<ValueId>,
        truncated: bool,
    },
    Tuple {
        items: Vec<ValueId>,
        truncated: bool,
    },
    Set {
        items: Vec<ValueId>,
        truncated: bool,
    },
    Dict {
        entries: Vec<(ValueId, ValueId)>,
        truncated: bool,
    },
    Object {
        attrs: Vec<Binding>,
        truncated: bool,
    },
    /// Not expanded: nested deeper than the configured depth, or a cycle back to an
    /// enclosing container.
    Elided,
}

impl Shape {
    pub fn is_scalar(&self) -> bool {
        matches!(self, Self::Scalar)
    }
}

/// Why a trace ended. Limits end a trace with an explicit outcome, never an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The program ran to its end.
    Finished,
    /// The program ended with an uncaught exception (the traceback is in stderr).
    UncaughtException {
        exception_type: String,
        message: String,
        line: Option<u32>,
    },
    /// The program called `sys.exit(code)`.
    Exited { code: i32 },
    /// The program does not compile.
    SyntaxError {
        message: String,
        line: Option<u32>,
        column: Option<u32>,
    },
    /// A configured limit stopped the run.
    LimitReached { limit: Limit, detail: String },
    /// The tracer or the sandbox failed; the message says how.
    Crashed { message: String },
}

/// The resource limits a run can hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    Events,
    CpuTime,
    WallTime,
    Memory,
    Output,
    RecursionDepth,
}

impl Limit {
    pub fn describe(self) -> &'static str {
        match self {
            Self::Events => "the step limit",
            Self::CpuTime => "the CPU time limit",
            Self::WallTime => "the wall-clock time limit",
            Self::Memory => "the memory limit",
            Self::Output => "the output size limit",
            Self::RecursionDepth => "the recursion depth limit",
        }
    }
}

impl Outcome {
    /// One sentence for a person: what happened and, for a limit, what to do next.
    pub fn describe(&self) -> String {
        match self {
            Self::Finished => "The program finished.".to_owned(),
            Self::UncaughtException {
                exception_type,
                message,
                line,
            } => {
                let at = line.map(|l| format!(" on line {l}")).unwrap_or_default();
                format!("The program raised {exception_type}{at}: {message}")
            }
            Self::Exited { code } => format!("The program exited with status {code}."),
            Self::SyntaxError { message, line, .. } => {
                let at = line.map(|l| format!(" on line {l}")).unwrap_or_default();
                format!("The program has a syntax error{at}: {message}")
            }
            Self::LimitReached { limit, detail } => format!(
                "The run was stopped by {}: {detail}. Make the program do less work or raise the limit.",
                limit.describe()
            ),
            Self::Crashed { message } => format!("The run failed: {message}"),
        }
    }
}

/// A trace could not be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TraceError {
    #[error(
        "this trace has format version {found}, but this build reads version {TRACE_FORMAT_VERSION}; re-run the program to get a fresh trace"
    )]
    Version { found: u32 },
    #[error("the trace is inconsistent: {0}")]
    Inconsistent(String),
}

impl Trace {
    /// An empty trace that ended with `outcome` (a syntax error, a sandbox refusal).
    pub fn empty(outcome: Outcome) -> Self {
        Self {
            version: TRACE_FORMAT_VERSION,
            events: Vec::new(),
            frames: Vec::new(),
            values: Vec::new(),
            stdout: String::new(),
            stderr: String::new(),
            outcome,
        }
    }

    /// Checks the version and every internal reference, so that later code can index
    /// without bounds failures.
    pub fn validate(&self) -> Result<(), TraceError> {
        if self.version != TRACE_FORMAT_VERSION {
            return Err(TraceError::Version { found: self.version });
        }
        let n_values = self.values.len();
        let n_frames = self.frames.len();
        let bad_value = |id: ValueId| (id as usize) >= n_values;
        for (i, frame) in self.frames.iter().enumerate() {
            if frame.parent.is_some_and(|p| p as usize >= i) {
                return Err(TraceError::Inconsistent(format!(
                    "frame {i} has a parent recorded after it"
                )));
            }
        }
        for (i, value) in self.values.iter().enumerate() {
            let children: Vec<ValueId> = value.shape.children().collect();
            if children.iter().any(|&c| bad_value(c)) {
                return Err(TraceError::Inconsistent(format!("value {i} refers to a missing value")));
            }
        }
        for (i, event) in self.events.iter().enumerate() {
            if event.frame as usize >= n_frames {
                return Err(TraceError::Inconsistent(format!("event {i} refers to a missing frame")));
            }
            if event.locals.iter().any(|b| bad_value(b.value)) || event.value.is_some_and(bad_value) {
                return Err(TraceError::Inconsistent(format!("event {i} refers to a missing value")));
            }
            if event.stdout_len as usize > self.stdout.len() || event.stderr_len as usize > self.stderr.len() {
                return Err(TraceError::Inconsistent(format!(
                    "event {i} points past the end of the output"
                )));
            }
        }
        Ok(())
    }

    pub fn value(&self, id: ValueId) -> &Value {
        &self.values[id as usize]
    }

    pub fn frame(&self, id: FrameId) -> &Frame {
        &self.frames[id as usize]
    }

    /// The program's standard output up to (not including) event `index`.
    pub fn stdout_at(&self, index: usize) -> &str {
        let end = self
            .events
            .get(index)
            .map_or(self.stdout.len(), |e| e.stdout_len as usize);
        prefix_on_char_boundary(&self.stdout, end)
    }

    /// The program's standard error up to (not including) event `index`.
    pub fn stderr_at(&self, index: usize) -> &str {
        let end = self
            .events
            .get(index)
            .map_or(self.stderr.len(), |e| e.stderr_len as usize);
        prefix_on_char_boundary(&self.stderr, end)
    }
}

fn prefix_on_char_boundary(s: &str, mut end: usize) -> &str {
    end = end.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

impl Shape {
    /// The values this shape refers to directly.
    pub fn children(&self) -> Box<dyn Iterator<Item = ValueId> + '_> {
        match self {
            Self::Scalar | Self::Elided => Box::new(std::iter::empty()),
            Self::List { items, .. } | Self::Tuple { items, .. } | Self::Set { items, .. } => {
                Box::new(items.iter().copied())
            }
            Self::Dict { entries, .. } => Box::new(entries.iter().flat_map(|&(k, v)| [k, v])),
            Self::Object { attrs, .. } => Box::new(attrs.iter().map(|b| b.value)),
        }
    }
}

/// Cuts `repr` to at most `max_chars` characters, ending a cut in `...`.
pub fn cut_repr(repr: &str, max_chars: usize) -> String {
    if repr.chars().count() <= max_chars {
        return repr.to_owned();
    }
    let keep = max_chars.saturating_sub(3);
    let mut out: String = repr.chars().take(keep).collect();
    out.push_str("...");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_repr_keeps_short_values_and_marks_cuts() {
        assert_eq!(cut_repr("abc", 5), "abc");
        assert_eq!(cut_repr("abcdef", 5), "ab...");
        assert_eq!(cut_repr("ééééé", 5), "ééééé");
        assert_eq!(cut_repr(&"x".repeat(300), 200).chars().count(), 200);
    }

    #[test]
    fn version_mismatch_is_refused() {
        let mut t = Trace::empty(Outcome::Finished);
        t.version = 99;
        assert_eq!(t.validate(), Err(TraceError::Version { found: 99 }));
    }

    #[test]
    fn dangling_references_are_refused() {
        let mut t = Trace::empty(Outcome::Finished);
        t.frames.push(Frame {
            function: "<module>".into(),
            parent: None,
            depth: 0,
            is_generator: false,
            called_from_library: false,
        });
        t.events.push(Event {
            kind: EventKind::Line,
            frame: 0,
            line: 1,
            locals: vec![Binding {
                name: "x".into(),
                value: 3,
            }]
            .into(),
            value: None,
            stdout_len: 0,
            stderr_len: 0,
            internal: false,
            generator_exit: false,
        });
        assert!(matches!(t.validate(), Err(TraceError::Inconsistent(_))));
    }

    #[test]
    fn output_prefix_respects_char_boundaries() {
        let mut t = Trace::empty(Outcome::Finished);
        t.stdout = "héllo".into();
        assert_eq!(prefix_on_char_boundary(&t.stdout, 2), "h");
        assert_eq!(t.stdout_at(5), "héllo");
    }
}
