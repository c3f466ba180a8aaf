//! The state tree as a call tree: one row per activation, collapsible, the current one
//! highlighted, a click jumps to its call. Only the rows in view are in the DOM, so a
//! 100,000-event run scrolls and steps as smoothly as a small one.

use std::collections::HashSet;
use std::sync::Arc;

use leptos::html::Div;
use leptos::prelude::*;
use replayground_shared::state_tree::TreeChild;
use replayground_shared::trace::cut_repr;
use replayground_shared::{EventKind, StateTree, Stop};

use crate::debugger::Session;
use crate::stop_view::function_label;

/// Height of one row in pixels (matches `.tree-row` in style.css).
pub const ROW_PX: f64 = 24.0;
/// Height of the scrolling box in pixels.
pub const VIEW_PX: f64 = 264.0;
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
        let returned = trace.events[end]
            .value
            .map_or_else(|| "None".to_owned(), |v| cut_repr(&trace.value(v).repr, 24));
        label.push_str(" → ");
        label.push_str(&returned);
    }
    label
}

#[allow(clippy::needless_pass_by_value)] // Leptos hands props over by value.
#[component]
pub fn StateTreeView(session: Arc<Session>, stop: RwSignal<Stop>, on_jump: Callback<u32>) -> impl IntoView {
    let has_children: Arc<Vec<bool>> = Arc::new(
        session
            .tree
            .activations()
            .iter()
            .map(|a| a.children.iter().any(|c| matches!(c, TreeChild::Activation(_))))
            .collect(),
    );
    let collapsed = RwSignal::new(HashSet::<u32>::new());
    let rows = {
        let session = Arc::clone(&session);
        Memo::new(move |_| Arc::new(collapsed.with(|c| visible_rows(&session.tree, c))))
    };
    let scroll_top = RwSignal::new(0.0_f64);
    let scroller = NodeRef::<Div>::new();
    // The row of the current activation (or of its nearest shown ancestor).
    let current = {
        let session = Arc::clone(&session);
        Memo::new(move |_| {
            let activation = stop.get().event().map(|e| session.tree.activation_of(e))?;
            rows.with(|rows| visible_ancestor(&session.tree, rows, activation))
        })
    };
    let on_stack = {
        let session = Arc::clone(&session);
        Memo::new(move |_| {
            stop.get()
                .event()
                .map(|e| session.tree.call_stack(e).into_iter().collect::<HashSet<u32>>())
                .unwrap_or_default()
        })
    };
    // Keep the current row in view while stepping.
    Effect::new(move |_| {
        let Some((index, _)) = current.get() else { return };
        let Some(element) = scroller.get() else { return };
        let top = index as f64 * ROW_PX;
        let seen = f64::from(element.scroll_top());
        if top < seen || top + ROW_PX > seen + VIEW_PX {
            let target = (top - VIEW_PX / 2.0).max(0.0);
            element.set_scroll_top(target as i32);
            scroll_top.set(target);
        }
    });

    let window = move || {
        let first = ((scroll_top.get() / ROW_PX) as usize).saturating_sub(OVERSCAN);
        let count = (VIEW_PX / ROW_PX) as usize + 2 * OVERSCAN + 1;
        rows.with(|rows| {
            let end = (first + count).min(rows.len());
            (first.min(end), rows[first.min(end)..end].to_vec())
        })
    };

    let row_view = move |activation: u32| {
        let tree = &session.tree;
        let a = &tree.activations()[activation as usize];
        let label = activation_label(tree, activation);
        let expandable = has_children[activation as usize];
        let start = a.start as u32;
        let events = match a.end {
            Some(end) => format!("{}–{}", a.start + 1, end + 1),
            None => format!("{}–", a.start + 1),
        };
        let is_collapsed = move || collapsed.with(|c| c.contains(&activation));
        let class = move || {
            let mut class = "tree-row".to_owned();
            if current.get().is_some_and(|(_, a)| a == activation) {
                class.push_str(" current");
            } else if on_stack.with(|s| s.contains(&activation)) {
                class.push_str(" on-stack");
            }
            class
        };
        let toggle_label = format!("Collapse or expand {label}");
        view! {
            <div
                class=class
                role="treeitem"
                attr:aria-level=(a.depth + 1).to_string()
                aria-expanded=move || expandable.then(|| (!is_collapsed()).to_string())
                aria-current=move || current.get().is_some_and(|(_, a)| a == activation).then_some("step")
                style=format!("padding-left: {}px", 4 + a.depth.min(40) * 14)
            >
                {if expandable {
                    view! {
                        <button
                            type="button"
                            class="twisty"
                            aria-label=toggle_label
                            on:click=move |_| {
                                collapsed.update(|c| if !c.remove(&activation) { c.insert(activation); });
                            }
                        >
                            {move || if is_collapsed() { "▸" } else { "▾" }}
                        </button>
                    }
                        .into_any()
                } else {
                    view! { <span class="twisty" aria-hidden="true"></span> }.into_any()
                }}
                <button
                    type="button"
                    class="node"
                    title=format!("Jump to the call (event {})", start + 1)
                    on:click=move |_| on_jump.run(start)
                >
                    {label}
                </button>
                <span class="events">{events}</span>
            </div>
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
                    scroll_top.set(f64::from(element.scroll_top()));
                }
            }
        >
            <div class="tree-space" style=move || format!("height: {}px", rows.with(|r| r.len()) as f64 * ROW_PX)>
                {move || {
                    let (first, shown) = window();
                    let row_view = row_view.clone();
                    view! {
                        <div class="tree-window" style=format!("transform: translateY({}px)", first as f64 * ROW_PX)>
                            {shown.into_iter().map(row_view).collect_view()}
                        </div>
                    }
                }}
            </div>
        </div>
    }
}
