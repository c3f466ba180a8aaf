//! Scoring, pure: how a check's verdict is worded, how well a run shows the reported
//! symptom, and the combined score that decides acceptance. Nothing here runs anything.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::Regex;
use replayground_shared::repro::{CheckKind, CheckVerdict, RestructuredReport, Symptom, SymptomClass};

use super::observe::{RunObservation, exception_text, observe};
use crate::report::parse_traceback;
use replayground_exec::sandbox::Termination;

/// A candidate is accepted at this combined score.
pub const ACCEPT_SCORE: f32 = 0.7;

/// The highest score a run that was not observed can get: below acceptance.
pub const APPROXIMATED_CAP: f32 = 0.6;

pub(crate) fn verdict(check: CheckKind, passed: bool, score: Option<f32>, detail: impl Into<String>) -> CheckVerdict {
    CheckVerdict {
        check,
        passed,
        score,
        detail: detail.into(),
        approximated: false,
        missing: None,
    }
}

/// The first `n` items joined, and how many more there are.
pub(crate) fn first_few(items: &[String], n: usize) -> String {
    let mut text = items.iter().take(n).cloned().collect::<Vec<_>>().join("; ");
    if items.len() > n {
        let _ = write!(text, "; and {} more", items.len() - n);
    }
    text
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
    // A run that prints every value a report of unclassified symptom quotes shows that
    // symptom, whatever else its output looks like (a framework's deprecation warnings).
    if report.symptom.class == SymptomClass::Unknown && prints_reported_values(report, run) {
        run.symptom.class = SymptomClass::Unknown;
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
        .filter(|m| !is_version(text, m.start(), m.end()))
        .map(|m| m.as_str().to_lowercase().replace(' ', "").replace(",)", ")"))
        .chain(arrays)
        .collect()
}

/// Whether the number at `start..end` of `text` is part of a version (`torch==2.4.0`,
/// `keras 2.15.0`, `v1.2`), which no run prints as a result.
fn is_version(text: &str, start: usize, end: usize) -> bool {
    let mut after = text[end..].chars();
    let dotted = after.next() == Some('.') && after.next().is_some_and(|c| c.is_ascii_digit());
    let before = &text[..start];
    let tagged = before
        .strip_suffix(['v', 'V'])
        .is_some_and(|rest| !rest.ends_with(|c: char| c.is_alphanumeric() || c == '_'));
    let pinned = ["==", ">=", "<=", "~=", "!="]
        .iter()
        .any(|op| before.trim_end_matches(' ').ends_with(op));
    dotted || tagged || pinned
}

/// The share of the reported exception message's words a run's message must have for a
/// crash of the reported type to count as the reported one. Every crash the agent accepted
/// on `tests/repro-real` with the reports' framework versions (2026-12-03) had them all;
/// the one accepted for another reason (Keras 3's `Unrecognized keyword arguments` for a
/// report about negative dimensions) had 5%.
const MESSAGE_OVERLAP_FLOOR: f32 = 0.5;

/// Whether a run's exception message is the reported one: most of its words, or, for a
/// message without words to count (`KeyError: 'lr'`), the same text. `overlap` is
/// [`word_overlap`] of the two, which the caller has already computed.
fn same_message(message: &str, reported: &str, overlap: f32) -> bool {
    if words(reported).is_empty() {
        return same_wordless(message, reported);
    }
    overlap >= MESSAGE_OVERLAP_FLOOR
}

/// Whether a message without words to count is the reported one: the same text, or, where
/// both are a bare integer (`KeyError: 764`, a row label that the data and its shuffle
/// decide), any integer.
fn same_wordless(message: &str, reported: &str) -> bool {
    let bare = |m: &str| m.split_whitespace().collect::<String>();
    let integer = |m: &str| {
        let digits = m.strip_prefix('-').unwrap_or(m);
        !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
    };
    let (message, reported) = (bare(message), bare(reported));
    message == reported || (integer(&message) && integer(&reported))
}

/// Whether a run's output shows an expected exception line (a benchmark's truth): most of
/// its words, by the agent's own floor, or its text where it has no words to count.
pub(crate) fn shows_message(output: &str, expected: &str) -> bool {
    if words(expected).is_empty() {
        let bare = |m: &str| m.split_whitespace().collect::<String>();
        return bare(output).contains(&bare(expected));
    }
    word_overlap(output, expected) >= MESSAGE_OVERLAP_FLOOR
}

/// The score of a run that prints every value a report of unknown symptom quotes: above
/// acceptance, below a classified symptom matched with its cues.
const SHOWS_REPORTED_VALUES: f32 = 0.75;

/// Whether `code` itself writes a value the report of unknown symptom quotes: a run that
/// prints it then shows the script, not the bug (`print("loss 1.0986")`), and is not
/// accepted on those values.
pub(crate) fn writes_reported_values(report: &RestructuredReport, code: &str) -> bool {
    report.symptom.class == SymptomClass::Unknown && shows_any(&reported_values(report), &quoted_values(code))
}

fn shows_any(reported: &BTreeSet<String>, seen: &BTreeSet<String>) -> bool {
    reported.iter().any(|r| seen.contains(r))
}

/// Whether quoted values say enough to be met by chance rarely: two or more, or one with
/// four significant digits or more (`1.0986123`, not `0.5`).
fn is_specific(values: &BTreeSet<String>) -> bool {
    let significant = |v: &str| {
        v.trim_start_matches(['-', '0', '.'])
            .chars()
            .filter(char::is_ascii_digit)
            .count()
    };
    values.len() >= 2 || values.iter().any(|v| significant(v) >= 4)
}

/// The relative difference within which two printed numbers are one `float32` result: it
/// holds six to seven significant digits, and the same result computed by another build or
/// on another machine may differ after the sixth (`ln 3` printed as `1.0986123085021973` in a
/// report and `1.0986120700836182` here).
const FLOAT32_PRECISION: f64 = 1e-6;

/// Whether every reported value is among the seen ones: the same text, or the same number
/// to the shorter one's decimals when both have three or more (`1.0986` for
/// `1.0986123085021973`: the run printed fewer digits), and to six significant digits at
/// most ([`FLOAT32_PRECISION`]).
fn shows_all(reported: &BTreeSet<String>, seen: &BTreeSet<String>) -> bool {
    let decimals = |v: &str| {
        v.split_once('.')
            .map_or(0, |(_, d)| d.chars().take_while(char::is_ascii_digit).count())
    };
    let close = |r: &str, s: &str| {
        let digits = decimals(r).min(decimals(s));
        match (r.parse::<f64>(), s.parse::<f64>()) {
            (Ok(a), Ok(b)) if digits >= 3 && a.is_finite() => {
                let printed = 0.51 * 10f64.powi(-i32::try_from(digits.min(12)).unwrap_or(12));
                (a - b).abs() <= printed.max(a.abs() * FLOAT32_PRECISION)
            }
            _ => false,
        }
    };
    !reported.is_empty()
        && reported
            .iter()
            .all(|r| seen.contains(r) || seen.iter().any(|s| close(r, s)))
}

/// Whether a run ends normally printing every value the report quotes, when those are
/// specific enough not to be met by chance (two or more, or one of four significant digits).
fn prints_reported_values(report: &RestructuredReport, run: &RunObservation) -> bool {
    let values = reported_values(report);
    matches!(run.termination, Termination::Exited(0))
        && is_specific(&values)
        && shows_all(&values, &quoted_values(&run.computed_output()))
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
    let output = run.computed_output();
    let class_match = expected.class == observed.class && expected.class != SymptomClass::Unknown;
    match expected.class {
        SymptomClass::Crash => {
            let (type_match, other_type) = match (&expected.error_type, &observed.error_type) {
                (Some(e), Some(o)) => (e == o, e != o),
                (None, Some(_)) => (true, false),
                _ => (false, false),
            };
            let message = run.traceback.as_ref().map_or("", |t| t.message.as_str());
            let reported = parse_traceback(&report.observed);
            let reported_message = reported.as_ref().map(|t| t.message.clone()).unwrap_or_default();
            // The words are counted over each exception's whole text, not its first line:
            // Keras's `in user code:` first line is the same for every error it wraps.
            let whole = |text: &str, error_type: &str, first_line: &str| {
                exception_text(text, error_type).map_or_else(|| first_line.to_owned(), str::to_owned)
            };
            let overlap = if reported_message.is_empty() {
                cue_recall
            } else {
                let run_type = run.traceback.as_ref().map_or("", |t| t.error_type.as_str());
                let reported_type = reported.as_ref().map_or("", |t| t.error_type.as_str());
                word_overlap(
                    &whole(&run.stderr, run_type, message),
                    &whole(&report.observed, reported_type, &reported_message),
                )
            };
            // The reported exception type is part of the symptom: another type with the
            // reported message (a library version that raises a subclass, or a different
            // failure) is never accepted on the message alone.
            let message_weight = if other_type { 0.1 } else { 0.2 };
            let score = if class_match { 0.5 } else { 0.0 }
                + if type_match && class_match { 0.3 } else { 0.0 }
                + message_weight * overlap;
            // The reported type raised for another reason (Keras 3 refusing a Keras 1
            // keyword with a `ValueError` where the report's `ValueError` is about shapes)
            // is not the reported crash either.
            let another_reason =
                type_match && !reported_message.is_empty() && !same_message(message, &reported_message, overlap);
            let score = if another_reason {
                score.min(ACCEPT_SCORE - 0.1)
            } else {
                score
            };
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
            let not_it = if other_type {
                format!(" That is not the reported {wanted}, even with the same message.")
            } else if another_reason && words(&reported_message).is_empty() {
                format!(
                    " Its message is not the report's (`{}`): the reported {wanted} raised for another reason.",
                    reported_message.trim()
                )
            } else if another_reason {
                format!(
                    " Its message shares little with the report's ({:.0}% of the words): the reported {wanted} raised for another reason.",
                    overlap * 100.0
                )
            } else {
                String::new()
            };
            (score, format!("The report shows {wanted}; {seen}.{not_it}"))
        }
        SymptomClass::Unknown => {
            // What the bug is could not be read, but the report's own output can still be
            // met: a run that ends normally printing every value it quotes (specific
            // ones: two or more, or one of four significant digits or more) shows it.
            let values = reported_values(report);
            let listed = values.iter().take(6).cloned().collect::<Vec<_>>().join(", ");
            if prints_reported_values(report, run) {
                return (
                    SHOWS_REPORTED_VALUES,
                    format!(
                        "The report's symptom could not be classified, but the run prints every value the report shows ({listed})."
                    ),
                );
            }
            let overlap = word_overlap(&output, &report.observed);
            let hint = if is_specific(&values) {
                format!(" A run that ends normally and prints the values the report shows ({listed}) would.")
            } else {
                String::new()
            };
            (
                0.4 * overlap,
                format!("The report's symptom could not be classified, so the run cannot confirm it.{hint}"),
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
            // So is one whose output reads as a warning (a deprecated argument's, say) when
            // the report speaks of none: it shows that warning, not the silent bug, however
            // many reported values it prints.
            let report_warns = format!("{}\n{}", report.problem, report.observed)
                .to_lowercase()
                .contains("warn");
            let warned = !crashed && observed.class == SymptomClass::Warning && !report_warns;
            let score = if crashed || warned {
                score.min(ACCEPT_SCORE - 0.1)
            } else {
                score
            };
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
            let fix = if warned {
                " The report shows no warning: remove what raises it (a deprecated argument or API) so that the run shows the bug itself."
            } else {
                ""
            };
            (
                score,
                format!(
                    "The report shows {} ({}); {seen}.{fix}",
                    expected.class.as_str(),
                    expected_cues.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            )
        }
    }
}

/// Scores a predicted run as if it had happened: an exception (`Type: message`) ends it
/// with a traceback, otherwise it exits normally having printed `output`.
pub(crate) fn score_prediction(report: &RestructuredReport, exception: Option<&str>, output: &str) -> (f32, String) {
    let (termination, stderr) = match exception {
        Some(e) => (
            Termination::Exited(1),
            format!("Traceback (most recent call last):\n{e}\n"),
        ),
        None => (Termination::Exited(0), String::new()),
    };
    score_run(report, &observe(termination, output, &stderr, 0))
}

/// The combined score of one candidate's verdicts, and whether a run was observed: a real
/// run decides; without one the score stays below acceptance, since nothing was observed.
pub fn combined_score(verdicts: &[CheckVerdict]) -> (f32, bool) {
    let find = |kind: CheckKind| verdicts.iter().find(|v| v.check == kind);
    let relevance_failed = find(CheckKind::Relevance).is_some_and(|v| !v.passed);
    match find(CheckKind::Runtime) {
        Some(runtime) if !runtime.approximated => {
            let score = runtime.score.unwrap_or(0.0) - if relevance_failed { 0.1 } else { 0.0 };
            (score.clamp(0.0, 1.0), true)
        }
        Some(runtime) => (runtime.score.unwrap_or(0.0).min(APPROXIMATED_CAP), false),
        None => {
            let passed = |kind| find(kind).is_some_and(|v| v.passed);
            let relevance = find(CheckKind::Relevance).and_then(|v| v.score).unwrap_or(0.0);
            let score = f32::from(u8::from(passed(CheckKind::Structural))) * 0.2
                + f32::from(u8::from(passed(CheckKind::Static))) * 0.1
                + relevance * 0.2;
            (score.min(0.5), false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restructure::rules_of;
    use replayground_shared::repro::BugReport;

    /// How a run that raised `exception` (`Type: message`) scores against `observed`.
    fn raised(observed: &str, exception: &str) -> (f32, String) {
        let report = rules_of(BugReport {
            observed: observed.into(),
            ..BugReport::default()
        });
        let stderr =
            format!("Traceback (most recent call last):\n  File \"<string>\", line 3, in <module>\n{exception}\n");
        score_run(&report, &observe(Termination::Exited(1), "", &stderr, 1))
    }

    #[test]
    fn the_reported_type_raised_for_another_reason_is_not_the_crash() {
        let reported = "ValueError: One of the dimensions in the output is <= 0 due to downsampling in conv2d. Consider increasing the input size.";
        let crash = |message: &str| raised(reported, &format!("ValueError: {message}"));
        let (score, detail) = crash("Unrecognized keyword arguments passed to Conv2D: {'border_mode': 'valid'}");
        assert!(score < ACCEPT_SCORE, "{score} {detail}");
        assert!(detail.contains("for another reason"), "{detail}");
        // A message without words to count is compared as it is.
        assert!(raised("KeyError: 'lr'", "KeyError: 'lr'").0 >= ACCEPT_SCORE);
        assert!(raised("KeyError: 'lr'", "KeyError: 'x'").0 < ACCEPT_SCORE);
        let (score, detail) = raised("KeyError: 'lr'", "KeyError: 'x'");
        assert!(detail.contains("not the report's (`'lr'`)"), "{score} {detail}");
        // A bare integer key is a row label the data decides: any integer is the same
        // message, a quoted name or a word is not.
        assert!(raised("KeyError: 764", "KeyError: 22").0 >= ACCEPT_SCORE);
        assert!(raised("KeyError: 764", "KeyError: 'review'").0 < ACCEPT_SCORE);
        assert!(raised("KeyError: 764", "KeyError: 7.5").0 < ACCEPT_SCORE);
        let (score, detail) = crash(
            "One of the dimensions in the output is <= 0 due to downsampling in conv2d. Consider increasing the input size. Received input shape [None, 1, 20, 56]",
        );
        assert!(score >= ACCEPT_SCORE, "{score} {detail}");
    }

    #[test]
    fn keras_wrapped_errors_are_compared_by_their_cause() {
        // Keras's first line is the same whatever it wraps; the cause comes after it.
        let wrapped = |cause: &str| format!("ValueError: in user code:\n\n  ...\n\n    ValueError: {cause}");
        let reported = wrapped(
            "Dimensions must be equal, but are 2 and 32 for '{{node Equal}} = Equal[T=DT_FLOAT](IteratorGetNext:1, Cast_1)' with input shapes: [?,2], [?,32,32].",
        );
        let (score, detail) = raised(
            &reported,
            &wrapped(
                "Input 0 of layer \"model\" is incompatible with the layer: expected shape=(None, 64, 64, 1), found shape=(None, 4)",
            ),
        );
        assert!(score < ACCEPT_SCORE, "{score} {detail}");
        assert!(detail.contains("for another reason"), "{detail}");
        let (score, detail) = raised(
            &reported,
            &wrapped(
                "Dimensions must be equal, but are 2 and 16 for '{{node Equal}} = Equal[T=DT_FLOAT](IteratorGetNext:1, Cast_1)' with input shapes: [?,2], [?,16,16].",
            ),
        );
        assert!(score >= ACCEPT_SCORE, "{score} {detail}");
    }

    #[test]
    fn an_unclassified_report_is_met_by_a_run_printing_its_values() {
        let report = rules_of(BugReport {
            observed: "tensor(0.5000)\ntensor(0.6682)\ntensor(0.6225)".into(),
            ..BugReport::default()
        });
        assert_eq!(report.symptom.class, SymptomClass::Unknown);
        let run = |stdout: &str, code: i32| observe(Termination::Exited(code), stdout, "", 0);
        let (score, detail) = score_run(&report, &run("tensor(0.5000)\ntensor(0.6682)\ntensor(0.6225)\n", 0));
        assert!(score >= ACCEPT_SCORE, "{score} {detail}");
        // One value missing, or a crash after printing them: not shown.
        let (score, detail) = score_run(&report, &run("tensor(0.5000)\ntensor(0.6682)\n", 0));
        assert!(score < ACCEPT_SCORE, "{score}");
        assert!(detail.contains("0.6225"), "the values to print are named: {detail}");
        assert!(score_run(&report, &run("tensor(0.5000)\ntensor(0.6682)\ntensor(0.6225)\n", 1)).0 < ACCEPT_SCORE);
        // Unless the script writes them itself.
        assert!(writes_reported_values(&report, "print('tensor(0.6682)')\n"));
        assert!(!writes_reported_values(
            &report,
            "vec = torch.tensor([0.2, 0.9, 0.7])\n"
        ));
        // One long value, printed with fewer digits, is met; one short value never.
        let stuck = rules_of(BugReport {
            observed: "epoch: 10\tTrain Loss : 1.0986123085021973".into(),
            ..BugReport::default()
        });
        assert!(score_run(&stuck, &run("Train Loss : 1.0986\n", 0)).0 >= ACCEPT_SCORE);
        assert!(score_run(&stuck, &run("Train Loss : 1.0990\n", 0)).0 < ACCEPT_SCORE);
        // The same float32 result printed in full: its digits after the sixth differ.
        assert!(score_run(&stuck, &run("Train Loss : 1.0986120700836182\n", 0)).0 >= ACCEPT_SCORE);
        assert!(score_run(&stuck, &run("Train Loss : 1.0986220700836182\n", 0)).0 < ACCEPT_SCORE);
        let vague = rules_of(BugReport {
            observed: "it prints 0.5".into(),
            ..BugReport::default()
        });
        if vague.symptom.class == SymptomClass::Unknown {
            assert!(score_run(&vague, &run("0.5\n", 0)).0 < ACCEPT_SCORE);
        }
    }

    #[test]
    fn versions_are_not_values_a_run_must_print() {
        assert!(quoted_values("Versions: keras==2.15.0, numpy==2.1.0, torch 2.4.0, tf >= 2.1, v1.2").is_empty());
        assert_eq!(quoted_values("loss 0.25, conv 0.5, dev 1.5").len(), 3);
        // Arrows and metrics are not version pins.
        assert_eq!(
            quoted_values("batch of 4 -> (4, 3), loss=0.25"),
            BTreeSet::from(["(4,3)".to_owned(), "0.25".to_owned()])
        );
        // Versions written on the output's last line do not ask the run to print them.
        let report = rules_of(BugReport {
            observed: "0.6666666865348816\n\n[[1.]]\n\nVersions: keras==2.15.0, numpy==2.1.0".into(),
            ..BugReport::default()
        });
        let mut run = observe(
            Termination::Exited(0),
            "0.6666666865348816\n\n[[1.]]\n",
            "WARNING:tensorflow:From keras/losses.py: The name tf.losses.sparse_softmax_cross_entropy is deprecated.\n",
            0,
        );
        let (score, detail) = score_run(&report, &run);
        assert!(score >= ACCEPT_SCORE, "{score} {detail}");
        // The framework's warnings do not make it a run about a warning: it shows the
        // report's (unclassified) symptom.
        assert_eq!(run.symptom.class, SymptomClass::Warning);
        align_with_report(&report, &mut run);
        assert_eq!(run.symptom.class, SymptomClass::Unknown);
    }

    #[test]
    fn runs_are_scored_against_the_report() {
        let crash = rules_of(BugReport {
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
        let subclass = "Traceback (most recent call last):\nNotImplementedError: shapes (3,4) and (3,4) not aligned: 4 (dim 1) != 3 (dim 0)\n";
        let (score, detail) = score_run(&crash, &observe(Termination::Exited(1), "", subclass, 1));
        assert!(
            score < ACCEPT_SCORE,
            "the reported message with another exception type is not the reported crash: {score}"
        );
        assert!(detail.contains("not the reported ValueError"), "{detail}");

        let nan = rules_of(BugReport {
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
    fn what_a_script_prints_from_its_own_source_shows_nothing() {
        let report = rules_of(BugReport {
            description: "All the negative values are predicted to zeros.".into(),
            observed: "[[0.49911702]\n [0.4885921 ]]".into(),
            ..BugReport::default()
        });
        let judged = |code: &str, stdout: &str| {
            let mut run = observe(Termination::Exited(0), stdout, "", 1).of_script(code, stdout);
            align_with_report(&report, &mut run);
            score_run(&report, &run)
        };
        // The script says the report's words and quotes its values: nothing was computed.
        let labels = "print('Predicted shape is not (2, 1): negative values predicted to zeros:', F.shape)\nprint('observed', [0.49911702], [0.4885921])\n";
        let stdout = "Predicted shape is not (2, 1): negative values predicted to zeros: (2, 1)\nobserved [0.49911702] [0.4885921]\n";
        let (score, detail) = judged(labels, stdout);
        assert!(score < ACCEPT_SCORE, "{score} {detail}");
        // The same output read without the script's text to blank scores as before.
        let (unblanked, _) = judged("print(text)\n", stdout);
        assert!(unblanked >= ACCEPT_SCORE, "the output alone would pass: {unblanked}");
        // A label beside a computed value leaves the value: the program's NaN still shows.
        let nan = rules_of(BugReport {
            title: "loss becomes nan".into(),
            ..BugReport::default()
        });
        let code = "print('step', step, 'loss:', loss)\n";
        let mut run =
            observe(Termination::Exited(0), "step 0 loss: nan\n", "", 1).of_script(code, "step 0 loss: nan\n");
        align_with_report(&nan, &mut run);
        let (score, detail) = score_run(&nan, &run);
        assert!(score >= ACCEPT_SCORE, "{score} {detail}");
    }

    #[test]
    fn printed_integer_arrays_are_compared_without_padding() {
        let values = quoted_values("prints `[[ 70 180   4  54]]` instead");
        assert!(values.contains("[70 180 4 54]"), "{values:?}");
        let wrapped = rules_of(BugReport {
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
        let report = rules_of(BugReport {
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
    fn a_run_that_reads_as_a_warning_does_not_show_a_silent_bug() {
        let report = rules_of(BugReport {
            title: "Regression does not learn: accuracy stays at zero".into(),
            observed: "loss: 1297.6431 - accuracy: 0.0000e+00".into(),
            ..BugReport::default()
        });
        assert!(report.symptom.class.is_silent(), "{report:?}");
        let stdout = "loss: 1297.6431 - accuracy: 0.0000e+00\n";
        let warning = "WARNING:absl:`lr` is deprecated in Keras optimizer, please use `learning_rate`.\n";
        let mut warned = observe(Termination::Exited(0), stdout, warning, 1);
        align_with_report(&report, &mut warned);
        assert_eq!(warned.symptom.class, SymptomClass::Warning, "{warned:?}");
        let (score, detail) = score_run(&report, &warned);
        assert!(score < ACCEPT_SCORE, "{score} {detail}");
        assert!(detail.contains("remove what raises it"), "{detail}");
        // A report that speaks of the warning may be shown with it.
        let warning_report = rules_of(BugReport {
            title: "Regression does not learn: accuracy stays at zero, with a warning".into(),
            observed: "loss: 1297.6431 - accuracy: 0.0000e+00".into(),
            ..BugReport::default()
        });
        assert!(warning_report.symptom.class.is_silent(), "{warning_report:?}");
        assert!(score_run(&warning_report, &warned).0 >= ACCEPT_SCORE);
        // The same values without the warning show it.
        let mut quiet = observe(Termination::Exited(0), stdout, "", 1);
        align_with_report(&report, &mut quiet);
        let (score, detail) = score_run(&report, &quiet);
        assert!(score >= ACCEPT_SCORE, "{score} {detail} {quiet:?}");
    }

    #[test]
    fn a_printed_warning_shows_a_warning_report() {
        let report = rules_of(BugReport {
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
