//! The heap diagram, as Python Tutor draws it: the frames on the call stack on the left,
//! the objects their variables refer to on the right, every reference an arrow. Two
//! arrows into one box are an alias, a highlighted slot is a mutation, a frame per call
//! shows recursion.
//!
//! Three pure steps, each tested natively (`tests.rs`): [`HeapModel::at`] here (what is
//! drawn, from the trace's structured values), [`layout::Layout::of`] (where, in whole
//! pixels) and [`svg::svg`] (one SVG string for the panel's HTML: a Leptos view per box
//! would cost the bundle more, and integer coordinates keep float formatting out of it).

use std::collections::HashMap;

use replayground_shared::state_tree::TreeChild;
use replayground_shared::text::group_thousands;
use replayground_shared::trace::{Shape, Value, cut_repr};
use replayground_shared::{StateTree, Stop, Trace, ValueId};

use crate::playground::stop_view::call_stack;

pub mod layout;
pub mod svg;
#[cfg(test)]
mod tests;

/// Lists and tuples of plain values up to this long are drawn as a row.
pub const ROW_ITEMS: usize = 16;
/// A deeper stack shows the module's frame and the innermost frames up to this many in
/// all, with one box saying how many were left out between them.
pub const MAX_FRAMES: usize = 40;
/// Text is cut (ending in `...`) past these many characters.
const LABEL_CHARS: usize = 16;
const VALUE_CHARS: usize = 24;
const TITLE_CHARS: usize = 40;

/// One row of a box: a variable, an item, a key or an attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub label: String,
    pub value: SlotValue,
    /// The last step changed it.
    pub changed: bool,
}

/// What a row holds: a number, string or `None` written in place, or a reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotValue {
    Inline(String),
    /// Index into [`HeapModel::objects`].
    Ref(usize),
}

/// A frame on the call stack, outermost first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameBox {
    pub title: String,
    pub activation: u32,
    pub slots: Vec<Slot>,
    /// The frame the variables table would show (the innermost unless another was picked).
    pub current: bool,
}

/// A Python object: a container, an instance with its attributes, a function or a class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectBox {
    pub object_id: u64,
    /// `list`, `Node`, `function average(xs)`, `class Node`...
    pub title: String,
    pub slots: Vec<Slot>,
    /// Items were cut (the tracer records 50 per container) or it was not expanded.
    pub more: bool,
    /// A short list or tuple of plain values, drawn as one row of cells under their indexes.
    pub row: bool,
}

/// Everything the diagram shows at one stop.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeapModel {
    pub frames: Vec<FrameBox>,
    /// In the order they are first reached from the frames (depth first).
    pub objects: Vec<ObjectBox>,
}

/// Objects are told apart by `id()`; a value the tracer gave no id is its own object.
fn object_key(trace: &Trace, id: ValueId) -> u64 {
    match trace.value(id).object_id {
        0 => (1 << 63) | u64::from(id),
        object_id => object_id,
    }
}

/// Values drawn as a box with an arrow rather than written in place.
pub fn is_heap(value: &Value) -> bool {
    !value.shape.is_scalar()
        || matches!(
            value.type_name.as_str(),
            "function" | "type" | "method" | "builtin_function_or_method" | "generator" | "module"
        )
}

/// The rows of a container or instance: (label, value) in Python's order.
fn parts(trace: &Trace, shape: &Shape) -> Vec<(String, ValueId)> {
    match shape {
        Shape::Scalar | Shape::Elided => Vec::new(),
        Shape::List { items, .. } | Shape::Tuple { items, .. } => {
            items.iter().enumerate().map(|(i, &v)| (i.to_string(), v)).collect()
        }
        Shape::Set { items, .. } => items.iter().map(|&v| (String::new(), v)).collect(),
        Shape::Dict { entries, .. } => entries
            .iter()
            .map(|&(k, v)| (cut_repr(&trace.value(k).repr, LABEL_CHARS), v))
            .collect(),
        Shape::Object { attrs, .. } => attrs.iter().map(|b| (b.name.clone(), b.value)).collect(),
    }
}

fn truncated(shape: &Shape) -> bool {
    match shape {
        Shape::List { truncated, .. }
        | Shape::Tuple { truncated, .. }
        | Shape::Set { truncated, .. }
        | Shape::Dict { truncated, .. }
        | Shape::Object { truncated, .. } => *truncated,
        Shape::Elided => true,
        Shape::Scalar => false,
    }
}

/// The text between `start` and the next `end` in `text`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(start)?;
    Some(&rest[..rest.find(end)?])
}

/// The parameters of `def name(...)` in `code`, whitespace collapsed (first definition).
pub fn parameters(code: &str, name: &str) -> Option<String> {
    let mut lines = code.split('\n');
    let header = format!("def {name}(");
    let start = lines.find_map(|line| {
        let line = line.trim_ascii_start();
        let line = line.strip_prefix("async ").unwrap_or(line);
        line.strip_prefix(&header)
    })?;
    let mut out = String::new();
    let mut depth = 0;
    for c in start
        .chars()
        .chain(std::iter::once('\n'))
        .chain(lines.flat_map(|l| l.chars().chain(['\n'])))
    {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return Some(out),
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if c.is_ascii_whitespace() {
            if !out.is_empty() && !out.ends_with(' ') && !out.ends_with('(') {
                out.push(' ');
            }
        } else {
            if c == ')' && out.ends_with(' ') {
                out.pop();
            }
            out.push(c);
        }
    }
    None
}

/// A function, class, method, generator or module in a few words instead of its
/// `<function average at 0x7f...>` repr: `function average(xs)`, `class Node`.
pub fn short_form(value: &Value, code: &str) -> String {
    let repr = value.repr.as_str();
    let named = |kind: &str, start: &str, end: &str| between(repr, start, end).map(|name| format!("{kind} {name}"));
    let text = match value.type_name.as_str() {
        "function" => between(repr, "<function ", " at 0x").map(|qualified| {
            let name = qualified.rsplit('.').next().unwrap_or(qualified);
            match parameters(code, name) {
                Some(params) => format!("function {name}({params})"),
                None => format!("function {qualified}"),
            }
        }),
        "type" => between(repr, "<class '", "'>").map(|q| format!("class {}", q.rsplit('.').next().unwrap_or(q))),
        "method" => named("method", "<bound method ", " of "),
        "generator" => named("generator", "<generator object ", " at 0x"),
        "module" => named("module", "<module '", "'"),
        _ => None,
    };
    text.unwrap_or_else(|| repr.split(" at 0x").next().unwrap_or(repr).to_owned())
}

/// The event whose frames a stop shows: the stop's own, or after the end the module's
/// last event (its final globals).
pub fn shown_event(tree: &StateTree, stop: Stop) -> Option<usize> {
    stop.event().or_else(|| {
        let root = tree.roots().next()?;
        tree.activations()[root as usize]
            .children
            .iter()
            .rev()
            .find_map(|c| match *c {
                TreeChild::Event(i) => Some(i),
                TreeChild::Activation(_) => None,
            })
    })
}

/// The frames at a stop: (activation, event the frame is at, title), outermost first; past
/// [`MAX_FRAMES`], the outermost one and the innermost ones, and how many were left out.
fn frames_at(tree: &StateTree, index: usize) -> (Vec<(u32, usize, String)>, usize) {
    let mut stack = call_stack(tree, index);
    let hidden = stack.len().saturating_sub(MAX_FRAMES);
    stack.drain(1..=hidden);
    let frames = stack
        .into_iter()
        .map(|entry| {
            let depth = tree.activations()[entry.activation as usize].depth;
            let title = if depth == 0 {
                "Global frame".to_owned()
            } else {
                crate::playground::stop_view::function_label(&entry.function)
            };
            (entry.activation, entry.event, title)
        })
        .collect();
    (frames, hidden)
}

/// The newest snapshot of every object reachable from the frames at `index`: frames
/// further out are at older events (their call sites), so the innermost frame's view of
/// an object wins, and an expanded snapshot beats an elided one.
fn snapshots(tree: &StateTree, frames: &[(u32, usize, String)]) -> HashMap<u64, ValueId> {
    let trace = tree.trace();
    let mut best = HashMap::new();
    let mut stack: Vec<ValueId> = Vec::new();
    for &(_, event, _) in frames.iter().rev() {
        stack.extend(trace.events[event].locals.iter().map(|b| b.value));
        while let Some(id) = stack.pop() {
            let value = trace.value(id);
            if !is_heap(value) {
                continue;
            }
            let key = object_key(trace, id);
            match best.get(&key) {
                Some(&kept) if !matches!(trace.value(kept).shape, Shape::Elided) || value.shape == Shape::Elided => {}
                _ => {
                    best.insert(key, id);
                    stack.extend(value.shape.children());
                }
            }
        }
    }
    best
}

/// Makes one box per object reachable from the frames, depth first, from its newest snapshot.
struct Builder<'a> {
    trace: &'a Trace,
    code: &'a str,
    best: HashMap<u64, ValueId>,
    before: HashMap<u64, ValueId>,
    index: HashMap<u64, usize>,
    objects: Vec<ObjectBox>,
}

impl Builder<'_> {
    fn slot(&mut self, label: String, id: ValueId, changed: bool) -> Slot {
        let value = self.trace.value(id);
        let value = if is_heap(value) {
            SlotValue::Ref(self.object(id))
        } else {
            SlotValue::Inline(cut_repr(&value.repr, VALUE_CHARS))
        };
        Slot { label, value, changed }
    }

    /// The box of the object `id` is a snapshot of, made (depth first) on first sight.
    fn object(&mut self, id: ValueId) -> usize {
        let key = object_key(self.trace, id);
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let shown = self.best.get(&key).copied().unwrap_or(id);
        let value = self.trace.value(shown);
        let i = self.objects.len();
        self.index.insert(key, i);
        let title = if value.shape.is_scalar() {
            short_form(value, self.code)
        } else {
            value.type_name.clone()
        };
        self.objects.push(ObjectBox {
            object_id: value.object_id,
            title: cut_repr(&title, TITLE_CHARS),
            slots: Vec::new(),
            more: truncated(&value.shape),
            row: false,
        });
        // What the same object held at the previous stop, row by row, marks mutations.
        let before: Option<Vec<(String, ValueId)>> = self
            .before
            .get(&key)
            .filter(|&&old| old != shown)
            .map(|&old| parts(self.trace, &self.trace.value(old).shape));
        let mut slots = Vec::new();
        for (label, child) in parts(self.trace, &value.shape) {
            let changed = before.as_ref().is_some_and(|old| {
                old.iter()
                    .find(|(l, _)| *l == label)
                    .is_none_or(|&(_, was)| !same_value(self.trace, was, child))
            });
            slots.push(self.slot(label, child, changed));
        }
        let row = matches!(value.shape, Shape::List { .. } | Shape::Tuple { .. })
            && (1..=ROW_ITEMS).contains(&slots.len())
            && !self.objects[i].more
            && slots.iter().all(|s| matches!(s.value, SlotValue::Inline(_)));
        self.objects[i].row = row;
        self.objects[i].slots = slots;
        i
    }
}

/// A row shows the same thing: the same object for a reference (its mutations show in
/// its own box), the same text for a value written in place.
fn same_value(trace: &Trace, a: ValueId, b: ValueId) -> bool {
    let (a, b) = (trace.value(a), trace.value(b));
    match (is_heap(a), is_heap(b)) {
        (true, true) => a.object_id == b.object_id,
        (false, false) => a.repr == b.repr,
        _ => false,
    }
}

impl HeapModel {
    /// The frames on the stack at `stop` and every object they reach; what changed since
    /// `previous` is marked. `code` is the program that ran (for functions' parameters).
    pub fn at(tree: &StateTree, stop: Stop, previous: Option<Stop>, inspected: Option<u32>, code: &str) -> Self {
        let Some(index) = shown_event(tree, stop) else {
            return Self::default();
        };
        let trace = tree.trace();
        let (frames, hidden) = frames_at(tree, index);
        let before_index = previous.and_then(|p| shown_event(tree, p)).filter(|&p| p != index);
        let before = before_index.map_or_else(HashMap::new, |p| snapshots(tree, &frames_at(tree, p).0));
        let mut builder = Builder {
            trace,
            code,
            best: snapshots(tree, &frames),
            before,
            index: HashMap::new(),
            objects: Vec::new(),
        };
        let current = inspected
            .filter(|a| frames.iter().any(|f| f.0 == *a))
            .or(frames.last().map(|f| f.0));
        let mut boxes = Vec::with_capacity(frames.len());
        for (activation, at, title) in frames {
            let event = &trace.events[at];
            let bindings: Vec<_> = event.locals.iter().filter(|b| !b.name.starts_with("__")).collect();
            // Only the innermost frame moved; the others wait at their call sites.
            let before = before_index
                .filter(|&p| at == index && trace.events[p].frame == event.frame)
                .map(|p| &trace.events[p].locals);
            let slots = bindings
                .into_iter()
                .map(|b| {
                    let changed = before.is_some_and(|old| {
                        old.iter()
                            .find(|o| o.name == b.name)
                            .is_none_or(|o| !same_value(trace, o.value, b.value))
                    });
                    builder.slot(b.name.clone(), b.value, changed)
                })
                .collect();
            boxes.push(FrameBox {
                title,
                activation,
                slots,
                current: Some(activation) == current,
            });
            if boxes.len() == 1 && hidden > 0 {
                boxes.push(FrameBox {
                    title: format!("… {} more frames …", group_thousands(hidden as u64)),
                    activation: u32::MAX,
                    slots: Vec::new(),
                    current: false,
                });
            }
        }
        Self {
            frames: boxes,
            objects: builder.objects,
        }
    }

    pub fn references(&self) -> usize {
        self.frames
            .iter()
            .flat_map(|f| &f.slots)
            .chain(self.objects.iter().flat_map(|o| &o.slots))
            .filter(|s| matches!(s.value, SlotValue::Ref(_)))
            .count()
    }
}
