//! The runtime check: the script runs for real in the sandbox, and the run is scored
//! against the report. When it cannot run here (a missing package, no GPU) the LLM or
//! the neural debugger approximates it, and the verdict says so and stays below
//! acceptance: a reproduction is only claimed when it was observed.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use replayground_shared::repro::{CheckKind, CheckVerdict, RestructuredReport};
use serde::Deserialize;

use super::observe::{MAX_STDOUT, RunObservation, observe};
use super::score::{
    ACCEPT_SCORE, APPROXIMATED_CAP, align_with_report, first_few, score_prediction, score_run, verdict,
    writes_reported_values,
};
use crate::llm::{ChatMessage, GenParams, Llm, LlmTask};
use crate::report::json_in_answer;
use replayground_exec::sandbox::{Job, RunLimits, Sandbox, SandboxError, Termination};
use replayground_neural::rollout::RolloutEnd;
use replayground_neural::service::NeuralService;

/// The sandbox job that runs a candidate plainly: `python3 -s -u -c CODE`.
pub fn script_job(python: &Path, code: &str, limits: &RunLimits) -> Job {
    Job {
        program: python.to_path_buf(),
        // -s: no user site-packages; -u: output survives a kill at the wall-clock limit.
        args: vec!["-s".into(), "-u".into(), "-c".into(), code.into()],
        stdin: Vec::new(),
        limits: limits.clone(),
    }
}

/// Runs `code` in the sandbox and observes it.
pub async fn run_script(
    sandbox: &dyn Sandbox,
    python: &Path,
    code: &str,
    limits: &RunLimits,
) -> Result<RunObservation, SandboxError> {
    let limits = limits_for_frameworks(code, limits);
    let mut stdout = Vec::new();
    let report = sandbox
        .run(script_job(python, code, &limits), &mut |chunk: &[u8]| {
            if stdout.len() < MAX_STDOUT * 2 {
                stdout.extend_from_slice(chunk);
            }
            std::ops::ControlFlow::Continue(())
        })
        .await?;
    let elapsed_ms = u64::try_from(report.elapsed.as_millis()).unwrap_or(u64::MAX);
    let stdout = String::from_utf8_lossy(&stdout);
    Ok(observe(report.termination, &stdout, &report.stderr, elapsed_ms).of_script(code, &stdout))
}

/// What a script prints when the interpreter starts: the check's sign of life.
const ALIVE: &str = "replayground: python starts";

/// Whether `python` starts inside the sandbox and runs a script. A run that fails before
/// Python does (bubblewrap cannot mount an interpreter that lives under a folder closed to
/// the sandbox's uids, such as a virtual environment made from pyenv's Python in root's
/// home) would otherwise read as every script crashing without a word, and every report
/// as not reproduced. The error says what the sandbox said.
pub async fn check_interpreter(sandbox: &dyn Sandbox, python: &Path, limits: &RunLimits) -> Result<(), String> {
    let run = run_script(sandbox, python, &format!("print({ALIVE:?})"), limits)
        .await
        .map_err(|e| format!("the sandbox cannot run {}: {e}", python.display()))?;
    if run.termination == Termination::Exited(0) && run.stdout.contains(ALIVE) {
        return Ok(());
    }
    let said: String = run.stderr.trim().chars().take(300).collect();
    Err(format!(
        "the sandbox cannot start {} ({:?}{}); an interpreter must lie where the sandbox's \
         unprivileged users may enter (a virtual environment made from /usr/bin/python3, as \
         `cargo xtask setup --with dl` makes it)",
        python.display(),
        run.termination,
        if said.is_empty() {
            String::new()
        } else {
            format!(": {said}")
        },
    ))
}

/// Packages whose import alone outgrows a plain script's limits: (package, address space in
/// MiB, CPU seconds). Measured with `cargo xtask setup --with dl` (Debian's Python 3.11):
/// `import tensorflow` (2.15.1, CPU; 2026-12-03) takes 2 s and 400 MB resident and fits 1 GiB
/// of address space (2.21 took 4.3 s and 540 MB); `import torch` (2.4.0, the CUDA build from
/// `PyPI` on a machine without a GPU) takes 1.5 s and 365 MB resident but maps about 3 GB of
/// libraries: it fails under 2 GiB and fits 3 GiB (2.15 behaved the same).
/// Both get 4 GiB: the models reports use are not all small (VGG19's 143M parameters are
/// 0.57 GB of weights, and Adam keeps two more copies; it ran out of 2 GiB). The CPU time
/// leaves room for a few epochs of a small model after the import. torchvision imports torch.
const FRAMEWORK_LIMITS: [(&str, u64, u64); 4] = [
    ("torch", 4096, 60),
    ("torchvision", 4096, 60),
    ("tensorflow", 4096, 60),
    ("keras", 4096, 60),
];

/// `limits`, raised for the deep-learning frameworks `code` imports (never lowered).
pub fn limits_for_frameworks(code: &str, limits: &RunLimits) -> RunLimits {
    let packages = crate::dependencies::imported_packages(code);
    let mut raised = limits.clone();
    for (package, memory_mib, cpu_seconds) in FRAMEWORK_LIMITS {
        if packages.contains(package) {
            raised.memory_bytes = raised.memory_bytes.max(memory_mib << 20);
            raised.cpu_time = raised.cpu_time.max(Duration::from_secs(cpu_seconds));
            raised.wall_time = raised.wall_time.max(Duration::from_secs(cpu_seconds + 30));
        }
    }
    raised
}

/// A number in at most a dozen characters: `0.2500`, `1.516e93`, `nan`.
fn short_number(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    if value != 0.0 && !(1e-3..1e5).contains(&value.abs()) {
        format!("{value:.3e}")
    } else {
        format!("{value:.4}")
    }
}

/// Asks the LLM what a script that cannot run here would do, and scores the prediction.
async fn approximate_with_llm(
    llm: &dyn Llm,
    code: &str,
    report: &RestructuredReport,
    missing: &str,
) -> Option<(f32, String)> {
    #[derive(Deserialize)]
    struct Predicted {
        exception: Option<String>,
        #[serde(default)]
        output: String,
    }
    let messages = [
        ChatMessage::system(
            "You predict what a Python program does without running it (task: approximate). Answer with ONE JSON object: \
             {\"exception\": \"Type: message\" or null, \"output\": \"what it prints\"}.",
        ),
        ChatMessage::user(format!(
            "The program needs {missing}, which is installed.\n```python\n{code}\n```\nWhat happens when it runs?"
        )),
    ];
    let params = GenParams {
        temperature: 0.0,
        ..GenParams::new(LlmTask::Approximate, 400)
    };
    let answer = llm.complete(&messages, &params, &mut |_| {}).await.ok()?;
    let predicted: Predicted = serde_json::from_str(json_in_answer(&answer)?).ok()?;
    let exception = predicted.exception.as_deref().filter(|e| !e.trim().is_empty());
    Some(score_prediction(report, exception, &predicted.output))
}

/// What can guess the behaviour of a script that cannot run here, asked in this order.
#[derive(Clone, Copy, Default)]
pub struct Approximators<'a> {
    pub llm: Option<&'a dyn Llm>,
    /// The neural debugger; a service without a model answers with why.
    pub neural: Option<&'a NeuralService>,
    /// Told, in a sentence, when an approximation starts (it takes seconds).
    pub on_start: Option<&'a (dyn Fn(String) + Send + Sync)>,
}

impl Approximators<'_> {
    fn starting(&self, sentence: String) {
        if let Some(on_start) = self.on_start {
            on_start(sentence);
        }
    }
}

/// Most `step_over` predictions one approximation may take.
pub const NEURAL_ROLLOUT_STEPS: usize = 40;

/// Steps the neural debugger through the script from its first line and scores the
/// ending it predicts (an exception, or the final variables) against the report.
async fn approximate_with_neural(
    neural: &NeuralService,
    code: &str,
    report: &RestructuredReport,
) -> Result<(f32, String), String> {
    let (model, rollout) = neural.roll_out(code.to_owned(), NEURAL_ROLLOUT_STEPS).await?;
    let steps = rollout.states.len() - 1;
    let last = rollout.last();
    // The final variables stand in for printed output: `loss = nan` is a metric cue.
    let mut variables = String::new();
    for (name, repr) in [&last.globals, &last.locals]
        .into_iter()
        .flatten()
        .flat_map(|vars| &vars.0)
    {
        let _ = writeln!(variables, "{name} = {repr}");
    }
    let (exception, ending) = match &rollout.end {
        RolloutEnd::Raised(line) => (Some(line.as_str()), format!("raises {line}")),
        RolloutEnd::Finished => (None, "ends normally".to_owned()),
        RolloutEnd::StepLimit => (
            None,
            format!("is still running after {steps} steps (scored on the variables so far)"),
        ),
        // Nothing predicted yet: no variables to score.
        RolloutEnd::Unparsable(why) if steps == 0 => {
            return Err(format!(
                "The neural debugger ({model}) wrote a first state that does not parse ({why})."
            ));
        }
        // A later state that does not parse ends the rollout; what came before still counts.
        RolloutEnd::Unparsable(why) => (
            None,
            format!("wrote a state that does not parse after that ({why}), so it is scored on the variables so far"),
        ),
    };
    let (score, detail) = score_prediction(report, exception, &variables);
    Ok((
        score,
        format!("The neural debugger ({model}) stepped through it in {steps} predicted steps: it {ending}. {detail}"),
    ))
}

/// The runtime check: a real run in the sandbox, or an approximation marked as such.
/// `local_modules` are the project's own modules: importing one is the candidate's
/// defect, not a package this machine lacks.
pub async fn runtime(
    sandbox: &dyn Sandbox,
    python: &Path,
    limits: &RunLimits,
    code: &str,
    report: &RestructuredReport,
    approximators: Approximators<'_>,
    local_modules: &[String],
) -> (CheckVerdict, Option<RunObservation>) {
    let mut run = match run_script(sandbox, python, code, limits).await {
        Ok(run) => run,
        Err(e) => {
            return (
                verdict(
                    CheckKind::Runtime,
                    false,
                    Some(0.0),
                    format!("The sandbox could not run the script: {e}"),
                ),
                None,
            );
        }
    };
    // The project's own modules are not missing packages: the candidate should inline them.
    let local = run.missing.as_ref().is_some_and(|m| {
        local_modules
            .iter()
            .any(|l| l == m || l.split('.').next() == Some(m.as_str()))
    });
    if local {
        run.missing = None;
    }
    if let Some(missing) = run.missing.clone() {
        let base = format!(
            "The script cannot run here: it needs {missing}, which this machine lacks; its behaviour was not observed."
        );
        let (score, detail) = match (approximators.llm, approximators.neural) {
            (Some(llm), _) => {
                approximators.starting(format!(
                    "{missing} is not installed here: asking the LLM what the script would do"
                ));
                match approximate_with_llm(llm, code, report, &missing).await {
                    Some((score, detail)) => (
                        score.min(APPROXIMATED_CAP),
                        format!("{base} The LLM predicts: {detail}"),
                    ),
                    None => (0.3, format!("{base} The LLM could not predict its behaviour.")),
                }
            }
            (None, Some(neural)) => {
                if neural.capability().available {
                    approximators.starting(format!(
                    "{missing} is not installed here: the neural debugger steps through the script instead (at most {NEURAL_ROLLOUT_STEPS} predicted steps)"
                    ));
                }
                match approximate_with_neural(neural, code, report).await {
                    Ok((score, detail)) => (score.min(APPROXIMATED_CAP), format!("{base} {detail}")),
                    Err(why) => (
                        0.4,
                        format!("{base} {why} Install {missing} (or configure an LLM to approximate) to check it."),
                    ),
                }
            }
            // Without a model only the structure vouches for it: a fixed, low score.
            (None, None) => (
                0.4,
                format!("{base} Install {missing} (or configure an LLM to approximate) to check it."),
            ),
        };
        let mut v = verdict(CheckKind::Runtime, false, Some(score.min(APPROXIMATED_CAP)), detail);
        v.approximated = true;
        v.missing = Some(missing);
        return (v, Some(run));
    }
    align_with_report(report, &mut run);
    let (mut score, mut detail) = score_run(report, &run);
    if score < ACCEPT_SCORE && shown_by_its_own_text(report, &run) {
        let _ = write!(
            detail,
            " The run shows it only in text the script prints itself ({}): that shows nothing; print what the program computes.",
            first_few(&run.written, 3)
        );
    }
    if score >= ACCEPT_SCORE && writes_reported_values(report, code) {
        score = ACCEPT_SCORE - 0.1;
        detail.push_str(" But the script writes a value the report shows itself: it must compute it.");
    }
    if let Termination::Stopped(limit) = run.termination {
        let _ = write!(
            detail,
            " The run was stopped at the {limit:?} limit; shrink loops and data."
        );
    }
    if !run.metrics.is_empty() {
        let shown: Vec<String> = run
            .metrics
            .iter()
            .take(6)
            .map(|(n, v)| format!("{n}={}", short_number(*v)))
            .collect();
        let _ = write!(detail, " Metrics: {}.", shown.join(", "));
    }
    let passed = score >= ACCEPT_SCORE;
    (verdict(CheckKind::Runtime, passed, Some(score), detail), Some(run))
}

/// Whether `run` would pass read with the text its script prints itself, which it does not
/// once that text is blanked: the script wrote the symptom rather than computing it.
fn shown_by_its_own_text(report: &RestructuredReport, run: &RunObservation) -> bool {
    if run.written.is_empty() {
        return false;
    }
    let mut printed = run.as_printed();
    align_with_report(report, &mut printed);
    score_run(report, &printed).0 >= ACCEPT_SCORE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symptom_the_script_writes_itself_is_named_in_the_feedback() {
        let report = crate::restructure::rules_of(replayground_shared::repro::BugReport {
            description: "All the negative values are predicted to zeros.".into(),
            ..Default::default()
        });
        let stdout = "negative values predicted to zeros: 3\n";
        let labelled = observe(Termination::Exited(0), stdout, "", 1)
            .of_script("print('negative values predicted to zeros:', n)\n", stdout);
        assert!(shown_by_its_own_text(&report, &labelled));
        let computed = observe(Termination::Exited(0), stdout, "", 1).of_script("print(text, n)\n", stdout);
        assert!(
            !shown_by_its_own_text(&report, &computed),
            "nothing written: nothing to name"
        );
    }

    #[test]
    fn framework_imports_raise_the_limits_and_nothing_else_does() {
        let base = RunLimits {
            memory_bytes: 1 << 30,
            cpu_time: Duration::from_secs(15),
            wall_time: Duration::from_secs(20),
            ..RunLimits::default()
        };
        let torch = limits_for_frameworks("import numpy as np\nfrom torch.nn import functional as F\n", &base);
        assert_eq!(torch.memory_bytes, 4 << 30);
        assert_eq!(torch.cpu_time, Duration::from_secs(60));
        assert_eq!(torch.wall_time, Duration::from_secs(90));
        let keras = limits_for_frameworks("def f():\n    import keras\n", &base);
        assert_eq!(keras.memory_bytes, 4 << 30);
        // torchvision loads torch: the bench's probe imports it alone.
        assert_eq!(
            limits_for_frameworks("import torchvision\n", &base).memory_bytes,
            4 << 30
        );
        for plain in [
            "import numpy as np\n",
            "# import torch\nx = 'import tensorflow'\n",
            "from .torch import x\n",
        ] {
            assert_eq!(limits_for_frameworks(plain, &base), base, "{plain:?}");
        }
        // A caller's larger limit stays.
        let roomy = RunLimits {
            memory_bytes: 8 << 30,
            ..base.clone()
        };
        assert_eq!(limits_for_frameworks("import torch\n", &roomy).memory_bytes, 8 << 30);
    }
}
