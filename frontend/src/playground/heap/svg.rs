//! The heap diagram drawn: one SVG string for the panel's HTML.

use std::fmt::Write as _;

use super::layout::{BoxPlace, DOT_W, Edge, HEAD_H, INDEX_H, Layout, PAD, ROW_H, cell_w};
use super::{HeapModel, Slot, SlotValue};
use crate::playground::syntax::push_escaped;

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
