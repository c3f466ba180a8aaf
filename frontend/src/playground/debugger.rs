//! Stepping through one run: the controls (forward and reverse), the timeline, the call
//! stack, the variables, the output and the state tree at the current stop.
//!
//! Every move goes through [`StateTree::step`], the same navigation the server uses; the
//! editor shows the current line.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use replayground_shared::{Action, StateTree, Stop};
use wasm_bindgen::JsCast;

use crate::playground::controls::{CONTROLS, Control, action_for_key, action_for_presenter_key, key_cap};
use crate::playground::outcome::{error_stop, loop_hint, outcome_html, outcome_is_normal};
use crate::playground::predict::{PredictMode, PredictPanel};
use crate::playground::session::{ADVANCED_KEY, Advanced, Presenting, Session};
use crate::playground::state_tree_view::StateTreeView;
use crate::playground::stop_view::{StopView, call_stack_html, function_label};
use crate::playground::syntax::push_escaped;
use crate::playground::ui::{data_of, is_typing_target, message, refocus, when};
use crate::playground::values::{ObjectTags, changed_names, push_value_html, toggle_expanded};

/// Where the choice of the variables' view (table or heap diagram) is remembered.
const HEAP_VIEW_KEY: &str = "replayground-heap-diagram";

/// The slider position of a stop: the event index, or one past the last for the end.
pub fn timeline_position(tree: &StateTree, stop: Stop) -> usize {
    stop.event().unwrap_or(tree.len())
}

// Leptos hands props over by value.
#[allow(clippy::needless_pass_by_value)]
#[component]
pub fn DebuggerPanel(session: Arc<Session>, breakpoints: RwSignal<BTreeSet<u32>>) -> impl IntoView {
    let stop = RwSignal::from(session.stop.clone());
    let first = session.tree.initial_stop();
    let len = session.tree.len();
    let error = error_stop(&session.tree);
    // The stop before the last move, for highlighting what that move changed.
    let previous = RwSignal::new(None::<Stop>);
    // The activation picked in the call stack; `None` follows the innermost frame.
    let inspected = RwSignal::new(None::<u32>);
    let expanded = RwSignal::new(HashSet::<String>::new());
    let diagram = RwSignal::new(crate::theme::stored_flag(HEAP_VIEW_KEY));
    let advanced = use_context::<Advanced>().map_or_else(|| RwSignal::new(true), |a| a.0);
    let at_stop = {
        let session = Arc::clone(&session);
        Memo::new(move |_| StopView::at(&session.tree, stop.get()))
    };
    let neural = use_context::<crate::playground::neural_view::NeuralMode>();
    let act = {
        let session = Arc::clone(&session);
        Callback::new(move |action: Action| {
            let here = stop.get_untracked();
            if let Some(neural) = neural {
                neural.last_step.set(Some((here, action)));
            }
            let mut lines = breakpoints.get_untracked();
            let mut next = session.tree.step(here, action, &mut lines);
            // As pdb's post-mortem: Continue does not run past the error into an empty end.
            if action == Action::Continue
                && let (Some(error), Stop::Event(from)) = (error, here)
                && from < error
                && next.event().is_none_or(|n| n > error)
            {
                next = Stop::Event(error);
            }
            if lines != breakpoints.get_untracked() {
                breakpoints.set(lines);
            }
            previous.set(Some(here));
            inspected.set(None);
            stop.set(next);
        })
    };
    let jump = Callback::new(move |event: u32| act.run(Action::Jump(event)));
    let can_apply = move |action: Action| {
        let here = stop.get();
        if action.is_reverse() {
            here != first
        } else {
            here != Stop::End
        }
    };
    let presenting = use_context::<Presenting>().map(|p| p.0);

    let shortcuts = window_event_listener(ev::keydown, move |ev| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() || ev.default_prevented() || is_typing_target(ev.target()) {
            return;
        }
        let key = ev.key();
        // Left and Right always step; the other presenter keys only while presenting (they scroll).
        let arrows =
            presenting.is_some_and(|p| p.get_untracked()) || matches!(key.as_str(), "ArrowLeft" | "ArrowRight");
        let action = action_for_key(&key).or_else(|| arrows.then(|| action_for_presenter_key(&key)).flatten());
        if let Some(action) = action {
            ev.prevent_default();
            act.run(action);
        }
    });
    on_cleanup(move || shortcuts.remove());
    // A new run puts the keyboard on the debugger (n, s step), unless someone is typing.
    let first_button = if advanced.get_untracked() {
        r#"[data-testid="step-over"]"#
    } else {
        r#"[data-testid="next"]"#
    };
    request_animation_frame(move || {
        let document = document();
        if !is_typing_target(document.active_element().map(Into::into))
            && let Ok(Some(button)) = document.query_selector(first_button)
            && let Ok(button) = button.dyn_into::<web_sys::HtmlElement>()
        {
            let _ = button.focus();
        }
    });

    let trace = session.tree.trace();
    let outcome = &trace.outcome;
    let outcome_class = if outcome_is_normal(outcome) {
        "outcome ok"
    } else {
        "outcome problem"
    };
    let outcome_html = outcome_html(outcome, len, error, loop_hint(&session.tree, &session.code));

    let goto_value = RwSignal::new(String::new());
    let goto_error = RwSignal::new(None::<String>);
    let go_to = move || {
        let text = goto_value.get_untracked();
        match text.trim().parse::<usize>() {
            Ok(n) if (1..=len).contains(&n) => {
                goto_error.set(None);
                jump.run(n as u32 - 1);
            }
            _ => goto_error.set(Some(format!("Type a step number from 1 to {len}."))),
        }
    };

    // The output box shows its newest lines, as a terminal does.
    let stdout_ref = NodeRef::<leptos::html::Pre>::new();
    Effect::new(move |_| {
        at_stop.track();
        if let Some(pre) = stdout_ref.get() {
            request_animation_frame(move || pre.set_scroll_top(pre.scroll_height()));
        }
    });
    let vars_session = Arc::clone(&session);
    let predict_session = Arc::clone(&session);
    // A panel mounted alone (the browser tests) gets a mode of its own, off.
    let predict = use_context::<PredictMode>().unwrap_or_else(|| PredictMode::new(false));
    let tree_session = Arc::clone(&session);

    // A program that did not run (a syntax error) has nothing to step through: CSS hides
    // the controls (cheaper in wasm than a second view).
    let panel_class = if len == 0 { "debugger nothing-ran" } else { "debugger" };
    view! {
        <div class=panel_class>
            <p
                class=outcome_class
                data-testid="outcome"
                inner_html=outcome_html
                on:click=move |ev| {
                    if let Some(event) = data_of(&ev, "data-jump").and_then(|n| n.parse().ok()) {
                        jump.run(event);
                    }
                }
            ></p>
            <div class="controls" role="toolbar" aria-label="Debugger controls">
                {CONTROLS
                    .iter()
                    .map(|control| {
                        let Control { action, label, help, key, test_id, class } = *control;
                        let shortcut = if key.len() == 1 && key.chars().all(char::is_uppercase) {
                            format!("Shift+{key}")
                        } else {
                            key.to_owned()
                        };
                        view! {
                            <button
                                type="button"
                                class=class
                                data-testid=test_id
                                title=format!("{help} (key {shortcut})")
                                aria-label=format!("{label} (key {shortcut})")
                                aria-keyshortcuts=shortcut.clone()
                                prop:disabled=move || !can_apply(action)
                                on:click=move |_| act.run(action)
                            >
                                {label}
                                " "
                                <kbd aria-hidden="true">{key_cap(&shortcut)}</kbd>
                            </button>
                        }
                    })
                    .collect_view()}
                <button
                    type="button"
                    class="predict-toggle"
                    data-testid="predict-toggle"
                    title="Predict mode: before each step, say which line runs next; then see the neural debugger's guess and the real run"
                    aria-pressed=move || predict.on.get().to_string()
                    on:click=move |_| predict.on.update(|on| *on = !*on)
                >
                    "Predict"
                </button>
                <button
                    type="button"
                    class="advanced-toggle"
                    data-testid="advanced"
                    title="pdb's commands (step into, over, out, continue to a breakpoint) and neural mode"
                    aria-expanded=move || advanced.get().to_string()
                    on:click=move |_| {
                        let on = !advanced.get_untracked();
                        advanced.set(on);
                        crate::theme::store_flag(ADVANCED_KEY, on);
                    }
                >
                    "Advanced"
                </button>
            </div>
            <PredictPanel session=predict_session stop act mode=predict />
            <div class="timeline">
                <label class="visually-hidden" for="timeline">
                    "Timeline: every event of the run"
                </label>
                <input
                    id="timeline"
                    type="range"
                    data-testid="timeline"
                    min="0"
                    max=len.to_string()
                    prop:value=move || timeline_position(&session.tree, stop.get()).to_string()
                    aria-valuetext=stop_text(at_stop, |v| v.position.clone())
                    on:input=move |ev| {
                        if let Ok(n) = event_target_value(&ev).parse::<u32>() {
                            jump.run(n);
                        }
                    }
                />
                <span class="position" data-testid="position">
                    {stop_text(at_stop, |v| v.position.clone())}
                </span>
                <form
                    class="goto"
                    on:submit=move |ev| {
                        ev.prevent_default();
                        go_to();
                    }
                >
                    <label for="goto-step">"Go to step"</label>
                    <input
                        id="goto-step"
                        type="number"
                        data-testid="goto-step"
                        min="1"
                        max=len.to_string()
                        prop:value=move || goto_value.get()
                        on:input=move |ev| goto_value.set(event_target_value(&ev))
                    />
                    <button type="submit">"Go"</button>
                </form>
            </div>
            {move || goto_error.get().map(|e| message("error", "alert", None, e))}
            <div class="stop-status" aria-live="polite">
                <p class="headline" data-testid="headline">
                    {stop_text(at_stop, |v| v.headline.clone())}
                </p>
                <p class="where">
                    "Line "
                    <span class="current-line" data-testid="current-line">
                        {stop_text(at_stop, |v| v.line.map_or_else(|| "end".to_owned(), |l| l.to_string()))}
                    </span>
                </p>
            </div>
            {move || {
                at_stop
                    .with(|v| {
                        v.value
                            .clone()
                            .map(|(label, value)| {
                                let class = if label == "Exception" { "stop-value exception" } else { "stop-value" };
                                view! {
                                    <p class=class data-testid="stop-value">
                                        {label}
                                        ": "
                                        <code>{value}</code>
                                    </p>
                                }
                            })
                    })
            }}
            <div class="inspectors">
                <section class="inspector stack" aria-labelledby="stack-heading">
                    <h3 id="stack-heading">"Call stack"</h3>
                    <ol
                        class="call-stack"
                        data-testid="call-stack"
                        inner_html=move || {
                            let picked = inspected.get();
                            at_stop.with(|v| call_stack_html(&v.call_stack, picked))
                        }
                        on:click=move |ev| {
                            if let Some(activation) = data_of(&ev, "data-activation").and_then(|a| a.parse().ok()) {
                                inspected.set(Some(activation));
                                refocus(&ev, format!(r#"[data-activation="{activation}"]"#));
                            }
                        }
                    ></ol>
                    {when(stop_flag(at_stop, |v| v.call_stack.is_empty()), || {
                        view! { <p class="empty">"No frames: the program is not running."</p> }
                    })}
                </section>
                <section
                    class="inspector vars"
                    aria-labelledby="vars-heading"
                    inner_html=move || {
                        let (stop, previous, inspected) = (stop.get(), previous.get(), inspected.get());
                        let mut html = view_switch_html(diagram.get());
                        if diagram.get() {
                            html.push_str(&heap_html(&vars_session, stop, previous, inspected));
                        } else {
                            expanded
                                .with_untracked(|expanded| {
                                    html.push_str(&variables_html(&vars_session, stop, previous, inspected, expanded));
                                });
                        }
                        html
                    }
                    on:click=move |ev| {
                        if let Some(view) = data_of(&ev, "data-heap-view") {
                            let on = view == "diagram";
                            diagram.set(on);
                            crate::theme::store_flag(HEAP_VIEW_KEY, on);
                            refocus(&ev, format!(r#"[data-heap-view="{view}"]"#));
                        } else if let Some(activation) = data_of(&ev, "data-activation").and_then(|a| a.parse().ok()) {
                            inspected.set(Some(activation));
                        } else {
                            expanded.update_untracked(|e| toggle_expanded(&ev, e));
                        }
                    }
                ></section>
                <section class="inspector output" aria-labelledby="output-heading">
                    <h3 id="output-heading">"Output so far"</h3>
                    <pre class="stdout" data-testid="stdout" node_ref=stdout_ref>
                        {stop_text(at_stop, |v| v.stdout.clone())}
                    </pre>
                    {when(stop_flag(at_stop, |v| !v.stderr.is_empty()), move || {
                        view! { <pre class="stderr" data-testid="stderr">{stop_text(at_stop, |v| v.stderr.clone())}</pre> }
                    })}
                </section>
                <section class="inspector calltree" aria-labelledby="tree-heading">
                    <h3 id="tree-heading">
                        "Call tree "
                        <span class="count">
                            {format!(
                                "{} calls, {} events",
                                tree_session.tree.activations().len(),
                                tree_session.tree.len(),
                            )}
                        </span>
                    </h3>
                    <StateTreeView session=Arc::clone(&tree_session) on_jump=jump />
                </section>
            </div>
        </div>
    }
}

/// The switch between the variables table and the heap diagram (`data-heap-view` for the
/// section's click handler).
fn view_switch_html(diagram: bool) -> String {
    format!(
        r#"<div class="view-switch" role="group" aria-label="Show the variables as"><button type="button" data-heap-view="table" data-testid="view-table" aria-pressed="{}">Table</button><button type="button" data-heap-view="diagram" data-testid="view-diagram" aria-pressed="{diagram}">Diagram</button></div>"#,
        !diagram
    )
}

/// Every frame on the stack and the objects they refer to, as an SVG diagram with arrows
/// (see [`crate::playground::heap`]).
pub fn heap_html(session: &Session, stop: Stop, previous: Option<Stop>, inspected: Option<u32>) -> String {
    let model = crate::playground::heap::HeapModel::at(&session.tree, stop, previous, inspected, &session.code);
    let mut out = String::from(r#"<h3 id="vars-heading">Frames and objects</h3>"#);
    if model.frames.is_empty() {
        out.push_str(r#"<p class="empty">Nothing ran.</p>"#);
        return out;
    }
    let layout = crate::playground::heap::layout::Layout::of(&model);
    out.push_str(r#"<div class="heap-scroll">"#);
    out.push_str(&crate::playground::heap::svg::svg(&model, &layout));
    out.push_str("</div>");
    out
}

/// The variables of the inspected frame (the innermost one unless another was picked),
/// values changed by the last move highlighted, as HTML (see [`push_value_html`]).
#[allow(clippy::implicit_hasher)] // the page's own set, default hasher
pub fn variables_html(
    session: &Session,
    stop: Stop,
    previous: Option<Stop>,
    inspected: Option<u32>,
    expanded: &HashSet<String>,
) -> String {
    let tree = &session.tree;
    let trace = tree.trace();
    // After the end, the module's last event holds the final globals.
    let at_end = stop == Stop::End;
    let Some(index) = crate::playground::heap::shown_event(tree, stop) else {
        return r#"<h3 id="vars-heading">Variables</h3><p class="empty">Nothing ran.</p>"#.to_owned();
    };
    let stack = crate::playground::stop_view::call_stack(tree, index);
    let entry = inspected
        .and_then(|a| stack.iter().find(|e| e.activation == a))
        .or(stack.last());
    let Some(entry) = entry else {
        return r#"<h3 id="vars-heading">Variables</h3>"#.to_owned();
    };
    let event = &trace.events[entry.event];
    let depth = tree.activations()[entry.activation as usize].depth;
    let mut out = String::from(r#"<h3 id="vars-heading">"#);
    if at_end {
        out.push_str("Globals at the end");
    } else if depth == 0 {
        out.push_str("Globals");
    } else {
        out.push_str("Locals of ");
        push_escaped(&mut out, &function_label(&entry.function));
    }
    out.push_str(
        r#"</h3><table class="variables" data-testid="variables"><thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead><tbody>"#,
    );
    let bindings: Vec<_> = event
        .locals
        .iter()
        .filter(|b| !b.name.starts_with("__"))
        .cloned()
        .collect();
    // What changed since the previous stop, when both are in the same frame.
    let changed = previous
        .and_then(Stop::event)
        .filter(|&p| trace.events[p].frame == event.frame && p != entry.event)
        .map(|p| changed_names(trace, &bindings, &trace.events[p].locals))
        .unwrap_or_default();
    let tags = ObjectTags::of(trace, &bindings);
    for binding in &bindings {
        let is_changed = changed.contains(&binding.name);
        out.push_str(if is_changed { r#"<tr class="changed">"# } else { "<tr>" });
        out.push_str(r#"<th scope="row"><code>"#);
        push_escaped(&mut out, &binding.name);
        out.push_str("</code>");
        if is_changed {
            out.push_str(r#"<span class="changed-mark" title="Changed by the last step">●</span>"#);
        }
        out.push_str("</th><td>");
        let path = format!("{}/{}", entry.activation, binding.name);
        push_value_html(&mut out, trace, binding.value, &tags, &path, expanded, &session.code);
        out.push_str("</td></tr>");
    }
    out.push_str("</tbody></table>");
    if bindings.is_empty() {
        out.push_str(r#"<p class="empty">No variables at this stop.</p>"#);
    }
    out
}

/// A text of the stop's view as a reactive closure. Every call returns the same closure
/// type (the field is a fn pointer), so Leptos compiles its rendering once, not per use.
fn stop_text(at_stop: Memo<StopView>, field: fn(&StopView) -> String) -> impl Fn() -> String + Copy + Send + Sync {
    move || at_stop.with(field)
}

/// A yes/no of the stop's view as a reactive closure (one closure type, as [`stop_text`]).
fn stop_flag(at_stop: Memo<StopView>, field: fn(&StopView) -> bool) -> impl Fn() -> bool + Copy + Send + Sync {
    move || at_stop.with(field)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_the_end_the_final_globals_stay_visible() {
        let session = Session::new(
            include_str!("../../tests/fixtures/double.py").to_owned(),
            StateTree::new(serde_json::from_str(include_str!("../../tests/fixtures/double.json")).unwrap()).unwrap(),
        );
        let html = variables_html(&session, Stop::End, None, None, &HashSet::new());
        assert!(html.contains("Globals at the end"), "{html}");
        assert!(html.contains("<code>y</code>"), "{html}");
        // Functions in a few words, not `<function double at 0x...>`.
        assert!(html.contains(">function double(x)</code>"), "{html}");
    }
}
