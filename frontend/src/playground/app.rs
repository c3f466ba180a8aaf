//! The page: the program editor on one side, the run being stepped through on the other,
//! the examples, share links, themes and presentation mode around them.

use std::collections::BTreeSet;
use std::sync::Arc;

use leptos::ev;
use leptos::html::Textarea;
use leptos::prelude::*;
use leptos::task::spawn_local;
use replayground_shared::Action;
use replayground_shared::share::PlaygroundView;
use replayground_shared::text::group_thousands;

use crate::playground::debugger::{DebuggerPanel, timeline_position};
use crate::playground::editor::{CodeEditor, Outline, ProblemList};
use crate::playground::examples::{EXAMPLES, Example};
use crate::playground::jobs;
use crate::playground::neural_view::{NeuralMode, NeuralPanel};
use crate::playground::predict::{PREDICT_QUERY, PredictMode, asks_for_predict_mode};
use crate::playground::session::{ADVANCED_KEY, Advanced, Presenting, Session};
use crate::playground::sharing::{self, LinkTarget};
use crate::playground::syntax::{Analysis, push_escaped};
use crate::playground::ui::{data_of, is_typing_target, message, when};
use crate::theme::{local_storage, stored_flag, use_theme};

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

/// Where the editor's code, input and breakpoints are saved on every change.
const SAVED_KEY: &str = "replayground-playground";

/// The student's own work, replaced by an example or a link and one click from coming back.
#[derive(Debug, Clone)]
struct Replaced {
    /// The code that replaced it; the offer lasts while the editor still holds exactly that.
    by: String,
    what: String,
    previous: PlaygroundView,
}

/// The page's state that a share link captures and a run needs.
#[derive(Debug, Clone, Copy)]
struct Playground {
    code: RwSignal<String>,
    stdin: RwSignal<String>,
    breakpoints: RwSignal<BTreeSet<u32>>,
    session: RwSignal<Option<Arc<Session>>>,
    error: RwSignal<Option<String>>,
    running: RwSignal<bool>,
    /// How far the running trace has streamed.
    progress: RwSignal<jobs::RunProgress>,
    /// Stops the running trace.
    cancel: StoredValue<Option<jobs::CancelRun>, LocalStorage>,
    neural: NeuralMode,
    /// What the last example or link replaced, for Undo.
    replaced: RwSignal<Option<Replaced>>,
}

impl Playground {
    /// Runs the current code; once traced, goes to event `step` if given.
    fn run(self, step: Option<u32>) {
        if self.running.get_untracked() {
            return;
        }
        self.running.set(true);
        self.error.set(None);
        self.progress.set(jobs::RunProgress::default());
        let cancel = jobs::CancelRun::default();
        self.cancel.set_value(Some(cancel.clone()));
        let (code, stdin) = (self.code.get_untracked(), self.stdin.get_untracked());
        let neural = self.neural.on.get_untracked();
        spawn_local(async move {
            let progress = self.progress;
            let result = jobs::run_program_streaming(&code, &stdin, neural, &cancel, move |p| progress.set(p)).await;
            self.cancel.set_value(None);
            match result {
                Ok(tree) => {
                    let session = Session::new(code, tree);
                    if let Some(step) = step {
                        let mut breakpoints = self.breakpoints.get_untracked();
                        let stop = session
                            .tree
                            .step(session.tree.initial_stop(), Action::Jump(step), &mut breakpoints);
                        session.stop.set(stop);
                    }
                    // A new run: the neural panel starts empty, predicting with this run's input.
                    self.neural.last_step.set(None);
                    self.neural.stdin.set(stdin);
                    self.session.set(Some(Arc::new(session)));
                }
                Err(e) => {
                    self.session.set(None);
                    self.error.set(Some(e.to_string()));
                }
            }
            self.running.set(false);
        });
    }

    /// Stops the running trace, if any.
    fn cancel(self) {
        if let Some(cancel) = self.cancel.get_value() {
            cancel.cancel();
        }
    }

    /// What a share link of the page now holds.
    fn view(self) -> PlaygroundView {
        let code = self.code.get_untracked();
        let step = self.session.with_untracked(|s| {
            s.as_ref()
                .filter(|s| s.code == code)
                .map(|s| timeline_position(&s.tree, s.stop.get_untracked()) as u32)
        });
        PlaygroundView {
            stdin: self.stdin.get_untracked(),
            breakpoints: self.breakpoints.get_untracked().into_iter().collect(),
            step,
            code,
        }
    }

    /// Shows a shared view; a view with a step is run and opened at that step.
    fn restore(self, view: PlaygroundView) {
        self.replace("the shared program", view);
    }

    fn load_example(self, example: &Example) {
        let view = PlaygroundView {
            code: example.code.to_owned(),
            stdin: example.stdin.to_owned(),
            ..PlaygroundView::default()
        };
        self.replace(&format!("the example “{}”", example.title), view);
    }

    /// Puts `view` in the editor, keeping the student's own code for Undo.
    fn replace(self, what: &str, view: PlaygroundView) {
        let mut previous = self.view();
        previous.step = None;
        let own = previous.code != view.code && !is_stock_program(&previous.code);
        self.replaced.set(own.then(|| Replaced {
            by: view.code.clone(),
            what: what.to_owned(),
            previous,
        }));
        self.session.set(None);
        self.error.set(None);
        self.code.set(view.code);
        self.stdin.set(view.stdin);
        self.breakpoints.set(view.breakpoints.into_iter().collect());
        if let Some(step) = view.step {
            self.run(Some(step));
        }
    }

    /// Brings back what the last example or link replaced.
    fn undo_replace(self) {
        if let Some(replaced) = self.replaced.get_untracked() {
            self.replaced.set(None);
            self.session.set(None);
            self.code.set(replaced.previous.code);
            self.stdin.set(replaced.previous.stdin);
            self.breakpoints
                .set(replaced.previous.breakpoints.into_iter().collect());
        }
    }
}

/// The starting program or an unedited example: nothing of the student's to keep.
fn is_stock_program(code: &str) -> bool {
    code == EXAMPLE_PROGRAM || EXAMPLES.iter().any(|e| e.code == code)
}

/// The code, input and breakpoints saved by the last visit, if any.
fn saved_view() -> Option<PlaygroundView> {
    let json = local_storage()?.get_item(SAVED_KEY).ok().flatten()?;
    serde_json::from_str(&json).ok()
}

#[component]
pub fn App() -> impl IntoView {
    let saved = saved_view().unwrap_or_else(|| PlaygroundView {
        code: EXAMPLE_PROGRAM.to_owned(),
        stdin: EXAMPLE_STDIN.to_owned(),
        ..PlaygroundView::default()
    });
    let page = Playground {
        code: RwSignal::new(saved.code),
        stdin: RwSignal::new(saved.stdin),
        breakpoints: RwSignal::new(saved.breakpoints.into_iter().collect()),
        session: RwSignal::new(None),
        error: RwSignal::new(None),
        running: RwSignal::new(false),
        progress: RwSignal::new(jobs::RunProgress::default()),
        cancel: StoredValue::new_local(None),
        neural: NeuralMode::new(),
        replaced: RwSignal::new(None),
    };
    // Every change is saved at once, so a reload or a crash loses nothing.
    Effect::new(move |_| {
        let view = PlaygroundView {
            code: page.code.get(),
            stdin: page.stdin.get(),
            breakpoints: page.breakpoints.get().into_iter().collect(),
            step: None,
        };
        if let (Ok(json), Some(storage)) = (serde_json::to_string(&view), local_storage()) {
            let _ = storage.set_item(SAVED_KEY, &json);
        }
    });
    provide_context(page.neural);
    let location = window().location();
    let predict = PredictMode::new(asks_for_predict_mode(&location.search().unwrap_or_default()));
    provide_context(predict);
    let Playground {
        code,
        stdin,
        breakpoints,
        session,
        error,
        running,
        progress,
        ..
    } = page;
    let analysis = RwSignal::new(Analysis::default());
    let textarea = NodeRef::<Textarea>::new();
    let link_error = RwSignal::new(None::<String>);
    let share_link = RwSignal::new(None::<String>);
    let short_link = RwSignal::new(None::<Result<String, String>>);
    let copied = RwSignal::new(None::<String>);
    let presenting = RwSignal::new(false);
    provide_context(Presenting(presenting));
    let advanced = RwSignal::new(stored_flag(ADVANCED_KEY));
    provide_context(Advanced(advanced));
    let toggle_theme = use_theme();

    // Open what the address asks for: a fragment view or a short link.
    match sharing::link_target(
        &location.pathname().unwrap_or_default(),
        &location.hash().unwrap_or_default(),
    ) {
        LinkTarget::Fragment(fragment) => spawn_local(async move {
            match sharing::decode_fragment(&fragment).await {
                Ok(view) => page.restore(view),
                Err(message) => link_error.set(Some(message)),
            }
        }),
        LinkTarget::Short(id) => spawn_local(async move {
            match sharing::load_short_link(&id).await {
                Ok(view) => page.restore(view),
                Err(message) => link_error.set(Some(message)),
            }
        }),
        LinkTarget::None => {}
    }

    let toggle_presenting = move || {
        presenting.update(|p| *p = !*p);
        if presenting.get_untracked()
            && let Some(active) = document().active_element()
            && let Ok(element) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(active)
        {
            // Keys step the debugger, not type into the editor.
            let _ = element.blur();
        }
    };
    let page_keys = window_event_listener(ev::keydown, move |ev| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() || is_typing_target(ev.target()) {
            return;
        }
        match ev.key().as_str() {
            "p" => {
                ev.prevent_default();
                toggle_presenting();
            }
            "Escape" if presenting.get_untracked() => presenting.set(false),
            "m" if advanced.get_untracked() => {
                ev.prevent_default();
                page.neural.on.update(|on| *on = !*on);
            }
            _ => {}
        }
    });
    on_cleanup(move || page_keys.remove());

    let share = move || {
        let view = page.view();
        spawn_local(async move {
            let fragment = match sharing::encode_fragment(&view).await {
                Ok(fragment) => fragment,
                Err(message) => return link_error.set(Some(message)),
            };
            let origin = window().location().origin().unwrap_or_default();
            let path = format!("/{}#{fragment}", predict_query(predict));
            if let Ok(history) = window().history() {
                let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&path));
            }
            link_error.set(None);
            short_link.set(None);
            copied.set(None);
            share_link.set(Some(format!("{origin}{path}")));
        });
    };
    let make_short = move || {
        let view = page.view();
        let origin = window().location().origin().unwrap_or_default();
        spawn_local(async move {
            let link = sharing::create_short_link(&origin, &view).await;
            short_link.set(Some(link.map(|url| url + predict_query(predict))));
        });
    };
    let copy = move |text: String| {
        let promise = window().navigator().clipboard().write_text(&text);
        spawn_local(async move {
            let message = match wasm_bindgen_futures::JsFuture::from(promise).await {
                Ok(_) => "Copied to the clipboard.".to_owned(),
                Err(_) => "The browser did not allow copying: select the link and press Ctrl+C.".to_owned(),
            };
            copied.set(Some(message));
        });
    };

    // The debugger's line, shown in the editor while the code is the code that ran.
    let current_line = Signal::derive(move || {
        session.with(|s| {
            let s = s.as_ref()?;
            if code.with(|c| *c != s.code) {
                return None;
            }
            s.stop.get().event().map(|i| s.tree.trace().events[i].line)
        })
    });
    let stale = move || session.with(|s| s.as_ref().is_some_and(|s| code.with(|c| *c != s.code)));
    // While predicting, a click in the code picks a line instead of moving into the text.
    let predicting = move || predict.on.get() && session.with(Option::is_some) && !stale();
    let readonly = Signal::derive(move || presenting.get() || predicting());
    let guess_line = Signal::derive(move || predicting().then(|| predict.line.get()).flatten());
    let on_pick = Callback::new(move |line: u32| {
        let picking = predicting();
        if picking {
            predict.line.set(Some(line));
        }
        picking
    });

    view! {
        <div class="app" class:presenting=move || presenting.get() class:advanced=move || advanced.get()>
            <header class="site-header">
                <div class="brand">
                    <h1>"Replayground"</h1>
                    <p class="tagline">"See what a Python program does, one step at a time — forwards and backwards."</p>
                </div>
                <div class="toolbar" role="toolbar" aria-label="Page">
                    <label class="visually-hidden" for="examples">"Load an example"</label>
                    <select
                        id="examples"
                        data-testid="examples"
                        inner_html=example_options_html()
                        on:change=move |ev| {
                            let id = event_target_value(&ev);
                            if let Some(example) = crate::playground::examples::find(&id) {
                                page.load_example(example);
                            }
                        }
                    >
                    </select>
                    <button type="button" data-testid="share" title="Put this view in a link" on:click=move |_| share()>
                        "Share"
                    </button>
                    <button
                        type="button"
                        data-testid="theme"
                        title="Switch between the light and dark theme"
                        on:click=move |_| toggle_theme()
                    >
                        "Theme"
                    </button>
                    <button
                        type="button"
                        data-testid="present"
                        title="Presentation mode: large text, keys only (p, Escape to leave)"
                        aria-keyshortcuts="p"
                        aria-pressed=move || presenting.get().to_string()
                        on:click=move |_| toggle_presenting()
                    >
                        {move || if presenting.get() { "Leave presentation" } else { "Present" }}
                        " "
                        <kbd aria-hidden="true">"p"</kbd>
                    </button>
                </div>
            </header>
            {move || {
                let mut html = String::from("Loaded ");
                page.replaced
                    .with(|r| r.as_ref().filter(|r| code.with(|c| *c == r.by)).map(|r| push_escaped(&mut html, &r.what)))?;
                html.push_str(
                    r#". Your own code is kept: <button type="button" data-testid="undo-replace" data-undo="">Undo</button>"#,
                );
                Some(view! {
                    <p
                        class="banner note"
                        role="status"
                        data-testid="replaced"
                        inner_html=html
                        on:click=move |ev| {
                            if data_of(&ev, "data-undo").is_some() {
                                page.undo_replace();
                            }
                        }
                    ></p>
                })
            }}
            {move || {
                link_error
                    .get()
                    .map(|text| message("banner error", "alert", Some("link-error"), text))
            }}
            {move || {
                share_link
                    .get()
                    .map(|link| {
                        let for_copy = link.clone();
                        view! {
                            <section class="share-panel" data-testid="share-panel" aria-label="Share this view">
                                <label for="share-link">"Link to this view (code, input, breakpoints, step, predict mode)"</label>
                                <div class="share-row">
                                    <input id="share-link" data-testid="share-link" readonly prop:value=link />
                                    <button type="button" on:click=move |_| copy(for_copy.clone())>
                                        "Copy"
                                    </button>
                                    <button type="button" data-testid="make-short-link" on:click=move |_| make_short()>
                                        "Short link"
                                    </button>
                                    <button type="button" aria-label="Close" on:click=move |_| share_link.set(None)>
                                        "✕"
                                    </button>
                                </div>
                                {move || {
                                    short_link
                                        .get()
                                        .map(|result| {
                                            let (url, refusal) = match result {
                                                Ok(url) => (Some(url), None),
                                                Err(refusal) => (None, Some(refusal)),
                                            };
                                            let link = url.map(|url| {
                                                let for_copy = url.clone();
                                                view! {
                                                    <div class="share-row">
                                                        <input
                                                            data-testid="short-link"
                                                            aria-label="Short link"
                                                            readonly
                                                            prop:value=url
                                                        />
                                                        <button
                                                            type="button"
                                                            data-testid="copy-short-link"
                                                            on:click=move |_| copy(for_copy.clone())
                                                        >
                                                            "Copy"
                                                        </button>
                                                    </div>
                                                }
                                            });
                                            let refused = refusal
                                                .map(|text| message("error", "alert", None, text));
                                            (link, refused)
                                        })
                                }}
                                {move || copied.get().map(|m| message("note", "status", None, m))}
                            </section>
                        }
                    })
            }}
            <main class="layout">
                <section class="pane editor-pane" aria-labelledby="program-heading">
                    <div class="pane-head">
                        <h2 id="program-heading">"Program"</h2>
                        <button
                            type="button"
                            class="primary"
                            data-testid="run"
                            title="Run the program (Ctrl+Enter in the editor)"
                            aria-keyshortcuts="Control+Enter"
                            prop:disabled=move || running.get()
                            on:click=move |_| page.run(None)
                        >
                            {move || if running.get() { "Running…" } else { "Run" }}
                        </button>
                        {when(move || running.get(), move || {
                            view! {
                                <progress aria-label="Running the program" data-testid="progress"></progress>
                                <span class="run-progress" role="status" aria-live="polite" data-testid="progress-count">
                                    {move || {
                                        let p = progress.get();
                                        match (p.streaming, p.events) {
                                            (false, _) => "Tracing…".to_owned(),
                                            (true, 1) => "1 event".to_owned(),
                                            (true, n) => format!("{} events", group_thousands(n as u64)),
                                        }
                                    }}
                                </span>
                                <button
                                    type="button"
                                    data-testid="cancel"
                                    title="Stop tracing the program"
                                    on:click=move |_| page.cancel()
                                >
                                    "Cancel"
                                </button>
                            }
                        })}
                    </div>
                    <div class="editor-body">
                        <aside class="editor-aside">
                            <Outline analysis textarea />
                            <ProblemList analysis textarea />
                        </aside>
                        <CodeEditor
                            code
                            breakpoints
                            current_line
                            analysis
                            on_run=Callback::new(move |()| {
                                // After Ctrl+Enter the keys step the debugger (n, s) instead of typing.
                                if let Some(area) = textarea.get_untracked() {
                                    let _ = area.blur();
                                }
                                page.run(None);
                            })
                            textarea
                            readonly
                            guess_line
                            on_pick
                        />
                    </div>
                    <div class="stdin-box">
                        <label for="stdin">"Standard input"</label>
                        <textarea
                            id="stdin"
                            class="stdin"
                            data-testid="stdin"
                            rows="2"
                            spellcheck="false"
                            prop:value=move || stdin.get()
                            on:input=move |ev| stdin.set(event_target_value(&ev))
                        ></textarea>
                    </div>
                    {move || {
                        error
                            .get()
                            .map(|text| message("error", "alert", Some("error"), text))
                    }}
                </section>
                <section class="pane debugger-pane" aria-labelledby="run-heading">
                    <h2 id="run-heading" class="visually-hidden">"Run"</h2>
                    {when(stale, || {
                        view! {
                            <p class="banner note" role="status" data-testid="stale">
                                "The program changed since this run; the run below is of the old code. Press Run to trace the new one."
                            </p>
                        }
                    })}
                    // Two options rather than `into_any`: each erased view type costs the bundle.
                    {move || {
                        let session = session.get();
                        let gallery = session.is_none().then(|| view! { <Gallery page /> });
                        let panels = session
                            .map(|session| {
                                view! {
                                    <NeuralPanel session=Arc::clone(&session) mode=page.neural breakpoints />
                                    <DebuggerPanel session breakpoints />
                                }
                            });
                        (panels, gallery)
                    }}
                </section>
            </main>
        </div>
    }
}

/// The query that makes a link open in predict mode, while it is on.
fn predict_query(predict: PredictMode) -> &'static str {
    if predict.on.get_untracked() { PREDICT_QUERY } else { "" }
}

/// The examples menu's options as HTML (one string costs the bundle less than a view each).
fn example_options_html() -> String {
    let mut out = String::from(r#"<option value="">Examples…</option>"#);
    for e in EXAMPLES {
        out.push_str(r#"<option value=""#);
        push_escaped(&mut out, e.id);
        out.push_str(r#"" title=""#);
        push_escaped(&mut out, e.summary);
        out.push_str(r#"">"#);
        push_escaped(&mut out, e.title);
        out.push_str("</option>");
    }
    out
}

/// The examples as cards, HTML with one delegated click handler (`data-example`).
fn gallery_html() -> String {
    let mut out = String::new();
    for e in EXAMPLES {
        out.push_str(r#"<li><button type="button" class="card" data-example=""#);
        push_escaped(&mut out, e.id);
        out.push_str(r#""><strong>"#);
        push_escaped(&mut out, e.title);
        out.push_str("</strong><span>");
        push_escaped(&mut out, e.summary);
        out.push_str("</span></button></li>");
    }
    out
}

/// Before the first run: how to start, and the examples as cards.
#[component]
fn Gallery(page: Playground) -> impl IntoView {
    view! {
        <div class="gallery">
            <p class="placeholder">
                "Press " <strong>"Run"</strong>
                " to trace the program, then step through what it did — forwards and backwards. Or start from an example:"
            </p>
            <ul
                class="cards"
                data-testid="gallery"
                inner_html=gallery_html()
                on:click=move |ev| {
                    if let Some(example) = data_of(&ev, "data-example").and_then(|id| crate::playground::examples::find(&id)) {
                        page.load_example(example);
                    }
                }
            ></ul>
        </div>
    }
}

/// After a panic the page's state cannot be trusted (Run, Cancel and Theme may no longer
/// answer), so say so in plain DOM and offer a reload, which restores the saved code.
pub fn show_crash_notice() {
    let document = document();
    let (Some(body), Ok(notice)) = (document.body(), document.create_element("form")) else {
        return;
    };
    // A form, not a script handler: the page's CSP admits no inline scripts.
    let _ = notice.set_attribute("action", "/");
    let _ = notice.set_attribute("class", "banner error crash");
    let _ = notice.set_attribute("role", "alert");
    let _ = notice.set_attribute("data-testid", "crash");
    notice.set_inner_html(
        "Something went wrong inside the page, so it stopped. Your code, input and breakpoints are saved in this browser. <button>Reload the page</button>",
    );
    let _ = body.prepend_with_node_1(&notice);
}
