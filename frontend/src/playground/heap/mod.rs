//! The heap diagram, as Python Tutor draws it: the frames on the call stack on the left,
//! the objects their variables refer to on the right, every reference an arrow. Two
//! arrows into one box are an alias, a highlighted slot is a mutation, a frame per call
//! shows recursion.
//!
//! Three pure steps, each tested natively: [`HeapModel::at`] (what is drawn, from the
//! trace's structured values), [`Layout::of`] (where, in whole pixels) and [`svg`] (one
//! SVG string for the panel's HTML: a Leptos view per box would cost the bundle more, and
//! integer coordinates keep float formatting out of it).

use std::collections::HashMap;
use std::fmt::Write as _;

use replayground_shared::state_tree::TreeChild;
use replayground_shared::text::group_thousands;
use replayground_shared::trace::{Shape, Value, cut_repr};
use replayground_shared::{StateTree, Stop, Trace, ValueId};

use crate::playground::stop_view::call_stack;
use crate::playground::syntax::push_escaped;

/// Width of one character of the diagram's monospace text (13 px; style.css `.heap`).
pub const CHAR_W: i32 = 8;
/// Height of a box's title row and of each slot row.
pub const HEAD_H: i32 = 24;
pub const ROW_H: i32 = 22;
/// Inner padding of a cell.
pub const PAD: i32 = 6;
/// Width of a value cell holding only a reference's dot.
pub const DOT_W: i32 = 28;
/// Vertical space between boxes in one column, and horizontal space between columns
/// (room for the arrows).
pub const GAP_Y: i32 = 14;
pub const GAP_X: i32 = 64;
/// Height of the indexes above a row of cells.
pub const INDEX_H: i32 = 14;
/// Lists and tuples of plain values up to this long are drawn as a row.
pub const ROW_ITEMS: usize = 16;
/// Objects nested deeper than this many columns share the last column.
pub const MAX_COLUMNS: usize = 4;
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

/// A box's place and size, and where its label column ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BoxPlace {
    pub x: i32,
    pub y: i32,
    pub w: i32,
    pub h: i32,
    pub label_w: i32,
}

impl BoxPlace {
    /// The vertical middle of row `i`.
    pub fn row_mid(&self, i: usize) -> i32 {
        self.y + HEAD_H + i as i32 * ROW_H + ROW_H / 2
    }
}

/// An arrow from a reference's dot to its object's box: into the box's left side, or,
/// `back` when the box is not right of the dot (a cycle, a box in the same column), into
/// its right side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    pub from: (i32, i32),
    pub to: (i32, i32),
    pub back: bool,
}

/// Where everything goes, in pixels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    pub width: i32,
    pub height: i32,
    pub frames: Vec<BoxPlace>,
    pub objects: Vec<BoxPlace>,
    pub edges: Vec<Edge>,
}

fn text_w(text: &str) -> i32 {
    text.chars().count() as i32 * CHAR_W + 2 * PAD
}

/// The width of a value's cell: its text, or a reference's dot.
fn cell_w(slot: &Slot) -> i32 {
    match &slot.value {
        SlotValue::Inline(text) => text_w(text).max(DOT_W),
        SlotValue::Ref(_) => DOT_W,
    }
}

/// The label and value column widths a box's rows need.
fn columns(slots: &[Slot]) -> (i32, i32) {
    let label_w = slots.iter().map(|s| text_w(&s.label)).max().unwrap_or(0);
    let value_w = slots.iter().map(cell_w).max().unwrap_or(0);
    (label_w, value_w)
}

fn box_height(rows: usize, more: bool) -> i32 {
    HEAD_H + (rows + usize::from(more)) as i32 * ROW_H + if rows == 0 && !more { 4 } else { 0 }
}

impl Layout {
    /// Frames stacked in the first column; each object in the column of its distance from
    /// the frames (capped at [`MAX_COLUMNS`]), level with the row that first refers to it
    /// when there is room, below the box above it otherwise.
    pub fn of(model: &HeapModel) -> Self {
        // Frames share one width, so their columns line up.
        let (mut label_w, mut value_w, mut title_w) = (0, 0, 0);
        for frame in &model.frames {
            let (l, v) = columns(&frame.slots);
            label_w = label_w.max(l);
            value_w = value_w.max(v);
            title_w = title_w.max(text_w(&frame.title));
        }
        let frame_w = (label_w + value_w).max(title_w);
        let mut frames = Vec::with_capacity(model.frames.len());
        let mut y = 0;
        for frame in &model.frames {
            let h = box_height(frame.slots.len(), false);
            frames.push(BoxPlace {
                x: 0,
                y,
                w: frame_w,
                h,
                label_w,
            });
            y += h + GAP_Y;
        }

        // Columns: breadth-first distance from the frames.
        let n = model.objects.len();
        let mut column = vec![usize::MAX; n];
        let mut queue = std::collections::VecDeque::new();
        for frame in &model.frames {
            for slot in &frame.slots {
                if let SlotValue::Ref(o) = slot.value
                    && column[o] == usize::MAX
                {
                    column[o] = 0;
                    queue.push_back(o);
                }
            }
        }
        while let Some(o) = queue.pop_front() {
            for slot in &model.objects[o].slots {
                if let SlotValue::Ref(child) = slot.value
                    && column[child] == usize::MAX
                {
                    column[child] = (column[o] + 1).min(MAX_COLUMNS - 1);
                    queue.push_back(child);
                }
            }
        }
        let column: Vec<usize> = column.into_iter().map(|c| c.min(MAX_COLUMNS - 1)).collect();

        let mut objects: Vec<BoxPlace> = model
            .objects
            .iter()
            .map(|object| {
                if object.row {
                    let cells: i32 = object.slots.iter().map(cell_w).sum();
                    return BoxPlace {
                        x: 0,
                        y: 0,
                        w: cells.max(text_w(&object.title)),
                        h: HEAD_H + INDEX_H + ROW_H,
                        label_w: 0,
                    };
                }
                let (label_w, value_w) = columns(&object.slots);
                BoxPlace {
                    x: 0,
                    y: 0,
                    w: (label_w + value_w).max(text_w(&object.title)),
                    h: box_height(object.slots.len(), object.more),
                    label_w,
                }
            })
            .collect();
        let mut column_x = [0; MAX_COLUMNS];
        let mut x = frame_w + GAP_X;
        for (c, slot) in column_x.iter_mut().enumerate() {
            *slot = x;
            let widest = (0..n).filter(|&o| column[o] == c).map(|o| objects[o].w).max();
            if let Some(w) = widest {
                x += w + GAP_X;
            }
        }

        // Rows: the first reference already placed anchors each box.
        let mut anchor: Vec<Option<i32>> = vec![None; n];
        for (frame, place) in model.frames.iter().zip(&frames) {
            for (i, slot) in frame.slots.iter().enumerate() {
                if let SlotValue::Ref(o) = slot.value {
                    anchor[o].get_or_insert(place.row_mid(i));
                }
            }
        }
        let mut next_free = [0; MAX_COLUMNS];
        for o in 0..n {
            let c = column[o];
            let wanted = anchor[o].map_or(0, |a| a - HEAD_H / 2).max(0);
            let place = &mut objects[o];
            place.x = column_x[c];
            place.y = wanted.max(next_free[c]);
            next_free[c] = place.y + place.h + GAP_Y;
            let place = *place;
            for (i, slot) in model.objects[o].slots.iter().enumerate() {
                if let SlotValue::Ref(child) = slot.value
                    && child > o
                {
                    anchor[child].get_or_insert(place.row_mid(i));
                }
            }
        }

        let mut edges = Vec::with_capacity(model.references());
        let owners = model
            .frames
            .iter()
            .map(|f| &f.slots)
            .zip(&frames)
            .chain(model.objects.iter().map(|o| &o.slots).zip(&objects));
        for (slots, place) in owners {
            for (i, slot) in slots.iter().enumerate() {
                let SlotValue::Ref(o) = slot.value else {
                    continue;
                };
                let from = (place.x + place.label_w + DOT_W / 2, place.row_mid(i));
                let target = objects[o];
                let back = target.x <= from.0;
                let to = (if back { target.x + target.w } else { target.x }, target.y + HEAD_H / 2);
                edges.push(Edge { from, to, back });
            }
        }
        let width = frames.iter().chain(&objects).map(|p| p.x + p.w).max().unwrap_or(0) + 2;
        let height = frames.iter().chain(&objects).map(|p| p.y + p.h).max().unwrap_or(0) + 2;
        Self {
            width,
            height,
            frames,
            objects,
            edges,
        }
    }
}

/// The arrow's path: a curve leaving its dot to the right and entering the box from the
/// left, or for a back reference looping round into the box's right side.
pub fn edge_path(edge: &Edge) -> String {
    let ((x1, y1), (x2, y2)) = (edge.from, edge.to);
    if edge.back {
        let out = x1.max(x2) + 40;
        format!("M{x1} {y1}C{out} {y1} {out} {y2} {x2} {y2}")
    } else {
        let bend = ((x2 - x1) / 2).max(24);
        format!("M{x1} {y1}C{} {y1} {} {y2} {x2} {y2}", x1 + bend, x2 - bend)
    }
}

/// A box (frame or object) as SVG: title row, then one row per slot, label right-aligned
/// in its column, the value (or a reference's dot) in the next.
fn push_box(out: &mut String, place: &BoxPlace, title: &str, slots: &[Slot], more: bool, row: bool) {
    let BoxPlace { x, y, w, h, label_w } = *place;
    let _ = write!(
        out,
        r#"<rect class="box" x="{x}" y="{y}" width="{w}" height="{h}" rx="4"/><text class="title" x="{}" y="{}">"#,
        x + PAD,
        y + 17
    );
    push_escaped(out, title);
    out.push_str("</text>");
    if row {
        // Python Tutor's list: cells side by side, each under its index.
        let top = y + HEAD_H + INDEX_H;
        let mut left = x;
        for slot in slots {
            let cell = cell_w(slot);
            let class = if slot.changed { "cell changed" } else { "cell" };
            let _ = write!(
                out,
                r#"<rect class="{class}" x="{left}" y="{top}" width="{cell}" height="{ROW_H}"/><text class="index" x="{}" y="{}">"#,
                left + PAD,
                top - 3
            );
            push_escaped(out, &slot.label);
            let _ = write!(
                out,
                r#"</text><text class="value" x="{}" y="{}">"#,
                left + PAD,
                top + ROW_H / 2 + 5
            );
            if let SlotValue::Inline(text) = &slot.value {
                push_escaped(out, text);
            }
            out.push_str("</text>");
            left += cell;
        }
        return;
    }
    for (i, slot) in slots.iter().enumerate() {
        let top = y + HEAD_H + i as i32 * ROW_H;
        let mid = top + ROW_H / 2;
        let class = if slot.changed { "cell changed" } else { "cell" };
        let _ = write!(
            out,
            r#"<rect class="{class}" x="{}" y="{top}" width="{}" height="{ROW_H}"/>"#,
            x + label_w,
            w - label_w
        );
        if !slot.label.is_empty() {
            let _ = write!(
                out,
                r#"<text class="label" x="{}" y="{}" text-anchor="end">"#,
                x + label_w - PAD,
                mid + 5
            );
            push_escaped(out, &slot.label);
            out.push_str("</text>");
        }
        match &slot.value {
            SlotValue::Inline(text) => {
                let _ = write!(out, r#"<text class="value" x="{}" y="{}">"#, x + label_w + PAD, mid + 5);
                push_escaped(out, text);
                out.push_str("</text>");
            }
            SlotValue::Ref(_) => {
                let _ = write!(
                    out,
                    r#"<circle class="dot" cx="{}" cy="{mid}" r="4"/>"#,
                    x + label_w + DOT_W / 2
                );
            }
        }
    }
    if more {
        let _ = write!(
            out,
            r#"<text class="label" x="{}" y="{}">… (not recorded)</text>"#,
            x + PAD,
            y + HEAD_H + slots.len() as i32 * ROW_H + ROW_H / 2 + 5
        );
    }
}

/// The diagram as one `<svg>` element (see style.css `.heap`); frames carry
/// `data-activation` for the panel's click handler, objects `data-object` (their `id()`).
pub fn svg(model: &HeapModel, layout: &Layout) -> String {
    let mut out = String::with_capacity(512 + (model.frames.len() + model.objects.len()) * 400);
    let (w, h) = (layout.width, layout.height);
    let _ = write!(
        out,
        r#"<svg class="heap" data-testid="heap" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="-2 -2 {} {}" role="img" aria-label="{} frames, {} objects, {} references">"#,
        w + 4,
        h + 4,
        w + 4,
        h + 4,
        model.frames.len(),
        model.objects.len(),
        layout.edges.len()
    );
    out.push_str(
        r#"<defs><marker id="heap-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto"><path d="M0 0L10 5L0 10z"/></marker></defs>"#,
    );
    for (frame, place) in model.frames.iter().zip(&layout.frames) {
        let _ = write!(
            out,
            r#"<g class="{}" data-activation="{}">"#,
            if frame.current { "frame current" } else { "frame" },
            frame.activation
        );
        push_box(&mut out, place, &frame.title, &frame.slots, false, false);
        out.push_str("</g>");
    }
    for (object, place) in model.objects.iter().zip(&layout.objects) {
        let _ = write!(out, r#"<g class="object" data-object="{}">"#, object.object_id);
        push_box(&mut out, place, &object.title, &object.slots, object.more, object.row);
        out.push_str("</g>");
    }
    for edge in &layout.edges {
        let _ = write!(
            out,
            r#"<path class="{}" d="{}" marker-end="url(#heap-arrow)"/>"#,
            if edge.back { "ref back" } else { "ref" },
            edge_path(edge)
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heap_tree() -> (StateTree, &'static str) {
        let trace: Trace = serde_json::from_str(include_str!("../../../tests/fixtures/heap.json")).unwrap();
        (
            StateTree::new(trace).unwrap(),
            include_str!("../../../tests/fixtures/heap.py"),
        )
    }

    fn slot_named<'a>(slots: &'a [Slot], label: &str) -> &'a Slot {
        slots.iter().find(|s| s.label == label).unwrap()
    }

    fn target(slot: &Slot) -> usize {
        match slot.value {
            SlotValue::Ref(o) => o,
            SlotValue::Inline(ref text) => panic!("{} is written in place ({text})", slot.label),
        }
    }

    #[test]
    fn short_forms_name_functions_with_their_parameters() {
        let code = "def average(xs):\n    pass\n\nasync def fetch(url,\n          *, retries=3):\n    pass\n";
        let cases = [
            ("<function average at 0x7f01>", "function", "function average(xs)"),
            (
                "<function fetch at 0x7f01>",
                "function",
                "function fetch(url, *, retries=3)",
            ),
            (
                "<function outer.<locals>.<lambda> at 0x7f01>",
                "function",
                "function outer.<locals>.<lambda>",
            ),
            ("<class '__main__.Node'>", "type", "class Node"),
            (
                "<bound method Node.size of <__main__.Node object at 0x1>>",
                "method",
                "method Node.size",
            ),
            ("<module 'math' (built-in)>", "module", "module math"),
            ("<Thing object at 0x7f01>", "Thing", "<Thing object"),
        ];
        for (repr, type_name, short) in cases {
            let value = Value {
                repr: repr.into(),
                type_name: type_name.into(),
                object_id: 1,
                shape: Shape::Scalar,
            };
            assert_eq!(short_form(&value, code), short, "{repr}");
        }
    }

    #[test]
    fn frames_point_at_shared_objects_and_objects_show_their_attributes() {
        let (tree, code) = heap_tree();
        let end = HeapModel::at(&tree, Stop::End, None, None, code);
        assert_eq!(end.frames.len(), 1);
        let globals = &end.frames[0];
        assert_eq!(globals.title, "Global frame");
        let names: Vec<&str> = globals.slots.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(names, ["average", "Node", "nums", "alias", "pair", "ages", "head"]);
        // An alias is a second arrow into the same box, and the tuple's item a third.
        let nums = target(slot_named(&globals.slots, "nums"));
        assert_eq!(target(slot_named(&globals.slots, "alias")), nums);
        let pair = &end.objects[target(slot_named(&globals.slots, "pair"))];
        assert_eq!(pair.title, "tuple");
        assert_eq!(target(&pair.slots[0]), nums);
        assert_eq!(pair.slots[1].value, SlotValue::Inline("'hi'".into()));
        let list = &end.objects[nums];
        assert_eq!(list.title, "list");
        assert!(
            list.row && !pair.row,
            "plain values in a row; a reference keeps its own line"
        );
        let items: Vec<_> = list.slots.iter().map(|s| (s.label.as_str(), s.value.clone())).collect();
        assert_eq!(items[3], ("3", SlotValue::Inline("4".into())));
        assert_eq!(
            end.objects[target(slot_named(&globals.slots, "average"))].title,
            "function average(xs)"
        );
        assert_eq!(
            end.objects[target(slot_named(&globals.slots, "Node"))].title,
            "class Node"
        );
        assert_eq!(
            slot_named(&end.objects[target(slot_named(&globals.slots, "ages"))].slots, "'ada'").value,
            SlotValue::Inline("36".into())
        );
        // A linked list: each node a box, `next` an arrow to the next one.
        let head = &end.objects[target(slot_named(&globals.slots, "head"))];
        assert_eq!(head.title, "Node");
        assert_eq!(slot_named(&head.slots, "value").value, SlotValue::Inline("1".into()));
        let second = &end.objects[target(slot_named(&head.slots, "next"))];
        assert_eq!(
            slot_named(&second.slots, "next").value,
            SlotValue::Inline("None".into())
        );
        // Every object once, however many names refer to it.
        let mut ids: Vec<u64> = end.objects.iter().map(|o| o.object_id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), end.objects.len());
        assert_eq!(end.references(), 9);
    }

    #[test]
    fn a_call_adds_a_frame_and_a_mutation_is_marked() {
        let (tree, code) = heap_tree();
        let events = &tree.trace().events;
        // The append (line 16 -> 17): the list gained a highlighted row.
        let append = events.iter().rposition(|e| e.line == 16 && e.frame == 0).unwrap();
        let after = HeapModel::at(&tree, Stop::Event(append + 1), Some(Stop::Event(append)), None, code);
        let nums = target(slot_named(&after.frames[0].slots, "nums"));
        let changed: Vec<&str> = after.objects[nums]
            .slots
            .iter()
            .filter(|s| s.changed)
            .map(|s| s.label.as_str())
            .collect();
        assert_eq!(changed, ["3"]);
        // Inside average(): two frames, `xs` an arrow into the caller's list.
        let inside = events
            .iter()
            .position(|e| e.line == 2 && e.kind == replayground_shared::EventKind::Line)
            .unwrap();
        let call = HeapModel::at(&tree, Stop::Event(inside), None, None, code);
        let titles: Vec<&str> = call.frames.iter().map(|f| f.title.as_str()).collect();
        assert_eq!(titles, ["Global frame", "average()"]);
        assert!(call.frames[1].current && !call.frames[0].current);
        assert_eq!(
            target(slot_named(&call.frames[1].slots, "xs")),
            target(slot_named(&call.frames[0].slots, "nums"))
        );
        let picked = HeapModel::at(&tree, Stop::Event(inside), None, Some(call.frames[0].activation), code);
        assert!(picked.frames[0].current && !picked.frames[1].current);
    }

    #[test]
    fn a_deep_stack_keeps_the_module_and_the_innermost_frames() {
        let trace: Trace = serde_json::from_str(include_str!("../../../tests/fixtures/deep.json")).unwrap();
        let tree = StateTree::new(trace).unwrap();
        // `down(0)` about to return: the module and 46 calls of down() on the stack.
        let bottom = tree.trace().events.iter().position(|e| e.line == 3).unwrap();
        let model = HeapModel::at(
            &tree,
            Stop::Event(bottom),
            None,
            None,
            include_str!("../../../tests/fixtures/deep.py"),
        );
        let titles: Vec<&str> = model.frames.iter().map(|f| f.title.as_str()).collect();
        assert_eq!(titles.len(), MAX_FRAMES + 1);
        assert_eq!(titles[..3], ["Global frame", "… 7 more frames …", "down()"]);
        assert!(model.frames[1].slots.is_empty() && !model.frames[1].current);
        assert_eq!(
            model.frames.last().unwrap().slots[0].value,
            SlotValue::Inline("0".into())
        );
        assert!(model.frames.last().unwrap().current);
    }

    #[test]
    fn the_layout_puts_objects_right_of_what_refers_to_them_without_overlaps() {
        let (tree, code) = heap_tree();
        let model = HeapModel::at(&tree, Stop::End, None, None, code);
        let layout = Layout::of(&model);
        assert_eq!(layout.edges.len(), model.references());
        let frame = layout.frames[0];
        for edge in layout.edges.iter().filter(|e| !e.back) {
            assert!(edge.to.0 > edge.from.0, "{edge:?}");
        }
        // The tuple and the list it holds share a column: that arrow loops round into the
        // list's right side; the frame's arrows all go right.
        let globals = &model.frames[0];
        let (nums, pair) = (
            target(slot_named(&globals.slots, "nums")),
            target(slot_named(&globals.slots, "pair")),
        );
        let list = layout.objects[nums];
        let into_list = layout.edges.iter().filter(|e| e.back).collect::<Vec<_>>();
        assert_eq!(into_list.len(), 1);
        assert_eq!(into_list[0].to, (list.x + list.w, list.y + HEAD_H / 2));
        assert_eq!(into_list[0].from.1, layout.objects[pair].row_mid(0));
        let places: Vec<BoxPlace> = layout.frames.iter().chain(&layout.objects).copied().collect();
        for (i, a) in places.iter().enumerate() {
            assert!(a.x + a.w <= layout.width && a.y + a.h <= layout.height);
            for b in &places[i + 1..] {
                let apart = a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
                assert!(apart, "{a:?} overlaps {b:?}");
            }
        }
        // Objects the frame refers to directly share the first object column; the
        // second node hangs one column further right.
        let head = target(slot_named(&globals.slots, "head"));
        let second = target(slot_named(&model.objects[head].slots, "next"));
        assert_eq!(layout.objects[head].x, frame.w + GAP_X);
        assert!(layout.objects[second].x > layout.objects[head].x);
        // A short list of plain values is one row of cells under their indexes.
        let cells: i32 = model.objects[nums].slots.iter().map(cell_w).sum();
        assert_eq!((list.w, list.h), (cells.max(text_w("list")), HEAD_H + INDEX_H + ROW_H));
        // The first box sits level with the row that refers to it.
        let first = target(&globals.slots[0]);
        assert_eq!(layout.objects[first].y + HEAD_H / 2, frame.row_mid(0));
    }

    #[test]
    fn a_cycle_is_a_back_arrow() {
        let model = HeapModel {
            frames: vec![FrameBox {
                title: "Global frame".into(),
                activation: 0,
                slots: vec![Slot {
                    label: "xs".into(),
                    value: SlotValue::Ref(0),
                    changed: false,
                }],
                current: true,
            }],
            objects: vec![ObjectBox {
                object_id: 7,
                title: "list".into(),
                slots: vec![Slot {
                    label: "0".into(),
                    value: SlotValue::Ref(0),
                    changed: false,
                }],
                more: false,
                row: false,
            }],
        };
        let layout = Layout::of(&model);
        assert_eq!(layout.edges.len(), 2);
        assert!(!layout.edges[0].back && layout.edges[1].back);
        let list = layout.objects[0];
        assert_eq!(layout.edges[1].to, (list.x + list.w, list.y + HEAD_H / 2));
        assert!(edge_path(&layout.edges[1]).starts_with('M'));
    }

    #[test]
    fn the_svg_escapes_text_and_marks_changes() {
        let model = HeapModel {
            frames: vec![FrameBox {
                title: "Global frame".into(),
                activation: 0,
                slots: vec![Slot {
                    label: "s".into(),
                    value: SlotValue::Inline("'<b>'".into()),
                    changed: true,
                }],
                current: true,
            }],
            objects: Vec::new(),
        };
        let svg = svg(&model, &Layout::of(&model));
        assert!(svg.starts_with(r#"<svg class="heap" data-testid="heap""#), "{svg}");
        assert!(
            svg.contains(r#"aria-label="1 frames, 0 objects, 0 references""#),
            "{svg}"
        );
        assert!(
            svg.contains(r#"<g class="frame current" data-activation="0">"#),
            "{svg}"
        );
        assert!(svg.contains(r#"class="cell changed""#), "{svg}");
        assert!(svg.contains(">'&lt;b&gt;'</text>"), "{svg}");
        assert!(svg.ends_with("</svg>"));
    }
}
