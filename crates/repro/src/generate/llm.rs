//! The LLM generator: the generation prompt (report, plan, the report's code, the
//! context, and the previous attempt with its feedback when refining), the code taken
//! from the answer, then the edit actions as tools over the draft.

use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::Regex;

use super::rules::{polish_draft, rule_candidate};
use super::{Candidate, GenInput};
use crate::edits::{OBSERVER_MARK, re};
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

/// Lines at column 0 that continue the statement before them.
const CONTINUES: [&str; 7] = [")", "]", "}", "else", "elif", "except", "finally"];

/// The top-level blocks of `continuation` (a statement at column 0 with its indented
/// lines) that `draft` does not already hold, up to where the continuation starts
/// looping: small models asked to continue a script often repeat it first, file markers
/// and all, or go round their own lines until the token limit.
fn new_blocks(draft: &str, continuation: &str) -> String {
    let known: String = normalized(draft);
    let mut blocks: Vec<String> = Vec::new();
    for line in continuation.lines() {
        let starts_block =
            !line.starts_with([' ', '\t']) && !line.trim().is_empty() && !CONTINUES.iter().any(|c| line.starts_with(c));
        if starts_block || blocks.is_empty() {
            blocks.push(String::new());
        }
        if let Some(block) = blocks.last_mut() {
            block.push_str(line);
            block.push('\n');
        }
    }
    let is_marker = |block: &str| block.trim().starts_with("# ---") && block.trim().ends_with("---");
    let blocks: Vec<String> = blocks
        .into_iter()
        .filter(|block| {
            let n = normalized(block);
            !n.is_empty() && !is_marker(block) && !known.contains(&n)
        })
        .collect();
    let end = loop_start(&blocks.iter().map(|b| normalized(b)).collect::<Vec<_>>());
    blocks[..end].concat()
}

/// Code with its whitespace runs made single spaces.
fn normalized(code: &str) -> String {
    code.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where `blocks` start going round in a loop: the end of the first of three copies in a
/// row of some run of blocks (the third may be cut short, mid-block too). Two copies are
/// kept, since a script may well do the same thing twice (a non-determinism shown by two
/// runs).
fn loop_start(blocks: &[String]) -> usize {
    let n = blocks.len();
    // `cut` is `whole` up to its last block, which may stop early.
    let starts = |cut: &[String], whole: &[String]| {
        !cut.is_empty()
            && cut.len() <= whole.len()
            && cut
                .iter()
                .zip(whole)
                .enumerate()
                .all(|(i, (c, w))| c == w || (i + 1 == cut.len() && w.starts_with(c.as_str())))
    };
    for start in 0..n {
        for period in 1..=(n - start) / 2 {
            let copy = |k: usize| &blocks[(start + k * period).min(n)..(start + (k + 1) * period).min(n)];
            if copy(1) == copy(0) && starts(copy(2), copy(0)) {
                return start + period;
            }
        }
    }
    n
}

/// Characters of project context put into a prompt.
const MAX_CONTEXT_CHARS: usize = 6000;

/// How the LLM is asked for a script.
#[derive(Debug, Clone, Copy)]
pub enum Ask<'a> {
    /// The whole script, from the report alone.
    Script,
    /// The lines that go after the tools' draft (the report's code and the project's,
    /// assembled by the rule-based edits): short answers a small model gets right more
    /// often than a whole script, and writes in seconds.
    Continue { draft: &'a str },
    /// The previous script corrected from its feedback.
    Refine { previous: &'a Candidate, feedback: &'a str },
    /// Other lines after the draft in place of `lines`, the LLM's previous ones, which
    /// ran without showing the bug: a short answer instead of the whole script retyped
    /// (where small models drop or break the draft's lines).
    Replace {
        draft: &'a str,
        lines: &'a str,
        feedback: &'a str,
    },
}

impl Ask<'_> {
    /// Whether the answer goes after a draft, started by [`CONTINUE_PREFILL`].
    fn appends(self) -> bool {
        matches!(self, Ask::Continue { .. } | Ask::Replace { .. })
    }
}

/// A previous attempt, as a refinement reads it.
#[derive(Debug, Clone, Copy)]
pub struct Prior<'a> {
    pub candidate: &'a Candidate,
    pub feedback: &'a str,
    /// The script's top-level line that raised, when its run crashed.
    pub crash_line: Option<u32>,
    /// The script's innermost line in the traceback, when its run crashed.
    pub error_line: Option<u32>,
}

impl Prior<'_> {
    /// The feedback with the script's line that raised, which a small model otherwise
    /// has to find from the message alone.
    fn feedback_with_line(&self) -> String {
        let line = self
            .error_line
            .and_then(|n| {
                self.candidate
                    .code
                    .lines()
                    .nth(usize::try_from(n).ok()?.checked_sub(1)?)
            })
            .map(str::trim)
            .filter(|line| !line.is_empty());
        match line {
            Some(line) => format!(
                "{}
The exception came from this line of the script: `{line}`",
                self.feedback
            ),
            None => self.feedback.to_owned(),
        }
    }
}

/// The draft and the lines an LLM appended to it (the prefill's comment up to the
/// observer), when `code` is such a script; with the 1-based line the appended lines
/// start at.
fn appended_lines(code: &str) -> Option<(&str, &str, u32)> {
    let comment = appended_comment();
    let start = code.find(comment)?;
    let end = code[start..].find(OBSERVER_MARK).map_or(code.len(), |i| start + i);
    let line = u32::try_from(code[..start].lines().count()).ok()? + 1;
    Some((&code[..start], &code[start + comment.len()..end], line))
}

/// The generation prompt: report, plan, the report's code, the context, and what is
/// asked (see [`Ask`]).
pub fn generation_messages(input: &GenInput<'_>, ask: Ask<'_>) -> Vec<ChatMessage> {
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
    if let (Some(context), false) = (input.context, ask.appends()) {
        let code: String = context.code.chars().take(MAX_CONTEXT_CHARS).collect();
        let _ = writeln!(
            user,
            "\nRelevant project code ({} `{}`):\n```python\n{code}\n```",
            context.path, context.name
        );
    }
    match ask {
        Ask::Refine { previous, feedback } => {
            let _ = writeln!(
                user,
                "\nYour previous script:\n```python\n{}```\nFeedback on it:\n{feedback}\n\nWrite the corrected, complete script.",
                previous.code
            );
        }
        Ask::Replace { draft, lines, feedback } => {
            let draft: String = draft.chars().take(MAX_CONTEXT_CHARS).collect();
            let _ = writeln!(
                user,
                "\nThe tools assembled this draft from the report's code and the project:\n```python\n{draft}\n```\n\
                 After it you appended:\n```python\n{}\n```\nRunning it gave:\n{feedback}\n\n\
                 Write other lines to append to the draft in their place so that running it shows the bug: \
                 data that fits the code, the calls that trigger the bug, and prints of the values the report talks about. \
                 Do not repeat the draft.",
                lines.trim()
            );
        }
        Ask::Continue { draft } => {
            let draft: String = draft.chars().take(MAX_CONTEXT_CHARS).collect();
            let _ = writeln!(
                user,
                "\nThe tools assembled this draft from the report's code and the project:\n```python\n{draft}\n```\n\
                 Write only the lines to append at its end so that running it shows the bug: data that fits the code, \
                 the calls that trigger the bug, and prints of the values the report talks about. Do not repeat the draft."
            );
        }
        Ask::Script => user.push_str("\nWrite the reproduction script.\n"),
    }
    let mut messages = vec![
        ChatMessage::system(
            "You write minimal Python scripts that reproduce deep-learning bugs (task: generate). \
             Write one script. Use the libraries of the report; replace data files with small synthetic data \
             that fits what the code does with it (0/1 labels for a log-loss, class indices below the number of classes, \
             the sizes the report states); fix the random seeds; keep training to a few iterations; \
             print the values that show the bug (loss, shapes, metrics). Keep the bug: do not fix it, \
             work around it or catch the exception that is the bug. Answer with exactly one ```python code block.",
        ),
        ChatMessage::user(user),
    ];
    if ask.appends() {
        messages.push(ChatMessage::assistant(CONTINUE_PREFILL));
    }
    messages
}

/// The start of the answer a continuation is given (a prefill): it steers a small model
/// into writing the new lines instead of repeating the draft.
const CONTINUE_PREFILL: &str =
    "```python\n# Synthetic inputs that fit the code above, then the calls that show the bug\n";

/// The comment line of [`CONTINUE_PREFILL`], which starts the lines an LLM appends.
fn appended_comment() -> &'static str {
    CONTINUE_PREFILL.trim_start_matches("```python\n")
}

/// The answer with the prefill it continued, unless it started a code block of its own (a
/// backend that does not continue a last assistant turn).
fn with_prefill(ask: Ask<'_>, answer: String) -> String {
    if ask.appends() && !answer.trim_start().starts_with("```") {
        format!("{CONTINUE_PREFILL}{answer}")
    } else {
        answer
    }
}

/// Which sample of the LLM a draft is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Draw {
    pub seed: u64,
    /// How many drafts in a row before this one repeated an earlier script: each raises
    /// the temperature, so that a rewrite which keeps coming back the same is sampled
    /// more widely instead of ending the refinement.
    pub repeats: u32,
}

impl Draw {
    /// 0.2 for a first try (close to greedy, what small models write best), then 0.6,
    /// then 1.0 at most.
    pub fn temperature(self) -> f64 {
        f64::from(2 + 4 * self.repeats.min(2)) / 10.0
    }
}

/// A candidate from an LLM, streamed to `on_token`: the first continues the tools' draft
/// (a whole script when the report has no code and no context), later ones correct the
/// previous script from its feedback; every draft then goes through the rules as tools.
pub async fn llm_candidate(
    llm: &dyn Llm,
    input: &GenInput<'_>,
    previous: Option<Prior<'_>>,
    draw: Draw,
    on_token: &mut (dyn FnMut(&str) + Send),
) -> Result<Candidate, LlmError> {
    // The rules' draft is needed only for a first candidate.
    let tools = previous.is_none().then(|| rule_candidate(input));
    let (draft, observer) = match (&tools, previous) {
        (Some(tools), _) => split_observer(&tools.code),
        (None, Some(prior)) => split_observer(&prior.candidate.code),
        (None, None) => ("", ""),
    };
    let has_draft = tools.as_ref().is_some_and(|t| !t.is_skeleton());
    let feedback = previous.map(|prior| prior.feedback_with_line());
    let (ask, max_tokens) = match (previous, feedback.as_deref()) {
        (Some(prior), Some(feedback)) => match appended_lines(&prior.candidate.code) {
            // The appended lines ran (a crash in the draft needs the draft changed).
            Some((draft, lines, start)) if prior.crash_line.is_none_or(|line| line >= start) => {
                (Ask::Replace { draft, lines, feedback }, 400)
            }
            _ => (
                Ask::Refine {
                    previous: prior.candidate,
                    feedback,
                },
                900,
            ),
        },
        _ if has_draft => (Ask::Continue { draft }, 400),
        _ => (Ask::Script, 900),
    };
    let messages = generation_messages(input, ask);
    let params = GenParams {
        seed: draw.seed,
        temperature: draw.temperature(),
        ..GenParams::new(LlmTask::Generate, max_tokens)
    };
    let answer = with_prefill(ask, llm.complete(&messages, &params, on_token).await?);
    let (mut code, mut edits) = match ask {
        Ask::Refine { .. } => (
            extract_code(&answer),
            vec![format!(
                "{} refined the previous script with the checks' feedback",
                llm.name()
            )],
        ),
        Ask::Continue { draft } | Ask::Replace { draft, .. } => {
            let mut edits = tools.as_ref().map(|t| t.edits.clone()).unwrap_or_default();
            edits.push(if matches!(ask, Ask::Continue { .. }) {
                format!("{} wrote the lines after the tools' draft", llm.name())
            } else {
                format!(
                    "{} replaced the lines after the tools' draft from the checks' feedback",
                    llm.name()
                )
            });
            // The prefill's comment marks where the LLM's lines start, for a later
            // refinement to replace them (see `appended_lines`).
            let mut code = format!("{}\n\n{}", draft.trim_end(), appended_comment());
            code.push_str(&new_blocks(&code, &extract_code(&answer)));
            (code, edits)
        }
        Ask::Script => (
            extract_code(&answer),
            vec![format!(
                "written by {} from the report, the plan and the context",
                llm.name()
            )],
        ),
    };
    if answer_was_cut(&answer)
        && let Some(edit) = drop_unfinished_tail(&mut code)
    {
        edits.push(edit);
    }
    if ask.appends() && !observer.is_empty() {
        code.push('\n');
        code.push_str(observer);
    }
    edits.extend(polish_draft(input, &mut code));
    Ok(Candidate { code, edits })
}

/// A script split before the observer the tools append (the second part is empty without one).
fn split_observer(code: &str) -> (&str, &str) {
    code.split_at(code.find(OBSERVER_MARK).unwrap_or(code.len()))
}

/// Whether an answer stopped inside its code block (the token limit cut it).
fn answer_was_cut(answer: &str) -> bool {
    answer
        .find("```")
        .is_some_and(|open| !answer[open + 3..].contains("```"))
}

/// Drops the last top-level statement of a script that does not parse when the script
/// parses without it: what an answer cut by the token limit leaves unfinished.
fn drop_unfinished_tail(code: &mut String) -> Option<String> {
    if crate::checks::structural(code).passed {
        return None;
    }
    let mut start = 0;
    let mut last_block = None;
    for line in code.split_inclusive('\n') {
        if !line.starts_with([' ', '\t', '\n', '#', ')', ']', '}']) && !line.trim().is_empty() {
            last_block = Some(start);
        }
        start += line.len();
    }
    let cut = code[..last_block?].to_owned();
    crate::checks::structural(&cut).passed.then(|| {
        let dropped = code[cut.len()..].lines().count();
        *code = cut;
        format!("dropped the unfinished last statement ({dropped} line(s)): the answer was cut at the token limit")
    })
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
        let candidate = llm_candidate(&llm, &input, None, Draw::default(), &mut |_| {})
            .await
            .unwrap();
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

    /// A report whose code defines a loss and never calls it.
    fn loss_report() -> (ParsedReport, replayground_shared::repro::RestructuredReport) {
        let report = ParsedReport::from(BugReport {
            title: "loss is nan".into(),
            snippets: vec!["def loss(p):\n    return -np.log(p).mean()\n".into()],
            ..BugReport::default()
        });
        let restructured = restructure_rules(&report);
        (report, restructured)
    }

    #[tokio::test]
    async fn a_first_draft_continues_the_tools_draft() {
        use crate::llm::{ScriptedLlm, ScriptedReply};
        let (report, restructured) = loss_report();
        let input = GenInput::of_report(&report, &restructured);
        let llm = ScriptedLlm::new(vec![ScriptedReply::Any(
            "```python\np = np.array([0.0, 0.5])\nprint('loss', loss(p))\n```".into(),
        )]);
        let candidate = llm_candidate(&llm, &input, None, Draw::default(), &mut |_| {})
            .await
            .unwrap();
        let (definition, call) = (
            candidate.code.find("def loss(p)").expect("the report's code is kept"),
            candidate
                .code
                .find("print('loss', loss(p))")
                .expect("the LLM's lines are added"),
        );
        assert!(definition < call, "{}", candidate.code);
        if let Some(observer) = candidate.code.find(OBSERVER_MARK) {
            assert!(call < observer, "the observer stays last: {}", candidate.code);
        }
        let prompt = &llm.prompts()[0].1;
        assert!(prompt.contains("Write only the lines to append"), "{prompt}");
        // Without its own fence, an answer continues the prefill.
        let continued = with_prefill(Ask::Continue { draft: "" }, "x = 1\n```".to_owned());
        assert_eq!(extract_code(&continued), format!("{}x = 1\n", appended_comment()));
        assert!(
            candidate
                .edits
                .iter()
                .any(|e| e.contains("wrote the lines after the tools' draft")),
            "{:?}",
            candidate.edits
        );
    }

    #[tokio::test]
    async fn a_refinement_replaces_the_lines_it_appended_unless_the_draft_crashed() {
        use crate::llm::{ScriptedLlm, ScriptedReply};
        let (report, restructured) = loss_report();
        let input = GenInput::of_report(&report, &restructured);
        let llm = ScriptedLlm::new(vec![ScriptedReply::Any(
            "```python\np = np.array([0.5, 0.5])\nprint('loss', loss(p))\n```".into(),
        )]);
        let first = llm_candidate(&llm, &input, None, Draw::default(), &mut |_| {})
            .await
            .unwrap();
        let (_, lines, start) = appended_lines(&first.code).expect("the first draft appends lines");
        assert!(lines.contains("np.array([0.5, 0.5])"), "{lines}");

        // The appended lines ran without showing the bug: only they are asked for again.
        let llm = ScriptedLlm::new(vec![ScriptedReply::Any(
            "p = np.array([0.0, 1.0])\nprint('loss', loss(p))\n```".into(),
        )]);
        let prior = Prior {
            candidate: &first,
            feedback: "Runtime check failed: it ran and looks like no anomaly.",
            crash_line: None,
            error_line: None,
        };
        let second = llm_candidate(&llm, &input, Some(prior), Draw::default(), &mut |_| {})
            .await
            .unwrap();
        let prompt = &llm.prompts()[0].1;
        assert!(
            prompt.contains("After it you appended") && prompt.contains("[0.5, 0.5]"),
            "{prompt}"
        );
        assert!(second.code.contains("np.array([0.0, 1.0])"), "{}", second.code);
        assert!(
            !second.code.contains("[0.5, 0.5]"),
            "the old lines are replaced: {}",
            second.code
        );
        assert!(second.code.contains("def loss(p)"), "the draft stays: {}", second.code);
        assert_eq!(
            second.code.matches(OBSERVER_MARK).count(),
            first.code.matches(OBSERVER_MARK).count(),
            "{}",
            second.code
        );

        // A crash inside the draft, before the appended lines: the whole script is rewritten.
        let llm = ScriptedLlm::new(vec![ScriptedReply::Any("```python\nprint(1)\n```".into())]);
        let prior = Prior {
            crash_line: Some(start - 1),
            error_line: Some(2),
            ..prior
        };
        llm_candidate(&llm, &input, Some(prior), Draw::default(), &mut |_| {})
            .await
            .unwrap();
        let prompt = &llm.prompts()[0].1;
        assert!(prompt.contains("Write the corrected, complete script"), "{prompt}");
        let second_line = first.code.lines().nth(1).unwrap().trim();
        assert!(
            prompt.contains(&format!(
                "The exception came from this line of the script: `{second_line}`"
            )),
            "the line that raised is named: {prompt}"
        );
    }

    #[test]
    fn a_continuation_that_repeats_the_draft_keeps_only_what_is_new() {
        let draft = "# --- train.py ---\nimport numpy as np\n\ndef fit(x):\n    return np.log(x)\n";
        let continuation = "# --- train.py ---\nimport numpy as np\n\ndef fit(x):\n    return  np.log(x)\n\nx = np.zeros(3)\nprint(fit(x))\nif x.any():\n    pass\nelse:\n    print('zero')\n";
        assert_eq!(
            new_blocks(draft, continuation),
            "x = np.zeros(3)\nprint(fit(x))\nif x.any():\n    pass\nelse:\n    print('zero')\n"
        );
        assert_eq!(new_blocks(draft, draft), "");
        // A model that goes round its own lines until the token limit: one round is kept.
        let looping = "y = 2\n# calls\nr = fit(x)\nprint(r)\n# calls\nr = fit(x)\nprint(r)\n# calls\nr = fi";
        assert_eq!(new_blocks(draft, looping), "y = 2\n# calls\nr = fit(x)\nprint(r)\n");
        // Twice may be meant (two runs that differ); three identical statements are a loop.
        let twice = "r = fit(x)\nprint(r)\nr = fit(x)\nprint(r)\n";
        assert_eq!(new_blocks(draft, twice), twice);
        assert_eq!(new_blocks(draft, "step()\nstep()\nstep()\nstep()\n"), "step()\n");
    }

    #[test]
    fn an_answer_cut_at_the_token_limit_loses_its_unfinished_statement() {
        assert!(answer_was_cut("Here:\n```python\nx = 1\nprint(x"));
        assert!(!answer_was_cut("```python\nx = 1\n```\nDone."));
        let mut code =
            "import numpy as np\nx = np.zeros(3)\nprint(x)\nfor i in range(3):\n    y = np.log(x[i]\n".to_owned();
        let edit = drop_unfinished_tail(&mut code).expect("the tail is unfinished");
        assert_eq!(code, "import numpy as np\nx = np.zeros(3)\nprint(x)\n");
        assert!(edit.contains("2 line(s)"), "{edit}");
        assert!(
            drop_unfinished_tail(&mut code).is_none(),
            "a script that parses is left alone"
        );
    }

    #[test]
    fn code_is_taken_from_the_answer() {
        assert_eq!(extract_code("Here:\n```python\nprint(1)\n```\nDone."), "print(1)\n");
        assert_eq!(extract_code("```\nx = 1\n"), "x = 1\n");
        assert_eq!(extract_code("print(2)"), "print(2)\n");
    }
}
