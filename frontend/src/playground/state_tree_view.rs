//! The state tree as a call tree: one row per activation, collapsible, the current one
//! highlighted, a click jumps to its call. Only the rows in view are in the DOM, so a
//! 100,000-event run scrolls and steps as smoothly as a small one.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::Arc;

use leptos::html::Div;
use leptos::prelude::*;
use replayground_shared::state_tree::TreeChild;
use replayground_shared::trace::cut_repr;
use replayground_shared::{EventKind, StateTree, ValueId};

use crate::playground::session::Session;
use crate::playground::stop_view::function_label;
use crate::playground::syntax::push_escaped;
use crate::playground::ui::{data_of, refocus};

/// Height of one row in pixels (matches `.tree-row` in style.css). Whole pixels: the
/// styles are written with integer formatting (float formatting costs ~14 KB of wasm).
pub const ROW_PX: i32 = 24;
/// Height of the scrolling box in pixels.
pub const VIEW_PX: i32 = 264;
/// Rows rendered above and below the visible ones, so fast scrolling shows no gaps.
const OVERSCAN: usize = 8;

/// Activations shown, in order, given the collapsed ones: ids are already in call
/// order (a child is created after its parent and before its next sibling).
pub fn visible_rows<S: std::hash::BuildHasher>(tree: &StateTree, collapsed: &HashSet<u32, S>) -> Vec<u32> {
    let activations = tree.activations();
    let mut shown = vec![false; activations.len()];
    let mut rows = Vec::with_capacity(activations.len());
    for (i, activation) in activations.iter().enumerate() {
        let visible = activation
            .parent
            .is_none_or(|p| shown[p as usize] && !collapsed.contains(&p));
        shown[i] = visible;
        if visible {
            rows.push(i as u32);
        }
    }
    rows
}

/// The nearest ancestor-or-self of `activation` that is among `rows`.
pub fn visible_ancestor(tree: &StateTree, rows: &[u32], activation: u32) -> Option<(usize, u32)> {
    let mut current = Some(activation);
    while let Some(a) = current {
        if let Ok(index) = rows.binary_search(&a) {
            return Some((index, a));
        }
        current = tree.activations()[a as usize].parent;
    }
    None
}

/// `fib(n=3) → 2`: the function, its arguments at the call and what it returned.
pub fn activation_label(tree: &StateTree, activation: u32) -> String {
    let trace = tree.trace();
    let a = &tree.activations()[activation as usize];
    let function = &trace.frame(a.frame).function;
    let call = &trace.events[a.start];
    let mut label = if function.starts_with('<') || call.kind != EventKind::Call {
        function_label(function)
    } else {
        let args: Vec<String> = call
            .locals
            .iter()
            .map(|b| format!("{}={}", b.name, cut_repr(&trace.value(b.value).repr, 24)))
            .collect();
        format!("{function}({})", cut_repr(&args.join(", "), 60))
    };
    if let Some(end) = a.end {
        if let Some(exception) = raised(tree, activation) {
            label.push_str(" raised ");
            label.push_str(&cut_repr(&trace.value(exception).repr, 40));
        } else {
            let returned = trace.events[end]
                .value
                .map_or_else(|| "None".to_owned(), |v| cut_repr(&trace.value(v).repr, 24));
            label.push_str(" → ");
            label.push_str(&returned);
        }
    }
    label
}

/// The exception an activation ended with: Python reports a call that raised as an
/// `exception` event right before a `return` of `None`.
pub fn raised(tree: &StateTree, activation: u32) -> Option<ValueId> {
    let a = &tree.activations()[activation as usize];
    a.end?;
    let mut events = a.children.iter().rev().filter_map(|c| match *c {
        TreeChild::Event(i) => Some(&tree.trace().events[i]),
        TreeChild::Activation(_) => None,
    });
    let _return = events.next()?;
    let before = events.next()?;
    (before.kind == EventKind::Exception && !before.generator_exit && !before.internal)
        .then_some(before.value)
        .flatten()
}

/// What the rows in view look like at a stop.
#[derive(Debug, Clone, Copy)]
pub struct RowMarks<'a> {
    /// The current activation's row (or its nearest shown ancestor's).
    pub current: Option<u32>,
    /// Activations on the call stack.
    pub on_stack: &'a HashSet<u32>,
    pub collapsed: &'a HashSet<u32>,
    /// Per activation: whether it called anything (it gets a twisty).
    pub has_children: &'a [bool],
}

/// The rows `shown` as HTML (written as a string: a Leptos view per row costs ~25 KB of
/// wasm). Buttons carry `data-toggle` / `data-jump` for the tree's one click handler.
pub fn rows_html(tree: &StateTree, shown: &[u32], marks: RowMarks<'_>) -> String {
    let mut out = String::with_capacity(shown.len() * 256);
    for &activation in shown {
        let a = &tree.activations()[activation as usize];
        let label = activation_label(tree, activation);
        let is_current = marks.current == Some(activation);
        let class = if is_current {
            "tree-row current"
        } else if marks.on_stack.contains(&activation) {
            "tree-row on-stack"
        } else {
            "tree-row"
        };
        let _ = write!(
            out,
            r#"<div class="{class}{}" role="treeitem" aria-level="{}""#,
            if raised(tree, activation).is_some() {
                " raised"
            } else {
                ""
            },
            a.depth + 1
        );
        let expandable = marks.has_children[activation as usize];
        let collapsed = marks.collapsed.contains(&activation);
        if expandable {
            let _ = write!(out, r#" aria-expanded="{}""#, !collapsed);
        }
        if is_current {
            out.push_str(r#" aria-current="step""#);
        }
        let _ = write!(out, r#" style="padding-left: {}px">"#, 4 + a.depth.min(40) * 14);
        if expandable {
            let _ = write!(
                out,
                r#"<button type="button" class="twisty" data-toggle="{activation}" aria-label="Collapse or expand "#
            );
            push_escaped(&mut out, &label);
            out.push_str(if collapsed {
                "\">▸</button>"
            } else {
                "\">▾</button>"
            });
        } else {
            out.push_str(r#"<span class="twisty" aria-hidden="true"></span>"#);
        }
        let start = a.start + 1;
        let _ = write!(
            out,
            r#"<button type="button" class="node" data-jump="{}" title="Jump to the call (event {start})">"#,
            a.start
        );
        push_escaped(&mut out, &label);
        let _ = write!(out, r#"</button><span class="events">{start}–"#);
        if let Some(end) = a.end {
            let _ = write!(out, "{}", end + 1);
        }
        out.push_str("</span></div>");
    }
    out
}

#[allow(clippy::needless_pass_by_value)] // Leptos hands props over by value.
#[component]
pub fn StateTreeView(session: Arc<Session>, on_jump: Callback<u32>) -> impl IntoView {
    let stop = RwSignal::from(session.stop.clone());
    let has_children: Vec<bool> = session
        .tree
        .activations()
        .iter()
        .map(|a| a.children.iter().any(|c| matches!(c, TreeChild::Activation(_))))
        .collect();
    let collapsed = RwSignal::new(HashSet::<u32>::new());
    let rows = {
        let session = Arc::clone(&session);
        Memo::new(move |_| Arc::new(collapsed.with(|c| visible_rows(&session.tree, c))))
    };
    let scroll_top = RwSignal::new(0_i32);
    let scroller = NodeRef::<Div>::new();
    // The row of the current activation (or of its nearest shown ancestor).
    let current = {
        let session = Arc::clone(&session);
        Memo::new(move |_| {
            let activation = stop.get().event().map(|e| session.tree.activation_of(e))?;
            rows.with(|rows| visible_ancestor(&session.tree, rows, activation))
        })
    };
    // Keep the current row in view while stepping.
    Effect::new(move |_| {
        let Some((index, _)) = current.get() else { return };
        let Some(element) = scroller.get() else { return };
        let top = index as i32 * ROW_PX;
        let seen = element.scroll_top();
        if top < seen || top + ROW_PX > seen + VIEW_PX {
            let target = (top - VIEW_PX / 2).max(0);
            element.set_scroll_top(target);
            scroll_top.set(target);
        }
    });

    // The rows in view; the whole window is rewritten when the stop, the scroll position or
    // a collapse changes it (about 30 rows).
    let window_html = move || {
        let first = (scroll_top.get().max(0) / ROW_PX) as usize;
        let first = first.saturating_sub(OVERSCAN);
        let count = (VIEW_PX / ROW_PX) as usize + 2 * OVERSCAN + 1;
        let tree = &session.tree;
        let on_stack: HashSet<u32> = stop
            .get()
            .event()
            .map(|e| tree.call_stack(e).into_iter().collect())
            .unwrap_or_default();
        let current = current.get().map(|(_, a)| a);
        let (first, html) = rows.with(|rows| {
            let end = (first + count).min(rows.len());
            let first = first.min(end);
            let html = collapsed.with(|collapsed| {
                let marks = RowMarks {
                    current,
                    on_stack: &on_stack,
                    collapsed,
                    has_children: &has_children,
                };
                rows_html(tree, &rows[first..end], marks)
            });
            (first, html)
        });
        (first, html)
    };
    let window = Memo::new(move |_| window_html());

    let on_click = move |ev: web_sys::MouseEvent| {
        if let Some(activation) = data_of(&ev, "data-toggle").and_then(|a| a.parse::<u32>().ok()) {
            collapsed.update(|c| {
                if !c.remove(&activation) {
                    c.insert(activation);
                }
            });
            refocus(&ev, format!(r#"[data-toggle="{activation}"]"#));
        } else if let Some(start) = data_of(&ev, "data-jump").and_then(|s| s.parse::<u32>().ok()) {
            on_jump.run(start);
            refocus(&ev, format!(r#"[data-jump="{start}"]"#));
        }
    };

    view! {
        <div
            class="state-tree"
            data-testid="state-tree"
            role="tree"
            aria-label="Call tree of the run"
            node_ref=scroller
            style=format!("height: {VIEW_PX}px")
            on:scroll=move |_| {
                if let Some(element) = scroller.get_untracked() {
                    scroll_top.set(element.scroll_top());
                }
            }
            on:click=on_click
        >
            <div class="tree-space" style=move || format!("height: {}px", rows.with(|r| r.len()) as i64 * i64::from(ROW_PX))>
                <div
                    class="tree-window"
                    style=move || format!("transform: translateY({}px)", window.with(|w| w.0) as i64 * i64::from(ROW_PX))
                    inner_html=move || window.with(|w| w.1.clone())
                ></div>
            </div>
        </div>
    }
}
