//! Predict mode for learners: before each step the student says which line runs next (a
//! click on the code, or its number) and may give a variable's new value; then the step
//! is taken, and their guess, the neural debugger's prediction and the real run are shown
//! side by side. A score is kept for the page's session.

use std::fmt::Write as _;
use std::sync::Arc;

use leptos::html::Section;
use leptos::prelude::*;
use leptos::task::spawn_local;
use replayground_shared::protocol::PredictRequest;
use replayground_shared::{Action, State, Stop};

use crate::playground::jobs::{self, CancelRun};
use crate::playground::neural_view::{NeuralMode, shown};
use crate::playground::session::Session;
use crate::playground::stop_view::describe_state;
use crate::playground::syntax::push_escaped;
use crate::playground::ui::data_of;

/// The query of a link that opens the playground in predict mode (`/?predict#v1.…`,
/// `/s/{id}?predict`): the view's format is unchanged, so old links open as before.
pub const PREDICT_QUERY: &str = "?predict";

/// Whether a page address's query (`location.search`) asks for predict mode.
pub fn asks_for_predict_mode(search: &str) -> bool {
    search
        .trim_start_matches('?')
        .split('&')
        .any(|p| p.split('=').next() == PREDICT_QUERY.strip_prefix('?'))
}

/// The page's predict mode, shared by the toggle, the editor (a click picks the line) and
/// the panel.
#[derive(Debug, Clone, Copy)]
pub struct PredictMode {
    pub on: RwSignal<bool>,
    /// The line the student expects next.
    pub line: RwSignal<Option<u32>>,
    pub score: RwSignal<Score>,
}

impl PredictMode {
    pub fn new(on: bool) -> Self {
        Self {
            on: RwSignal::new(on),
            line: RwSignal::new(None),
            score: RwSignal::new(Score::default()),
        }
    }
}

/// Right answers out of those given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub right: u32,
    pub of: u32,
}

impl Tally {
    fn add(&mut self, right: bool) {
        self.of += 1;
        self.right += u32::from(right);
    }
}

/// The student's score, and the neural debugger's on the same steps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Score {
    pub lines: Tally,
    pub values: Tally,
    pub model_lines: Tally,
    pub model_values: Tally,
}

impl Score {
    /// E.g. "You: lines 4/6, values 2/3 · neural debugger: lines 5/6".
    pub fn text(&self) -> String {
        if self.lines.of == 0 {
            return "Your score shows here after your first guess.".to_owned();
        }
        let part = |lines: Tally, values: Tally| {
            let mut out = format!("lines {}/{}", lines.right, lines.of);
            if values.of > 0 {
                let _ = write!(out, ", values {}/{}", values.right, values.of);
            }
            out
        };
        let mut out = format!("You: {}", part(self.lines, self.values));
        if self.model_lines.of > 0 {
            let _ = write!(out, " · neural debugger: {}", part(self.model_lines, self.model_values));
        }
        out
    }
}

/// A guessed variable, typed as `name = value`; `None` when nothing was typed.
pub fn parse_assignment(text: &str) -> Result<Option<(String, String)>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let (name, value) = text
        .split_once('=')
        .map(|(n, v)| (n.trim(), v.trim()))
        .filter(|(n, v)| !v.is_empty() && is_identifier(n))
        .ok_or_else(|| "Write the variable as name = value, for example total = 3.".to_owned())?;
    Ok(Some((name.to_owned(), value.to_owned())))
}

/// Non-ASCII letters count as letters: Unicode's tables would cost the wasm more than
/// a rare false positive costs the learner.
fn is_identifier(name: &str) -> bool {
    let letter = |c: char| c.is_ascii_alphabetic() || c == '_' || !c.is_ascii();
    name.chars().next().is_some_and(letter) && name.chars().all(|c| letter(c) || c.is_ascii_digit())
}

/// A typed value against a repr: spaces and the kind of quotes do not count.
pub fn same_value(typed: &str, repr: &str) -> bool {
    let plain = |s: &str| {
        s.chars()
            .filter(|c| !c.is_ascii_whitespace())
            .map(|c| if c == '"' { '\'' } else { c })
            .collect::<String>()
    };
    plain(typed) == plain(repr)
}

/// What the neural debugger said about a checked step.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelAnswer {
    Waiting,
    /// Its state, or `None` when its answer was not a state (a parse failure).
    Answered(Option<State>),
    /// Why there is no prediction (no model on this server, an error).
    Unavailable(String),
}

/// One checked step: the guess, the real state after the step and the model's.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The line the step started from (`None`: the end).
    pub from: Option<u32>,
    pub line: u32,
    pub var: Option<(String, String)>,
    pub real: State,
    pub model: ModelAnswer,
}

impl Checked {
    /// The real value of the guessed variable after the step.
    fn real_value(&self) -> Option<&str> {
        let (name, _) = self.var.as_ref()?;
        value_of(&self.real, name)
    }

    pub fn line_right(&self) -> bool {
        self.real.line == Some(self.line)
    }

    pub fn value_right(&self) -> Option<bool> {
        let (_, typed) = self.var.as_ref()?;
        Some(self.real_value().is_some_and(|real| same_value(typed, real)))
    }

    /// The model's line and value verdicts, once it answered.
    pub fn model_right(&self) -> Option<(bool, Option<bool>)> {
        let ModelAnswer::Answered(state) = &self.model else {
            return None;
        };
        let line = state.as_ref().is_some_and(|s| s.line == self.real.line);
        let value = self.var.as_ref().map(|(name, _)| {
            let predicted = state.as_ref().and_then(|s| value_of(s, name));
            predicted.is_some() && predicted == self.real_value()
        });
        Some((line, value))
    }
}

fn value_of<'a>(state: &'a State, name: &str) -> Option<&'a str> {
    shown(state).iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// Adds the student's verdicts to the score.
pub fn score_student(score: &mut Score, checked: &Checked) {
    score.lines.add(checked.line_right());
    if let Some(right) = checked.value_right() {
        score.values.add(right);
    }
}

/// Adds the model's verdicts to the score (once it answered).
pub fn score_model(score: &mut Score, checked: &Checked) {
    if let Some((line, value)) = checked.model_right() {
        score.model_lines.add(line);
        if let Some(right) = value {
            score.model_values.add(right);
        }
    }
}

/// A table cell with its verdict mark.
fn push_cell(out: &mut String, test_id: &str, text: &str, right: Option<bool>) {
    let (class, mark) = match right {
        Some(true) => (" class=\"ok\"", " ✓"),
        Some(false) => (" class=\"bad\"", " ✗"),
        None => ("", ""),
    };
    let _ = write!(out, r#"<td{class} data-testid="{test_id}">"#);
    push_escaped(out, text);
    out.push_str(mark);
    out.push_str("</td>");
}

/// The guess, the model's prediction and the real run side by side, as HTML.
pub fn result_html(checked: &Checked) -> String {
    let line_text = |line: Option<u32>| line.map_or_else(|| "the end".to_owned(), |l| l.to_string());
    let from = checked
        .from
        .map_or_else(|| "the end".to_owned(), |l| format!("line {l}"));
    let mut out = format!(
        r#"<table class="predict-result" data-testid="predict-result"><caption>The step from {from}</caption><thead><tr><td></td><th scope="col">You</th><th scope="col">Neural debugger</th><th scope="col">Real run</th></tr></thead><tbody><tr><th scope="row">Next line</th>"#
    );
    push_cell(
        &mut out,
        "predict-you-line",
        &checked.line.to_string(),
        Some(checked.line_right()),
    );
    let model_right = checked.model_right();
    let (model_line, model_value, note) = match &checked.model {
        ModelAnswer::Waiting => (
            "…".to_owned(),
            "…".to_owned(),
            "The neural debugger is predicting…".to_owned(),
        ),
        ModelAnswer::Answered(None) => (
            "no answer".to_owned(),
            "no answer".to_owned(),
            "The neural debugger's answer was not a program state, so it counts as wrong.".to_owned(),
        ),
        ModelAnswer::Answered(Some(state)) => {
            let value = checked
                .var
                .as_ref()
                .and_then(|(name, _)| value_of(state, name))
                .unwrap_or("not defined");
            (line_text(state.line), value.to_owned(), String::new())
        }
        ModelAnswer::Unavailable(why) => ("—".to_owned(), "—".to_owned(), format!("No neural prediction: {why}")),
    };
    push_cell(&mut out, "predict-model-line", &model_line, model_right.map(|r| r.0));
    push_cell(&mut out, "predict-real-line", &line_text(checked.real.line), None);
    out.push_str("</tr>");
    if let Some((name, typed)) = &checked.var {
        out.push_str(r#"<tr><th scope="row"><code>"#);
        push_escaped(&mut out, name);
        out.push_str("</code></th>");
        push_cell(&mut out, "predict-you-value", typed, checked.value_right());
        push_cell(
            &mut out,
            "predict-model-value",
            &model_value,
            model_right.and_then(|r| r.1),
        );
        push_cell(
            &mut out,
            "predict-real-value",
            checked.real_value().unwrap_or("not defined"),
            None,
        );
        out.push_str("</tr>");
    }
    out.push_str(r#"</tbody></table><p class="predict-real" data-testid="predict-real">Real run: "#);
    push_escaped(&mut out, &describe_state(&checked.real));
    out.push_str("</p>");
    if !note.is_empty() {
        out.push_str(r#"<p class="note" data-testid="predict-model-note">"#);
        push_escaped(&mut out, &note);
        out.push_str("</p>");
    }
    out
}

/// The panel: static HTML, the form read on submit (`data-predict` names its parts) and the
/// rest written by an effect. A Leptos view per part would cost the wasm bundle more (each
/// child re-instantiates the debugger panel's whole view tree).
const PANEL_HTML: &str = r#"<form class="predict-form" data-predict="form"><p class="hint">Which line runs next? Click it in the code (read-only while you predict) or type its number; add a variable's new value if you like. Then Check.</p><label>Next line <input type="number" min="1" data-testid="predict-line" data-predict="line"></label><label>Value <input type="text" data-testid="predict-value" data-predict="value" placeholder="total = 3" spellcheck="false" autocomplete="off"></label><button type="submit" class="primary" data-testid="predict-check">Check ▶</button></form><div aria-live="polite" data-predict="out"></div>"#;

/// The part named `name` (`data-predict`) of the panel.
fn part<T: wasm_bindgen::JsCast>(panel: &web_sys::HtmlElement, name: &str) -> Option<T> {
    use wasm_bindgen::JsCast as _;
    panel
        .query_selector(&format!(r#"[data-predict="{name}"]"#))
        .ok()
        .flatten()?
        .dyn_into()
        .ok()
}

/// The problem with the last guess, the last checked step and the score, as HTML.
fn panel_html(problem: Option<&str>, checked: Option<&Checked>, score: &Score) -> String {
    let mut out = String::new();
    if let Some(problem) = problem {
        out.push_str(r#"<p class="error" role="alert" data-testid="predict-problem">"#);
        push_escaped(&mut out, problem);
        out.push_str("</p>");
    }
    if let Some(checked) = checked {
        out.push_str(&result_html(checked));
    }
    out.push_str(r#"<p class="predict-score" data-testid="predict-score">"#);
    push_escaped(&mut out, &score.text());
    out.push_str("</p>");
    out
}

/// The guess form and the last checked step, under the debugger's controls.
// Leptos hands props over by value.
#[allow(clippy::needless_pass_by_value)]
#[component]
pub fn PredictPanel(
    session: Arc<Session>,
    stop: RwSignal<Stop>,
    act: Callback<Action>,
    mode: PredictMode,
) -> impl IntoView {
    let checked = RwSignal::new(None::<Checked>);
    let problem = RwSignal::new(None::<String>);
    let running = StoredValue::new_local(None::<CancelRun>);
    let panel = NodeRef::<Section>::new();
    let stdin = use_context::<NeuralMode>().map(|n| n.stdin);
    mode.line.set(None);
    let stop_running = move || {
        if let Some(cancel) = running.get_value() {
            cancel.cancel();
        }
    };
    on_cleanup(stop_running);
    Effect::new(move |_| {
        if !mode.on.get() {
            stop_running();
        }
    });
    // The panel follows the mode, the stop (no guess at the end), the line clicked in the
    // code, the last checked step and the score.
    Effect::new(move |_| {
        let Some(panel) = panel.get() else { return };
        panel.set_hidden(!mode.on.get());
        if let Some(form) = part::<web_sys::HtmlElement>(&panel, "form") {
            form.set_hidden(stop.get() == Stop::End);
        }
        let line = mode.line.get().map(|l| l.to_string()).unwrap_or_default();
        if let Some(input) = part::<web_sys::HtmlInputElement>(&panel, "line")
            && input.value().trim() != line
        {
            input.set_value(&line);
        }
        if let Some(out) = part::<web_sys::Element>(&panel, "out") {
            out.set_inner_html(
                &problem.with(|p| checked.with(|c| panel_html(p.as_deref(), c.as_ref(), &mode.score.get()))),
            );
        }
    });
    let check = Callback::new(move |()| {
        let Some(form) = panel.get_untracked() else { return };
        let Some(line) = mode.line.get_untracked() else {
            problem.set(Some(
                "Pick the line you expect next: click it in the code, or type its number.".to_owned(),
            ));
            return;
        };
        let value = part::<web_sys::HtmlInputElement>(&form, "value");
        let var = match parse_assignment(&value.as_ref().map(web_sys::HtmlInputElement::value).unwrap_or_default()) {
            Ok(var) => var,
            Err(message) => return problem.set(Some(message)),
        };
        let Stop::Event(at) = stop.get_untracked() else { return };
        problem.set(None);
        act.run(Action::StepInto);
        let tree = &session.tree;
        let result = Checked {
            from: Some(tree.trace().events[at].line),
            line,
            var,
            real: tree.state(stop.get_untracked()),
            model: ModelAnswer::Waiting,
        };
        mode.score.update(|s| score_student(s, &result));
        checked.set(Some(result));
        mode.line.set(None);
        if let Some(value) = value {
            value.set_value("");
        }
        if let Some(input) = part::<web_sys::HtmlInputElement>(&form, "line") {
            let _ = input.focus();
        }
        stop_running();
        let cancel = CancelRun::default();
        running.set_value(Some(cancel.clone()));
        let request = PredictRequest {
            code: session.code.clone(),
            stdin: stdin.map(|s| s.get_untracked()).unwrap_or_default(),
            at_event: at as u32,
            action: Action::StepInto.name(),
            samples: 1,
            breakpoints: Vec::new(),
        };
        spawn_local(async move {
            let answer = match jobs::predict_streaming(request, &cancel, &|_| {}).await {
                _ if cancel.is_cancelled() => return,
                Ok(end) => ModelAnswer::Answered(end.predictions.into_iter().next().and_then(|p| p.state)),
                Err(e) => ModelAnswer::Unavailable(e.to_string()),
            };
            checked.update(|c| {
                if let Some(c) = c {
                    c.model = answer;
                    mode.score.update(|s| score_model(s, c));
                }
            });
        });
    });
    view! {
        <section
            class="predict-panel"
            data-testid="predict-panel"
            aria-label="Predict the next step"
            node_ref=panel
            inner_html=PANEL_HTML
            on:submit=move |ev| {
                ev.prevent_default();
                check.run(());
            }
            on:input=move |ev| {
                if data_of(&ev, "data-predict").as_deref() == Some("line") {
                    mode.line.set(event_target_value(&ev).trim().parse().ok());
                }
            }
        ></section>
    }
}

#[cfg(test)]
mod tests {
    use replayground_shared::{StopKind, Vars};

    use super::*;

    fn state(line: u32, vars: &[(&str, &str)]) -> State {
        State {
            event: StopKind::Line,
            line: Some(line),
            function: Some("<module>".into()),
            depth: Some(0),
            locals: Some(Vars::default()),
            globals: Some(Vars(
                vars.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect(),
            )),
            value: None,
        }
    }

    #[test]
    fn links_ask_for_predict_mode_with_a_query_parameter() {
        assert!(asks_for_predict_mode("?predict"));
        assert!(asks_for_predict_mode("?x=1&predict=1"));
        assert!(!asks_for_predict_mode(""));
        assert!(!asks_for_predict_mode("?predictable"));
    }

    #[test]
    fn a_guessed_value_is_name_equals_value() {
        assert_eq!(parse_assignment("  "), Ok(None));
        assert_eq!(
            parse_assignment("total = [1, 2]"),
            Ok(Some(("total".into(), "[1, 2]".into())))
        );
        assert!(parse_assignment("3").is_err());
        assert!(parse_assignment("1x = 3").is_err());
        assert!(parse_assignment("x =").is_err());
        assert!(same_value("[1,2]", "[1, 2]"));
        assert!(same_value("\"Ada\"", "'Ada'"));
        assert!(!same_value("12", "1"));
    }

    #[test]
    fn the_guess_the_model_and_the_real_run_are_scored_side_by_side() {
        let mut checked = Checked {
            from: Some(3),
            line: 4,
            var: Some(("total".into(), "3".into())),
            real: state(4, &[("total", "2")]),
            model: ModelAnswer::Waiting,
        };
        let mut score = Score::default();
        assert!(score.text().starts_with("Your score shows here"));
        score_student(&mut score, &checked);
        score_model(&mut score, &checked);
        assert_eq!(score.text(), "You: lines 1/1, values 0/1");
        let waiting = result_html(&checked);
        assert!(
            waiting.contains(r#"<td class="ok" data-testid="predict-you-line">4 ✓</td>"#),
            "{waiting}"
        );
        assert!(
            waiting.contains(r#"<td class="bad" data-testid="predict-you-value">3 ✗</td>"#),
            "{waiting}"
        );
        assert!(
            waiting.contains(r#"<td data-testid="predict-real-value">2</td>"#),
            "{waiting}"
        );
        assert!(waiting.contains("is predicting"), "{waiting}");

        checked.model = ModelAnswer::Answered(Some(state(5, &[("total", "2")])));
        score_model(&mut score, &checked);
        assert_eq!(
            score.text(),
            "You: lines 1/1, values 0/1 · neural debugger: lines 0/1, values 1/1"
        );
        let answered = result_html(&checked);
        assert!(
            answered.contains(r#"data-testid="predict-model-line">5 ✗</td>"#),
            "{answered}"
        );
        assert!(
            answered.contains(r#"data-testid="predict-model-value">2 ✓</td>"#),
            "{answered}"
        );
        assert!(!answered.contains("predict-model-note"), "{answered}");

        checked.model = ModelAnswer::Unavailable("this server has no model.".into());
        let none = result_html(&checked);
        assert!(
            none.contains("No neural prediction: this server has no model."),
            "{none}"
        );
        assert_eq!(checked.model_right(), None, "no model, no model score");

        // At the end there is no line, and the guess was wrong.
        checked.real = State::end();
        checked.var = None;
        assert!(!checked.line_right());
        assert!(result_html(&checked).contains(r#"data-testid="predict-real-line">the end</td>"#));
    }
}
