//! The live view of a run: stages, the restructured report, ranked contexts, the plan,
//! the timeline of attempts with their checks, code and diffs, and the final script.

use leptos::prelude::*;
use replayground_shared::repro::{
    CheckKind, CheckVerdict, PlanStepKind, RankedContext, ReproOutcome, RestructuredReport, Stage, SymptomClass,
};
use replayground_shared::share::{self, PlaygroundView};

use super::ReproPage;
use super::code::{CodeBlock, DiffView};
use super::diff::line_diff;
use super::run::{Attempt, StageStatus};

fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::Context => "Project context",
        Stage::Restructure => "Restructure",
        Stage::Plan => "Plan",
        Stage::Structural => "Syntax check",
        Stage::Static => "Static check",
        Stage::Relevance => "Relevance",
        Stage::Runtime => "Sandbox run",
        Stage::Refine => "Refine",
    }
}

fn check_name(kind: CheckKind) -> &'static str {
    match kind {
        CheckKind::Structural => "structural",
        CheckKind::Static => "static",
        CheckKind::Relevance => "relevance",
        CheckKind::Runtime => "runtime",
    }
}

fn plan_kind(kind: PlanStepKind) -> &'static str {
    match kind {
        PlanStepKind::Environment => "environment",
        PlanStepKind::Data => "data",
        PlanStepKind::Model => "model",
        PlanStepKind::Training => "training",
        PlanStepKind::Inference => "inference",
        PlanStepKind::Check => "check",
    }
}

fn score_text(score: f32) -> String {
    format!("{score:.2}")
}

/// The headline of a run whose scripts could not run here, naming what was missing.
fn could_not_run(missing: Option<&str>) -> String {
    match missing {
        // A need rather than a package ("a CUDA GPU").
        Some(need) if need.starts_with("a ") => format!("Could not run here: it needs {need}"),
        Some(package) => format!("Could not run here: {package} is not installed"),
        None => "Could not run here: a package it needs is not installed".to_owned(),
    }
}

/// The playground link that opens `code` in the debugger.
pub fn debugger_link(code: &str) -> String {
    let view = PlaygroundView {
        code: code.to_owned(),
        ..PlaygroundView::default()
    };
    format!("/#{}", share::encode(&view))
}

#[component]
pub fn LiveView(page: ReproPage) -> impl IntoView {
    let run = page.run;
    let stages = Memo::new(move |_| run.with(|s| s.stages.clone()));
    let messages = Memo::new(move |_| run.with(|s| s.messages.clone()));
    let report = Memo::new(move |_| run.with(|s| s.report.clone()));
    let contexts = Memo::new(move |_| run.with(|s| (s.contexts.clone(), s.training_loops.clone())));
    let plan = Memo::new(move |_| run.with(|s| s.plan.clone()));
    let outcome = Memo::new(move |_| run.with(|s| s.outcome.clone()));
    let failure = Memo::new(move |_| run.with(|s| s.failure.clone()));
    let script = Memo::new(move |_| run.with(super::run::RunState::script));
    let generator = Memo::new(move |_| run.with(|s| (s.generator.clone(), s.llm.clone())));
    let started = move || generator.with(|(g, _)| g.is_some());

    view! {
        <section class="pane live-pane" aria-labelledby="live-heading" data-testid="live">
            <div class="pane-head">
                <h2 id="live-heading">"Reproduction"</h2>
                <span class="generator" data-testid="generator">
                    {move || {
                        generator
                            .with(|(g, llm)| {
                                g.as_ref()
                                    .map(|g| match llm {
                                        Some(llm) => format!("{g} · {llm}"),
                                        None => g.clone(),
                                    })
                            })
                    }}
                </span>
                <Show when=move || page.running.get()>
                    <progress aria-label="The agent is working" data-testid="repro-progress"></progress>
                    <button type="button" data-testid="repro-cancel" on:click=move |_| page.cancel()>
                        "Cancel"
                    </button>
                </Show>
            </div>
            {move || {
                page.end_message
                    .get()
                    .map(|m| {
                        view! {
                            <p class="error" role="alert" data-testid="repro-error">
                                {m}
                            </p>
                        }
                    })
            }}
            <Show when=move || !started() && !page.running.get()>
                <Placeholder page />
            </Show>
            <Show when=move || !started() && page.running.get()>
                <p class="placeholder" role="status">"Connecting to the agent…"</p>
            </Show>
            <Show when=started>
                <ol class="stages" aria-label="Stages" data-testid="stages">
                    <For each=move || stages.get() key=|(stage, status)| (*stage, *status) let((stage, status))>
                        <li class=format!("stage {}", status.class()) data-stage=stage.as_str()>
                            <span class="stage-dot" aria-hidden="true"></span>
                            <span class="stage-name">{stage_name(stage)}</span>
                            <span class="badge">{status.label()}</span>
                            <span class="stage-message">
                                {move || {
                                    if status == StageStatus::Running {
                                        messages
                                            .with(|m| {
                                                m.iter().find(|(s, _)| *s == stage).map(|(_, m)| m.clone())
                                            })
                                    } else {
                                        None
                                    }
                                }}
                            </span>
                        </li>
                    </For>
                </ol>
            </Show>
            {move || failure.get().map(|m| view! { <p class="banner error" role="alert" data-testid="repro-failed">{m}</p> })}
            {move || outcome.get().map(|o| view! { <FinalScript page outcome=o script /> })}
            {move || report.get().map(|r| view! { <ReportCard report=r /> })}
            {move || {
                let (contexts, loops) = contexts.get();
                (!contexts.is_empty()).then(|| view! { <ContextTable contexts loops /> })
            }}
            {move || {
                let steps = plan.get();
                (!steps.is_empty())
                    .then(|| {
                        view! {
                            <details class="card-section" data-testid="plan">
                                <summary>
                                    <h3>"Plan"</h3>
                                    <span class="count">{format!("{} steps", steps.len())}</span>
                                </summary>
                                <ol class="plan">
                                    {steps
                                        .into_iter()
                                        .map(|s| {
                                            view! {
                                                <li>
                                                    <span class="tag">{plan_kind(s.kind)}</span>
                                                    " "
                                                    {s.description}
                                                </li>
                                            }
                                        })
                                        .collect_view()}
                                </ol>
                            </details>
                        }
                    })
            }}
            <Attempts page />
        </section>
    }
}

/// Before a run: what the agent does, and an example to start from.
#[component]
fn Placeholder(page: ReproPage) -> impl IntoView {
    view! {
        <div class="placeholder">
            <p>
                "Describe a deep-learning bug and press " <strong>"Reproduce"</strong>
                ". The agent restructures the report, ranks the project's code as context, plans, then writes a script and checks it — syntax, static, relevance, and a real run in the sandbox — refining until the script shows the bug."
            </p>
            <p>"Every step streams here; the final script opens in the debugger."</p>
            <button type="button" data-testid="load-example" on:click=move |_| page.load_example()>
                "Fill in an example (NaN loss in numpy)"
            </button>
        </div>
    }
}

#[component]
fn ReportCard(report: RestructuredReport) -> impl IntoView {
    let symptom = report.symptom.clone();
    let symptom_text = match &symptom.error_type {
        Some(error) => format!("{} · {error}", symptom.class.as_str().replace('_', " ")),
        None => symptom.class.as_str().replace('_', " "),
    };
    let silent = symptom.class.is_silent();
    view! {
        <details class="card-section" open data-testid="restructured">
            <summary>
                <h3>"Restructured report"</h3>
                <span class="symptom" class:silent=silent data-testid="symptom">{symptom_text}</span>
                {report.framework.clone().map(|f| view! { <span class="tag">{f}</span> })}
                {report.refined_by_llm.then(|| view! { <span class="tag">"refined by the LLM"</span> })}
            </summary>
            <dl class="report-fields">
                <dt>"Problem"</dt>
                <dd>{report.problem.clone()}</dd>
                <dt>"Observed"</dt>
                <dd class="pre">{report.observed.clone()}</dd>
                <dt>"Expected"</dt>
                <dd>{report.expected.clone()}</dd>
                {(!report.steps.is_empty())
                    .then(|| {
                        view! {
                            <dt>"Steps"</dt>
                            <dd>
                                <ol>{report.steps.iter().map(|s| view! { <li>{s.clone()}</li> }).collect_view()}</ol>
                            </dd>
                        }
                    })}
                {(!symptom.cues.is_empty())
                    .then(|| {
                        view! {
                            <dt>"Cues"</dt>
                            <dd>
                                {symptom.cues.iter().map(|c| view! { <code class="cue">{c.clone()}</code> }).collect_view()}
                            </dd>
                        }
                    })}
            </dl>
        </details>
    }
}

#[component]
fn ContextTable(contexts: Vec<RankedContext>, loops: Vec<String>) -> impl IntoView {
    let count = contexts.len();
    view! {
        <details class="card-section" data-testid="contexts">
            <summary>
                <h3>"Context from the project"</h3>
                <span class="count">{format!("{count} ranked")}</span>
            </summary>
            <table class="contexts">
                <thead>
                    <tr>
                        <th scope="col">"#"</th>
                        <th scope="col">"Where"</th>
                        <th scope="col">"Name"</th>
                        <th scope="col" title="Combined score (or the reranker's)">"Score"</th>
                        <th scope="col">"BM25"</th>
                        <th scope="col">"Dense"</th>
                        <th scope="col">"Rerank"</th>
                    </tr>
                </thead>
                <tbody>
                    {contexts
                        .into_iter()
                        .enumerate()
                        .map(|(i, c)| {
                            view! {
                                <tr>
                                    <td>{i + 1}</td>
                                    <td class="mono">{format!("{}:{}–{}", c.path, c.start_line, c.end_line)}</td>
                                    <td>
                                        <span class="mono">{c.name.clone()}</span>
                                        {c.training_loop.then(|| view! { <span class="tag">"training loop"</span> })}
                                    </td>
                                    <td class="num">{score_text(c.score)}</td>
                                    <td class="num">{score_text(c.bm25)}</td>
                                    <td class="num">{score_text(c.dense)}</td>
                                    <td class="num">{c.rerank.map_or_else(|| "—".to_owned(), score_text)}</td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
            {(!loops.is_empty()).then(|| view! { <p class="note">"Training loops: " {loops.join(", ")}</p> })}
        </details>
    }
}

fn badge(verdict: &CheckVerdict) -> impl IntoView + use<> {
    let status = if verdict.passed { "pass" } else { "fail" };
    let mut text = format!(
        "{} {}",
        check_name(verdict.check),
        if verdict.passed { "✓" } else { "✗" }
    );
    if let Some(score) = verdict.score {
        text.push(' ');
        text.push_str(&score_text(score));
    }
    let approximated = verdict.approximated;
    view! {
        <span
            class=format!("check {status}")
            data-testid=format!("check-{}", check_name(verdict.check))
            title=verdict.detail.clone()
        >
            {text}
            {approximated.then(|| view! { <span class="approx">" approximated"</span> })}
        </span>
    }
}

#[component]
fn Attempts(page: ReproPage) -> impl IntoView {
    let run = page.run;
    let timeline = Memo::new(move |_| {
        run.with(|s| {
            s.attempts
                .iter()
                .map(|a| (a.number, a.context, a.score, a.accepted, a.finished()))
                .collect::<Vec<_>>()
        })
    });
    let shown = Memo::new(move |_| {
        page.selected
            .get()
            .or_else(|| run.with(|s| s.attempts.last().map(|a| a.number)))
    });
    let attempt = Memo::new(move |_| {
        let n = shown.get()?;
        run.with(|s| {
            s.attempt(n).map(|a| Attempt {
                code: String::new(),
                ..a.clone()
            })
        })
    });
    let code = Signal::derive(move || {
        shown
            .get()
            .and_then(|n| run.with(|s| s.attempt(n).map(|a| a.code.clone())))
            .unwrap_or_default()
    });
    let streaming = Signal::derive(move || attempt.with(|a| a.as_ref().is_some_and(|a| !a.complete)));
    let previous = Memo::new(move |_| {
        let n = shown.get()?;
        run.with(|s| {
            let current = s.attempt(n)?;
            let previous = s.previous(n)?;
            (current.complete && previous.complete)
                .then(|| (previous.number, previous.code.clone(), current.code.clone()))
        })
    });

    view! {
        <Show when=move || !timeline.with(Vec::is_empty)>
            <section class="attempts" aria-labelledby="attempts-heading" data-testid="attempts">
                <h3 id="attempts-heading">"Attempts"</h3>
                <ol class="timeline-list" role="list">
                    <For each=move || timeline.get() key=|t| (t.0, t.2.map(f32::to_bits), t.3, t.4) let((number, context, score, accepted, finished))>
                        <li>
                            <button
                                type="button"
                                class="attempt-chip"
                                class:accepted=accepted
                                class:failed=finished && !accepted
                                aria-current=move || (shown.get() == Some(number)).then_some("true")
                                data-testid="attempt"
                                title=format!("Attempt {number}, context {context}")
                                on:click=move |_| page.selected.set(Some(number))
                            >
                                {format!("#{number}")}
                                <span class="chip-score">
                                    {match (score, accepted) {
                                        (Some(s), true) => format!("✓ {}", score_text(s)),
                                        (Some(s), false) => format!("✗ {}", score_text(s)),
                                        (None, _) => "…".to_owned(),
                                    }}
                                </span>
                            </button>
                        </li>
                    </For>
                </ol>
                {move || {
                    attempt
                        .get()
                        .map(|a| {
                            let heading = format!(
                                "Attempt {}{}",
                                a.number,
                                if a.context > 0 { format!(" · context {}", a.context) } else { String::new() },
                            );
                            view! {
                                <div class="attempt-detail" data-testid="attempt-detail">
                                    <div class="attempt-head">
                                        <h4>{heading}</h4>
                                        {a.score.map(|s| view! { <span class="score" data-testid="attempt-score">{format!("score {}", score_text(s))}</span> })}
                                        {a.accepted.then(|| view! { <span class="check pass">"accepted"</span> })}
                                    </div>
                                    <div class="checks" data-testid="checks">
                                        {a.checks.iter().map(badge).collect_view()}
                                    </div>
                                    {(!a.edits.is_empty())
                                        .then(|| {
                                            view! {
                                                <ul class="edits" aria-label="Edits">
                                                    {a.edits.iter().map(|e| view! { <li>{e.clone()}</li> }).collect_view()}
                                                </ul>
                                            }
                                        })}
                                    {a
                                        .checks
                                        .iter()
                                        .filter(|v| !v.detail.is_empty())
                                        .map(|v| {
                                            view! {
                                                <details class="check-detail">
                                                    <summary>{format!("{} check: details", check_name(v.check))}</summary>
                                                    <pre>{v.detail.clone()}</pre>
                                                </details>
                                            }
                                        })
                                        .collect_view()}
                                    {(!a.feedback.is_empty() && !a.accepted)
                                        .then(|| view! { <p class="feedback"><strong>"Feedback: "</strong>{a.feedback.clone()}</p> })}
                                </div>
                            }
                        })
                }}
                <CodeBlock code label="Candidate code" testid="attempt-code" streaming />
                {move || {
                    previous
                        .get()
                        .map(|(n, old, new)| {
                            view! { <DiffView diff=line_diff(&old, &new) title=format!("Changes from attempt {n}") /> }
                        })
                }}
            </section>
        </Show>
    }
}

#[component]
fn FinalScript(page: ReproPage, outcome: ReproOutcome, script: Memo<Option<String>>) -> impl IntoView {
    let attempts = match outcome.attempts {
        1 => "1 attempt".to_owned(),
        n => format!("{n} attempts"),
    };
    let missing = page.run.with_untracked(super::run::RunState::missing);
    let headline = if outcome.reproduced {
        format!("Reproduced in {attempts} (score {})", score_text(outcome.score))
    } else if outcome.approximated {
        could_not_run(missing.as_deref())
    } else {
        format!(
            "Not reproduced in {attempts}; the best script scored {}",
            score_text(outcome.score)
        )
    };
    let approximation = outcome.approximated.then(|| {
        let install = missing
            .as_deref()
            .filter(|m| !m.starts_with("a "))
            .map_or_else(String::new, |m| format!(" Install {m} and rerun to see it for real."));
        format!(
            "Not reproduced: the script did not run, so its behaviour was approximated (predicted), not observed. The approximation scored {} after {attempts}.{install}",
            score_text(outcome.score)
        )
    });
    let observed = outcome.observed.as_ref().map(|s| match &s.error_type {
        Some(e) => format!("The script shows: {} ({e})", s.class.as_str().replace('_', " ")),
        None if s.class == SymptomClass::Unknown => "The script ran without showing the reported symptom".to_owned(),
        None => format!("The script shows: {}", s.class.as_str().replace('_', " ")),
    });
    let took = format!("{:.1} s", outcome.elapsed_ms as f64 / 1000.0);
    let summary = observed.map_or_else(|| format!("Took {took}."), |o| format!("{o} · took {took}."));
    // What the best run really showed (its exception, or the end of what it printed), so the
    // verdict can be checked against the report's output without rerunning the script.
    let shown = outcome
        .output
        .clone()
        .filter(|text| !outcome.approximated && !text.trim().is_empty());
    let shown_title = if outcome.observed.as_ref().is_some_and(|s| s.error_type.is_some()) {
        "The exception its run raised"
    } else {
        "The end of what its run printed"
    };
    let code = Signal::derive(move || script.get().unwrap_or_default());
    view! {
        <section class="final" class:reproduced=outcome.reproduced aria-labelledby="final-heading" data-testid="final">
            <div class="final-head">
                <h3 id="final-heading" data-testid="final-headline">{headline}</h3>
                {outcome.approximated.then(|| view! { <span class="check approx-badge">"approximated"</span> })}
            </div>
            {approximation.map(|text| view! { <p class="approximation" data-testid="approximation">{text}</p> })}
            <p class="note">{summary}</p>
            {shown.map(|text| {
                view! {
                    <details class="run-shown" open data-testid="final-output">
                        <summary>{shown_title}</summary>
                        <pre>{text}</pre>
                    </details>
                }
            })}
            <Show when=move || script.with(Option::is_some)>
                <div class="final-actions" role="toolbar" aria-label="The final script">
                    <button type="button" data-testid="copy-script" on:click=move |_| page.copy(&code.get_untracked())>
                        "Copy"
                    </button>
                    <button type="button" data-testid="download-script" on:click=move |_| page.download(&code.get_untracked())>
                        "Download .py"
                    </button>
                    <a
                        class="button"
                        data-testid="open-debugger"
                        target="_blank"
                        rel="noopener"
                        href=move || debugger_link(&code.get())
                    >
                        "Open in debugger"
                    </a>
                    <button
                        type="button"
                        class="primary"
                        data-testid="share-repro"
                        prop:disabled=move || page.stored.with(Option::is_some)
                        title="Store this reproduction and get a link"
                        on:click=move |_| page.share()
                    >
                        "Share"
                    </button>
                </div>
                {move || {
                    page.share_link
                        .get()
                        .map(|result| match result {
                            Ok(url) => {
                                let for_copy = url.clone();
                                view! {
                                    <div class="share-row">
                                        <label class="visually-hidden" for="repro-link">"Link to this reproduction"</label>
                                        <input id="repro-link" data-testid="repro-link" readonly prop:value=url />
                                        <button type="button" on:click=move |_| page.copy(&for_copy)>"Copy link"</button>
                                    </div>
                                }
                                    .into_any()
                            }
                            Err(m) => view! { <p class="error" role="alert">{m}</p> }.into_any(),
                        })
                }}
                {move || page.copied.get().map(|m| view! { <p class="note" role="status">{m}</p> })}
                <div class="final-code">
                    <CodeBlock code label="The final script" testid="final-script" />
                </div>
            </Show>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_that_could_not_run_says_what_was_missing() {
        assert_eq!(
            could_not_run(Some("torch")),
            "Could not run here: torch is not installed"
        );
        assert_eq!(
            could_not_run(Some("a CUDA GPU")),
            "Could not run here: it needs a CUDA GPU"
        );
        assert!(could_not_run(None).starts_with("Could not run here"));
    }
}
