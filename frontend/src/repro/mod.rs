//! The reproduction page (`/repro/`, and `/s/{id}` for a stored reproduction): a bug
//! report goes in, the agent's work streams back live, and the result can be copied,
//! downloaded, opened in the debugger or stored as a link. Built as its own wasm bundle
//! (`src/bin/repro.rs`): nothing here uses tree-sitter, so the page stays small.

pub mod code;
pub mod diff;
pub mod draft;
pub mod environment;
pub mod form;
pub mod highlight;
pub mod jobs;
pub mod live;
pub mod run;

use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use replayground_shared::repro::{BugReport, ReproRequest};
use wasm_bindgen::JsCast as _;

use self::draft::{DRAFT_KEY, Draft, Snippet};
use self::form::{ReportForm, Upload};
use self::jobs::{PageTarget, RunControl, RunEnd};
use self::live::LiveView;
use self::run::RunState;
use crate::theme::{local_storage, use_theme};

/// The example report behind "Fill in an example": a NaN loss from `log(0)` in numpy. Its
/// snippet carries its own data, so the agent's sandbox run shows the very bug it reports.
pub fn example_draft() -> Draft {
    Draft {
        title: "Loss becomes NaN after one step of logistic regression".into(),
        description: "Training a logistic regression with plain numpy gradient descent and a large learning rate. \
                      After the first step the loss is nan and stays nan."
            .into(),
        observed: "step 0 loss 0.6931471805599453\nRuntimeWarning: divide by zero encountered in log\nstep 1 loss nan\nstep 2 loss nan"
            .into(),
        expected: "The loss should decrease and stay finite.".into(),
        snippets: vec![Snippet {
            id: 1,
            code: "import numpy as np\n\n\ndef loss(y, p):\n    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))\n\n\n\
                   X = np.array([[1.0, 2.0, 0.5], [-1.0, -2.0, -0.5], [2.0, 1.0, 1.0], [-2.0, -1.0, -1.0]])\n\
                   y = np.array([1.0, 0.0, 1.0, 0.0])\nw = np.zeros(3)\nfor step in range(20):\n    \
                   p = 1 / (1 + np.exp(-X @ w))\n    w -= 10.0 * X.T @ (p - y)\n    print('step', step, 'loss', loss(y, p))\n"
                .into(),
        }],
        python: "3.11".into(),
        frameworks: "numpy 1.24".into(),
        hardware: "CPU".into(),
        ..Draft::default()
    }
}

fn saved_draft() -> Draft {
    local_storage()
        .and_then(|s| s.get_item(DRAFT_KEY).ok().flatten())
        .and_then(|json| serde_json::from_str(&json).ok())
        .unwrap_or_default()
}

/// Everything the page's parts share; cheap to copy.
#[derive(Debug, Clone, Copy)]
pub struct ReproPage {
    pub draft: RwSignal<Draft>,
    pub errors: RwSignal<Vec<draft::FieldError>>,
    pub upload: RwSignal<Upload>,
    pub run: RwSignal<RunState>,
    pub running: RwSignal<bool>,
    /// The report of the run on show.
    pub run_report: RwSignal<Option<BugReport>>,
    /// Why the last run stopped early (refused, cancelled, connection lost).
    pub end_message: RwSignal<Option<String>>,
    /// The attempt on show; `None` follows the latest.
    pub selected: RwSignal<Option<u32>>,
    pub share_link: RwSignal<Option<Result<String, String>>>,
    pub copied: RwSignal<Option<String>>,
    /// The id of the stored reproduction on show (read-only), if any.
    pub stored: RwSignal<Option<String>>,
    pub load_error: RwSignal<Option<String>>,
    control: StoredValue<Option<RunControl>, LocalStorage>,
}

impl ReproPage {
    fn new() -> Self {
        Self {
            draft: RwSignal::new(saved_draft()),
            errors: RwSignal::new(Vec::new()),
            upload: RwSignal::new(Upload::Idle),
            run: RwSignal::new(RunState::default()),
            running: RwSignal::new(false),
            run_report: RwSignal::new(None),
            end_message: RwSignal::new(None),
            selected: RwSignal::new(None),
            share_link: RwSignal::new(None),
            copied: RwSignal::new(None),
            stored: RwSignal::new(None),
            load_error: RwSignal::new(None),
            control: StoredValue::new_local(None),
        }
    }

    /// Checks the form and runs the agent on it; problems are shown next to their fields.
    pub fn run(self) {
        if self.running.get_untracked() {
            return;
        }
        let draft = self.draft.get_untracked();
        let errors = draft.validate();
        if let Some(first) = errors.first() {
            let id = first.field.input_id();
            self.errors.set(errors);
            if let Some(element) = document().get_element_by_id(&id)
                && let Ok(element) = element.dyn_into::<web_sys::HtmlElement>()
            {
                let _ = element.focus();
            }
            return;
        }
        self.errors.set(Vec::new());
        let report = draft.report();
        let request = ReproRequest {
            report: report.clone(),
            project: draft.project.as_ref().map(|p| p.id.clone()),
            ablate: Vec::new(),
        };
        self.leave_stored();
        self.run.set(RunState::default());
        self.selected.set(None);
        self.share_link.set(None);
        self.copied.set(None);
        self.end_message.set(None);
        self.run_report.set(Some(report));
        self.running.set(true);
        let control = RunControl::default();
        self.control.set_value(Some(control.clone()));
        let run = self.run;
        spawn_local(async move {
            let end = jobs::run_agent(request, &control, move |event| run.update(|s| s.apply(event))).await;
            self.control.set_value(None);
            match end {
                RunEnd::Finished | RunEnd::Failed => {}
                RunEnd::Cancelled => self.end_message.set(Some(
                    "Cancelled. What the agent found so far stays below; press Reproduce to start again.".into(),
                )),
                RunEnd::Refused(message) => self.end_message.set(Some(message)),
            }
            self.running.set(false);
        });
    }

    pub fn cancel(self) {
        if let Some(control) = self.control.get_value() {
            control.cancel();
        }
    }

    /// Leaves a stored reproduction for the editable form (and its address).
    fn leave_stored(self) {
        if self.stored.get_untracked().is_some() {
            self.stored.set(None);
            if let Ok(history) = window().history() {
                let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some("/repro/"));
            }
        }
    }

    /// Reruns a stored reproduction's report (its project is not stored, so none).
    pub fn rerun(self) {
        if let Some(report) = self.run_report.get_untracked() {
            self.draft.set(Draft::from_report(&report));
        }
        self.leave_stored();
        self.run();
    }

    pub fn load_example(self) {
        self.draft.set(example_draft());
        self.errors.set(Vec::new());
    }

    /// Stores the run on show and shows its link.
    pub fn share(self) {
        let report = self.run_report.get_untracked().unwrap_or_default();
        let transcript = self.run.with_untracked(|s| s.transcript(report));
        self.share_link.set(None);
        spawn_local(async move {
            self.share_link.set(Some(jobs::share(&transcript).await));
        });
    }

    pub fn copy(self, text: &str) {
        let promise = window().navigator().clipboard().write_text(text);
        spawn_local(async move {
            let message = match wasm_bindgen_futures::JsFuture::from(promise).await {
                Ok(_) => "Copied to the clipboard.".to_owned(),
                Err(_) => "The browser did not allow copying: select the text and press Ctrl+C.".to_owned(),
            };
            self.copied.set(Some(message));
        });
    }

    /// Saves `code` as `reproduction.py` through a temporary object URL.
    pub fn download(self, code: &str) {
        let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(code));
        let options = web_sys::BlobPropertyBag::new();
        options.set_type("text/x-python");
        let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options) else {
            return;
        };
        let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
            return;
        };
        if let Ok(anchor) = document().create_element("a")
            && let Ok(anchor) = anchor.dyn_into::<web_sys::HtmlAnchorElement>()
        {
            anchor.set_href(&url);
            anchor.set_download("reproduction.py");
            anchor.click();
        }
        let _ = web_sys::Url::revoke_object_url(&url);
    }

    /// Shows a stored reproduction read-only.
    fn open_stored(self, id: String) {
        self.stored.set(Some(id.clone()));
        spawn_local(async move {
            match jobs::load(&id).await {
                Ok(transcript) => {
                    self.run.set(RunState::replay(&transcript.events));
                    self.run_report.set(Some(transcript.report));
                }
                Err(message) => {
                    self.stored.set(None);
                    self.load_error.set(Some(message));
                }
            }
        });
    }
}

#[component]
pub fn ReproApp() -> impl IntoView {
    let page = ReproPage::new();
    let toggle_theme = use_theme();

    // Every change to the draft is saved at once, so a reload or a crash loses nothing.
    Effect::new(move |_| {
        let json = page.draft.with(serde_json::to_string);
        if let (Ok(json), Some(storage)) = (json, local_storage()) {
            let _ = storage.set_item(DRAFT_KEY, &json);
        }
    });

    let location = window().location();
    if let PageTarget::Stored(id) = jobs::page_target(
        &location.pathname().unwrap_or_default(),
        &location.search().unwrap_or_default(),
    ) {
        page.open_stored(id);
    }

    let keys = window_event_listener(ev::keydown, move |ev| {
        if (ev.ctrl_key() || ev.meta_key()) && ev.key() == "Enter" {
            ev.prevent_default();
            if page.stored.get_untracked().is_some() {
                page.rerun();
            } else {
                page.run();
            }
        }
    });
    on_cleanup(move || keys.remove());

    view! {
        <div class="app repro-app">
            <header class="site-header">
                <div class="brand">
                    <h1>
                        <a href="/" class="home">"Replayground"</a>
                        " · Reproduce a bug"
                    </h1>
                    <p class="tagline">"Turn a deep-learning bug report into a script that shows the bug."</p>
                </div>
                <nav class="toolbar" aria-label="Page">
                    <a class="button" href="/">"Playground"</a>
                    <button type="button" data-testid="theme" on:click=move |_| toggle_theme()>"Theme"</button>
                </nav>
            </header>
            {move || {
                page.load_error
                    .get()
                    .map(|m| view! { <p class="banner error" role="alert" data-testid="load-error">{m}</p> })
            }}
            <main class="layout repro-layout">
                <section class="pane form-pane">
                    {move || match page.stored.get() {
                        Some(_) => view! { <StoredReport page /> }.into_any(),
                        None => {
                            view! {
                                <ReportForm
                                    draft=page.draft
                                    errors=page.errors
                                    upload=page.upload
                                    running=page.running
                                    on_run=Callback::new(move |()| page.run())
                                />
                            }
                                .into_any()
                        }
                    }}
                </section>
                <LiveView page />
            </main>
        </div>
    }
}

/// A stored reproduction's report, read-only, with Rerun.
#[component]
fn StoredReport(page: ReproPage) -> impl IntoView {
    view! {
        <div class="stored" data-testid="stored">
            <div class="pane-head">
                <h2>"Stored reproduction"</h2>
                <button
                    type="button"
                    class="primary"
                    data-testid="rerun"
                    title="Run the agent again on this report (Ctrl+Enter)"
                    aria-keyshortcuts="Control+Enter"
                    prop:disabled=move || page.run_report.with(Option::is_none) || page.running.get()
                    on:click=move |_| page.rerun()
                >
                    "Rerun"
                </button>
            </div>
            <p class="banner note">
                "Read-only: this is what the agent did when the link was made. Rerun copies the report into the form and runs it again (the project archive is not stored)."
            </p>
            {move || {
                page.run_report
                    .get()
                    .map(|r| {
                        let snippets = r.snippets.clone();
                        let env = &r.environment;
                        let environment = [env.python.clone(), env.frameworks.join(", "), env.hardware.clone()]
                            .into_iter()
                            .filter(|s| !s.is_empty())
                            .collect::<Vec<_>>()
                            .join(" · ");
                        view! {
                            <dl class="report-fields" data-testid="stored-report">
                                {(!r.title.is_empty()).then(|| view! { <dt>"Title"</dt><dd data-testid="stored-title">{r.title.clone()}</dd> })}
                                {(!r.description.is_empty()).then(|| view! { <dt>"Description"</dt><dd>{r.description.clone()}</dd> })}
                                {(!r.observed.is_empty()).then(|| view! { <dt>"What happens"</dt><dd class="pre">{r.observed.clone()}</dd> })}
                                {(!r.expected.is_empty()).then(|| view! { <dt>"What should happen"</dt><dd>{r.expected.clone()}</dd> })}
                                {(!r.free_text.is_empty()).then(|| view! { <dt>"The issue"</dt><dd class="pre">{r.free_text.clone()}</dd> })}
                                {(!environment.is_empty()).then(|| view! { <dt>"Environment"</dt><dd>{environment}</dd> })}
                            </dl>
                            {snippets
                                .into_iter()
                                .enumerate()
                                .map(|(i, s)| {
                                    view! { <code::CodeBlock code=s label=format!("Snippet {}", i + 1) /> }
                                })
                                .collect_view()}
                        }
                    })
            }}
        </div>
    }
}
