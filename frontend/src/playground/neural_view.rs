//! Neural mode: at each step the server's neural debugger predicts where the same action
//! leads, shown beside what the real run did, field by field (ground truth first).
//!
//! Forward actions get the model's most likely answer; reverse actions get
//! [`REVERSE_SAMPLES`] candidate previous states, each marked consistent with the real
//! execution or not. Tokens appear as the server streams them.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use replayground_shared::protocol::PredictRequest;
use replayground_shared::{Action, State, StopKind, Vars};
use replayground_shared::{StateTree, Stop};

use crate::client::http::RunError;
use crate::playground::jobs::{self, CancelRun, PredictEnd, PredictProgress};
use crate::playground::session::Session;
use crate::playground::stop_view::describe_state;
use crate::playground::syntax::push_escaped;

/// Candidates sampled for a reverse action.
pub const REVERSE_SAMPLES: u32 = 3;

/// The page's neural mode, shared by the toggle, the debugger and the panel.
#[derive(Debug, Clone, Copy)]
pub struct NeuralMode {
    pub on: RwSignal<bool>,
    /// The last debugger step: where it started and the action (set by the debugger).
    pub last_step: RwSignal<Option<(Stop, Action)>>,
    /// The standard input of the run being stepped through.
    pub stdin: RwSignal<String>,
}

impl NeuralMode {
    pub fn new() -> Self {
        Self {
            on: RwSignal::new(false),
            last_step: RwSignal::new(None),
            stdin: RwSignal::new(String::new()),
        }
    }
}

impl Default for NeuralMode {
    fn default() -> Self {
        Self::new()
    }
}

/// How a predicted field compares with the real one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldMatch {
    Equal,
    Differs,
    /// The real state has it, the prediction does not.
    Missing,
    /// The prediction has it, the real state does not.
    Extra,
}

impl FieldMatch {
    pub fn label(self) -> &'static str {
        match self {
            Self::Equal => "equal",
            Self::Differs => "differs",
            Self::Missing => "missing",
            Self::Extra => "extra",
        }
    }
}

/// One row of the side-by-side comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRow {
    pub field: String,
    pub predicted: Option<String>,
    pub real: Option<String>,
    pub verdict: FieldMatch,
}

/// The variables a state shows: the globals at module level, else the locals.
pub(crate) fn shown(state: &State) -> &[(String, String)] {
    let vars = if state.depth == Some(0) {
        &state.globals
    } else {
        &state.locals
    };
    vars.as_ref().map_or(&[], |v: &Vars| v.0.as_slice())
}

/// The prediction beside the real state, field by field: event, line, function, depth,
/// each variable (the real ones in order, then extras), the return value or exception.
pub fn compare(predicted: &State, real: &State) -> Vec<FieldRow> {
    let mut rows = Vec::new();
    let mut push = |field: String, predicted: Option<String>, real: Option<String>| {
        let verdict = match (&predicted, &real) {
            (Some(p), Some(r)) if p == r => FieldMatch::Equal,
            (Some(_), Some(_)) => FieldMatch::Differs,
            (None, Some(_)) => FieldMatch::Missing,
            (Some(_), None) => FieldMatch::Extra,
            (None, None) => return,
        };
        rows.push(FieldRow {
            field,
            predicted,
            real,
            verdict,
        });
    };
    let event = |s: &State| Some(s.event.as_str().to_owned());
    push("event".into(), event(predicted), event(real));
    let line = |s: &State| s.line.map(|l| l.to_string());
    push("line".into(), line(predicted), line(real));
    push("function".into(), predicted.function.clone(), real.function.clone());
    let depth = |s: &State| s.depth.map(|d| d.to_string());
    push("depth".into(), depth(predicted), depth(real));
    let (p_vars, r_vars) = (shown(predicted), shown(real));
    let lookup = |vars: &[(String, String)], name: &str| vars.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    for (name, value) in r_vars {
        push(name.clone(), lookup(p_vars, name), Some(value.clone()));
    }
    for (name, value) in p_vars {
        if lookup(r_vars, name).is_none() {
            push(name.clone(), Some(value.clone()), None);
        }
    }
    let kind = if real.value.is_some() {
        real.event
    } else {
        predicted.event
    };
    let label = if kind == StopKind::Exception {
        "exception"
    } else {
        "return value"
    };
    push(label.into(), predicted.value.clone(), real.value.clone());
    rows
}

/// What the panel shows.
#[derive(Debug, Clone, Default)]
struct PanelState {
    action: Option<Action>,
    /// The line the step started from (`None`: the end).
    from_line: Option<u32>,
    model: String,
    /// Text streamed so far, per candidate.
    tokens: Vec<String>,
    result: Option<Result<PredictEnd, String>>,
}

/// The line of a stop, `None` at the end.
fn line_of(tree: &StateTree, stop: Stop) -> Option<u32> {
    stop.event().map(|i| tree.trace().events[i].line)
}

/// The Neural toggle and, while on, the prediction for the last step.
// Leptos hands props over by value.
#[allow(clippy::needless_pass_by_value)]
#[component]
pub fn NeuralPanel(
    session: Arc<Session>,
    mode: NeuralMode,
    breakpoints: RwSignal<std::collections::BTreeSet<u32>>,
) -> impl IntoView {
    let panel = RwSignal::new(PanelState::default());
    let running = StoredValue::new_local(None::<CancelRun>);
    let predict_session = Arc::clone(&session);
    // Each step while neural mode is on asks the model for the same action.
    Effect::new(move |_| {
        let Some((from, action)) = mode.last_step.get() else {
            return;
        };
        if !mode.on.get_untracked() || matches!(action, Action::Jump(_)) {
            return;
        }
        if let Some(previous) = running.get_value() {
            previous.cancel();
        }
        let cancel = CancelRun::default();
        running.set_value(Some(cancel.clone()));
        let samples = if action.is_reverse() { REVERSE_SAMPLES } else { 1 };
        let tree = &predict_session.tree;
        panel.set(PanelState {
            action: Some(action),
            from_line: line_of(tree, from),
            model: panel.with_untracked(|p| p.model.clone()),
            tokens: vec![String::new(); samples as usize],
            result: None,
        });
        let request = PredictRequest {
            code: predict_session.code.clone(),
            stdin: mode.stdin.get_untracked(),
            at_event: from.event().unwrap_or(tree.len()) as u32,
            action: action.name(),
            samples,
            breakpoints: breakpoints.get_untracked().into_iter().collect(),
        };
        spawn_local(async move {
            let result = jobs::predict_streaming(request, &cancel, &|progress| match progress {
                PredictProgress::Model(model) => panel.update(|p| p.model = model),
                PredictProgress::Token(sample, text) => panel.update(|p| {
                    if let Some(t) = p.tokens.get_mut(sample as usize) {
                        t.push_str(&text);
                    }
                }),
            })
            .await;
            // A newer step took over: its panel stays.
            if matches!(result, Err(RunError::Cancelled)) || cancel.is_cancelled() {
                return;
            }
            panel.update(|p| p.result = Some(result.map_err(|e| e.to_string())));
        });
    });
    let stop_running = move || {
        if let Some(cancel) = running.get_value() {
            cancel.cancel();
        }
    };
    // Turning neural mode off (button or key) stops the prediction in flight.
    Effect::new(move |_| {
        if !mode.on.get() {
            stop_running();
        }
    });
    on_cleanup(stop_running);
    let toggle = move || mode.on.update(|on| *on = !*on);
    // Nothing ran (a syntax error): nothing for the model to predict, so no toggle (CSS).
    let class = if session.tree.is_empty() {
        "neural nothing-ran"
    } else {
        "neural"
    };
    view! {
        <div class=class>
            <button
                type="button"
                class="neural-toggle"
                data-testid="neural-toggle"
                title="Neural mode: at each step the model predicts where it leads, beside the real run (key m)"
                aria-keyshortcuts="m"
                aria-pressed=move || mode.on.get().to_string()
                on:click=move |_| toggle()
            >
                {move || if mode.on.get() { "Neural: on" } else { "Neural: off" }}
                " "
                <kbd aria-hidden="true">"m"</kbd>
            </button>
            {crate::playground::ui::when(
                move || mode.on.get(),
                move || {
                    view! {
                        <section
                            class="neural-panel"
                            data-testid="neural-panel"
                            aria-label="Neural debugger"
                            aria-live="polite"
                            inner_html=move || panel.with(panel_html)
                        />
                    }
                },
            )}
        </div>
    }
}

/// One row of the panel's list: a field beside its real value, or a candidate.
#[derive(Debug, Default, PartialEq, Eq)]
struct Row {
    class: String,
    cells: [String; 4],
}

/// What the panel shows, worked out from its state: kept apart from the DOM so that it is
/// tested natively, and flat so that one small view renders every case (each distinct
/// Leptos view type costs wasm).
#[derive(Debug, Default, PartialEq, Eq)]
struct Summary {
    heading: String,
    /// Class, test id and text of the status line.
    status: (&'static str, &'static str, String),
    tokens: String,
    /// Empty unless a forward prediction ended.
    predicted_line: String,
    /// Label, line and description of the real state; empty before the end.
    real: (&'static str, String, String),
    /// `neural-compare` (fields, a header first) or `neural-candidates`.
    list: &'static str,
    rows: Vec<Row>,
    note: String,
}

fn summary(p: &PanelState) -> Summary {
    let Some(action) = p.action else {
        return Summary {
            heading: "Neural debugger".to_owned(),
            status: (
                "note",
                "neural-status",
                "Step (s, n, r, c or back) and the model predicts the same step beside the real run.".to_owned(),
            ),
            ..Summary::default()
        };
    };
    let from = p
        .from_line
        .map_or_else(|| "the end".to_owned(), |l| format!("line {l}"));
    let model = if p.model.is_empty() {
        String::new()
    } else {
        format!(" ({})", p.model)
    };
    let mut out = Summary {
        heading: format!("Model{model}: {} from {from}", action.name().replace('_', " ")),
        ..Summary::default()
    };
    let end = match &p.result {
        None => {
            out.status = ("neural-status", "neural-status", "Predicting…".to_owned());
            out.tokens = p.tokens.join("\n");
            return out;
        }
        Some(Err(message)) => {
            out.status = ("error", "neural-error", message.clone());
            return out;
        }
        Some(Ok(end)) => end,
    };
    let line = |s: Option<&State>| s.and_then(|s| s.line).map_or_else(|| "—".to_owned(), |l| l.to_string());
    out.note = speed(end);
    if action.is_reverse() {
        let consistent = end.predictions.iter().filter(|c| c.consistent == Some(true)).count();
        out.status = (
            "neural-verdict",
            "neural-verdict",
            format!(
                "{consistent} of {} candidates are consistent with the real run.",
                end.predictions.len()
            ),
        );
        out.real = (
            "Real previous line ",
            line(Some(&end.actual)),
            describe_state(&end.actual),
        );
        out.list = "neural-candidates";
        out.rows = end
            .predictions
            .iter()
            .map(|c| {
                let ok = c.consistent == Some(true);
                let (what, differs) = match &c.state {
                    Some(state) => {
                        let differs: Vec<String> = compare(state, &end.actual)
                            .into_iter()
                            .filter(|r| r.verdict != FieldMatch::Equal)
                            .map(|r| format!("{} {}", r.field, r.verdict.label()))
                            .collect();
                        let differs = if differs.is_empty() {
                            "the real previous state".to_owned()
                        } else {
                            format!("unlike the real one: {}", differs.join(", "))
                        };
                        (describe_state(state), differs)
                    }
                    None => (
                        format!("Parse failure: {}", c.parse_error.as_deref().unwrap_or_default()),
                        String::new(),
                    ),
                };
                let mark = if ok { "✓ consistent" } else { "✗ inconsistent" };
                Row {
                    class: if ok { "ok" } else { "bad" }.to_owned(),
                    cells: [mark.to_owned(), what, String::new(), differs],
                }
            })
            .collect();
        return out;
    }
    let Some(prediction) = end.predictions.first() else {
        out.status = ("error", "neural-error", "The server sent no prediction.".to_owned());
        return out;
    };
    out.predicted_line = line(prediction.state.as_ref());
    out.real = (" · real line ", line(Some(&end.actual)), describe_state(&end.actual));
    let fields = prediction
        .state
        .as_ref()
        .map(|state| compare(state, &end.actual))
        .unwrap_or_default();
    let verdict = match &prediction.state {
        None => {
            out.tokens.clone_from(&prediction.text);
            format!(
                "✗ Parse failure ({}): the answer is not a state, so it counts as wrong.",
                prediction.parse_error.as_deref().unwrap_or_default()
            )
        }
        Some(_) if prediction.matches => "✓ The model predicted every field.".to_owned(),
        Some(_) => {
            let wrong = fields.iter().filter(|r| r.verdict != FieldMatch::Equal).count();
            format!("✗ {wrong} field(s) differ from the real run.")
        }
    };
    let class = if prediction.matches {
        "neural-verdict ok"
    } else {
        "neural-verdict bad"
    };
    out.status = (class, "neural-verdict", verdict);
    if !fields.is_empty() {
        out.list = "neural-compare";
        out.rows.push(Row {
            class: "head".to_owned(),
            cells: ["Field".into(), "Predicted".into(), "Real".into(), String::new()],
        });
        out.rows.extend(fields.into_iter().map(|f| Row {
            class: format!("field-{}", f.verdict.label()),
            cells: [
                f.field,
                f.predicted.unwrap_or_default(),
                f.real.unwrap_or_default(),
                f.verdict.label().to_owned(),
            ],
        }));
    }
    out
}

/// Integer arithmetic only: float formatting would add ~10 KB of wasm.
fn speed(end: &PredictEnd) -> String {
    let tokens: u64 = end.predictions.iter().map(|p| u64::from(p.tokens)).sum();
    let ms: u64 = end.predictions.iter().map(|p| p.elapsed_ms).sum();
    format!("{tokens} tokens in {ms} ms ({} tokens/s)", tokens * 1000 / ms.max(1))
}

/// The panel's contents as HTML: one string rather than a Leptos view per element, which
/// costs the wasm bundle less.
fn panel_html(p: &PanelState) -> String {
    let Summary {
        heading,
        status: (class, test_id, status),
        tokens,
        predicted_line,
        real: (real_label, real_line, description),
        list,
        rows,
        note,
    } = summary(p);
    let hidden = |yes: bool| if yes { " hidden" } else { "" };
    let mut out = String::from("<h3>");
    push_escaped(&mut out, &heading);
    out.push_str("</h3><p class=\"");
    out.push_str(class);
    out.push_str("\" data-testid=\"");
    out.push_str(test_id);
    out.push_str("\">");
    push_escaped(&mut out, &status);
    out.push_str("</p><p class=\"neural-lines\"");
    out.push_str(hidden(real_line.is_empty()));
    out.push_str("><span");
    out.push_str(hidden(predicted_line.is_empty()));
    out.push_str(">Predicted line <strong data-testid=\"neural-predicted-line\">");
    push_escaped(&mut out, &predicted_line);
    out.push_str("</strong></span>");
    push_escaped(&mut out, real_label);
    out.push_str("<strong data-testid=\"neural-real-line\">");
    push_escaped(&mut out, &real_line);
    out.push_str("</strong> — ");
    push_escaped(&mut out, &description);
    out.push_str("</p><pre class=\"neural-tokens\" data-testid=\"neural-tokens\"");
    out.push_str(hidden(tokens.is_empty()));
    out.push('>');
    push_escaped(&mut out, &tokens);
    out.push_str("</pre><ul class=\"");
    out.push_str(list);
    out.push_str("\" data-testid=\"");
    out.push_str(list);
    out.push('"');
    out.push_str(hidden(list.is_empty()));
    out.push('>');
    for Row { class, cells } in rows {
        out.push_str("<li class=\"");
        push_escaped(&mut out, &class);
        out.push_str("\">");
        for (i, cell) in cells.iter().enumerate() {
            let tag = if i == 1 || i == 2 { "code" } else { "span" };
            out.push('<');
            out.push_str(tag);
            out.push('>');
            push_escaped(&mut out, cell);
            out.push_str("</");
            out.push_str(tag);
            out.push('>');
        }
        out.push_str("</li>");
    }
    out.push_str("</ul><p class=\"note\">");
    push_escaped(&mut out, &note);
    out.push_str("</p>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(event: StopKind, line: u32, depth: u32, vars: &[(&str, &str)], value: Option<&str>) -> State {
        let vars = Vars(vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect());
        let (locals, globals) = if depth == 0 {
            (Vars::default(), Some(vars))
        } else {
            (vars, None)
        };
        State {
            event,
            line: Some(line),
            function: Some(if depth == 0 { "<module>" } else { "f" }.to_owned()),
            depth: Some(depth),
            locals: Some(locals),
            globals,
            value: value.map(str::to_owned),
        }
    }

    fn verdicts(rows: &[FieldRow]) -> Vec<(&str, FieldMatch)> {
        rows.iter().map(|r| (r.field.as_str(), r.verdict)).collect()
    }

    #[test]
    fn fields_are_equal_differ_missing_or_extra() {
        let real = state(StopKind::Line, 3, 1, &[("x", "1"), ("y", "2")], None);
        let predicted = state(StopKind::Line, 4, 1, &[("x", "1"), ("z", "5")], None);
        assert_eq!(
            verdicts(&compare(&predicted, &real)),
            vec![
                ("event", FieldMatch::Equal),
                ("line", FieldMatch::Differs),
                ("function", FieldMatch::Equal),
                ("depth", FieldMatch::Equal),
                ("x", FieldMatch::Equal),
                ("y", FieldMatch::Missing),
                ("z", FieldMatch::Extra),
            ]
        );
    }

    fn prediction(
        state: Option<State>,
        matches: bool,
        consistent: Option<bool>,
    ) -> replayground_shared::protocol::Prediction {
        replayground_shared::protocol::Prediction {
            sample: 0,
            text: "<|line|>9 1 f <|vars|>{".into(),
            parse_error: state.is_none().then(|| "cut after 3 tokens".to_owned()),
            state,
            matches,
            consistent,
            tokens: 30,
            elapsed_ms: 200,
        }
    }

    #[test]
    fn the_panel_shows_predicted_and_real_with_a_verdict() {
        let real = state(StopKind::Line, 3, 1, &[("x", "1")], None);
        let wrong = state(StopKind::Line, 4, 1, &[("x", "1")], None);
        let mut panel = PanelState {
            action: Some(Action::StepOver),
            from_line: Some(2),
            model: "tiny".into(),
            tokens: vec!["<|line|>4".into()],
            result: None,
        };
        let streaming = summary(&panel);
        assert_eq!(streaming.heading, "Model (tiny): step over from line 2");
        assert_eq!(streaming.tokens, "<|line|>4");
        panel.result = Some(Ok(PredictEnd {
            predictions: vec![prediction(Some(wrong), false, None)],
            actual: real.clone(),
        }));
        let done = summary(&panel);
        assert_eq!((done.predicted_line.as_str(), done.real.1.as_str()), ("4", "3"));
        assert_eq!(done.status.2, "✗ 1 field(s) differ from the real run.");
        assert_eq!(done.note, "30 tokens in 200 ms (150 tokens/s)");
        assert_eq!(done.list, "neural-compare");
        assert_eq!(done.rows[0].class, "head");
        assert!(
            done.rows
                .iter()
                .any(|r| r.cells[0] == "line" && r.class == "field-differs")
        );
        // A parse failure shows the raw text and counts as wrong.
        panel.result = Some(Ok(PredictEnd {
            predictions: vec![prediction(None, false, None)],
            actual: real.clone(),
        }));
        let failed = summary(&panel);
        assert!(
            failed.status.2.contains("Parse failure (cut after 3 tokens)"),
            "{}",
            failed.status.2
        );
        assert_eq!(failed.predicted_line, "—");
        assert!(!failed.tokens.is_empty() && failed.rows.is_empty());
        // Reverse: every candidate is marked.
        panel.action = Some(Action::ReverseStepInto);
        panel.result = Some(Ok(PredictEnd {
            predictions: vec![
                prediction(Some(real.clone()), true, Some(true)),
                prediction(None, false, Some(false)),
            ],
            actual: real,
        }));
        let reverse = summary(&panel);
        assert_eq!(reverse.status.2, "1 of 2 candidates are consistent with the real run.");
        assert_eq!(reverse.list, "neural-candidates");
        assert_eq!(
            reverse.rows.iter().map(|r| r.class.as_str()).collect::<Vec<_>>(),
            ["ok", "bad"]
        );
        assert_eq!(reverse.rows[0].cells[3], "the real previous state");
        panel.result = Some(Err("Neural mode is off.".into()));
        assert_eq!(
            summary(&panel).status,
            ("error", "neural-error", "Neural mode is off.".to_owned())
        );
    }

    #[test]
    fn the_panel_html_escapes_text_and_keeps_the_test_ids() {
        let real = state(StopKind::Line, 3, 1, &[("x", "<b>&")], None);
        let panel = PanelState {
            action: Some(Action::StepOver),
            from_line: Some(2),
            model: "tiny".into(),
            tokens: vec![String::new()],
            result: Some(Ok(PredictEnd {
                predictions: vec![prediction(Some(real.clone()), true, None)],
                actual: real,
            })),
        };
        let html = panel_html(&panel);
        assert!(html.contains(r#"data-testid="neural-verdict">✓"#), "{html}");
        assert!(
            html.contains(r#"<strong data-testid="neural-real-line">3</strong>"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<pre class="neural-tokens" data-testid="neural-tokens" hidden>"#),
            "{html}"
        );
        assert!(
            html.contains("<code>&lt;b&gt;&amp;</code>") && !html.contains("<b>"),
            "{html}"
        );
        let idle = panel_html(&PanelState::default());
        assert!(idle.contains(r#"<ul class="" data-testid="" hidden>"#), "{idle}");
    }

    #[test]
    fn module_level_compares_globals_and_values_are_labelled() {
        let real = state(StopKind::Return, 2, 1, &[], Some("3"));
        let predicted = state(StopKind::Line, 2, 1, &[], None);
        let rows = compare(&predicted, &real);
        assert_eq!(
            rows.last().map(|r| (r.field.as_str(), r.verdict)),
            Some(("return value", FieldMatch::Missing))
        );
        let raised = state(StopKind::Exception, 2, 1, &[], Some("ValueError()"));
        let rows = compare(&raised, &real);
        assert!(
            rows.iter()
                .any(|r| r.field == "return value" && r.verdict == FieldMatch::Differs)
        );
        let globals = state(StopKind::Line, 1, 0, &[("a", "1")], None);
        assert!(
            compare(&globals, &globals)
                .iter()
                .all(|r| r.verdict == FieldMatch::Equal)
        );
        assert!(compare(&globals, &globals).iter().any(|r| r.field == "a"));
    }
}
