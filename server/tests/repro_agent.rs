//! The reproduction agent end to end, with the real sandbox: numpy bugs reproduce for
//! real without any model, a scripted LLM is refined by structural feedback, a run can
//! be cancelled, and a report that needs a missing framework is approximated, never
//! claimed as reproduced.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use replayground_server::neural::service::NeuralService;
use replayground_server::repro::agent::{AgentConfig, AgentDeps, run_agent};
use replayground_server::repro::llm::{Llm, LlmTask, ScriptedLlm, ScriptedReply};
use replayground_server::repro::project::Project;
use replayground_server::runner::DEFAULT_PYTHON;
use replayground_shared::repro::{AgentEvent, BugReport, CheckKind, ReproOutcome, SymptomClass};
use tokio_util::sync::CancellationToken;

fn deps(llm: Option<Arc<dyn Llm>>) -> AgentDeps {
    AgentDeps {
        llm,
        ..AgentDeps::without_models(common::real_sandbox(), DEFAULT_PYTHON.into(), None)
    }
}

/// Runs the agent and collects its events.
async fn reproduce(report: BugReport, deps: &AgentDeps) -> (ReproOutcome, Vec<AgentEvent>) {
    reproduce_in(report, None, deps).await
}

/// Runs the agent on a report about `project` and collects its events.
async fn reproduce_in(
    report: BugReport,
    project: Option<Arc<Project>>,
    deps: &AgentDeps,
) -> (ReproOutcome, Vec<AgentEvent>) {
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let collector = tokio::spawn(async move {
        let mut events = Vec::new();
        while let Some(event) = rx.recv().await {
            events.push(event);
        }
        events
    });
    let outcome = run_agent(
        report,
        project,
        deps,
        &AgentConfig::default(),
        tx,
        CancellationToken::new(),
    )
    .await;
    (outcome, collector.await.unwrap())
}

fn kinds(events: &[AgentEvent]) -> Vec<&'static str> {
    events
        .iter()
        .map(|e| match e {
            AgentEvent::Started { .. } => "started",
            AgentEvent::Progress { .. } => "progress",
            AgentEvent::Context { .. } => "context",
            AgentEvent::Report { .. } => "report",
            AgentEvent::Plan { .. } => "plan",
            AgentEvent::AttemptStarted { .. } => "attempt_started",
            AgentEvent::Token { .. } => "token",
            AgentEvent::Candidate { .. } => "candidate",
            AgentEvent::Check { .. } => "check",
            AgentEvent::AttemptFinished { .. } => "attempt_finished",
            AgentEvent::Finished { .. } => "finished",
            AgentEvent::Failed { .. } => "failed",
        })
        .collect()
}

fn runtime_verdicts(events: &[AgentEvent]) -> Vec<(u32, &replayground_shared::repro::CheckVerdict)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Check { attempt, verdict } if verdict.check == CheckKind::Runtime => Some((*attempt, verdict)),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nan_loss_reproduces_without_a_model() {
    let report = BugReport {
        title: "Binary cross-entropy loss becomes nan".into(),
        description: "My hand-written BCE returns nan as soon as a prediction is exactly 0 or 1.".into(),
        expected: "A finite loss.".into(),
        snippets: vec![
            "def bce(p, y):\n    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))\n\np = np.array([0.0, 0.5, 1.0])\ny = np.array([0, 1, 1])\nloss = bce(p, y)\nprint(\"loss:\", loss)\n".into(),
        ],
        ..BugReport::default()
    };
    let (outcome, events) = reproduce(report, &deps(None)).await;
    assert!(outcome.reproduced, "{outcome:?}\n{events:#?}");
    assert!(outcome.score >= 0.7);
    assert!(!outcome.approximated);
    assert_eq!(outcome.observed.as_ref().unwrap().class, SymptomClass::WrongCalculation);
    let script = outcome.script.unwrap();
    assert!(script.starts_with("import numpy as np"), "{script}");
    let order = kinds(&events);
    assert_eq!(&order[..2], &["started", "progress"]);
    assert!(order.contains(&"report") && order.contains(&"plan") && order.contains(&"token"));
    assert_eq!(order.iter().filter(|k| **k == "check").count(), 4, "{order:?}");
    assert_eq!(order.last(), Some(&"finished"));
    let (_, runtime) = runtime_verdicts(&events)[0];
    assert!(runtime.passed && !runtime.approximated, "{runtime:?}");
    assert!(runtime.detail.contains("nan"), "{}", runtime.detail);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shape_error_reproduces_from_a_snippet_missing_its_imports() {
    let report = BugReport {
        title: "np.dot fails in my linear layer".into(),
        observed: "Traceback (most recent call last):\n  File \"layer.py\", line 4, in <module>\n    out = np.dot(x, w)\nValueError: shapes (8,3) and (8,3) not aligned: 3 (dim 1) != 8 (dim 0)".into(),
        snippets: vec!["x = np.ones((8, 3))\nw = np.ones((8, 3))\nout = np.dot(x, w)\nprint(out.shape)".into()],
        ..BugReport::default()
    };
    let (outcome, events) = reproduce(report, &deps(None)).await;
    assert!(outcome.reproduced, "{outcome:?}\n{events:#?}");
    let observed = outcome.observed.unwrap();
    assert_eq!(observed.class, SymptomClass::Crash);
    assert_eq!(observed.error_type.as_deref(), Some("ValueError"));
    assert_eq!(outcome.attempts, 1);
    let edits = events.iter().find_map(|e| match e {
        AgentEvent::Candidate { edits, .. } => Some(edits.clone()),
        _ => None,
    });
    assert!(edits.unwrap().iter().any(|e| e.contains("import numpy as np")));
}

const ISSUE: &str = r#"### Describe the bug

Plain gradient descent on a linear regression diverges: with learning rate 1.5 the loss explodes to inf and then nan.

### To Reproduce

```python
X = np.load("features.npy")
w = np.zeros(X.shape[1], dtype=np.float)
y = X @ np.ones(X.shape[1])
lr = 1.5
for step in range(600):
    grad = 2 * X.T @ (X @ w - y) / len(y)
    w -= lr * grad
    loss = np.mean((X @ w - y) ** 2)
    if step % 100 == 0:
        print("step", step, "loss:", loss)
```

### Expected behavior

The loss goes down to 0.

### Environment

- numpy 1.24, Python 3.11
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_github_issue_is_restructured_and_reproduced() {
    let report = BugReport {
        free_text: ISSUE.into(),
        ..BugReport::default()
    };
    let (outcome, events) = reproduce(report, &deps(None)).await;
    let restructured = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Report { report } => Some(report.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(restructured.expected, "The loss goes down to 0.");
    assert_eq!(restructured.symptom.class, SymptomClass::WrongCalculation);
    assert_eq!(restructured.framework.as_deref(), Some("numpy"));
    assert!(outcome.reproduced, "{outcome:?}\n{events:#?}");
    let script = outcome.script.unwrap();
    assert!(
        !script.contains("features.npy") && !script.contains("np.float)"),
        "{script}"
    );
}

/// The agent on a report of an infinite loss, with `llm`'s scripts.
async fn reproduce_inf_loss(llm: &Arc<ScriptedLlm>) -> (ReproOutcome, Vec<AgentEvent>) {
    let report = BugReport {
        title: "loss is inf when a probability is 0".into(),
        observed: "loss: inf".into(),
        ..BugReport::default()
    };
    let llm: Arc<dyn Llm> = llm.clone();
    reproduce(report, &deps(Some(llm))).await
}

/// A scripted LLM answering each task's requests with its replies, in order.
fn scripted_replies(replies: &[(LlmTask, &str)]) -> Arc<ScriptedLlm> {
    Arc::new(ScriptedLlm::new(
        replies
            .iter()
            .map(|(task, reply)| ScriptedReply::For {
                task: *task,
                reply: (*reply).to_owned(),
            })
            .collect(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_llm_the_rules_rework_of_the_reports_code_runs_first() {
    // The snippet needs only its import: the rules' script shows the error at once, so
    // the LLM, whose draft would show nothing, is never asked for one.
    let report = BugReport {
        title: "np.dot fails in my linear layer".into(),
        observed: "ValueError: shapes (8,3) and (8,3) not aligned: 3 (dim 1) != 8 (dim 0)".into(),
        snippets: vec!["x = np.ones((8, 3))\nw = np.ones((8, 3))\nout = np.dot(x, w)\nprint(out.shape)".into()],
        ..BugReport::default()
    };
    let quiet = "```python\nprint('fine')\n```";
    let scripted = scripted_replies(&[(LlmTask::Generate, quiet)]);
    let llm: Arc<dyn Llm> = scripted.clone();
    let (outcome, events) = reproduce(report.clone(), &deps(Some(llm))).await;
    assert!(outcome.reproduced, "{outcome:?}\n{events:#?}");
    assert_eq!(outcome.attempts, 1);
    assert_eq!(scripted.asked(LlmTask::Generate), 0);
    // A report whose code the rules cannot make show the bug goes on to the LLM, which
    // drafts afresh rather than rewriting the rules' script.
    let hidden = BugReport {
        title: "loss is inf when a probability is 0".into(),
        observed: "loss: inf".into(),
        snippets: vec!["import numpy as np\np = np.array([0.5, 0.5])\nprint('loss:', -np.log(p).mean())".into()],
        ..BugReport::default()
    };
    let shows = "```python\np = np.array([0.0, 1.0])\nloss = -np.log(p).mean()\nprint('loss:', loss)\n```";
    let scripted = scripted_replies(&[(LlmTask::Generate, shows)]);
    let llm: Arc<dyn Llm> = scripted.clone();
    let (outcome, events) = reproduce(hidden, &deps(Some(llm))).await;
    assert!(outcome.reproduced, "{outcome:?}\n{events:#?}");
    assert_eq!(outcome.attempts, 2, "the rules' script, then the LLM's");
    let draft = scripted
        .prompts()
        .into_iter()
        .find(|(task, _)| *task == LlmTask::Generate)
        .map(|(_, prompt)| prompt)
        .unwrap_or_default();
    assert!(
        draft.contains("The tools assembled this draft") && !draft.contains("Running it gave"),
        "a fresh draft: {draft}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_the_llms_draft_leaves_undefined_is_asked_for_before_it_runs() {
    // The draft scales by a `scale` it never defines (no rule knows it): one short
    // question defines it, and the first run already shows the bug.
    let draft = "```python\nimport numpy as np\np = np.array([0.0, 1.0]) * scale\nloss = -np.log(p).mean()\nprint('loss:', loss)\n```";
    let scripted = scripted_replies(&[(LlmTask::Generate, draft), (LlmTask::Define, "1.0\n```")]);
    let (outcome, events) = reproduce_inf_loss(&scripted).await;
    assert!(outcome.reproduced, "{outcome:?}\n{events:#?}");
    assert_eq!(outcome.attempts, 1);
    assert_eq!(scripted.asked(LlmTask::Define), 1);
    let question = scripted
        .prompts()
        .into_iter()
        .find(|(task, _)| *task == LlmTask::Define)
        .map(|(_, prompt)| prompt)
        .unwrap_or_default();
    assert!(question.contains("It uses `scale`"), "{question}");
    let edits: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Candidate { edits, .. } => Some(edits),
            _ => None,
        })
        .flatten()
        .collect();
    assert!(
        edits.iter().any(|e| e.contains("scale = 1.0")),
        "the edit shows the line: {edits:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_made_up_import_is_tried_in_the_sandbox_and_replaced_by_a_class() {
    // `Clip` looks like a library class; the LLM's import of it fails in the sandbox, so
    // it is asked for the reporter's own class instead, and the first run shows the bug.
    let draft = "```python\nimport numpy as np\np = Clip(np.array([0.0, 1.0])).p\nloss = -np.log(p).mean()\nprint('loss:', loss)\n```";
    let class = "(object):\n    def __init__(self, p):\n        self.p = p\n```";
    let scripted = scripted_replies(&[
        (LlmTask::Generate, draft),
        (LlmTask::Define, "numpy import Clip\n```"),
        (LlmTask::Define, class),
    ]);
    let (outcome, events) = reproduce_inf_loss(&scripted).await;
    assert!(outcome.reproduced, "{outcome:?}\n{events:#?}");
    assert_eq!(outcome.attempts, 1);
    assert_eq!(scripted.asked(LlmTask::Define), 2);
    let script = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Candidate { code, .. } => Some(code.clone()),
            _ => None,
        })
        .unwrap_or_default();
    assert!(script.contains("class Clip(object):"), "{script}");
    assert!(!script.contains("from numpy import Clip"), "{script}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structural_feedback_refines_a_scripted_llm() {
    let broken = "Here is the script:\n```python\nimport numpy as np\np = np.array([0.0, 1.0]\nprint(np.log(p)\n```";
    let fixed =
        "```python\nimport numpy as np\np = np.array([0.0, 1.0])\nloss = -np.log(p).mean()\nprint('loss:', loss)\n```";
    let scripted = Arc::new(ScriptedLlm::new(vec![
        ScriptedReply::For {
            task: LlmTask::Generate,
            reply: broken.into(),
        },
        ScriptedReply::For {
            task: LlmTask::Generate,
            reply: fixed.into(),
        },
    ]));
    let (outcome, events) = reproduce_inf_loss(&scripted).await;
    assert!(outcome.reproduced, "{outcome:?}\n{events:#?}");
    assert_eq!(outcome.attempts, 2);
    let structural: Vec<(u32, bool)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Check { attempt, verdict } if verdict.check == CheckKind::Structural => {
                Some((*attempt, verdict.passed))
            }
            _ => None,
        })
        .collect();
    assert_eq!(structural, vec![(1, false), (2, true)]);
    // The first attempt never ran: a script that does not parse is not executed.
    assert!(runtime_verdicts(&events).iter().all(|(attempt, _)| *attempt == 2));
    let generate: Vec<String> = scripted
        .prompts()
        .into_iter()
        .filter(|(task, _)| *task == LlmTask::Generate)
        .map(|(_, p)| p)
        .collect();
    assert_eq!(generate.len(), 2);
    assert!(generate[1].contains("does not parse"), "{}", generate[1]);
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Token { attempt: 1, .. })));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Started { llm: Some(name), .. } if name == "scripted"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewrite_that_repeats_an_earlier_script_is_sampled_again_hotter() {
    // The first script runs but shows no bug; the LLM's rewrite is the same script
    // again, which is not run: the LLM is asked once more at a higher temperature and
    // its third script shows the bug. Before, the repeat ended the refinement.
    let quiet =
        "```python\nimport numpy as np\np = np.array([0.5, 0.5])\nloss = -np.log(p).mean()\nprint('loss:', loss)\n```";
    let shows =
        "```python\nimport numpy as np\np = np.array([0.0, 1.0])\nloss = -np.log(p).mean()\nprint('loss:', loss)\n```";
    let scripted = Arc::new(ScriptedLlm::new(
        [quiet, quiet, shows]
            .into_iter()
            .map(|reply| ScriptedReply::For {
                task: LlmTask::Generate,
                reply: reply.into(),
            })
            .collect(),
    ));
    let (outcome, events) = reproduce_inf_loss(&scripted).await;
    assert!(outcome.reproduced, "{outcome:?}\n{events:#?}");
    assert_eq!(scripted.temperatures(LlmTask::Generate), vec![0.2, 0.2, 0.6]);
    let repeated: Vec<(u32, &str)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::AttemptFinished { attempt, feedback, .. } if feedback.starts_with("The same script") => {
                Some((*attempt, feedback.as_str()))
            }
            _ => None,
        })
        .collect();
    // Attempt 2 is the tools' (they append the check that prints each result); the
    // LLM's rewrite of it is attempt 1 again.
    assert_eq!(
        repeated,
        vec![(
            3,
            "The same script as attempt 1; asking the LLM again at temperature 0.6."
        )]
    );
    // The repeat never ran.
    let ran: Vec<u32> = runtime_verdicts(&events).iter().map(|(attempt, _)| *attempt).collect();
    assert_eq!(ran, vec![1, 2, 4]);
    // Relevance is judged for every run, but the LLM is asked only about the one that
    // showed the bug, after it ran.
    let relevance: Vec<u32> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Check { attempt, verdict } if verdict.check == CheckKind::Relevance => Some(*attempt),
            _ => None,
        })
        .collect();
    assert_eq!(relevance, vec![1, 2, 4]);
    assert_eq!(scripted.asked(LlmTask::Relevance), 1);
    let last_two: Vec<CheckKind> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Check { attempt: 4, verdict } => Some(verdict.check),
            _ => None,
        })
        .rev()
        .take(2)
        .collect();
    assert_eq!(last_two, vec![CheckKind::Relevance, CheckKind::Runtime]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_stops_a_running_candidate_promptly() {
    let report = BugReport {
        title: "the job raises ValueError after a long wait".into(),
        observed: "ValueError: late".into(),
        snippets: vec!["import time\ntime.sleep(60)\nraise ValueError('late')".into()],
        ..BugReport::default()
    };
    let deps = deps(None);
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let cancel = CancellationToken::new();
    let config = AgentConfig::default();
    let agent = run_agent(report, None, &deps, &config, tx, cancel.clone());
    let watcher = async {
        let mut events = Vec::new();
        while let Some(event) = rx.recv().await {
            // The runtime check starts right after relevance: give the sandbox a moment, then cancel.
            if matches!(&event, AgentEvent::Check { verdict, .. } if verdict.check == CheckKind::Relevance) {
                tokio::time::sleep(Duration::from_millis(500)).await;
                cancel.cancel();
            }
            events.push(event);
        }
        events
    };
    let started = Instant::now();
    let (outcome, events) = tokio::join!(agent, watcher);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert!(!outcome.reproduced);
    match events.last() {
        Some(AgentEvent::Failed { message }) => assert!(message.contains("cancelled"), "{message}"),
        other => panic!("expected a Failed event, got {other:?}"),
    }
    assert!(runtime_verdicts(&events).is_empty());
}

fn python_has(module: &str) -> bool {
    std::process::Command::new(DEFAULT_PYTHON)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn torch_nan_report() -> BugReport {
    BugReport {
        title: "torch.log gives nan loss".into(),
        observed: "the loss printed is nan".into(),
        snippets: vec![
            "import torch\nx = torch.zeros(3) - 1\nloss = torch.log(x).mean()\nprint('loss', loss.item())".into(),
        ],
        ..BugReport::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_torch_report_without_torch_is_approximated_not_reproduced() {
    if python_has("torch") {
        eprintln!("torch is installed here, so this machine can run the report for real; nothing to approximate");
        return;
    }
    let (outcome, events) = reproduce(torch_nan_report(), &deps(None)).await;
    assert!(!outcome.reproduced, "{outcome:?}");
    assert!(outcome.approximated);
    assert!(outcome.score < 0.7);
    assert!(outcome.observed.is_none(), "nothing was observed: {outcome:?}");
    let (_, runtime) = runtime_verdicts(&events)[0];
    assert!(runtime.approximated && !runtime.passed);
    assert!(runtime.detail.contains("torch"), "{}", runtime.detail);
    assert_eq!(
        runtime.missing.as_deref(),
        Some("torch"),
        "the page names what is missing"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Progress { message, .. } if message.contains("needs torch")))
    );
    assert_eq!(outcome.attempts, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_llm_the_neural_debugger_approximates_what_cannot_run() {
    if python_has("torch") {
        eprintln!("torch is installed here, so this machine can run the report for real; nothing to approximate");
        return;
    }
    let neural = NeuralService::default();
    neural
        .load(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/neural-debugger-tiny"))
        .await
        .unwrap();
    let with_model = AgentDeps {
        neural: Some(neural),
        ..deps(None)
    };
    let (outcome, events) = reproduce(torch_nan_report(), &with_model).await;
    assert!(!outcome.reproduced && outcome.approximated, "{outcome:?}");
    assert!(
        outcome.score <= 0.6,
        "an approximation is capped below acceptance: {outcome:?}"
    );
    let (_, runtime) = runtime_verdicts(&events)[0];
    assert!(runtime.approximated && !runtime.passed);
    assert!(
        runtime
            .detail
            .contains("The neural debugger (neural-debugger-tiny) stepped through it in"),
        "{}",
        runtime.detail
    );
    assert!(
        events.iter().any(|e| matches!(e, AgentEvent::Progress { message, .. }
            if message.contains("the neural debugger steps through the script instead"))),
        "the wait is announced"
    );

    // A server whose model is off says so, and falls back to the fixed score.
    let off = AgentDeps {
        neural: Some(NeuralService::off("Neural mode is off: no model here.")),
        ..deps(None)
    };
    let (outcome, events) = reproduce(torch_nan_report(), &off).await;
    assert!(outcome.approximated && !outcome.reproduced);
    let (_, runtime) = runtime_verdicts(&events)[0];
    assert!(
        runtime.detail.contains("Neural mode is off: no model here."),
        "{}",
        runtime.detail
    );
    assert!(runtime.detail.contains("Install torch"), "{}", runtime.detail);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_report_fails_with_a_reason() {
    let (outcome, events) = reproduce(BugReport::default(), &deps(None)).await;
    assert!(!outcome.reproduced);
    assert!(matches!(events.last(), Some(AgentEvent::Failed { message }) if message.contains("empty")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_context_completes_a_snippet_that_calls_project_code() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("prep.py"),
        "import numpy as np\n\n\ndef normalize(x):\n    \"\"\"Standardise each feature column.\"\"\"\n    return (x - x.mean(axis=0)) / x.std(axis=0)\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("train.py"),
        "import numpy as np\nfrom prep import normalize\n\n\ndef fit(X, y, lr=0.1, epochs=20):\n    w = np.zeros(X.shape[1])\n    for _ in range(epochs):\n        w -= lr * X.T @ (X @ w - y) / len(y)\n    return w\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("plots.py"),
        "def draw(points):\n    return [p * 2 for p in points]\n",
    )
    .unwrap();
    let project = Arc::new(Project::from_dir(dir.path()).unwrap());
    let report = BugReport {
        title: "normalize returns nan for a constant feature column".into(),
        observed: "the normalized matrix is full of nan".into(),
        snippets: vec!["X = np.ones((10, 3))\nZ = normalize(X)\nprint(Z)".into()],
        ..BugReport::default()
    };
    let (outcome, events) = reproduce_in(report, Some(project), &deps(None)).await;
    let contexts = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Context { contexts, .. } => Some(contexts.clone()),
            _ => None,
        })
        .expect("a Context event");
    assert_eq!(contexts[0].path, "prep.py", "{contexts:#?}");
    assert!(outcome.reproduced, "{outcome:?}\n{events:#?}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::AttemptStarted { context: 1, .. }))
    );
    let script = outcome.script.unwrap();
    assert!(script.contains("def normalize"), "{script}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_llm_the_projects_draft_runs_first_for_a_report_without_code() {
    // repro-suite 01 with the 0.5B: the tools' draft from the project showed the bug by
    // itself, but only the LLM's lines after it ran, and they did not parse. The draft now
    // runs first; the LLM is never asked.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("train.py"),
        "import numpy as np\n\np = np.array([0.0, 1.0])\nfor epoch in range(3):\n    loss = -np.mean(np.log(p))\n    print(f\"epoch {epoch} loss {loss}\")\n",
    )
    .unwrap();
    let project = Arc::new(Project::from_dir(dir.path()).unwrap());
    let report = BugReport {
        title: "loss is inf from the first epoch of train.py".into(),
        observed: "epoch 0 loss inf\nepoch 1 loss inf".into(),
        ..BugReport::default()
    };
    let scripted = scripted_replies(&[(LlmTask::Generate, "```python\nprint(f'loss\n```")]);
    let llm: Arc<dyn Llm> = scripted.clone();
    let (outcome, events) = reproduce_in(report, Some(project), &deps(Some(llm))).await;
    assert!(outcome.reproduced, "{outcome:?}\n{events:#?}");
    assert_eq!(outcome.attempts, 1, "{events:#?}");
    assert_eq!(scripted.asked(LlmTask::Generate), 0);
    // Without a project or code the rules' skeleton is not run: the LLM drafts first.
    let scripted = scripted_replies(&[(
        LlmTask::Generate,
        "```python\nimport numpy as np\np = np.array([0.0, 1.0])\nprint('loss:', -np.log(p).mean())\n```",
    )]);
    let (outcome, events) = reproduce_inf_loss(&scripted).await;
    assert!(outcome.reproduced, "{outcome:?}\n{events:#?}");
    assert_eq!(outcome.attempts, 1, "{events:#?}");
}
