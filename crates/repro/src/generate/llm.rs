//! The LLM generator: the generation prompt (report, plan, the report's code, the
//! context, and the previous attempt with its feedback when refining), the code taken
//! from the answer, then the edit actions as tools over the draft.

use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::Regex;

use super::rules::polish_draft;
use super::{Candidate, GenInput};
use crate::edits::re;
use crate::llm::{ChatMessage, GenParams, Llm, LlmError, LlmTask};

/// The code of an LLM's answer: its first `` ```python `` block (an unclosed one up to the
/// end), or the whole answer when it has no fence.
pub fn extract_code(answer: &str) -> String {
    static FENCED: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?s)```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)(?:```|\z)"));
    match FENCED.captures(answer) {
        Some(c) => c[1].trim_end().to_owned() + "\n",
        None => answer.trim().to_owned() + "\n",
    }
}

/// Characters of project context put into a prompt.
const MAX_CONTEXT_CHARS: usize = 6000;

/// The generation prompt: report, plan, the report's code, the context, and the
/// previous attempt with its feedback when refining.
pub fn generation_messages(input: &GenInput<'_>, previous: Option<(&Candidate, &str)>) -> Vec<ChatMessage> {
    let r = input.restructured;
    let mut user = String::new();
    let _ = writeln!(
        user,
        "Problem:\n{}\n\nObserved:\n{}\n\nExpected:\n{}",
        r.problem, r.observed, r.expected
    );
    let _ = writeln!(
        user,
        "\nSymptom: {} {}",
        r.symptom.class.as_str(),
        r.symptom.error_type.as_deref().unwrap_or("")
    );
    if let Some(framework) = &r.framework {
        let _ = writeln!(user, "Framework: {framework}");
    }
    if !input.plan.is_empty() {
        user.push_str("\nPlan:\n");
        for (i, step) in input.plan.iter().enumerate() {
            let _ = writeln!(user, "{}. [{:?}] {}", i + 1, step.kind, step.description);
        }
    }
    let snippets = input.report.code();
    if !snippets.is_empty() {
        let _ = writeln!(
            user,
            "\nCode from the report:\n```python\n{}\n```",
            snippets.join("\n\n")
        );
    }
    if let Some(context) = input.context {
        let code: String = context.code.chars().take(MAX_CONTEXT_CHARS).collect();
        let _ = writeln!(
            user,
            "\nRelevant project code ({} `{}`), one `# --- file ---` header per file:\n```python\n{code}\n```",
            context.path, context.name
        );
    }
    if !input.project_modules.is_empty() {
        let _ = writeln!(
            user,
            "\nThe project's modules are importable: {}. Import what you need from them \
             (e.g. `from {} import ...`) instead of copying their code.",
            input.project_modules.iter().take(20).cloned().collect::<Vec<_>>().join(", "),
            input.project_modules[0]
        );
    }
    match previous {
        Some((candidate, feedback)) => {
            let _ = writeln!(
                user,
                "\nYour previous script:\n```python\n{}```\nFeedback on it:\n{feedback}\n\nWrite the corrected, complete script.",
                candidate.code
            );
        }
        None => user.push_str("\nWrite the reproduction script.\n"),
    }
    vec![
        ChatMessage::system(
            "You write minimal Python scripts that reproduce deep-learning bugs (task: generate). \
             Write one script. Use the libraries of the report; replace data files with small synthetic data \
             that fits what the code does with it (0/1 labels for a log-loss, class indices below the number of classes, \
             the sizes the report states); fix the random seeds; keep training to a few iterations; \
             print the values that show the bug (loss, shapes, metrics). Keep the bug: do not fix it, \
             work around it or catch the exception that is the bug. Answer with exactly one ```python code block.",
        ),
        ChatMessage::user(user),
    ]
}

/// A candidate from an LLM, streamed to `on_token`.
pub async fn llm_candidate(
    llm: &dyn Llm,
    input: &GenInput<'_>,
    previous: Option<(&Candidate, &str)>,
    seed: u64,
    on_token: &mut (dyn FnMut(&str) + Send),
) -> Result<Candidate, LlmError> {
    let messages = generation_messages(input, previous);
    let params = GenParams {
        seed,
        ..GenParams::new(LlmTask::Generate, 900)
    };
    let answer = llm.complete(&messages, &params, on_token).await?;
    let mut code = extract_code(&answer);
    let mut edits = vec![match previous {
        Some(_) => format!("{} refined the previous script with the checks' feedback", llm.name()),
        None => format!("written by {} from the report, the plan and the context", llm.name()),
    }];
    edits.extend(polish_draft(input, &mut code));
    Ok(Candidate { code, edits })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ParsedReport;
    use crate::restructure::restructure_rules;
    use replayground_shared::repro::BugReport;

    #[tokio::test]
    async fn an_llms_draft_goes_through_the_rules_as_tools() {
        use crate::llm::{ScriptedLlm, ScriptedReply};
        let report = ParsedReport::from(BugReport {
            observed: "The loss is nan after the first epoch.".into(),
            ..BugReport::default()
        });
        let restructured = restructure_rules(&report);
        let input = GenInput::of_report(&report, &restructured);
        // A draft without its imports or seeds, training for far too long.
        let draft = "Here it is:\n```python\nw = np.zeros(3)\nfor epoch in range(500000):\n    w -= 0.1 * np.ones(3)\nprint(w)\n```\n";
        let llm = ScriptedLlm::new(vec![ScriptedReply::Any(draft.into())]);
        let candidate = llm_candidate(&llm, &input, None, 0, &mut |_| {}).await.unwrap();
        assert!(candidate.code.starts_with("import numpy as np\n"), "{}", candidate.code);
        assert!(candidate.code.contains("np.random.seed(0)"), "{}", candidate.code);
        assert!(candidate.code.contains("range(10000)"), "{}", candidate.code);
        assert!(candidate.code.contains("print(w)"), "the draft's own output stays");
        assert!(
            candidate.edits[0].starts_with("written by scripted"),
            "{:?}",
            candidate.edits
        );
        assert!(
            candidate.edits.iter().any(|e| e.starts_with("shrank loops")),
            "{:?}",
            candidate.edits
        );
    }

    #[test]
    fn code_is_taken_from_the_answer() {
        assert_eq!(extract_code("Here:\n```python\nprint(1)\n```\nDone."), "print(1)\n");
        assert_eq!(extract_code("```\nx = 1\n"), "x = 1\n");
        assert_eq!(extract_code("print(2)"), "print(2)\n");
    }
}
