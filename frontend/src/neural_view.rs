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

use crate::api::{self, CancelRun, PredictEnd, PredictProgress};
use crate::debugger::Session;
use crate::stop_view::describe_state;

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
fn shown(state: &State) -> &[(String, String)] {
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
    let kind = if real.value.is_some() { real.event } else { predicted.event };
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
pub fn NeuralPanel(session: Arc<Session>, mode: NeuralMode, breakpoints: RwSignal<std::collections::BTreeSet<u32>>) -> impl IntoView {
    let panel = RwSignal::new(PanelState::default());
    let running = StoredValue::new_local(None::<CancelRun>);
    let predict_session = Arc::clone(&session);
    // Each step while neural mode is on asks the model for the same action.
    Effect::new(move |_| {
        let Some((from, action)) = mode.last_step.get() else { return };
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
            let result = api::predict_streaming(request, &cancel, |progress| match progress {
                PredictProgress::Model(model) => panel.update(|p| p.model = model),
                PredictProgress::Token(sample, text) => panel.update(|p| {
                    if let Some(t) = p.tokens.get_mut(sample as usize) {
                        t.push_str(&text);
                    }
                }),
            })
            .await;
            // A newer step took over: its panel stays.
            if matches!(result, Err(api::RunError::Cancelled)) || cancel.is_cancelled() {
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
    view! {
        <div class="neural">
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
            <Show when=move || mode.on.get()>
                <section class="neural-panel" data-testid="neural-panel" aria-label="Neural debugger" aria-live="polite">
                    {move || panel.with(panel_body)}
                </section>
            </Show>
        </div>
    }
}

fn panel_body(p: &PanelState) -> AnyView {
    let Some(action) = p.action else {
        return view! {
            <p class="note">"Step (s, n, r, c or back) and the model predicts the same step beside the real run."</p>
        }
        .into_any();
    };
    let from = p.from_line.map_or_else(|| "the end".to_owned(), |l| format!("line {l}"));
    let model = if p.model.is_empty() { String::new() } else { format!(" ({})", p.model) };
    let heading = format!("Model{model}: {} from {from}", action.name().replace('_', " "));
    let body = match &p.result {
        None => {
            let text = p.tokens.join("\n");
            view! {
                <p class="neural-status">"Predicting…"</p>
                <pre class="neural-tokens" data-testid="neural-tokens">{text}</pre>
            }
            .into_any()
        }
        Some(Err(message)) => view! { <p class="error" role="alert" data-testid="neural-error">{message.clone()}</p> }.into_any(),
        Some(Ok(end)) if action.is_reverse() => candidates_view(end),
        Some(Ok(end)) => forward_view(end),
    };
    view! {
        <h3>{heading}</h3>
        {body}
    }
    .into_any()
}

fn speed(end: &PredictEnd) -> String {
    let tokens: u32 = end.predictions.iter().map(|p| p.tokens).sum();
    let ms: u64 = end.predictions.iter().map(|p| p.elapsed_ms).sum();
    let rate = f64::from(tokens) * 1000.0 / (ms.max(1) as f64);
    format!("{tokens} tokens in {:.2} s ({rate:.0} tokens/s)", ms as f64 / 1000.0)
}

fn line_text(state: Option<&State>) -> String {
    state.and_then(|s| s.line).map_or_else(|| "—".to_owned(), |l| l.to_string())
}

fn forward_view(end: &PredictEnd) -> AnyView {
    let Some(prediction) = end.predictions.first() else {
        return view! { <p class="error">"The server sent no prediction."</p> }.into_any();
    };
    let verdict = match (&prediction.state, prediction.matches) {
        (None, _) => "✗ Parse failure: the answer is not a state, so it counts as wrong.".to_owned(),
        (Some(_), true) => "✓ The model predicted every field.".to_owned(),
        (Some(state), false) => {
            let wrong = compare(state, &end.actual)
                .iter()
                .filter(|r| r.verdict != FieldMatch::Equal)
                .count();
            format!("✗ {wrong} field(s) differ from the real run.")
        }
    };
    let class = if prediction.matches { "neural-verdict ok" } else { "neural-verdict bad" };
    let table = match &prediction.state {
        Some(state) => {
            let rows = compare(state, &end.actual)
                .into_iter()
                .map(|row| {
                    let label = row.verdict.label();
                    view! {
                        <tr class=format!("field-{label}")>
                            <th scope="row">{row.field}</th>
                            <td><code>{row.predicted.unwrap_or_default()}</code></td>
                            <td><code>{row.real.unwrap_or_default()}</code></td>
                            <td class="verdict">{label}</td>
                        </tr>
                    }
                })
                .collect_view();
            view! {
                <table class="neural-compare" data-testid="neural-compare">
                    <thead>
                        <tr>
                            <th scope="col">"Field"</th>
                            <th scope="col">"Predicted"</th>
                            <th scope="col">"Real"</th>
                            <th scope="col">""</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            }
            .into_any()
        }
        None => view! {
            <p class="neural-parse-failure" data-testid="neural-parse-failure">
                {prediction.parse_error.clone().unwrap_or_default()}
            </p>
            <pre class="neural-tokens">{prediction.text.clone()}</pre>
        }
        .into_any(),
    };
    view! {
        <p class=class data-testid="neural-verdict">{verdict}</p>
        <p class="neural-lines">
            "Predicted line "
            <strong data-testid="neural-predicted-line">{line_text(prediction.state.as_ref())}</strong>
            " · real line "
            <strong data-testid="neural-real-line">{line_text(Some(&end.actual))}</strong>
            " — "
            {describe_state(&end.actual)}
        </p>
        {table}
        <p class="note">{speed(end)}</p>
    }
    .into_any()
}

fn candidates_view(end: &PredictEnd) -> AnyView {
    let consistent = end.predictions.iter().filter(|p| p.consistent == Some(true)).count();
    let items = end
        .predictions
        .iter()
        .map(|p| {
            let ok = p.consistent == Some(true);
            let mark = if ok { "✓ consistent" } else { "✗ inconsistent" };
            let text = match &p.state {
                Some(state) => {
                    let differs: Vec<String> = compare(state, &end.actual)
                        .into_iter()
                        .filter(|r| r.verdict != FieldMatch::Equal)
                        .map(|r| format!("{} {}", r.field, r.verdict.label()))
                        .collect();
                    let diff = if differs.is_empty() {
                        " Same as the real previous state.".to_owned()
                    } else {
                        format!(" Unlike the real previous state: {}.", differs.join(", "))
                    };
                    format!("{}{diff}", describe_state(state))
                }
                None => format!(
                    "Parse failure: {}",
                    p.parse_error.clone().unwrap_or_default()
                ),
            };
            view! {
                <li class:ok=ok>
                    <strong>{mark}</strong>
                    " "
                    {text}
                </li>
            }
        })
        .collect_view();
    view! {
        <p class="neural-verdict" data-testid="neural-verdict">
            {format!("{consistent} of {} candidates are consistent with the real run.", end.predictions.len())}
        </p>
        <p class="neural-lines">
            "Real previous line "
            <strong data-testid="neural-real-line">{line_text(Some(&end.actual))}</strong>
            " — "
            {describe_state(&end.actual)}
        </p>
        <ol class="neural-candidates" data-testid="neural-candidates">{items}</ol>
        <p class="note">{speed(end)}</p>
    }
    .into_any()
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

    #[test]
    fn module_level_compares_globals_and_values_are_labelled() {
        let real = state(StopKind::Return, 2, 1, &[], Some("3"));
        let predicted = state(StopKind::Line, 2, 1, &[], None);
        let rows = compare(&predicted, &real);
        assert_eq!(rows.last().map(|r| (r.field.as_str(), r.verdict)), Some(("return value", FieldMatch::Missing)));
        let raised = state(StopKind::Exception, 2, 1, &[], Some("ValueError()"));
        let rows = compare(&raised, &real);
        assert!(rows.iter().any(|r| r.field == "return value" && r.verdict == FieldMatch::Differs));
        let globals = state(StopKind::Line, 1, 0, &[("a", "1")], None);
        assert!(compare(&globals, &globals).iter().all(|r| r.verdict == FieldMatch::Equal));
        assert!(compare(&globals, &globals).iter().any(|r| r.field == "a"));
    }
}
