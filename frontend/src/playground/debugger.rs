//! Stepping through one run: the controls (forward and reverse), the timeline, the call
//! stack, the variables, the output and the state tree at the current stop.
//!
//! Every move goes through [`StateTree::step`], the same navigation the server uses; the
//! editor shows the current line.

use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;
use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use replayground_shared::state_tree::TreeChild;
use replayground_shared::text::group_thousands;
use replayground_shared::{Action, EventKind, Limit, Outcome, StateTree, Stop};
use wasm_bindgen::JsCast;

use crate::playground::predict::{PredictMode, PredictPanel};
use crate::playground::session::{ADVANCED_KEY, Advanced, Presenting, Session};
use crate::playground::state_tree_view::StateTreeView;
use crate::playground::stop_view::{StopView, call_stack_html, function_label};
use crate::playground::syntax::push_escaped;
use crate::playground::ui::{data_of, is_typing_target, message, refocus, when};
use crate::playground::values::{ObjectTags, changed_names, push_value_html, toggle_expanded};

/// Where the choice of the variables' view (table or heap diagram) is remembered.
const HEAP_VIEW_KEY: &str = "replayground-heap-diagram";

/// A debugger button: the action it applies and its keyboard shortcut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Control {
    pub action: Action,
    pub label: &'static str,
    /// What it does, for the tooltip and screen readers.
    pub help: &'static str,
    /// pdb's letter for forward actions, the capital letter (Shift) for their reverse.
    pub key: &'static str,
    pub test_id: &'static str,
    /// `simple` (Prev and Next, shown until "Advanced" is opened) or `pdb` (shown after).
    pub class: &'static str,
}

/// Simple mode's Prev and Next (one event back or forward, into calls), then pdb's
/// commands: reverse actions first (left of the forward ones, like a media player).
pub const CONTROLS: [Control; 10] = [
    Control {
        action: Action::ReverseStepInto,
        label: "◀ Prev",
        help: "Back one step",
        key: "ArrowLeft",
        test_id: "prev",
        class: "simple",
    },
    Control {
        action: Action::StepInto,
        label: "Next ▶",
        help: "Forward one step",
        key: "ArrowRight",
        test_id: "next",
        class: "simple",
    },
    Control {
        action: Action::ReverseContinue,
        label: "Reverse continue",
        help: "Back to the previous breakpoint hit, or the start",
        key: "C",
        test_id: "reverse-continue",
        class: "pdb reverse",
    },
    Control {
        action: Action::ReverseStepReturn,
        label: "Back out",
        help: "Back to the call of this function",
        key: "R",
        test_id: "step-back-return",
        class: "pdb reverse",
    },
    Control {
        action: Action::ReverseStepOver,
        label: "Back over",
        help: "Back to the previous line of this function",
        key: "N",
        test_id: "step-back-over",
        class: "pdb reverse",
    },
    Control {
        action: Action::ReverseStepInto,
        label: "Step back",
        help: "Back one event",
        key: "b",
        test_id: "step-back",
        class: "pdb reverse",
    },
    Control {
        action: Action::StepInto,
        label: "Step into",
        help: "pdb step: the very next event",
        key: "s",
        test_id: "step-into",
        class: "pdb forward",
    },
    Control {
        action: Action::StepOver,
        label: "Step over",
        help: "pdb next: the next line of this function",
        key: "n",
        test_id: "step-over",
        class: "pdb forward",
    },
    Control {
        action: Action::StepReturn,
        label: "Step out",
        help: "pdb return: run until this function returns",
        key: "r",
        test_id: "step-return",
        class: "pdb forward",
    },
    Control {
        action: Action::Continue,
        label: "Continue",
        help: "pdb continue: run to the next breakpoint or the end",
        key: "c",
        test_id: "continue",
        class: "pdb forward",
    },
];

/// The action bound to a key press (Shift gives the capital letter), if any.
pub fn action_for_key(key: &str) -> Option<Action> {
    if key == "S" {
        return Some(Action::ReverseStepInto);
    }
    CONTROLS.iter().find(|c| c.key == key).map(|c| c.action)
}

/// Arrow and page keys, for presentation remotes: right/down forward, left/up back.
pub fn action_for_presenter_key(key: &str) -> Option<Action> {
    match key {
        "ArrowRight" | "PageDown" => Some(Action::StepInto),
        "ArrowDown" => Some(Action::StepOver),
        "ArrowLeft" | "PageUp" => Some(Action::ReverseStepInto),
        "ArrowUp" => Some(Action::ReverseStepOver),
        _ => None,
    }
}

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

/// The banner about the run as HTML: its summary, a button (`data-jump`) to where a run
/// that did not end normally is best looked at, and where input goes when it ran out.
fn outcome_html(outcome: &Outcome, events: usize, error: Option<usize>, loop_hint: Option<String>) -> String {
    let mut out = String::new();
    push_escaped(&mut out, &run_summary(outcome, events));
    if let Some(event) = error {
        let label = if matches!(outcome, Outcome::UncaughtException { .. }) {
            "Jump to the error"
        } else {
            "Jump to the last step"
        };
        let _ = write!(
            out,
            r#"<button type="button" data-testid="jump-to-error" data-jump="{event}">{label}</button>"#
        );
    }
    if let Some(hint) = input_hint(outcome) {
        let _ = write!(out, r#"<span class="hint" data-testid="input-hint">{hint}</span>"#);
    }
    if let Some(hint) = loop_hint {
        out.push_str(r#"<span class="hint" data-testid="loop-hint">"#);
        // `name` in the hint is code.
        for (i, part) in hint.split('`').enumerate() {
            if i % 2 == 1 {
                out.push_str("<code>");
                push_escaped(&mut out, part);
                out.push_str("</code>");
            } else {
                push_escaped(&mut out, part);
            }
        }
        out.push_str("</span>");
    }
    out
}

/// One sentence about the whole run, never about the current step (it sits above the
/// controls while the student steps through the run).
pub fn run_summary(outcome: &Outcome, events: usize) -> String {
    let steps = match events {
        1 => "1 step".to_owned(),
        n => format!("{} steps", group_thousands(n as u64)),
    };
    match outcome {
        Outcome::Finished => format!("Run result: the program finished after {steps}."),
        // The page asks for the server's maximum, so there is no higher limit to offer.
        Outcome::LimitReached {
            limit: Limit::Events, ..
        } => format!(
            "Run result: stopped at the step limit, after {steps} (the most this server records), before the program's end. Make it do less work (fewer rounds, smaller input) to see its end."
        ),
        Outcome::LimitReached { limit, detail } => format!(
            "Run result: stopped by {}: {detail}. Make the program do less work to see its end.",
            limit.describe()
        ),
        other => {
            let text = other.describe();
            match text.strip_prefix("The ") {
                Some(rest) => format!("Run result: the {rest}"),
                None => format!("Run result: {text}"),
            }
        }
    }
}

/// Line events looked at to find the loop a run was stuck in when it hit the step limit.
const LOOP_WINDOW: usize = 1_000;
/// A loop shorter than this many rounds is not why a run reached the step limit.
const LOOP_ROUNDS: usize = 100;

/// For a run stopped by the step limit, the loop it was stuck in: "Lines 2–3 ran 50,000
/// times; `i` never changed there." The loop is the lines of the last [`LOOP_WINDOW`] line
/// events of the innermost frame on the stack that repeated them; a name counts when the
/// loop's first line (a `while` condition) uses it and its value stayed the same over
/// those events.
pub fn loop_hint(tree: &StateTree, code: &str) -> Option<String> {
    let trace = tree.trace();
    if !matches!(
        trace.outcome,
        Outcome::LimitReached {
            limit: Limit::Events,
            ..
        }
    ) {
        return None;
    }
    let last = trace.events.len().checked_sub(1)?;
    tree.call_stack(last).into_iter().rev().find_map(|activation| {
        let lines: Vec<usize> = tree.activations()[activation as usize]
            .children
            .iter()
            .filter_map(|c| match *c {
                TreeChild::Event(i) if trace.events[i].kind == EventKind::Line => Some(i),
                _ => None,
            })
            .collect();
        let window = &lines[lines.len().saturating_sub(LOOP_WINDOW)..];
        let first = window.iter().map(|&i| trace.events[i].line).min()?;
        let end = window.iter().map(|&i| trace.events[i].line).max()?;
        let rounds = lines.iter().filter(|&&i| trace.events[i].line == first).count();
        if rounds < LOOP_ROUNDS {
            return None;
        }
        let header = code
            .split('\n')
            .nth((first as usize).saturating_sub(1))
            .unwrap_or_default();
        let newest = &trace.events[*window.last()?].locals;
        let unchanged: Vec<&str> = newest
            .iter()
            .filter(|b| {
                // Functions and classes never change; saying so would not help.
                let value = trace.value(b.value);
                !matches!(
                    value.type_name.as_str(),
                    "function" | "type" | "module" | "method" | "builtin_function_or_method"
                ) && window.iter().all(|&i| {
                    trace.events[i]
                        .locals
                        .iter()
                        .any(|old| old.name == b.name && old.value == b.value)
                }) && uses_name(header, &b.name)
            })
            .map(|b| b.name.as_str())
            .collect();
        let place = if first == end {
            format!("Line {first}")
        } else {
            format!("Lines {first}–{end}")
        };
        let mut hint = format!("{place} ran {} times", group_thousands(rounds as u64));
        for (i, name) in unchanged.iter().enumerate() {
            hint.push_str(if i == 0 { "; `" } else { " and `" });
            hint.push_str(name);
            hint.push('`');
        }
        hint.push_str(if unchanged.is_empty() {
            "."
        } else {
            " never changed there."
        });
        Some(hint)
    })
}

/// `name` appears in `line` as a whole identifier.
fn uses_name(line: &str, name: &str) -> bool {
    // Bytes of non-ASCII letters count as identifier bytes (no Unicode tables in the wasm).
    let is_ident = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b >= 0x80;
    let bytes = line.as_bytes();
    line.match_indices(name)
        .any(|(at, _)| !bytes[..at].last().is_some_and(is_ident) && !bytes.get(at + name.len()).is_some_and(is_ident))
}

/// Where to type the input, when `input()` found none (the `EOFError` is right, but a
/// beginner needs to know where the input goes).
pub fn input_hint(outcome: &Outcome) -> Option<&'static str> {
    matches!(outcome, Outcome::UncaughtException { exception_type, .. } if exception_type == "EOFError").then_some(
        "input() found no input to read: type it in the Standard input box below the code, one line per input() call, then Run again.",
    )
}

/// Where a run that did not end normally is best looked at: the event that raised the
/// uncaught exception, or the last recorded event of a run cut short.
pub fn error_stop(tree: &StateTree) -> Option<usize> {
    let events = &tree.trace().events;
    let last = events.len().checked_sub(1)?;
    match tree.trace().outcome {
        Outcome::Finished | Outcome::Exited { .. } | Outcome::SyntaxError { .. } => None,
        Outcome::UncaughtException { .. } => {
            // The exception leaves frame after frame as `exception` and `return` events
            // after the raise: the first exception of that tail is where it was raised.
            let tail = events
                .iter()
                .rposition(|e| !matches!(e.kind, EventKind::Exception | EventKind::Return))
                .map_or(0, |i| i + 1);
            (tail..events.len())
                .find(|&i| events[i].kind == EventKind::Exception)
                .or(Some(last))
        }
        _ => Some(last),
    }
}

/// The key a control shows: arrows as arrows.
fn key_cap(shortcut: &str) -> String {
    match shortcut {
        "ArrowLeft" => "←".to_owned(),
        "ArrowRight" => "→".to_owned(),
        other => other.to_owned(),
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

/// Finished and `sys.exit(0)` are normal ends; everything else deserves attention.
fn outcome_is_normal(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Finished | Outcome::Exited { code: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortcuts_are_pdbs_letters_and_shift_reverses() {
        assert_eq!(action_for_key("s"), Some(Action::StepInto));
        assert_eq!(action_for_key("n"), Some(Action::StepOver));
        assert_eq!(action_for_key("r"), Some(Action::StepReturn));
        assert_eq!(action_for_key("c"), Some(Action::Continue));
        assert_eq!(action_for_key("b"), Some(Action::ReverseStepInto));
        assert_eq!(action_for_key("S"), Some(Action::ReverseStepInto));
        assert_eq!(action_for_key("N"), Some(Action::ReverseStepOver));
        assert_eq!(action_for_key("R"), Some(Action::ReverseStepReturn));
        assert_eq!(action_for_key("C"), Some(Action::ReverseContinue));
        assert_eq!(action_for_key("x"), None);
        assert_eq!(action_for_key("ArrowRight"), Some(Action::StepInto));
        assert_eq!(action_for_presenter_key("ArrowRight"), Some(Action::StepInto));
    }

    fn fixture(json: &str) -> StateTree {
        StateTree::new(serde_json::from_str(json).unwrap()).unwrap()
    }

    #[test]
    fn a_run_that_raised_is_looked_at_where_it_raised() {
        let raised = fixture(include_str!("../../tests/fixtures/average.json"));
        // The raise inside average(), not the module's re-raise after it.
        assert_eq!(error_stop(&raised), Some(5));
        assert_eq!(
            crate::playground::state_tree_view::activation_label(&raised, 1),
            "average(xs=[]) raised ZeroDivisionError('division by zero')"
        );
        let finished = fixture(include_str!("../../tests/fixtures/double.json"));
        assert_eq!(error_stop(&finished), None);
        assert_eq!(
            crate::playground::state_tree_view::activation_label(&finished, 1),
            "double(x=2) → 4"
        );
    }

    #[test]
    fn the_summary_describes_the_run_and_input_errors_say_where_input_goes() {
        assert_eq!(
            run_summary(&Outcome::Finished, 1234),
            "Run result: the program finished after 1,234 steps."
        );
        let eof = Outcome::UncaughtException {
            exception_type: "EOFError".into(),
            message: "EOF when reading a line".into(),
            line: Some(1),
        };
        assert_eq!(
            run_summary(&eof, 3),
            "Run result: the program raised EOFError on line 1: EOF when reading a line"
        );
        assert!(input_hint(&eof).is_some_and(|h| h.contains("Standard input")));
        assert_eq!(input_hint(&Outcome::Finished), None);
        let limit = Outcome::LimitReached {
            limit: Limit::Events,
            detail: "100000 events".into(),
        };
        let text = run_summary(&limit, 100_000);
        assert!(
            text.contains("after 100,000 steps") && !text.contains("raise the limit"),
            "{text}"
        );
    }

    /// A module-level loop over lines 2-3 cut off by the step limit after `rounds` rounds,
    /// `i` bound to value `i_values(round)`.
    fn stuck_loop(rounds: u32, i_value: fn(u32) -> u32) -> StateTree {
        use replayground_shared::trace::{Binding, Event, Frame, Shape, Value};
        let mut trace = replayground_shared::Trace::empty(Outcome::LimitReached {
            limit: Limit::Events,
            detail: "100000 events".into(),
        });
        trace.frames.push(Frame {
            function: "<module>".into(),
            parent: None,
            depth: 0,
            is_generator: false,
            called_from_library: false,
        });
        for (repr, type_name) in [("0", "int"), ("1", "int"), ("<function f at 0x1>", "function")] {
            trace.values.push(Value {
                repr: repr.into(),
                type_name: type_name.into(),
                object_id: 0,
                shape: Shape::Scalar,
            });
        }
        let event = |kind, line, i: Option<u32>| Event {
            kind,
            frame: 0,
            line,
            locals: std::iter::once(Binding {
                name: "f".into(),
                value: 2,
            })
            .chain(i.map(|value| Binding {
                name: "i".into(),
                value,
            }))
            .collect(),
            value: None,
            stdout_len: 0,
            stderr_len: 0,
            internal: false,
            generator_exit: false,
        };
        trace.events.push(event(EventKind::Call, 1, None));
        trace.events.push(event(EventKind::Line, 1, None));
        for round in 0..rounds {
            trace.events.push(event(EventKind::Line, 2, Some(i_value(round))));
            trace.events.push(event(EventKind::Line, 3, Some(i_value(round))));
        }
        StateTree::new(trace).unwrap()
    }

    #[test]
    fn a_run_stuck_in_a_loop_names_the_loop_and_what_never_changed() {
        let code = "i = 0\nwhile i < 10:\n    i + f(i)\n";
        let stuck = stuck_loop(1_200, |_| 0);
        assert_eq!(
            loop_hint(&stuck, code).as_deref(),
            Some("Lines 2–3 ran 1,200 times; `i` never changed there.")
        );
        let counting = stuck_loop(1_200, |round| round % 2);
        assert_eq!(
            loop_hint(&counting, code).as_deref(),
            Some("Lines 2–3 ran 1,200 times.")
        );
        // A name the loop's condition does not use is not the reason.
        assert_eq!(
            loop_hint(&stuck, "i = 0\nwhile True:\n    print(i)\n").as_deref(),
            Some("Lines 2–3 ran 1,200 times.")
        );
        assert_eq!(
            loop_hint(&stuck_loop(50, |_| 0), code),
            None,
            "too few rounds to be the reason"
        );
        assert_eq!(
            loop_hint(&fixture(include_str!("../../tests/fixtures/double.json")), code),
            None
        );
        assert!(uses_name("while i < n:", "i") && !uses_name("while items:", "i"));
    }

    #[test]
    fn after_the_end_the_final_globals_stay_visible() {
        let session = Session::new(
            include_str!("../../tests/fixtures/double.py").to_owned(),
            fixture(include_str!("../../tests/fixtures/double.json")),
        );
        let html = variables_html(&session, Stop::End, None, None, &HashSet::new());
        assert!(html.contains("Globals at the end"), "{html}");
        assert!(html.contains("<code>y</code>"), "{html}");
        // Functions in a few words, not `<function double at 0x...>`.
        assert!(html.contains(">function double(x)</code>"), "{html}");
    }

    #[test]
    fn every_action_has_one_control() {
        let keys: HashSet<&str> = CONTROLS.iter().map(|c| c.key).collect();
        assert_eq!(keys.len(), CONTROLS.len());
    }
}
