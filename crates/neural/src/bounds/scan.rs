//! An incremental check of a state line against [`Bounds`], byte by byte, so that the
//! decoder can try each candidate token on a clone.

use replayground_shared::trace_lang;
use replayground_shared::{State, StopKind};

use super::function_reprs::FunctionRepr;
use super::repr_shape::ReprShape;
use super::repr_text::ReprText;
use super::{Bounds, Kept};

/// What follows a module's return's variables: a module's code always returns `None`.
const RETURNS_NONE_TAIL: &[u8] = b" <|value|>\"None\"";

/// What follows any other return's or exception's variables: the value's repr comes next.
const VALUE_OPEN: &[u8] = b" <|value|>\"";

/// The markers a state line starts with, and their events (`None`: the end).
const MARKERS: [(&[u8], Option<StopKind>); 5] = [
    (b"<|call|>", Some(StopKind::Call)),
    (b"<|line|>", Some(StopKind::Line)),
    (b"<|return|>", Some(StopKind::Return)),
    (b"<|exception|>", Some(StopKind::Exception)),
    (trace_lang::END.as_bytes(), None),
];

/// Where a scan is in a state line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    Marker,
    Line,
    Depth,
    Function,
    /// ` <|vars|>` up to the opening brace.
    BeforeVars,
    /// Between entries of the variables' object.
    BetweenEntries,
    Key,
    /// `":"` between a key and its value.
    AfterKey,
    Value {
        escaped: bool,
    },
    /// What follows the variables where the bounds know it all (`at`: how much is written).
    Tail {
        at: usize,
    },
    /// Everything after the variables: not bounded (no code to bound it by).
    Rest,
    Done,
}

/// An incremental check of a state line against [`Bounds`]; clone it to try a piece.
#[derive(Debug, Clone)]
pub struct Scan<'b> {
    pub(super) bounds: &'b Bounds,
    pub(super) stage: Stage,
    /// The marker, number, function or key being written.
    pub(super) word: Vec<u8>,
    pub(super) event: Option<StopKind>,
    pub(super) line: u32,
    pub(super) depth: u32,
    pub(super) function: Option<String>,
    pub(super) keys: Vec<Vec<u8>>,
    /// The names this frame must show again, and how many of them are written.
    pub(super) kept: Option<&'b Kept>,
    pub(super) next_kept: usize,
    /// The value the bounds fix for the variable being written, and how much of it is.
    pub(super) value: Option<&'b [u8]>,
    pub(super) value_at: usize,
    /// The start of a value the model writes itself (enough to name a class), the last
    /// byte of it, and where its text is in its characters.
    pub(super) written: Vec<u8>,
    /// The names of the function reprs in the value being written.
    pub(super) functions: FunctionRepr,
    pub(super) last: u8,
    pub(super) text: ReprText,
    /// What must follow the variables, where the bounds know it (empty: not known).
    pub(super) tail: &'b [u8],
    /// The shape of the repr being written, and whether it is the value that ends the
    /// line (a return's or an exception's).
    pub(super) shape: ReprShape<'b>,
    pub(super) final_value: bool,
    /// The state the answer follows, where the caller tells it ([`Scan::following`]):
    /// a value then starts with `.` only where `..` may follow.
    pub(super) previous: Option<&'b State>,
    pub(super) previous_known: bool,
}

/// The names whose value a state of `function` at `depth` may write as the unchanged
/// marker `..`: those `previous` shows, when it is of the same frame.
pub(crate) fn unchanged_names<'s>(
    previous: Option<&'s State>,
    function: Option<&str>,
    depth: Option<u32>,
) -> impl Iterator<Item = &'s str> {
    previous
        .filter(|p| p.function.as_deref() == function && p.depth == depth)
        .and_then(|p| {
            if p.depth == Some(0) {
                p.globals.as_ref()
            } else {
                p.locals.as_ref()
            }
        })
        .into_iter()
        .flat_map(|vars| vars.0.iter().map(|(name, _)| name.as_str()))
}

/// How much of a value [`Scan::written`] keeps.
const WRITTEN_KEPT: usize = 64;

impl<'b> Scan<'b> {
    /// A scan of a state line from its first byte.
    pub(super) fn new(bounds: &'b Bounds) -> Self {
        Self {
            bounds,
            stage: Stage::Marker,
            word: Vec::new(),
            event: None,
            line: 0,
            depth: 0,
            function: None,
            keys: Vec::new(),
            kept: None,
            next_kept: 0,
            value: None,
            value_at: 0,
            written: Vec::new(),
            functions: FunctionRepr::default(),
            last: 0,
            text: ReprText::default(),
            tail: &[],
            shape: ReprShape::new(None, false),
            final_value: false,
            previous: None,
            previous_known: false,
        }
    }

    /// The scan, knowing the state the answer follows (which resolves `..`).
    #[must_use]
    pub fn following(mut self, previous: Option<&'b State>) -> Self {
        self.previous = previous;
        self.previous_known = true;
        self
    }

    /// Reads `bytes`; false once the line cannot keep to the bounds.
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| self.byte(b))
    }

    /// Whether the line written so far is a whole state line.
    pub fn finished(&self) -> bool {
        matches!(self.stage, Stage::Done | Stage::Rest)
    }

    /// What follows the variables of the state being written, where the bounds know
    /// it: a module's return value, or a callee's that the later state tells.
    fn known_tail(&self) -> &'b [u8] {
        let bounds = self.bounds;
        let returns = self.event == Some(StopKind::Return);
        if !(returns || self.event == Some(StopKind::Exception)) || bounds.facts.is_none() {
            return &[];
        }
        let returns_none = |function: &str| {
            function == super::MODULE
                || bounds
                    .facts
                    .as_ref()
                    .is_some_and(|facts| facts.class_body_returns_none(function, self.line))
        };
        if returns && self.function.as_deref().is_some_and(returns_none) {
            return RETURNS_NONE_TAIL;
        }
        match &bounds.callee_value {
            Some((depth, tail)) if returns && *depth == self.depth => tail,
            _ => VALUE_OPEN,
        }
    }

    /// Starts a repr: a variable's, or (`last`) the value at the end of the line.
    fn begin_value(&mut self, last: bool) {
        self.stage = Stage::Value { escaped: false };
        self.final_value = last;
        let words = self.bounds.facts.as_ref().and_then(|f| f.repr_words.as_deref());
        self.shape = ReprShape::new(words, !last && self.may_be_unchanged());
        self.written.clear();
        self.functions = FunctionRepr::default();
        self.last = b'"';
        self.text = ReprText::default();
    }

    /// The value of a module name that never changes once bound, where the state the
    /// answer follows is known: `..` after a state of the module that shows it, else its
    /// repr.
    fn constant(&self, key: &[u8]) -> Option<&'b [u8]> {
        let facts = self.bounds.facts.as_ref()?;
        if self.depth != 0 || !self.previous_known {
            return None;
        }
        let repr = facts.constants.get(std::str::from_utf8(key).ok()?)?;
        let unchanged = unchanged_names(self.previous, self.function.as_deref(), Some(0)).any(|n| n.as_bytes() == key);
        Some(if unchanged {
            trace_lang::UNCHANGED.as_bytes()
        } else {
            repr
        })
    }

    /// The value a function's frame shows for `key` the first time an activation begun
    /// since reaches its line, where the text fixes it ([`super::arrival`]).
    fn arrival_value(&self, key: &[u8]) -> Option<&'b [u8]> {
        let facts = self.bounds.facts.as_ref()?;
        let scope = facts.scope_at(self.function.as_deref()?, self.line)?;
        let arrival = scope.first_arrival(self.bounds.fresh_below, self.event?, self.line)?;
        arrival.values.get(std::str::from_utf8(key).ok()?).map(Vec::as_slice)
    }

    /// Whether the variable being written may be the unchanged marker `..`.
    fn may_be_unchanged(&self) -> bool {
        !self.previous_known
            || self.keys.last().is_some_and(|key| {
                unchanged_names(self.previous, self.function.as_deref(), Some(self.depth))
                    .any(|name| name.as_bytes() == key.as_slice())
            })
    }

    fn byte(&mut self, b: u8) -> bool {
        let bounds = self.bounds;
        match self.stage {
            Stage::Marker => {
                self.word.push(b);
                // Only the marker of an event some line of the code can have (a shape
                // may allow none), or the end (unless stepping back from it).
                let admitted =
                    |event: StopKind| bounds.live(event).next().is_some() && bounds.admits_line_prefix(event, &[]);
                let fits = MARKERS.iter().any(|(marker, event)| {
                    marker.starts_with(&self.word) && event.map_or(bounds.end_possible, admitted)
                });
                if !self.word.ends_with(b"|>") {
                    return fits;
                }
                let marker = std::mem::take(&mut self.word);
                match MARKERS.iter().find(|(m, _)| *m == marker.as_slice()) {
                    Some((_, Some(event))) => {
                        self.event = Some(*event);
                        self.stage = Stage::Line;
                    }
                    Some((_, None)) => self.stage = Stage::Done,
                    // Not a state's marker: the grammar refuses it.
                    None => {}
                }
                fits
            }
            Stage::Line | Stage::Depth | Stage::Function if b != b' ' => {
                self.word.push(b);
                self.word_admitted(false)
            }
            Stage::Line | Stage::Depth | Stage::Function => {
                let admitted = self.word_admitted(true);
                let word = std::mem::take(&mut self.word);
                let text = String::from_utf8_lossy(&word).into_owned();
                self.stage = match self.stage {
                    Stage::Line => {
                        self.line = text.parse().unwrap_or(0);
                        Stage::Depth
                    }
                    Stage::Depth => {
                        self.depth = text.parse().unwrap_or(0);
                        Stage::Function
                    }
                    _ => {
                        self.kept = bounds.kept_for(self.depth, &text);
                        self.function = Some(text);
                        Stage::BeforeVars
                    }
                };
                admitted
            }
            Stage::BeforeVars => {
                if b == b'{' {
                    self.stage = Stage::BetweenEntries;
                }
                true
            }
            Stage::BetweenEntries => match b {
                // Another entry only where some name can still come.
                b'"' | b',' => {
                    if b == b'"' {
                        self.stage = Stage::Key;
                    }
                    self.key_admitted(&[], false)
                }
                b'}' => {
                    self.tail = self.known_tail();
                    self.stage = if self.tail.is_empty() {
                        Stage::Rest
                    } else {
                        Stage::Tail { at: 0 }
                    };
                    self.kept_all()
                }
                _ => true,
            },
            Stage::Key if b == b'"' => {
                let key = std::mem::take(&mut self.word);
                let admitted = self.key_admitted(&key, true);
                if self
                    .kept
                    .is_some_and(|k| k.names.get(self.next_kept).is_some_and(|due| *due == key))
                {
                    self.next_kept += 1;
                }
                self.value = self
                    .kept
                    .zip(self.event)
                    .and_then(|(k, event)| k.fixed(event, self.line, &key))
                    .or_else(|| self.constant(&key))
                    .or_else(|| self.arrival_value(&key));
                self.value_at = 0;
                self.keys.push(key);
                self.stage = Stage::AfterKey;
                admitted
            }
            Stage::Key => {
                self.word.push(b);
                b != b'\\' && self.key_admitted(&self.word, false)
            }
            Stage::AfterKey => {
                if b == b'"' {
                    self.begin_value(false);
                }
                true
            }
            Stage::Value { escaped } => {
                if let Some(value) = self.value {
                    // A fixed value: its bytes, then the closing quote.
                    let Some(&due) = value.get(self.value_at) else {
                        self.stage = Stage::BetweenEntries;
                        self.value = None;
                        return b == b'"';
                    };
                    self.value_at += 1;
                    self.stage = Stage::Value {
                        escaped: !escaped && due == b'\\',
                    };
                    return b == due;
                }
                if !escaped && b == b'"' && self.text.closable() {
                    self.stage = if self.final_value {
                        Stage::Done
                    } else {
                        Stage::BetweenEntries
                    };
                    return self.shape.complete();
                }
                // The repr's own byte, the JSON escapes undone (a control character's
                // are refused where the repr's shape is checked); then its place in the
                // text's characters (UTF-8, the cut at `STATE_REPR_CHARS`).
                let shaped = match b {
                    _ if self.text.in_hex_escape() => b.is_ascii_hexdigit(),
                    b'u' | b'n' | b't' | b'r' | b'b' | b'f' if escaped => self.shape.control(),
                    // An escape's backslash only where its `\\` or `\"` can follow.
                    b'\\' if !escaped => self.text.backslash(&self.shape),
                    _ => self.shape.feed(b),
                };
                if !self.text.byte(b, escaped, &self.shape, shaped) {
                    return false;
                }
                self.stage = Stage::Value {
                    escaped: !escaped && b == b'\\',
                };
                // The tracer's text escapes `<|` inside a value.
                let marker = self.last == b'<' && b == b'|';
                self.last = b;
                if self.written.len() < WRITTEN_KEPT {
                    self.written.push(b);
                }
                let classes = bounds.facts.as_ref().and_then(|f| f.classes.as_deref());
                let functions = bounds.facts.as_ref().and_then(|f| f.functions.as_ref());
                !marker
                    && super::names::repr_prefix_admitted(classes, &self.written)
                    && self.functions.feed(b, functions)
            }
            Stage::Tail { at } => {
                let tail = self.tail;
                if at + 1 < tail.len() {
                    self.stage = Stage::Tail { at: at + 1 };
                } else if tail == VALUE_OPEN {
                    self.begin_value(true);
                } else {
                    self.stage = Stage::Done;
                }
                tail.get(at) == Some(&b)
            }
            Stage::Rest | Stage::Done => true,
        }
    }

    /// Whether the line, depth or function written so far (`whole`: and ended) fits.
    fn word_admitted(&self, whole: bool) -> bool {
        let bounds = self.bounds;
        let Some(event) = self.event else { return true };
        let text = String::from_utf8_lossy(&self.word);
        match self.stage {
            Stage::Line if whole => text.parse().is_ok_and(|line| bounds.admits_line(event, line)),
            Stage::Line => bounds.admits_line_prefix(event, &self.word),
            Stage::Depth if whole => text.parse().is_ok_and(|depth| {
                bounds.live(event).any(|s| s.admits_depth(depth))
                    && bounds.functions(event, self.line, depth).is_none_or(|f| !f.is_empty())
            }),
            Stage::Depth => bounds.admits_depth_prefix(event, self.line, &self.word),
            _ => bounds.functions(event, self.line, self.depth).is_none_or(|names| {
                names.iter().any(|name| {
                    if whole {
                        *name == text
                    } else {
                        name.as_bytes().starts_with(&self.word)
                    }
                })
            }),
        }
    }

    fn key_admitted(&self, key: &[u8], whole: bool) -> bool {
        // The tracer never shows a name that starts with `__`.
        if key.starts_with(b"__") || (whole && self.keys.iter().any(|k| k == key)) {
            return false;
        }
        // The next name the frame showed before, or (where new names may come now) a new one.
        let (due, kept) = match self.kept {
            Some(kept) => (kept.names.get(self.next_kept), kept.names.as_slice()),
            None => (None, &[][..]),
        };
        let taken = |name: &[u8]| self.keys.iter().any(|k| k == name) || kept.iter().any(|k| k == name);
        let admits = |name: &[u8], whole: bool, taken: &dyn Fn(&[u8]) -> bool| match (&self.function, self.event) {
            (Some(function), Some(event)) => self
                .bounds
                .admits_key(event, function, self.line, name, &self.keys, taken, whole),
            _ => true,
        };
        let frame_admits = |name: &[u8], whole: bool| admits(name, whole, &taken);
        if let Some(due) = due.filter(|due| if whole { *due == key } else { due.starts_with(key) }) {
            // Stepping back, the frame may have shown fewer names: the next must be one it
            // could show then.
            let written = |name: &[u8]| self.keys.iter().any(|k| k == name);
            return self.kept.is_none_or(|k| !k.prefix) || admits(due, true, &written);
        }
        let new_allowed = self.kept.is_none_or(|k| !k.appended || due.is_none());
        // One name must meet every bound: a fresh one the frame can show (two names
        // each meeting one would lead the decoder to a dead end).
        let fits = |n: &Vec<u8>| {
            !n.starts_with(b"__")
                && !taken(n)
                && (if whole { n == key } else { n.starts_with(key) })
                && frame_admits(n, true)
                && self.in_fresh_order(n)
        };
        let admitted = match self.kept.and_then(|k| k.fresh.as_ref()) {
            Some(fresh) => fresh.iter().any(fits) || self.kept.is_some_and(|k| k.optional.iter().any(fits)),
            None => frame_admits(key, whole),
        };
        new_allowed && admitted && (!whole || !taken(key))
    }

    /// Whether the answer comes after the statement that ran completed: a line event
    /// past it, or the frame's return.
    fn completed(&self, kept: &Kept) -> bool {
        match self.event {
            Some(StopKind::Line) => !kept.statement_lines.contains(&self.line),
            Some(StopKind::Return) => true,
            _ => false,
        }
    }

    /// Whether `name`, new in this state, may come now in the order the frame adds new
    /// names between two events: after each new one written so far, and after every one
    /// it must show that comes before it.
    fn in_fresh_order(&self, name: &[u8]) -> bool {
        let Some(kept) = self.kept else { return true };
        let place = |n: &[u8]| kept.fresh_order.iter().position(|o| o == n);
        let Some(at) = place(name) else { return true };
        let new = |n: &[u8]| !kept.names.iter().any(|k| k == n);
        let written = |n: &[u8]| self.keys.iter().any(|k| k == n);
        let after_written = self.keys.iter().all(|k| !new(k) || place(k).is_none_or(|p| p < at));
        let missing_before = self.completed(kept)
            && kept
                .required
                .iter()
                .any(|r| new(r) && !written(r) && place(r).is_some_and(|p| p < at));
        after_written && !missing_before
    }

    /// Whether every name the frame must show again has been written, and, past the
    /// statement that ran, every name it binds.
    fn kept_all(&self) -> bool {
        // A call binds every parameter (the tracer hides `__`-names).
        let written = |name: &str| self.keys.iter().any(|k| k == name.as_bytes());
        let called = self.event != Some(StopKind::Call)
            || self
                .function
                .as_deref()
                .and_then(|f| self.bounds.call_names(f, self.line))
                .is_none_or(|call| call.parameters.iter().all(|p| super::hidden(p) || written(p)));
        // The module (a plain class body, a function) shows what its statements before this one bound.
        let body_so_far = match (&self.bounds.facts, self.event, self.function.as_deref()) {
            (Some(facts), Some(event), Some(function)) => facts.required(function, event, self.line).all(written),
            _ => true,
        };
        called
            && body_so_far
            && self.kept.is_none_or(|k| {
                let completed = self.completed(k);
                let past = |end: u32| self.line > end && self.event.is_some_and(|e| e != StopKind::Call);
                (k.prefix || self.next_kept >= k.names.len())
                    && (!completed || k.required.iter().all(|name| self.keys.contains(name)))
                    && k.completed
                        .iter()
                        .all(|(end, names)| !past(*end) || names.iter().all(|name| self.keys.contains(name)))
            })
    }
}
