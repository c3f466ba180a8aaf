//! The reproduction plan (RepGen §3.2): concrete steps from the environment to the
//! check that makes the bug visible, from the restructured report and the context.
//! Rules write it; an LLM refines it when configured (validated JSON, else the rules).

use replayground_shared::repro::{PlanStep, PlanStepKind, RankedContext, RestructuredReport, SymptomClass};
use serde::Deserialize;

use super::llm::{ChatMessage, GenParams, Llm, LlmTask};
use super::report::{json_in_answer, labelled_lines};

fn step(kind: PlanStepKind, description: impl Into<String>) -> PlanStep {
    PlanStep {
        kind,
        description: description.into(),
    }
}

/// What the bug's symptom looks like when a script shows it.
pub fn symptom_check(report: &RestructuredReport) -> String {
    let symptom = &report.symptom;
    let has = |cue: &str| symptom.cues.iter().any(|c| c == cue);
    match symptom.class {
        SymptomClass::Crash => match &symptom.error_type {
            Some(error) => format!("Let the script raise the reported {error} uncaught, so its traceback is visible."),
            None => "Let the script crash with the reported error, uncaught.".to_owned(),
        },
        SymptomClass::WrongCalculation if has("nan") || has("inf") || has("exploding") => {
            "Print the loss (or the wrong values) at each step and flag NaN/inf values.".to_owned()
        }
        SymptomClass::WrongCalculation => "Print the computed values next to the values they should have.".to_owned(),
        SymptomClass::WrongShape => "Print the shapes of the arrays involved.".to_owned(),
        SymptomClass::PerformanceDegradation => {
            "Print the metric (accuracy, loss) that is worse than expected.".to_owned()
        }
        SymptomClass::WrongSaveReload => "Save, reload and print whether the reloaded values differ.".to_owned(),
        SymptomClass::LowEfficiency => "Time the slow part and print the duration.".to_owned(),
        SymptomClass::Warning => "Let the warning be printed (do not filter warnings).".to_owned(),
        SymptomClass::WrongParameterSetting | SymptomClass::WrongStructure | SymptomClass::WrongDisplayedMessage => {
            "Print the setting, structure or message that is wrong.".to_owned()
        }
        SymptomClass::Unknown => "Print the values the report talks about.".to_owned(),
    }
}

/// The rule-based plan.
pub fn plan_rules(report: &RestructuredReport, context: Option<&RankedContext>) -> Vec<PlanStep> {
    let framework = report.framework.as_deref().unwrap_or("numpy");
    let mut steps = vec![step(
        PlanStepKind::Environment,
        format!("Python 3 with {framework}; fix the random seeds so the run is repeatable."),
    )];
    steps.push(step(
        PlanStepKind::Data,
        "Use small synthetic data of the shapes the report implies instead of files that are not available.",
    ));
    match context {
        Some(context) => steps.push(step(
            PlanStepKind::Model,
            format!(
                "Reuse `{}` from {} (lines {}-{}) with its helpers and imports.",
                context.name, context.path, context.start_line, context.end_line
            ),
        )),
        None => steps.push(step(
            PlanStepKind::Model,
            "Build the model or computation exactly as the report's code does.",
        )),
    }
    let training = context.is_some_and(|c| c.training_loop)
        || report.steps.iter().any(|s| s.to_lowercase().contains("train"))
        || report.problem.to_lowercase().contains("train");
    if training {
        steps.push(step(
            PlanStepKind::Training,
            "Run a few iterations of training (shrink epochs and data so it ends in seconds).",
        ));
    } else {
        steps.push(step(
            PlanStepKind::Inference,
            "Run the computation once on the synthetic data.",
        ));
    }
    for reported in report.steps.iter().take(3) {
        steps.push(step(
            if training {
                PlanStepKind::Training
            } else {
                PlanStepKind::Inference
            },
            format!("As reported: {reported}"),
        ));
    }
    steps.push(step(PlanStepKind::Check, symptom_check(report)));
    steps
}

#[derive(Deserialize)]
struct LlmStep {
    kind: PlanStepKind,
    description: String,
}

fn kind_name(kind: PlanStepKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Steps written as `kind: description` lines; `None` when no line names a kind.
fn labelled_steps(answer: &str) -> Option<Vec<LlmStep>> {
    let steps: Vec<LlmStep> = labelled_lines(answer)
        .into_iter()
        .filter_map(|(label, description)| {
            let kind = serde_json::from_value(serde_json::Value::String(label)).ok()?;
            Some(LlmStep { kind, description })
        })
        .collect();
    (!steps.is_empty()).then_some(steps)
}

/// The start of the LLM's plan, given to it (a prefill).
const PLAN_PREFILL: &str = "environment:";

/// Whether a plan answer starts with a step of its own or JSON rather than the first
/// step's description.
fn starts_afresh(answer: &str) -> bool {
    let first = answer.trim_start().lines().next().unwrap_or_default();
    first.starts_with(['{', '[', '`']) || labelled_steps(first).is_some()
}

/// The plan: the rules, refined by `llm` when given. The second value says why an LLM
/// answer was not used, when it was not.
pub async fn plan(
    report: &RestructuredReport,
    context: Option<&RankedContext>,
    llm: Option<&dyn Llm>,
    on_token: &mut (dyn FnMut(&str) + Send),
) -> (Vec<PlanStep>, Option<String>) {
    let rules = plan_rules(report, context);
    let Some(llm) = llm else { return (rules, None) };
    let messages = [
        ChatMessage::system(
            "You plan the reproduction of a deep-learning bug (task: plan). Answer with three to six lines and nothing else, \
             one step each: its kind (environment, data, model, training, inference or check), a colon, then what to do \
             for this bug; the last line is the check that shows the bug.",
        ),
        ChatMessage::user(format!(
            "Problem:\n{}\n\nObserved:\n{}\n\nContext: {}\n\nA draft plan:\n{}",
            report.problem,
            report.observed,
            context.map_or_else(|| "(none)".to_owned(), |c| format!("`{}` in {}", c.name, c.path)),
            rules
                .iter()
                .map(|s| format!("{}: {}", kind_name(s.kind), s.description))
                .collect::<Vec<_>>()
                .join("\n")
        )),
        // Started for the model: small ones otherwise echo the format (`kind: check`).
        ChatMessage::assistant(PLAN_PREFILL),
    ];
    let params = GenParams {
        temperature: 0.0,
        ..GenParams::new(LlmTask::Plan, 250)
    };
    let answer = match llm.complete(&messages, &params, on_token).await {
        // An answer that starts with a step of its own (or is JSON) did not continue the
        // prefill: a backend that does not continue the last assistant turn, or a model
        // that skipped the first step.
        Ok(answer) if starts_afresh(&answer) => answer,
        Ok(answer) => format!("{PLAN_PREFILL}{answer}"),
        Err(e) => {
            return (
                rules,
                Some(format!("the LLM could not refine the plan ({e}); using the rules")),
            );
        }
    };
    let parsed: Option<Vec<LlmStep>> = json_in_answer(&answer)
        .and_then(|json| serde_json::from_str(json).ok())
        .or_else(|| labelled_steps(&answer));
    match parsed {
        Some(steps)
            if steps.iter().any(|s| s.kind == PlanStepKind::Check)
                && steps.iter().all(|s| !s.description.trim().is_empty()) =>
        {
            (steps.into_iter().map(|s| step(s.kind, s.description)).collect(), None)
        }
        _ => {
            tracing::debug!(%answer, "the LLM's plan did not parse");
            (
                rules,
                Some("the LLM's plan was not a list of steps ending in a check; using the rules".to_owned()),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{ScriptedLlm, ScriptedReply};
    use crate::restructure::rules_of;
    use replayground_shared::repro::BugReport;

    fn nan_report() -> RestructuredReport {
        rules_of(BugReport {
            title: "Training loss becomes nan".into(),
            snippets: vec!["import numpy as np\nloss = np.log(0)".into()],
            ..BugReport::default()
        })
    }

    #[test]
    fn the_plan_ends_with_the_check_that_shows_the_bug() {
        let steps = plan_rules(&nan_report(), None);
        assert_eq!(steps.first().unwrap().kind, PlanStepKind::Environment);
        assert!(steps.first().unwrap().description.contains("numpy"));
        let last = steps.last().unwrap();
        assert_eq!(last.kind, PlanStepKind::Check);
        assert!(last.description.contains("NaN"), "{}", last.description);
        assert!(steps.iter().any(|s| s.kind == PlanStepKind::Training));
        let json = serde_json::to_value(&steps).unwrap();
        assert_eq!(json[0]["kind"], "environment");
    }

    #[tokio::test]
    async fn an_llm_plan_is_validated() {
        let good = r#"[{"kind": "data", "description": "x = zeros"}, {"kind": "check", "description": "print loss"}]"#;
        let no_check = r#"[{"kind": "data", "description": "x = zeros"}]"#;
        let llm = ScriptedLlm::new(vec![
            ScriptedReply::Any(good.into()),
            ScriptedReply::Any(no_check.into()),
        ]);
        let (steps, note) = plan(&nan_report(), None, Some(&llm), &mut |_| {}).await;
        assert!(note.is_none());
        assert_eq!(steps.len(), 2);
        let (steps, note) = plan(&nan_report(), None, Some(&llm), &mut |_| {}).await;
        assert!(note.unwrap().contains("ending in a check"));
        assert_eq!(steps, plan_rules(&nan_report(), None));
    }

    #[tokio::test]
    async fn a_plan_in_labelled_lines_is_read() {
        let lines = "1. environment: numpy, seed 0\n2. **data**: X of shape (8, 3)\nwith zeros in the first column\n3. Check: print the loss\n";
        let llm = ScriptedLlm::new(vec![ScriptedReply::Any(lines.into())]);
        let (steps, note) = plan(&nan_report(), None, Some(&llm), &mut |_| {}).await;
        assert!(note.is_none(), "{note:?}");
        let kinds: Vec<PlanStepKind> = steps.iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            [PlanStepKind::Environment, PlanStepKind::Data, PlanStepKind::Check]
        );
        assert_eq!(steps[1].description, "X of shape (8, 3) with zeros in the first column");
        assert_eq!(kind_name(PlanStepKind::Training), "training");

        // The model continues the plan's first label, given to it.
        let continued = " numpy, seed 0\ndata: X with a zero column\ncheck: print the loss\n";
        let llm = ScriptedLlm::new(vec![ScriptedReply::Any(continued.into())]);
        let (steps, note) = plan(&nan_report(), None, Some(&llm), &mut |_| {}).await;
        assert!(note.is_none(), "{note:?}");
        assert_eq!(steps[0].kind, PlanStepKind::Environment);
        assert_eq!(steps[0].description, "numpy, seed 0");
        assert_eq!(steps.len(), 3);
    }
}
