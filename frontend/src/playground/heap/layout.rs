//! Where the heap diagram's boxes and arrows go, in whole pixels: frames in the first
//! column, each object in the column of its distance from the frames.

use super::{HeapModel, Slot, SlotValue};

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
/// Objects nested deeper than this many columns share the last column.
pub const MAX_COLUMNS: usize = 4;
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

pub(super) fn text_w(text: &str) -> i32 {
    text.chars().count() as i32 * CHAR_W + 2 * PAD
}

/// The width of a value's cell: its text, or a reference's dot.
pub(super) fn cell_w(slot: &Slot) -> i32 {
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
