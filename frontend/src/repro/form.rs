//! The bug-report form: structured fields or a pasted issue, code snippets, the
//! environment and the project archive, each with its message next to it.

use leptos::prelude::*;
use leptos::task::spawn_local;
use replayground_shared::repro::MAX_PROJECT_ARCHIVE_BYTES;
use wasm_bindgen::JsCast as _;

use super::draft::{Draft, Field, FieldError, Mode, Snippet, check_archive};
use super::jobs;

/// The project upload, while it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum Upload {
    Idle,
    Sending { name: String, fraction: f64 },
    Failed(String),
}

/// Reads a text field of the draft.
type ReadField = fn(&Draft) -> &String;
/// Writes a text field of the draft.
type WriteField = fn(&mut Draft) -> &mut String;

fn message(errors: RwSignal<Vec<FieldError>>, field: Field) -> impl Fn() -> Option<String> + Copy {
    move || errors.with(|e| e.iter().find(|e| e.field == field).map(|e| e.message.clone()))
}

/// The message under a field, announced when it appears.
#[component]
fn FieldMessage(errors: RwSignal<Vec<FieldError>>, field: Field) -> impl IntoView {
    let text = message(errors, field);
    view! {
        <p class="field-error" id=field.message_id() role="alert" data-testid=field.message_id()>
            {text}
        </p>
    }
}

/// A labelled text field bound to one string of the draft.
#[component]
#[allow(
    clippy::too_many_arguments,
    reason = "one call site per field, each names what it sets"
)]
fn TextField(
    draft: RwSignal<Draft>,
    errors: RwSignal<Vec<FieldError>>,
    field: Field,
    id: &'static str,
    label: &'static str,
    hint: &'static str,
    get: ReadField,
    set: WriteField,
    #[prop(default = 0)] rows: u32,
    #[prop(optional)] mono: bool,
    #[prop(optional)] placeholder: &'static str,
) -> impl IntoView {
    let has_error = move || message(errors, field)().is_some();
    let described = format!("{id}-hint {}", field.message_id());
    let value = move || draft.with(|d| get(d).clone());
    let on_input = move |ev: leptos::ev::Event| {
        let text = event_target_value(&ev);
        draft.update(|d| *set(d) = text);
        errors.update(|e| e.retain(|e| e.field != field && e.field != Field::Report));
    };
    let input = if rows == 0 {
        view! {
            <input
                id=id
                type="text"
                data-testid=id
                placeholder=placeholder
                aria-invalid=move || has_error().to_string()
                aria-describedby=described.clone()
                prop:value=value
                on:input=on_input
            />
        }
        .into_any()
    } else {
        view! {
            <textarea
                id=id
                data-testid=id
                rows=rows
                class:mono=mono
                spellcheck=(!mono).to_string()
                placeholder=placeholder
                aria-invalid=move || has_error().to_string()
                aria-describedby=described
                prop:value=value
                on:input=on_input
            ></textarea>
        }
        .into_any()
    };
    view! {
        <div class="field" class:invalid=has_error>
            <label for=id>{label}</label>
            <p class="hint" id=format!("{id}-hint")>{hint}</p>
            {input}
            <FieldMessage errors field />
        </div>
    }
}

/// The form. `on_run` is called with a valid draft; nothing typed is ever cleared here.
#[component]
pub fn ReportForm(
    draft: RwSignal<Draft>,
    errors: RwSignal<Vec<FieldError>>,
    upload: RwSignal<Upload>,
    #[prop(into)] running: Signal<bool>,
    on_run: Callback<()>,
) -> impl IntoView {
    let mode = move || draft.with(|d| d.mode);
    let set_mode = move |m: Mode| {
        draft.update(|d| d.mode = m);
        errors.set(Vec::new());
    };
    let add_snippet = move |_| {
        draft.update(|d| {
            let id = d.next_snippet_id();
            d.snippets.push(Snippet {
                id,
                code: String::new(),
            });
        });
    };
    let on_file = move |ev: leptos::ev::Event| {
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else {
            return;
        };
        let Some(file) = input.files().and_then(|files| files.get(0)) else {
            return;
        };
        input.set_value("");
        let name = file.name();
        if let Some(problem) = check_archive(&name, file.size()) {
            upload.set(Upload::Failed(problem));
            return;
        }
        upload.set(Upload::Sending {
            name: name.clone(),
            fraction: 0.0,
        });
        spawn_local(async move {
            let progress_name = name.clone();
            let result = jobs::upload_project(file, move |fraction| {
                upload.set(Upload::Sending {
                    name: progress_name.clone(),
                    fraction,
                });
            })
            .await;
            match result {
                Ok(project) => {
                    draft.update(|d| d.project = Some(project));
                    upload.set(Upload::Idle);
                }
                Err(message) => upload.set(Upload::Failed(message)),
            }
        });
    };
    let limit_mb = MAX_PROJECT_ARCHIVE_BYTES / 1_048_576;
    // A pasted issue's versions fill the Environment fields as it is pasted or edited.
    Effect::new(move |previous: Option<String>| {
        let text = draft.with(|d| d.free_text.clone());
        if let Some(previous) = previous.filter(|p| *p != text) {
            draft.update(|d| d.fill_environment(&previous));
        }
        text
    });

    view! {
        <form
            class="report-form"
            aria-labelledby="report-heading"
            novalidate
            on:submit=move |ev| {
                ev.prevent_default();
                on_run.run(());
            }
        >
            <div class="pane-head">
                <h2 id="report-heading">"Bug report"</h2>
                <div class="mode-switch" role="radiogroup" aria-label="How to write the report">
                    <button
                        type="button"
                        role="radio"
                        data-testid="mode-structured"
                        aria-checked=move || (mode() == Mode::Structured).to_string()
                        on:click=move |_| set_mode(Mode::Structured)
                    >
                        "Fields"
                    </button>
                    <button
                        type="button"
                        role="radio"
                        data-testid="mode-paste"
                        aria-checked=move || (mode() == Mode::Paste).to_string()
                        on:click=move |_| set_mode(Mode::Paste)
                    >
                        "Paste an issue"
                    </button>
                </div>
            </div>
            <Show
                when=move || mode() == Mode::Structured
                fallback=move || {
                    view! {
                        <TextField
                            draft
                            errors
                            field=Field::FreeText
                            id="free-text"
                            label="The issue, as written"
                            hint="Paste a GitHub or forum issue whole: the agent finds the problem, the observed and expected behaviour, the code and the steps."
                            get=|d| &d.free_text
                            set=|d| &mut d.free_text
                            rows=14
                            mono=true
                        />
                    }
                }
            >
                <TextField
                    draft
                    errors
                    field=Field::Title
                    id="title"
                    label="Title"
                    hint="One line that names the bug."
                    get=|d| &d.title
                    set=|d| &mut d.title
                    placeholder="Loss becomes NaN after the first epoch"
                />
                <TextField
                    draft
                    errors
                    field=Field::Description
                    id="description"
                    label="Description"
                    hint="What you were doing: the model, the data, what you changed."
                    get=|d| &d.description
                    set=|d| &mut d.description
                    rows=3
                />
                <TextField
                    draft
                    errors
                    field=Field::Observed
                    id="observed"
                    label="What happens"
                    hint="The error or stack trace, or metrics such as the loss per epoch."
                    get=|d| &d.observed
                    set=|d| &mut d.observed
                    rows=4
                    mono=true
                />
                <TextField
                    draft
                    errors
                    field=Field::Expected
                    id="expected"
                    label="What should happen"
                    hint="The behaviour you expected instead."
                    get=|d| &d.expected
                    set=|d| &mut d.expected
                    rows=2
                />
                <fieldset class="snippets">
                    <legend>"Code snippets"</legend>
                    <p class="hint">"The code from the report. The agent completes it: imports, synthetic data, seeds."</p>
                    <For
                        each=move || draft.with(|d| d.snippets.iter().map(|s| s.id).collect::<Vec<_>>())
                        key=|id| *id
                        let(id)
                    >
                        <SnippetField draft errors id />
                    </For>
                    <button type="button" data-testid="add-snippet" on:click=add_snippet>
                        "+ Add a snippet"
                    </button>
                </fieldset>
            </Show>
            <fieldset class="environment">
                <legend>"Environment"</legend>
                <div class="env-grid">
                    <TextField
                        draft
                        errors
                        field=Field::Python
                        id="python"
                        label="Python"
                        hint="Version."
                        get=|d| &d.python
                        set=|d| &mut d.python
                        placeholder="3.11"
                    />
                    <TextField
                        draft
                        errors
                        field=Field::Hardware
                        id="hardware"
                        label="Hardware"
                        hint="CPU, GPU, memory."
                        get=|d| &d.hardware
                        set=|d| &mut d.hardware
                        placeholder="CPU only"
                    />
                </div>
                <TextField
                    draft
                    errors
                    field=Field::Frameworks
                    id="frameworks"
                    label="Frameworks"
                    hint="One per line or comma-separated, with versions."
                    get=|d| &d.frameworks
                    set=|d| &mut d.frameworks
                    rows=2
                    placeholder="numpy 1.24"
                />
            </fieldset>
            <fieldset class="project">
                <legend>"Project (optional)"</legend>
                <p class="hint" id="project-hint">
                    {format!(
                        "The project's code as a .zip or .tar.gz, at most {limit_mb} MB: the agent ranks its files and functions as context.",
                    )}
                </p>
                {move || {
                    draft
                        .with(|d| d.project.clone())
                        .map(|p| {
                            view! {
                                <p class="project-card" data-testid="project">
                                    <strong>{p.file_name.clone()}</strong>
                                    {format!(" — {} files, {} Python", p.files, p.python_files)}
                                    <button
                                        type="button"
                                        class="link"
                                        aria-label=format!("Remove {}", p.file_name)
                                        on:click=move |_| draft.update(|d| d.project = None)
                                    >
                                        "Remove"
                                    </button>
                                </p>
                            }
                        })
                }}
                <input
                    id="project-file"
                    type="file"
                    data-testid="project-file"
                    accept=".zip,.tar.gz,.tgz,application/zip,application/gzip"
                    aria-describedby="project-hint project-error"
                    prop:disabled=move || matches!(upload.get(), Upload::Sending { .. })
                    on:change=on_file
                />
                <label class="visually-hidden" for="project-file">"Project archive"</label>
                {move || match upload.get() {
                    Upload::Idle => ().into_any(),
                    Upload::Sending { name, fraction } => {
                        let percent = (fraction * 100.0).round();
                        view! {
                            <div class="upload-progress" role="status" data-testid="upload-progress">
                                <progress max="100" value=percent aria-label=format!("Uploading {name}")></progress>
                                <span>{format!("{name}: {percent}%")}</span>
                            </div>
                        }
                            .into_any()
                    }
                    Upload::Failed(message) => {
                        view! {
                            <p class="field-error" id="project-error" role="alert" data-testid="project-error">
                                {message}
                            </p>
                        }
                            .into_any()
                    }
                }}
            </fieldset>
            <div class="run-row">
                <FieldMessage errors field=Field::Report />
                <button
                    type="submit"
                    class="primary"
                    data-testid="repro-run"
                    aria-keyshortcuts="Control+Enter"
                    title="Reproduce the bug (Ctrl+Enter)"
                    prop:disabled=move || running.get()
                >
                    {move || if running.get() { "Reproducing…" } else { "Reproduce" }}
                    " "
                    <kbd aria-hidden="true">"Ctrl+Enter"</kbd>
                </button>
            </div>
        </form>
    }
}

/// One code snippet with its remove button.
#[component]
fn SnippetField(draft: RwSignal<Draft>, errors: RwSignal<Vec<FieldError>>, id: u32) -> impl IntoView {
    let field = Field::Snippet(id);
    let position = move || draft.with(|d| d.snippets.iter().position(|s| s.id == id).map_or(0, |i| i + 1));
    let has_error = move || message(errors, field)().is_some();
    let input_id = format!("snippet-{id}");
    view! {
        <div class="field snippet" class:invalid=has_error>
            <div class="snippet-head">
                <label for=input_id.clone()>{move || format!("Snippet {}", position())}</label>
                <button
                    type="button"
                    class="link"
                    data-testid=format!("remove-snippet-{id}")
                    aria-label=move || format!("Remove snippet {}", position())
                    on:click=move |_| {
                        draft.update(|d| d.snippets.retain(|s| s.id != id));
                        errors.update(|e| e.retain(|e| e.field != field));
                    }
                >
                    "Remove"
                </button>
            </div>
            <textarea
                id=input_id
                class="mono"
                data-testid="snippet"
                rows="8"
                spellcheck="false"
                aria-invalid=move || has_error().to_string()
                aria-describedby=field.message_id()
                prop:value=move || {
                    draft.with(|d| d.snippets.iter().find(|s| s.id == id).map(|s| s.code.clone()).unwrap_or_default())
                }
                on:input=move |ev| {
                    let text = event_target_value(&ev);
                    draft.update(|d| {
                        if let Some(s) = d.snippets.iter_mut().find(|s| s.id == id) {
                            s.code = text;
                        }
                    });
                    errors.update(|e| e.retain(|e| e.field != field && e.field != Field::Report));
                }
            ></textarea>
            <FieldMessage errors field />
        </div>
    }
}
