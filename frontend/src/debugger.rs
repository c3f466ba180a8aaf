//! Stepping through one run: the controls, the code with the current line, the call
//! stack, the variables and the output at the stop.
//!
//! Every move goes through [`StateTree::step`], the same navigation the server uses.

use std::collections::BTreeSet;
use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use replayground_shared::{Action, StateTree, Stop};
use wasm_bindgen::JsCast;

use crate::stop_view::{StopView, function_label};

/// One traced run: the code as it was run (the editor may change since) and its state tree.
#[derive(Debug)]
pub struct Session {
    pub code: String,
    pub tree: StateTree,
}

/// A debugger button: the action it applies and its keyboard shortcut (pdb's letters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Control {
    pub action: Action,
    pub label: &'static str,
    pub key: &'static str,
    pub test_id: &'static str,
}

pub const CONTROLS: [Control; 5] = [
    Control {
        action: Action::ReverseStepInto,
        label: "Step back",
        key: "b",
        test_id: "step-back",
    },
    Control {
        action: Action::StepInto,
        label: "Step into",
        key: "s",
        test_id: "step-into",
    },
    Control {
        action: Action::StepOver,
        label: "Step over",
        key: "n",
        test_id: "step-over",
    },
    Control {
        action: Action::StepReturn,
        label: "Step return",
        key: "r",
        test_id: "step-return",
    },
    Control {
        action: Action::Continue,
        label: "Continue",
        key: "c",
        test_id: "continue",
    },
];

/// The action bound to a key press without modifiers, if any.
pub fn action_for_key(key: &str) -> Option<Action> {
    CONTROLS.iter().find(|c| c.key == key).map(|c| c.action)
}

// Leptos hands props over by value.
#[allow(clippy::needless_pass_by_value)]
#[component]
pub fn DebuggerPanel(session: Arc<Session>, breakpoints: RwSignal<BTreeSet<u32>>) -> impl IntoView {
    let first = session.tree.initial_stop();
    let stop = RwSignal::new(first);
    let at_stop = {
        let session = Arc::clone(&session);
        Memo::new(move |_| StopView::at(&session.tree, stop.get()))
    };
    let act = {
        let session = Arc::clone(&session);
        Callback::new(move |action: Action| {
            let mut lines = breakpoints.get_untracked();
            let next = session.tree.step(stop.get_untracked(), action, &mut lines);
            if lines != breakpoints.get_untracked() {
                breakpoints.set(lines);
            }
            stop.set(next);
        })
    };
    let can_apply = move |action: Action| {
        let here = stop.get();
        if action.is_reverse() {
            here != first
        } else {
            here != Stop::End
        }
    };

    let shortcuts = window_event_listener(ev::keydown, move |ev| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() || ev.shift_key() || ev.default_prevented() {
            return;
        }
        if is_typing_target(ev.target()) {
            return;
        }
        if let Some(action) = action_for_key(&ev.key()) {
            ev.prevent_default();
            act.run(action);
        }
    });
    on_cleanup(move || shortcuts.remove());

    // Keep the current line in sight when stepping through a long program.
    Effect::new(move |_| {
        if at_stop.with(|v| v.line.is_some()) {
            request_animation_frame(scroll_current_line_into_view);
        }
    });

    let outcome = session.tree.trace().outcome.clone();
    let outcome_class = if outcome_is_normal(&outcome) {
        "outcome ok"
    } else {
        "outcome problem"
    };
    let lines: Vec<(u32, String)> = session
        .code
        .lines()
        .enumerate()
        .map(|(i, l)| (i as u32 + 1, l.to_owned()))
        .collect();

    view! {
        <div class="debugger">
            <p class=outcome_class data-testid="outcome">
                {outcome.describe()}
            </p>
            <div class="controls" role="toolbar" aria-label="Debugger controls">
                {CONTROLS
                    .iter()
                    .map(|control| {
                        let Control { action, label, key, test_id } = *control;
                        view! {
                            <button
                                type="button"
                                data-testid=test_id
                                title=format!("{label} (key {key})")
                                aria-keyshortcuts=key
                                prop:disabled=move || !can_apply(action)
                                on:click=move |_| act.run(action)
                            >
                                {label}
                                " "
                                <kbd aria-hidden="true">{key}</kbd>
                            </button>
                        }
                    })
                    .collect_view()}
            </div>
            <div class="stop-status" aria-live="polite">
                <p class="headline" data-testid="headline">
                    {move || at_stop.with(|v| v.headline.clone())}
                </p>
                <p class="position">
                    "Line "
                    <span class="current-line" data-testid="current-line">
                        {move || at_stop.with(|v| v.line.map_or_else(|| "end".to_owned(), |l| l.to_string()))}
                    </span>
                    " · "
                    {move || at_stop.with(|v| v.position.clone())}
                </p>
            </div>
            <p class="hint">"Click a line number to set a breakpoint; Continue runs to the next one."</p>
            <ol class="code-view" data-testid="code-view" aria-label="The program, with the current line marked">
                {lines
                    .into_iter()
                    .map(|(n, text)| {
                        let is_current = move || at_stop.with(|v| v.line == Some(n));
                        let has_breakpoint = move || breakpoints.with(|b| b.contains(&n));
                        view! {
                            <li
                                class="code-line"
                                class:current=is_current
                                class:breakpoint=has_breakpoint
                                aria-current=move || is_current().then_some("step")
                            >
                                <button
                                    type="button"
                                    class="gutter"
                                    aria-label=format!("Breakpoint on line {n}")
                                    aria-pressed=move || has_breakpoint().to_string()
                                    on:click=move |_| {
                                        breakpoints
                                            .update(|b| {
                                                if !b.remove(&n) {
                                                    b.insert(n);
                                                }
                                            });
                                    }
                                >
                                    {n}
                                </button>
                                <code class="source">{if text.is_empty() { " ".to_owned() } else { text }}</code>
                            </li>
                        }
                    })
                    .collect_view()}
            </ol>
            <div class="inspectors">
                <section class="inspector" aria-labelledby="stack-heading">
                    <h3 id="stack-heading">"Call stack"</h3>
                    <ol class="call-stack" data-testid="call-stack">
                        {move || {
                            at_stop
                                .with(|v| {
                                    v.call_stack
                                        .iter()
                                        .map(|entry| {
                                            view! {
                                                <li>
                                                    <code>{function_label(&entry.function)}</code>
                                                    " line "
                                                    {entry.line}
                                                </li>
                                            }
                                        })
                                        .collect_view()
                                })
                        }}
                    </ol>
                    <Show when=move || at_stop.with(|v| v.call_stack.is_empty())>
                        <p class="empty">"No frames: the program is not running."</p>
                    </Show>
                </section>
                <section class="inspector" aria-labelledby="vars-heading">
                    <h3 id="vars-heading">{move || at_stop.with(|v| v.variables_title.clone())}</h3>
                    {move || {
                        at_stop
                            .with(|v| {
                                v.value
                                    .clone()
                                    .map(|(label, value)| {
                                        view! {
                                            <p class="stop-value" data-testid="stop-value">
                                                {label}
                                                ": "
                                                <code>{value}</code>
                                            </p>
                                        }
                                    })
                            })
                    }}
                    <table class="variables" data-testid="variables">
                        <thead>
                            <tr>
                                <th scope="col">"Name"</th>
                                <th scope="col">"Value"</th>
                            </tr>
                        </thead>
                        <tbody>
                            {move || {
                                at_stop
                                    .with(|v| {
                                        v.variables
                                            .iter()
                                            .map(|(name, value)| {
                                                view! {
                                                    <tr>
                                                        <th scope="row">
                                                            <code>{name.clone()}</code>
                                                        </th>
                                                        <td>
                                                            <code>{value.clone()}</code>
                                                        </td>
                                                    </tr>
                                                }
                                            })
                                            .collect_view()
                                    })
                            }}
                        </tbody>
                    </table>
                    <Show when=move || at_stop.with(|v| v.variables.is_empty())>
                        <p class="empty">"No variables at this stop."</p>
                    </Show>
                </section>
                <section class="inspector output" aria-labelledby="output-heading">
                    <h3 id="output-heading">"Output so far"</h3>
                    <pre class="stdout" data-testid="stdout">{move || at_stop.with(|v| v.stdout.clone())}</pre>
                    <Show when=move || at_stop.with(|v| !v.stderr.is_empty())>
                        <pre class="stderr" data-testid="stderr">{move || at_stop.with(|v| v.stderr.clone())}</pre>
                    </Show>
                </section>
            </div>
        </div>
    }
}

/// Finished and `sys.exit(0)` are normal ends; everything else deserves attention.
fn outcome_is_normal(outcome: &replayground_shared::Outcome) -> bool {
    matches!(
        outcome,
        replayground_shared::Outcome::Finished | replayground_shared::Outcome::Exited { code: 0 }
    )
}

/// Letters typed into the editor or the input box are text, not debugger commands.
fn is_typing_target(target: Option<web_sys::EventTarget>) -> bool {
    target
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|element| {
            matches!(element.tag_name().as_str(), "TEXTAREA" | "INPUT" | "SELECT")
                || element.closest("[contenteditable]").ok().flatten().is_some()
        })
}

fn scroll_current_line_into_view() {
    let Some(line) = document().query_selector(".code-line.current").ok().flatten() else {
        return;
    };
    let options = web_sys::ScrollIntoViewOptions::new();
    options.set_block(web_sys::ScrollLogicalPosition::Nearest);
    line.scroll_into_view_with_scroll_into_view_options(&options);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortcuts_are_pdbs_letters() {
        assert_eq!(action_for_key("s"), Some(Action::StepInto));
        assert_eq!(action_for_key("n"), Some(Action::StepOver));
        assert_eq!(action_for_key("r"), Some(Action::StepReturn));
        assert_eq!(action_for_key("c"), Some(Action::Continue));
        assert_eq!(action_for_key("b"), Some(Action::ReverseStepInto));
        assert_eq!(action_for_key("x"), None);
    }
}
