//! The Restructure stage (RepGen §3.2): a free-form report turned into problem /
//! observed / expected / steps, its symptom and framework; rules first, then an LLM
//! refines when configured. With the stage switched off, [`unstructured`] takes the
//! report's own fields as they are.

use replayground_shared::repro::{RestructuredReport, Symptom, SymptomClass};
use serde::Deserialize;

use crate::llm::{ChatMessage, GenParams, Llm, LlmTask};
use crate::report::{
    ParsedReport, WARNING_HEADLINE, classify, detect_framework, join, json_in_answer, labelled_lines, split_free_text,
};

/// The rule-based restructuring.
pub fn restructure_rules(report: &ParsedReport) -> RestructuredReport {
    let free = split_free_text(&report.free_text);
    let description = split_free_text(&report.description);
    let problem = join(&[&report.title, &description.problem, &free.problem]);
    let observed = join(&[&report.observed, &description.observed, &free.observed]);
    let expected = join(&[&report.expected, &description.expected, &free.expected]);
    let mut steps: Vec<String> = description.steps.into_iter().chain(free.steps).collect();
    let snippets = report.code();
    if steps.is_empty() && !snippets.is_empty() {
        steps.push(format!(
            "Run the code from the report ({} snippet{}).",
            snippets.len(),
            if snippets.len() == 1 { "" } else { "s" }
        ));
    }
    // The expected behaviour says what should NOT happen ("no NaN"): leave it out of the symptom.
    let mut symptom = classify(&join(&[&problem, &observed]));
    // A report headed by a warning's own message complains about the warning, not its NaNs.
    let headline = problem.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if symptom.class != SymptomClass::Crash && WARNING_HEADLINE.is_match(headline) {
        symptom.class = SymptomClass::Warning;
        symptom.error_type = None;
    }
    let environment = report.environment.frameworks.join(" ");
    let framework = detect_framework(&join(&[&environment, &snippets.join("\n"), &problem, &observed]));
    RestructuredReport {
        problem,
        observed,
        expected,
        steps,
        symptom,
        framework,
        refined_by_llm: false,
    }
}

/// What an LLM is asked to answer when it refines the restructuring.
#[derive(Debug, Deserialize)]
struct LlmRestructure {
    #[serde(default)]
    problem: String,
    #[serde(default)]
    observed: String,
    #[serde(default)]
    expected: String,
    #[serde(default)]
    steps: Vec<String>,
    symptom_class: String,
    #[serde(default)]
    error_type: Option<String>,
    #[serde(default)]
    framework: Option<String>,
}

impl LlmRestructure {
    /// The answer's `Label: value` lines, or the JSON object a larger model may write
    /// instead; `None` without a symptom.
    fn read(answer: &str) -> Option<Self> {
        if let Some(parsed) = json_in_answer(answer).and_then(|json| serde_json::from_str::<Self>(json).ok()) {
            return Some(parsed);
        }
        let lines = labelled_lines(answer);
        let none = |value: &String| {
            matches!(
                value.to_lowercase().trim_end_matches('.'),
                "none" | "null" | "n/a" | "-"
            )
        };
        let field = |label: &str| {
            lines
                .iter()
                .find(|(l, _)| l == label)
                .map(|(_, value)| value.clone())
                .filter(|value| !value.is_empty())
        };
        Some(Self {
            problem: String::new(),
            observed: field("observed").filter(|v| !none(v)).unwrap_or_default(),
            expected: field("expected").filter(|v| !none(v)).unwrap_or_default(),
            steps: Vec::new(),
            symptom_class: first_class_in(&field("symptom")?),
            error_type: field("error_type")
                .filter(|e| !none(e))
                .and_then(|e| {
                    e.split([' ', ':', '('])
                        .next()
                        .map(|t| t.trim_matches(['`', '.', '"']).to_owned())
                })
                .filter(|e| !e.is_empty()),
            framework: None,
        })
    }
}

/// The symptom class a free-form value names first (`wrong_calculation; Error type: none`
/// names `wrong_calculation`), else the value as written, for the error message.
fn first_class_in(value: &str) -> String {
    let lower = value.to_lowercase().replace([' ', '-'], "_");
    SymptomClass::ALL
        .iter()
        .filter_map(|c| lower.find(c.as_str()).map(|at| (at, c.as_str())))
        .min()
        .map_or_else(
            || value.trim_matches(['`', '"', '\'', '.']).to_owned(),
            |(_, c)| c.to_owned(),
        )
}

fn parse_class(name: &str) -> Option<SymptomClass> {
    let name = name.trim().to_lowercase().replace([' ', '-'], "_");
    SymptomClass::ALL.into_iter().find(|c| c.as_str() == name)
}

/// Restructures `report`: the rules, refined by `llm` when one is given. The second
/// value says why an LLM answer was not used, when it was not.
pub async fn restructure(
    report: &ParsedReport,
    llm: Option<&dyn Llm>,
    on_token: &mut (dyn FnMut(&str) + Send),
) -> (RestructuredReport, Option<String>) {
    let rules = restructure_rules(report);
    let Some(llm) = llm else { return (rules, None) };
    let classes: Vec<&str> = SymptomClass::ALL.iter().map(|c| c.as_str()).collect();
    let messages = [
        ChatMessage::system(format!(
            "You read deep-learning bug reports (task: restructure). Answer with exactly these four lines and nothing else:\n\
             Symptom: one of {classes:?}\n\
             Error type: the exception's class name when the program crashes (e.g. ValueError), else none\n\
             Observed: what goes wrong, in one sentence with the report's numbers and messages\n\
             Expected: what should happen instead, in one sentence\n\
             A report that says nothing crashes is never `crash`."
        )),
        ChatMessage::user(format!(
            "Bug report:\n{}\n\nCode:\n{}\n\nThe rules' guess: Symptom: {}; Error type: {}",
            report.text(),
            report.code().join("\n\n"),
            rules.symptom.class.as_str(),
            rules.symptom.error_type.as_deref().unwrap_or("none"),
        )),
    ];
    let params = GenParams {
        temperature: 0.0,
        ..GenParams::new(LlmTask::Restructure, 200)
    };
    let answer = match llm.complete(&messages, &params, on_token).await {
        Ok(answer) => answer,
        Err(e) => {
            return (
                rules,
                Some(format!("the LLM could not refine the report ({e}); using the rules")),
            );
        }
    };
    let Some(refined) = LlmRestructure::read(&answer) else {
        return (
            rules,
            Some(
                "the LLM's restructuring named no symptom (neither the lines nor the JSON asked for); using the rules"
                    .to_owned(),
            ),
        );
    };
    let Some(mut class) = parse_class(&refined.symptom_class) else {
        return (
            rules,
            Some(format!(
                "the LLM named an unknown symptom class `{}`; using the rules",
                refined.symptom_class
            )),
        );
    };
    // A crash leaves evidence a report quotes: a traceback, an exception's name, the word
    // itself. Where the report has none, a small model's `crash` is a guess, and accepting
    // a script on it would claim a reproduction of a bug the report never had. Where it
    // names the exception it raised, the model's other class is the guess: the checks would
    // then refuse every run that raises the reported exception.
    let mut note = None;
    if class == SymptomClass::Crash && classify(report.text()).class != SymptomClass::Crash {
        class = rules.symptom.class;
        note = Some(format!(
            "the LLM called the report a crash, but it quotes no exception, traceback or crash; keeping the rules' symptom `{}`",
            class.as_str()
        ));
    } else if class != SymptomClass::Crash
        && rules.symptom.class == SymptomClass::Crash
        && let Some(raised) = &rules.symptom.error_type
    {
        note = Some(format!(
            "the LLM called the report `{}`, but it quotes a crash ({raised}); keeping the rules' symptom `crash`",
            class.as_str()
        ));
        class = SymptomClass::Crash;
    }
    let pick = |llm_text: String, rule_text: &str| {
        if llm_text.trim().is_empty() {
            rule_text.to_owned()
        } else {
            llm_text
        }
    };
    let observed = pick(refined.observed, &rules.observed);
    let mut cues = rules.symptom.cues.clone();
    for cue in classify(&observed).cues {
        if !cues.contains(&cue) {
            cues.push(cue);
        }
    }
    let error_type = if class == SymptomClass::Crash {
        refined
            .error_type
            .filter(|e| !e.trim().is_empty())
            .or(rules.symptom.error_type.clone())
    } else {
        None
    };
    let steps = if refined.steps.is_empty() {
        rules.steps.clone()
    } else {
        refined.steps
    };
    (
        RestructuredReport {
            problem: pick(refined.problem, &rules.problem),
            observed,
            expected: pick(refined.expected, &rules.expected),
            steps,
            symptom: Symptom {
                class,
                error_type,
                cues,
            },
            framework: refined.framework.filter(|f| !f.trim().is_empty()).or(rules.framework),
            refined_by_llm: true,
        },
        note,
    )
}

/// The restructuring without its stage: the report's own fields, classified as they are.
pub fn unstructured(report: &ParsedReport) -> RestructuredReport {
    let problem = [report.title.as_str(), &report.description, &report.free_text]
        .iter()
        .filter(|t| !t.trim().is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("\n\n");
    let symptom = classify(&format!("{problem}\n{}", report.observed));
    let framework = detect_framework(&format!("{}\n{}", report.code().join("\n"), report.text()));
    RestructuredReport {
        problem,
        observed: report.observed.clone(),
        expected: report.expected.clone(),
        steps: Vec::new(),
        symptom,
        framework,
        refined_by_llm: false,
    }
}

/// [`restructure_rules`] of a report read here, for tests.
#[cfg(test)]
pub(crate) fn rules_of(report: replayground_shared::repro::BugReport) -> RestructuredReport {
    restructure_rules(&ParsedReport::from(report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{ScriptedLlm, ScriptedReply};
    use replayground_shared::repro::BugReport;

    #[test]
    fn a_warning_in_the_headline_makes_a_warning_report() {
        let report = rules_of(BugReport {
            free_text: "# \"invalid value encountered in divide\" and NaN features\n\nThe column is constant.\n".into(),
            ..BugReport::default()
        });
        assert_eq!(report.symptom.class, SymptomClass::Warning);
        let nan = rules_of(BugReport {
            free_text: "# Loss becomes nan\n\n```\nRuntimeWarning: divide by zero encountered in log\nloss nan\n```\n"
                .into(),
            ..BugReport::default()
        });
        assert_eq!(nan.symptom.class, SymptomClass::WrongCalculation);
    }

    #[tokio::test]
    async fn an_llm_refines_and_bad_json_falls_back() {
        let report = ParsedReport::from(BugReport {
            title: "loss goes nan".into(),
            ..BugReport::default()
        });
        let good = r#"Sure: {"problem": "NaN loss", "observed": "loss is nan at epoch 2", "expected": "finite loss", "steps": ["train"], "symptom_class": "wrong calculation", "error_type": null, "framework": "torch"}"#;
        let llm = ScriptedLlm::new(vec![
            ScriptedReply::Any(good.into()),
            ScriptedReply::Any("I think it is a NaN".into()),
        ]);
        let (refined, note) = restructure(&report, Some(&llm), &mut |_| {}).await;
        assert!(note.is_none());
        assert!(refined.refined_by_llm);
        assert_eq!(refined.symptom.class, SymptomClass::WrongCalculation);
        assert_eq!(refined.framework.as_deref(), Some("torch"));
        assert_eq!(refined.observed, "loss is nan at epoch 2");
        let (fallback, note) = restructure(&report, Some(&llm), &mut |_| {}).await;
        assert!(!fallback.refined_by_llm);
        assert!(note.unwrap().contains("named no symptom"));
        assert_eq!(fallback, restructure_rules(&report));
    }

    #[tokio::test]
    async fn a_crash_the_report_never_mentions_is_not_believed() {
        let report = ParsedReport::from(BugReport {
            title: "accuracy stays at 0.43".into(),
            observed: "Epoch 20/20 - loss: 0.2469 - acc: 0.4366".into(),
            expected: "an accuracy near the SVM's 0.89".into(),
            ..BugReport::default()
        });
        let crash = "Symptom: crash\nError type: ValueError\nObserved: the model fails\nExpected: it trains\n";
        let llm = ScriptedLlm::new(vec![ScriptedReply::Any(crash.into()), ScriptedReply::Any(crash.into())]);
        let (refined, note) = restructure(&report, Some(&llm), &mut |_| {}).await;
        let rules = restructure_rules(&report);
        assert_ne!(rules.symptom.class, SymptomClass::Crash);
        assert_eq!(refined.symptom.class, rules.symptom.class);
        assert_eq!(refined.symptom.error_type, None, "no exception type without a crash");
        assert!(note.unwrap().contains("quotes no exception"));

        let traceback = ParsedReport::from(BugReport {
            title: "fit fails".into(),
            observed: "ValueError: Shapes (None, 3) and (None, 1) are incompatible".into(),
            ..BugReport::default()
        });
        let (refined, note) = restructure(&traceback, Some(&llm), &mut |_| {}).await;
        assert!(note.is_none(), "{note:?}");
        assert_eq!(refined.symptom.class, SymptomClass::Crash);
    }

    #[tokio::test]
    async fn a_quoted_crash_stays_a_crash_whatever_the_llm_calls_it() {
        let report = ParsedReport::from(BugReport {
            title: "error when modifying an unpacked tensor".into(),
            observed: "Traceback (most recent call last):\n  ...\nRuntimeError: a view was created in no_grad mode and is being modified inplace"
                .into(),
            ..BugReport::default()
        });
        let rules = restructure_rules(&report);
        assert_eq!(rules.symptom.class, SymptomClass::Crash);
        let silent =
            "Symptom: wrong_calculation\nError type: none\nObserved: the values are wrong\nExpected: they are right\n";
        let llm = ScriptedLlm::new(vec![ScriptedReply::Any(silent.into())]);
        let (refined, note) = restructure(&report, Some(&llm), &mut |_| {}).await;
        assert_eq!(refined.symptom.class, SymptomClass::Crash);
        assert_eq!(refined.symptom.error_type.as_deref(), Some("RuntimeError"));
        assert!(note.unwrap().contains("quotes a crash"));
        assert_eq!(
            refined.observed, "the values are wrong",
            "the rest of the LLM's answer is kept"
        );
    }

    #[tokio::test]
    async fn a_small_models_labelled_lines_are_read() {
        let report = ParsedReport::from(BugReport {
            title: "matmul fails".into(),
            observed: "It prints the wrong shape; no crash.".into(),
            ..BugReport::default()
        });
        let lines = "**Symptom:** crash\nError type: `ValueError: shapes (3,4) and (3,4) not aligned`\nObserved: the product\nfails at line 3\nExpected: none.\n";
        let silent =
            "1. Symptom: Wrong shape; Error type: none\n2. Error type: none\n3. Observed: (4, 3) instead of (3, 3)\n";
        let llm = ScriptedLlm::new(vec![
            ScriptedReply::Any(lines.into()),
            ScriptedReply::Any(silent.into()),
        ]);
        let (refined, note) = restructure(&report, Some(&llm), &mut |_| {}).await;
        assert!(note.is_none(), "{note:?}");
        assert_eq!(refined.symptom.class, SymptomClass::Crash);
        assert_eq!(refined.symptom.error_type.as_deref(), Some("ValueError"));
        assert_eq!(
            refined.observed, "the product fails at line 3",
            "a line without a label continues the value"
        );
        let (refined, _) = restructure(&report, Some(&llm), &mut |_| {}).await;
        assert_eq!(refined.symptom.class, SymptomClass::WrongShape);
        assert_eq!(refined.symptom.error_type, None);
        assert_eq!(refined.observed, "(4, 3) instead of (3, 3)");
        assert_eq!(
            refined.problem,
            restructure_rules(&report).problem,
            "the rules keep the problem"
        );
    }
}
