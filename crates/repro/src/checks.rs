//! The four kinds of feedback a candidate reproduction gets (RepGen §3.3):
//!
//! - structural: tree-sitter parses it; ERROR / MISSING nodes fail with line and column;
//! - static: `ruff check --select F,E9` (undefined names, missing imports, syntax), which
//!   only parses the code and never runs it;
//! - relevance: embedding cosine between code and report (plus an LLM's yes/no), else
//!   word overlap;
//! - runtime: the script runs for real in the sandbox; its exception, output and printed
//!   metrics are classified by the same rules as the report and scored against it. When
//!   it cannot run here (a missing package, no GPU) the verdict is `approximated` and its
//!   score stays below acceptance: a reproduction is only claimed when it was observed.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use regex::Regex;
use replayground_shared::repro::{CheckKind, CheckVerdict, RestructuredReport, Symptom, SymptomClass};
use serde::Deserialize;
use tokio::io::AsyncWriteExt as _;

use super::embed::{Embedder, cosine};
use super::llm::{ChatMessage, GenParams, Llm, LlmTask};
use super::report::{Traceback, classify, json_in_answer, parse_traceback};
use replayground_exec::python::parse;
use replayground_exec::sandbox::{Job, RunLimits, Sandbox, SandboxError, Termination};
use replayground_neural::rollout::RolloutEnd;
use replayground_neural::service::NeuralService;

/// A candidate is accepted at this combined score.
pub const ACCEPT_SCORE: f32 = 0.7;
/// The highest score a run that was not observed can get: below acceptance.
pub const APPROXIMATED_CAP: f32 = 0.6;
/// Standard output kept from a candidate's run.
const MAX_STDOUT: usize = 32 * 1024;

fn verdict(check: CheckKind, passed: bool, score: Option<f32>, detail: impl Into<String>) -> CheckVerdict {
    CheckVerdict {
        check,
        passed,
        score,
        detail: detail.into(),
        approximated: false,
        missing: None,
    }
}

/// Syntax: every ERROR and MISSING node of the tree-sitter tree, with its position.
pub fn structural(code: &str) -> CheckVerdict {
    let Some(tree) = parse(code) else {
        return verdict(
            CheckKind::Structural,
            false,
            None,
            "tree-sitter could not parse the script at all.",
        );
    };
    let mut problems = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        let at = node.start_position();
        if node.is_missing() {
            problems.push(format!(
                "line {}, column {}: missing `{}`",
                at.row + 1,
                at.column + 1,
                node.kind()
            ));
        } else if node.is_error() {
            let text: String = code[node.byte_range()]
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(60)
                .collect();
            problems.push(format!(
                "line {}, column {}: syntax error at `{}`",
                at.row + 1,
                at.column + 1,
                text.trim()
            ));
        } else if node.has_error() {
            stack.extend(node.children(&mut cursor));
        }
    }
    problems.sort_by_key(|p| {
        p.split(',')
            .next()
            .and_then(|l| l.trim_start_matches("line ").parse::<u32>().ok())
            .unwrap_or(0)
    });
    if problems.is_empty() {
        verdict(CheckKind::Structural, true, None, "The script parses.")
    } else {
        verdict(
            CheckKind::Structural,
            false,
            None,
            format!("The script does not parse: {}", first_few(&problems, 5)),
        )
    }
}

/// The first `n` items joined, and how many more there are.
fn first_few(items: &[String], n: usize) -> String {
    let mut text = items.iter().take(n).cloned().collect::<Vec<_>>().join("; ");
    if items.len() > n {
        let _ = write!(text, "; and {} more", items.len() - n);
    }
    text
}

/// The ruff executable: `$REPLAYGROUND_RUFF`, the checkout's `.tools/bin/ruff` (what
/// `cargo xtask setup` installs), or `ruff` on `PATH`.
pub fn locate_ruff() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("REPLAYGROUND_RUFF").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let candidates = [
        PathBuf::from(".tools/bin/ruff"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/bin/ruff"),
    ];
    if let Some(found) = candidates.into_iter().find(|p| p.is_file()) {
        return Some(found);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("ruff"))
            .find(|p| p.is_file())
    })
}

/// One diagnostic of `ruff check --output-format json`.
#[derive(Debug, Clone, Deserialize)]
pub struct RuffDiagnostic {
    /// `None` for syntax errors.
    pub code: Option<String>,
    pub message: String,
    pub location: RuffLocation,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct RuffLocation {
    pub row: u32,
    pub column: u32,
}

/// The diagnostics that make a script fail the static check (the rest are style).
fn is_blocking(diagnostic: &RuffDiagnostic) -> bool {
    match diagnostic.code.as_deref() {
        // ruff 0.14 names syntax errors `invalid-syntax`; older versions gave no code.
        None | Some("invalid-syntax") => true,
        Some(code) => {
            code.starts_with("E9") || ["F821", "F822", "F823", "F706", "F704", "F702", "F701"].contains(&code)
        }
    }
}

/// Runs ruff on `code` (fed on stdin: nothing is written or executed).
pub async fn ruff_diagnostics(ruff: &Path, code: &str) -> Result<Vec<RuffDiagnostic>, String> {
    let mut child = tokio::process::Command::new(ruff)
        .args([
            "check",
            "--select",
            "F,E9",
            "--output-format",
            "json",
            "--no-cache",
            "--isolated",
            "--exit-zero",
        ])
        .args(["--stdin-filename", "candidate.py", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", ruff.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(code.as_bytes())
            .await
            .map_err(|e| format!("cannot feed ruff: {e}"))?;
    }
    let output = child
        .wait_with_output()
        .await
        .map_err(|e| format!("ruff failed: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "ruff exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("ruff's JSON could not be read: {e}"))
}

/// Undefined names, missing imports and syntax errors, by ruff.
pub async fn static_check(code: &str, ruff: Option<&Path>) -> (CheckVerdict, Vec<RuffDiagnostic>) {
    let Some(ruff) = ruff else {
        return (
            verdict(
                CheckKind::Static,
                true,
                None,
                "Static check skipped: ruff is not installed (run `cargo xtask setup`, or set REPLAYGROUND_RUFF).",
            ),
            Vec::new(),
        );
    };
    match ruff_diagnostics(ruff, code).await {
        Ok(diagnostics) => {
            let blocking: Vec<String> = diagnostics
                .iter()
                .filter(|d| is_blocking(d))
                .map(|d| format!("line {}: {}", d.location.row, d.message))
                .collect();
            let verdict = if blocking.is_empty() {
                let notes = diagnostics.len();
                verdict(
                    CheckKind::Static,
                    true,
                    None,
                    if notes == 0 {
                        "ruff found no undefined names.".to_owned()
                    } else {
                        format!("ruff found no undefined names ({notes} minor notes).")
                    },
                )
            } else {
                verdict(
                    CheckKind::Static,
                    false,
                    None,
                    format!("ruff: {}", first_few(&blocking, 8)),
                )
            };
            (verdict, diagnostics)
        }
        Err(e) => (
            verdict(CheckKind::Static, true, None, format!("Static check skipped: {e}.")),
            Vec::new(),
        ),
    }
}

static WORD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[A-Za-z_][A-Za-z0-9_]{2,}").expect("a valid pattern"));

const STOP_WORDS: [&str; 24] = [
    "the",
    "and",
    "for",
    "with",
    "this",
    "that",
    "from",
    "import",
    "print",
    "when",
    "not",
    "but",
    "are",
    "was",
    "def",
    "return",
    "self",
    "none",
    "true",
    "false",
    "replayground",
    "have",
    "has",
    "into",
];

fn words(text: &str) -> BTreeSet<String> {
    WORD.find_iter(text)
        .flat_map(|m| m.as_str().split('_').map(str::to_lowercase).collect::<Vec<_>>())
        .filter(|w| w.len() >= 3 && !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// Share of the report's words (at most 40 counted) that the code uses.
pub fn word_overlap(code: &str, report: &str) -> f32 {
    let code_words = words(code);
    let report_words = words(report);
    if report_words.is_empty() {
        return 0.0;
    }
    let shared = report_words.intersection(&code_words).count();
    (shared as f32 / report_words.len().min(40) as f32).min(1.0)
}

/// Does the code address the report? Embedding cosine (with an embedder), an LLM's
/// yes/no (with an LLM), else word overlap.
pub async fn relevance(
    code: &str,
    report_text: &str,
    embedder: Option<&Arc<Embedder>>,
    llm: Option<&dyn Llm>,
) -> CheckVerdict {
    let mut parts: Vec<(f32, String)> = Vec::new();
    if let Some(embedder) = embedder {
        let embedder = embedder.clone();
        let (code_owned, report_owned) = (code.to_owned(), report_text.to_owned());
        let similarity = tokio::task::spawn_blocking(move || {
            let vectors = embedder.embed(&[&code_owned, &report_owned]).ok()?;
            Some(cosine(&vectors[0], &vectors[1]))
        })
        .await
        .ok()
        .flatten();
        if let Some(similarity) = similarity {
            // MiniLM cosines between code and prose sit around 0.1-0.6: rescale to 0..1.
            let score = ((similarity - 0.1) / 0.4).clamp(0.0, 1.0);
            parts.push((score, format!("embedding cosine {similarity:.2}")));
        }
    }
    if parts.is_empty() {
        let overlap = word_overlap(code, report_text);
        let score = (overlap * 2.0).min(1.0);
        parts.push((
            score,
            format!("{:.0}% of the report's words appear in the code", overlap * 100.0),
        ));
    }
    if let Some(llm) = llm {
        let messages = [
            ChatMessage::system("You judge bug reproductions (task: relevance). Answer only `yes` or `no`."),
            ChatMessage::user(format!(
                "Bug report:\n{report_text}\n\nScript:\n```python\n{code}\n```\n\nDoes this script try to reproduce exactly this bug?"
            )),
        ];
        let params = GenParams {
            temperature: 0.0,
            ..GenParams::new(LlmTask::Relevance, 8)
        };
        match llm.complete(&messages, &params, &mut |_| {}).await {
            Ok(answer) => {
                let yes = answer.trim().to_lowercase().starts_with("yes");
                parts.push((
                    if yes { 1.0 } else { 0.0 },
                    format!("the LLM says {}", if yes { "yes" } else { "no" }),
                ));
            }
            Err(e) => tracing::warn!(error = %e, "the relevance question to the LLM failed"),
        }
    }
    let score = parts.iter().map(|(s, _)| s).sum::<f32>() / parts.len() as f32;
    let detail = parts.into_iter().map(|(_, d)| d).collect::<Vec<_>>().join("; ");
    let passed = score >= 0.3;
    verdict(
        CheckKind::Relevance,
        passed,
        Some(score),
        if passed {
            format!("Relevant to the report ({detail}).")
        } else {
            format!("The script seems unrelated to the report ({detail}).")
        },
    )
}

/// What a candidate did when it ran.
#[derive(Debug, Clone)]
pub struct RunObservation {
    pub termination: Termination,
    pub stdout: String,
    pub stderr: String,
    pub traceback: Option<Traceback>,
    pub symptom: Symptom,
    /// Named numbers the script printed (`loss: 0.5`), in order.
    pub metrics: Vec<(String, f64)>,
    /// What the script needed that this machine lacks (a module, a GPU).
    pub missing: Option<String>,
    pub elapsed_ms: u64,
}

static METRIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b((?:val_|train_|test_)?(?:loss|acc|accuracy|error|grad(?:ient)?_?norm|lr|mse|rmse|mae|score))\b\s*(?:=|:|is)?\s*(-?(?:\d+\.?\d*(?:e[+-]?\d+)?|nan|inf))")
        .expect("a valid pattern")
});
static MISSING_MODULE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"No module named '([\w.]+)'").expect("a valid pattern"));
static NEEDS_GPU: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:not compiled with cuda|no cuda gpus are available|found no nvidia driver|cuda driver version is insufficient|cudaGetDeviceCount)")
        .expect("a valid pattern")
});

/// Named numbers printed by the script, e.g. `epoch 3 loss: 0.25`.
pub fn metrics(text: &str) -> Vec<(String, f64)> {
    METRIC
        .captures_iter(text)
        .filter_map(|c| {
            let value = c[2].to_lowercase();
            let number = match value.as_str() {
                "nan" | "-nan" => f64::NAN,
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                v => v.parse().ok()?,
            };
            Some((c[1].to_lowercase(), number))
        })
        .collect()
}

/// Classifies a run like a report: the traceback, the output, and the printed metrics
/// (a loss that grows a thousandfold is exploding).
pub fn observe(termination: Termination, stdout: &str, stderr: &str, elapsed_ms: u64) -> RunObservation {
    let crashed = !matches!(termination, Termination::Exited(0));
    let traceback = if crashed { parse_traceback(stderr) } else { None };
    let missing = traceback.as_ref().and_then(|t| {
        if t.error_type == "ModuleNotFoundError" || t.error_type == "ImportError" {
            MISSING_MODULE
                .captures(&t.message)
                .map(|c| c[1].split('.').next().unwrap_or(&c[1]).to_owned())
        } else {
            None
        }
    });
    let missing = missing.or_else(|| NEEDS_GPU.is_match(stderr).then(|| "a CUDA GPU".to_owned()));
    let found = metrics(stdout);
    // Warnings on stderr count; a traceback's text counts only when the run crashed.
    let text = if crashed {
        format!("{stdout}\n{stderr}")
    } else {
        format!("{stdout}\n{}", strip_tracebacks(stderr))
    };
    let mut symptom = classify(&text);
    if !crashed && symptom.class == SymptomClass::Crash {
        // An exception printed and caught is output, not a crash.
        symptom = classify(&text.replace("Error", "error").replace("Exception", "exception"));
        symptom.error_type = None;
    }
    if crashed && symptom.class != SymptomClass::Crash {
        symptom.class = SymptomClass::Crash;
    }
    let losses: Vec<f64> = found
        .iter()
        .filter(|(n, _)| n.contains("loss"))
        .map(|(_, v)| *v)
        .collect();
    let peak = losses
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .map(f64::abs)
        .reduce(f64::max);
    if let (Some(first), Some(peak)) = (losses.first(), peak)
        && first.is_finite()
        && first.abs() > 0.0
        && peak > first.abs() * 1000.0
        && !symptom.cues.iter().any(|c| c == "exploding")
    {
        symptom.cues.push("exploding".to_owned());
        if symptom.class == SymptomClass::Unknown {
            symptom.class = SymptomClass::WrongCalculation;
        }
    }
    let mut stdout = stdout.to_owned();
    if stdout.len() > MAX_STDOUT {
        let mut cut = MAX_STDOUT;
        while !stdout.is_char_boundary(cut) {
            cut -= 1;
        }
        stdout.truncate(cut);
    }
    RunObservation {
        termination,
        stdout,
        stderr: stderr.to_owned(),
        traceback,
        symptom,
        metrics: found,
        missing,
        elapsed_ms,
    }
}

fn strip_tracebacks(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("Traceback") && !l.starts_with("  File "))
        .collect::<Vec<_>>()
        .join("\n")
}

static VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(\(\s*\d+\s*,(?:\s*\d+\s*,?)*\)|-?\d+\.\d+(?:e[+-]?\d+)?|-?\d+e[+-]?\d+|\bnan\b|-?\binf\b)")
        .expect("a valid pattern")
});

/// The values the report says it saw: its observed output, else the problem text before
/// it turns to what was expected.
fn reported_values(report: &RestructuredReport) -> BTreeSet<String> {
    static EXPECTATION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)\b(?:expected|expect|should|instead)\b").expect("a valid pattern"));
    let observed = quoted_values(&report.observed);
    if !observed.is_empty() {
        return observed;
    }
    let before = EXPECTATION
        .find(&report.problem)
        .map_or(report.problem.as_str(), |m| &report.problem[..m.start()]);
    quoted_values(before)
}

/// A symptom's cue words (`nan`, `loss`), without the quoted ones (`error: ...`).
fn cue_labels(symptom: &Symptom) -> BTreeSet<String> {
    symptom.cues.iter().filter(|c| !c.contains(':')).cloned().collect()
}

/// Reads a run in the report's terms where its output cannot tell them apart:
/// - a report about a warning is shown by a run that prints one, NaNs or not;
/// - a run shows *what* goes wrong, not *why*: when the report describes a silent bug and
///   the run ends normally showing a silent anomaly of its own (NaN, an exploding loss, a
///   wrong shape, ...) with at least half of the report's cues, the report's class (often
///   a cause, such as a wrong parameter setting) stands for the run too. A run with no
///   anomaly of its own (class unknown) is never promoted this way.
pub fn align_with_report(report: &RestructuredReport, run: &mut RunObservation) {
    if !matches!(run.termination, Termination::Exited(0)) {
        return;
    }
    let expected = &report.symptom;
    if expected.class == SymptomClass::Warning && run.symptom.cues.iter().any(|c| c == "warning") {
        run.symptom.class = SymptomClass::Warning;
        return;
    }
    let (wanted, seen) = (cue_labels(expected), cue_labels(&run.symptom));
    let shared = wanted.intersection(&seen).count();
    if expected.class.is_silent() && run.symptom.class.is_silent() && !wanted.is_empty() && 2 * shared >= wanted.len() {
        run.symptom.class = expected.class;
    }
}

/// A printed integer array such as numpy's `[[ 70 180   4  54]]`.
static INT_ARRAY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[[\[\s]*-?\d+(?:[\s,]+-?\d+)+[\]\s]*\]").expect("a valid pattern"));

/// Concrete values a report quotes (shapes, decimals, nan/inf, integer arrays), normalised.
fn quoted_values(text: &str) -> BTreeSet<String> {
    let arrays = INT_ARRAY.find_iter(text).map(|m| {
        // numpy pads columns; compare the numbers, not the spacing.
        let numbers: Vec<&str> = m
            .as_str()
            .split(|c: char| !(c.is_ascii_digit() || c == '-'))
            .filter(|t| !t.is_empty())
            .collect();
        format!("[{}]", numbers.join(" "))
    });
    VALUE
        .find_iter(text)
        .map(|m| m.as_str().to_lowercase().replace(' ', "").replace(",)", ")"))
        .chain(arrays)
        .collect()
}

/// How well a run shows the reported symptom, 0..=1, and why.
pub fn score_run(report: &RestructuredReport, run: &RunObservation) -> (f32, String) {
    let expected = &report.symptom;
    let observed = &run.symptom;
    let expected_cues = cue_labels(expected);
    let observed_cues = cue_labels(observed);
    let cue_recall = if expected_cues.is_empty() {
        0.0
    } else {
        expected_cues.intersection(&observed_cues).count() as f32 / expected_cues.len() as f32
    };
    let output = format!("{}\n{}", run.stdout, run.stderr);
    let class_match = expected.class == observed.class && expected.class != SymptomClass::Unknown;
    match expected.class {
        SymptomClass::Crash => {
            let type_match = match (&expected.error_type, &observed.error_type) {
                (Some(e), Some(o)) => e == o,
                (None, Some(_)) => true,
                _ => false,
            };
            let message = run.traceback.as_ref().map_or("", |t| t.message.as_str());
            let reported_message = parse_traceback(&report.observed).map(|t| t.message).unwrap_or_default();
            let overlap = if reported_message.is_empty() {
                cue_recall
            } else {
                word_overlap(message, &reported_message)
            };
            let score =
                if class_match { 0.5 } else { 0.0 } + if type_match && class_match { 0.3 } else { 0.0 } + 0.2 * overlap;
            let seen = run.traceback.as_ref().map_or_else(
                || "the script ended without an exception".to_owned(),
                |t| {
                    format!(
                        "it raised {}: {}",
                        t.error_type,
                        t.message.chars().take(160).collect::<String>()
                    )
                },
            );
            let wanted = expected.error_type.as_deref().unwrap_or("an exception");
            (score, format!("The report shows {wanted}; {seen}."))
        }
        SymptomClass::Unknown => {
            let overlap = word_overlap(&output, &report.observed);
            (
                0.4 * overlap,
                "The report's symptom could not be classified, so the run cannot confirm it.".to_owned(),
            )
        }
        _ => {
            let crashed = !matches!(run.termination, Termination::Exited(0));
            let values = reported_values(report);
            let seen_values = quoted_values(&output);
            let value_match = if values.is_empty() {
                0.0
            } else {
                values.intersection(&seen_values).count() as f32 / values.len() as f32
            };
            let class_or_values = if class_match { 1.0 } else { value_match };
            let score = if crashed { 0.0 } else { 0.3 }
                + 0.3 * class_or_values
                + 0.2 * cue_recall
                + 0.2 * value_match.max(cue_recall);
            // A silent bug is only shown by a script that runs to the end: one that prints
            // the symptom and then crashes reproduces a different bug, so it is refined.
            let score = if crashed { score.min(ACCEPT_SCORE - 0.1) } else { score };
            let seen = if crashed {
                run.traceback.as_ref().map_or_else(
                    || "it crashed".to_owned(),
                    |t| format!("it crashed with {}: {}", t.error_type, t.message),
                )
            } else {
                let cues: Vec<&str> = observed_cues.iter().map(String::as_str).collect();
                format!(
                    "it ran and looks like {} (cues: {})",
                    observed.class.as_str(),
                    if cues.is_empty() {
                        "none".to_owned()
                    } else {
                        cues.join(", ")
                    }
                )
            };
            (
                score,
                format!(
                    "The report shows {} ({}); {seen}.",
                    expected.class.as_str(),
                    expected_cues.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            )
        }
    }
}

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
    Ok(observe(
        report.termination,
        &String::from_utf8_lossy(&stdout),
        &report.stderr,
        elapsed_ms,
    ))
}

/// Packages whose import alone outgrows a plain script's limits: (package, address space in
/// MiB, CPU seconds). Measured 2026-12-01 with `cargo xtask setup --with dl` (Debian's Python
/// 3.11): `import tensorflow` (2.21, CPU) takes 4.3 s and 540 MB resident and fits 1 GiB of
/// address space; `import torch` (2.15, the CUDA build from `PyPI` on a machine without a GPU) takes
/// 2.9 s and 660 MB resident but maps about 3 GB of libraries, and fails under 2 GiB.
/// The CPU time leaves room for a few epochs of a small model after the import.
const FRAMEWORK_LIMITS: [(&str, u64, u64); 3] = [("torch", 4096, 60), ("tensorflow", 2048, 60), ("keras", 2048, 60)];

/// `limits`, raised for the deep-learning frameworks `code` imports (never lowered).
pub fn limits_for_frameworks(code: &str, limits: &RunLimits) -> RunLimits {
    let packages = super::extract::imported_packages(code);
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

/// Scores a predicted run as if it had happened: an exception (`Type: message`) ends it
/// with a traceback, otherwise it exits normally having printed `output`.
fn score_prediction(report: &RestructuredReport, exception: Option<&str>, output: &str) -> (f32, String) {
    let (termination, stderr) = match exception {
        Some(e) => (
            Termination::Exited(1),
            format!("Traceback (most recent call last):\n{e}\n"),
        ),
        None => (Termination::Exited(0), String::new()),
    };
    score_run(report, &observe(termination, output, &stderr, 0))
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
        RolloutEnd::Unparsable(why) => {
            return Err(format!(
                "The neural debugger ({model}) wrote a state that does not parse after {steps} steps ({why})."
            ));
        }
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
    let (score, mut detail) = score_run(report, &run);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::restructure_rules;
    use replayground_shared::repro::BugReport;

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
        assert_eq!(keras.memory_bytes, 2 << 30);
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

    #[test]
    fn structural_errors_have_a_position() {
        assert!(structural("import numpy as np\nx = np.zeros(3)\n").passed);
        let v = structural("x = (1,\nprint(x\n");
        assert!(!v.passed);
        assert!(v.detail.contains("line "), "{}", v.detail);
        let v = structural("def f(:\n    return 1\n");
        assert!(!v.passed && v.detail.contains("line 1"), "{}", v.detail);
    }

    #[tokio::test]
    async fn ruff_finds_undefined_names_or_says_it_is_missing() {
        let (skipped, _) = static_check("x = y", None).await;
        assert!(skipped.passed && skipped.detail.contains("skipped"));
        let Some(ruff) = locate_ruff() else {
            eprintln!("ruff is not installed; run `cargo xtask setup`");
            return;
        };
        let (v, diagnostics) = static_check("import os\nx = np.zeros(3)\n", Some(&ruff)).await;
        assert!(!v.passed);
        assert!(v.detail.contains("Undefined name `np`"), "{}", v.detail);
        assert!(diagnostics.iter().any(|d| d.code.as_deref() == Some("F401")));
        let (v, _) = static_check("import numpy as np\nprint(np.zeros(3))\n", Some(&ruff)).await;
        assert!(v.passed, "{}", v.detail);
        let (v, _) = static_check("x = (1,\nprint(x\n", Some(&ruff)).await;
        assert!(!v.passed, "syntax errors fail: {}", v.detail);
    }

    #[tokio::test]
    async fn relevance_without_models_uses_word_overlap() {
        let report = "the softmax cross entropy loss becomes nan with large logits";
        let related = "import numpy as np\nlogits = np.array([1000.0, 0.0])\nloss = -np.log(np.exp(logits) / np.exp(logits).sum())\nprint('loss', loss)";
        let unrelated = "for i in range(3):\n    print(i)";
        assert!(relevance(related, report, None, None).await.passed);
        assert!(!relevance(unrelated, report, None, None).await.passed);
    }

    #[test]
    fn metrics_and_exploding_losses_are_read_from_output() {
        let m = metrics("epoch 1 loss: 0.5\nepoch 2 loss=12000.0 acc 0.1\nloss nan");
        assert_eq!(m[0], ("loss".to_owned(), 0.5));
        assert_eq!(m[2], ("acc".to_owned(), 0.1));
        assert!(m[3].1.is_nan());
        let run = observe(Termination::Exited(0), "loss: 0.5\nloss: 20.0\nloss: 9000.0\n", "", 1);
        assert_eq!(run.symptom.class, SymptomClass::WrongCalculation);
        assert!(run.symptom.cues.contains(&"exploding".to_owned()));
    }

    #[test]
    fn missing_packages_and_gpus_are_recognised() {
        let stderr = "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nModuleNotFoundError: No module named 'torch'\n";
        assert_eq!(
            observe(Termination::Exited(1), "", stderr, 1).missing.as_deref(),
            Some("torch")
        );
        let stderr = "Traceback (most recent call last):\nAssertionError: Torch not compiled with CUDA enabled\n";
        assert_eq!(
            observe(Termination::Exited(1), "", stderr, 1).missing.as_deref(),
            Some("a CUDA GPU")
        );
    }

    #[test]
    fn runs_are_scored_against_the_report() {
        let crash = restructure_rules(&BugReport {
            observed: "ValueError: shapes (3,4) and (3,4) not aligned: 4 (dim 1) != 3 (dim 0)".into(),
            ..BugReport::default()
        });
        let stderr = "Traceback (most recent call last):\n  File \"<string>\", line 3, in <module>\nValueError: shapes (3,4) and (3,4) not aligned: 4 (dim 1) != 3 (dim 0)\n";
        let (score, _) = score_run(&crash, &observe(Termination::Exited(1), "", stderr, 1));
        assert!(score >= ACCEPT_SCORE, "{score}");
        let other = "Traceback (most recent call last):\nKeyError: 'x'\n";
        let (score, detail) = score_run(&crash, &observe(Termination::Exited(1), "", other, 1));
        assert!(score < 0.6, "{score}");
        assert!(detail.contains("KeyError"), "{detail}");
        let (score, _) = score_run(&crash, &observe(Termination::Exited(0), "done", "", 1));
        assert!(score < 0.3, "{score}");

        let nan = restructure_rules(&BugReport {
            title: "loss becomes nan".into(),
            ..BugReport::default()
        });
        let (score, _) = score_run(&nan, &observe(Termination::Exited(0), "step 0 loss: nan\n", "", 1));
        assert!(score >= ACCEPT_SCORE, "{score}");
        let (score, _) = score_run(&nan, &observe(Termination::Exited(0), "step 0 loss: 0.25\n", "", 1));
        assert!(score < ACCEPT_SCORE, "{score}");
        let then_crashed = "Traceback (most recent call last):\nTypeError: bad operand\n";
        let (score, detail) = score_run(
            &nan,
            &observe(Termination::Exited(1), "step 0 loss: nan\n", then_crashed, 1),
        );
        assert!(
            score < ACCEPT_SCORE,
            "printing the symptom then crashing is not a reproduction: {score}"
        );
        assert!(detail.contains("TypeError"), "{detail}");
    }

    #[test]
    fn printed_integer_arrays_are_compared_without_padding() {
        let values = quoted_values("prints `[[ 70 180   4  54]]` instead");
        assert!(values.contains("[70 180 4 54]"), "{values:?}");
        let wrapped = restructure_rules(&BugReport {
            title: "bright pixels wrap around".into(),
            description: "it prints `[[ 70 180   4  54]]`. Expected `[[ 70 180 255 255]]`.".into(),
            ..BugReport::default()
        });
        assert_eq!(reported_values(&wrapped).len(), 1, "{:?}", reported_values(&wrapped));
        let run = observe(Termination::Exited(0), "[[ 70 180   4  54]]\n", "", 1);
        let (score, _) = score_run(&wrapped, &run);
        assert!(score >= ACCEPT_SCORE, "{score}");
        let (score, _) = score_run(
            &wrapped,
            &observe(Termination::Exited(0), "[[ 70 180 255 255]]\n", "", 1),
        );
        assert!(score < ACCEPT_SCORE, "{score}");
    }

    #[test]
    fn a_run_shows_what_goes_wrong_and_the_report_says_why() {
        let report = restructure_rules(&BugReport {
            title: "Loss explodes after I changed the learning rate in the config".into(),
            observed: "epoch 0 loss 3.2e+02\nepoch 5 loss 7.7e+19\nepoch 9 loss inf".into(),
            ..BugReport::default()
        });
        assert_eq!(report.symptom.class, SymptomClass::WrongParameterSetting, "{report:?}");
        let exploding = "epoch 0 loss 1.5e+03\nepoch 1 loss 8.1e+40\nepoch 2 loss inf\n";
        let mut run = observe(Termination::Exited(0), exploding, "", 1);
        assert!(
            run.symptom.class.is_silent() && run.symptom.class != report.symptom.class,
            "{run:?}"
        );
        let before = score_run(&report, &run).0;
        align_with_report(&report, &mut run);
        assert_eq!(run.symptom.class, SymptomClass::WrongParameterSetting);
        assert!(score_run(&report, &run).0 >= ACCEPT_SCORE && before < ACCEPT_SCORE);
        // No anomaly of its own: not promoted, however many words it shares.
        let mut calm = observe(Termination::Exited(0), "epoch 9 loss 0.25\n", "", 1);
        align_with_report(&report, &mut calm);
        assert_ne!(calm.symptom.class, SymptomClass::WrongParameterSetting, "{calm:?}");
        // An anomaly that is not the reported one (an accuracy cue only): not promoted.
        let mut other = observe(Termination::Exited(0), "accuracy nan\n", "", 1);
        align_with_report(&report, &mut other);
        assert_ne!(other.symptom.class, SymptomClass::WrongParameterSetting, "{other:?}");
        // A crash never stands for a silent bug.
        let mut crashed = observe(
            Termination::Exited(1),
            exploding,
            "Traceback (most recent call last):\nValueError: boom\n",
            1,
        );
        align_with_report(&report, &mut crashed);
        assert_eq!(crashed.symptom.class, SymptomClass::Crash);
    }

    #[test]
    fn a_printed_warning_shows_a_warning_report() {
        let report = restructure_rules(&BugReport {
            title: "RuntimeWarning: Mean of empty slice, and the loss is nan".into(),
            ..BugReport::default()
        });
        assert_eq!(report.symptom.class, SymptomClass::Warning);
        let stderr = "x.py:3: RuntimeWarning: Mean of empty slice.\n";
        let mut run = observe(Termination::Exited(0), "loss nan\n", stderr, 1);
        align_with_report(&report, &mut run);
        assert_eq!(run.symptom.class, SymptomClass::Warning);
        let mut quiet = observe(Termination::Exited(0), "loss nan\n", "", 1);
        align_with_report(&report, &mut quiet);
        assert_ne!(quiet.symptom.class, SymptomClass::Warning);
    }
}
