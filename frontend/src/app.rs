//! The page: the program editor on one side, the run being stepped through on the other.

use std::collections::BTreeSet;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;
use crate::debugger::{DebuggerPanel, Session};

/// The program the editor starts with: a call, a loop, output and input, in a few lines.
pub const EXAMPLE_PROGRAM: &str = r#"def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


name = input("Your name? ")
total = 0
for i in range(5):
    value = fib(i)
    total += value
    print(f"fib({i}) = {value}")
print(f"Bye {name}, the total is {total}")
"#;

/// Standard input for [`EXAMPLE_PROGRAM`].
pub const EXAMPLE_STDIN: &str = "Ada\n";

#[component]
pub fn App() -> impl IntoView {
    let code = RwSignal::new(EXAMPLE_PROGRAM.to_owned());
    let stdin = RwSignal::new(EXAMPLE_STDIN.to_owned());
    let session = RwSignal::new(None::<Arc<Session>>);
    let error = RwSignal::new(None::<String>);
    let running = RwSignal::new(false);
    // Kept across runs: editing and re-running should not lose them.
    let breakpoints = RwSignal::new(BTreeSet::<u32>::new());

    let run = move || {
        if running.get_untracked() {
            return;
        }
        running.set(true);
        error.set(None);
        let (code_now, stdin_now) = (code.get_untracked(), stdin.get_untracked());
        spawn_local(async move {
            match api::run_program(&code_now, &stdin_now).await {
                Ok(tree) => session.set(Some(Arc::new(Session { code: code_now, tree }))),
                Err(e) => {
                    session.set(None);
                    error.set(Some(e.to_string()));
                }
            }
            running.set(false);
        });
    };

    view! {
        <header class="site-header">
            <h1>"Replayground"</h1>
            <p class="tagline">"See what a Python program does, one step at a time."</p>
        </header>
        <main class="layout">
            <section class="pane editor-pane" aria-labelledby="program-heading">
                <h2 id="program-heading">"Program"</h2>
                <label for="editor">"Python code"</label>
                <textarea
                    id="editor"
                    class="editor"
                    data-testid="editor"
                    rows="18"
                    spellcheck="false"
                    autocomplete="off"
                    autocapitalize="off"
                    prop:value=move || code.get()
                    on:input=move |ev| code.set(event_target_value(&ev))
                    on:keydown=move |ev| {
                        if (ev.ctrl_key() || ev.meta_key()) && ev.key() == "Enter" {
                            ev.prevent_default();
                            run();
                        }
                    }
                ></textarea>
                <label for="stdin">"Standard input"</label>
                <textarea
                    id="stdin"
                    class="stdin"
                    data-testid="stdin"
                    rows="3"
                    spellcheck="false"
                    prop:value=move || stdin.get()
                    on:input=move |ev| stdin.set(event_target_value(&ev))
                ></textarea>
                <div class="run-row">
                    <button
                        type="button"
                        class="primary"
                        data-testid="run"
                        title="Run the program (Ctrl+Enter in the editor)"
                        aria-keyshortcuts="Control+Enter"
                        prop:disabled=move || running.get()
                        on:click=move |_| run()
                    >
                        {move || if running.get() { "Running…" } else { "Run" }}
                    </button>
                    <Show when=move || running.get()>
                        <progress aria-label="Running the program"></progress>
                    </Show>
                </div>
                {move || {
                    error
                        .get()
                        .map(|message| {
                            view! {
                                <p class="error" role="alert" data-testid="error">
                                    {message}
                                </p>
                            }
                        })
                }}
            </section>
            <section class="pane debugger-pane" aria-labelledby="run-heading">
                <h2 id="run-heading">"Run"</h2>
                {move || match session.get() {
                    Some(session) => view! { <DebuggerPanel session breakpoints /> }.into_any(),
                    None => {
                        view! {
                            <p class="placeholder">
                                "Press Run to trace the program, then step through what it did."
                            </p>
                        }
                            .into_any()
                    }
                }}
            </section>
        </main>
    }
}
