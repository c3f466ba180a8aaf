//! What a candidate did when it ran, read from its output like a report (pure): the
//! traceback, the printed metrics, the symptom, and what it needed that is missing here.

use std::sync::LazyLock;

use regex::Regex;
use replayground_shared::repro::{Symptom, SymptomClass};

use super::written::{printed_literals, without_literals};
use crate::report::{Traceback, classify, parse_traceback};
use replayground_exec::sandbox::Termination;

/// Standard output kept from a candidate's run.
pub(crate) const MAX_STDOUT: usize = 32 * 1024;

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
    /// The text the script's own `print` calls write ([`printed_literals`]): not evidence
    /// of anything the program computed.
    pub written: Vec<String>,
}

/// Characters of printed output [`RunObservation::shown`] keeps from a run that did not crash.
const SHOWN_OUTPUT: usize = 2000;

impl RunObservation {
    /// What the run printed, with the text the script writes itself blanked, and its stderr:
    /// what the program computed and the libraries said.
    pub fn computed_output(&self) -> String {
        format!("{}\n{}", without_literals(&self.stdout, &self.written), self.stderr)
    }

    /// This run read as the run of `code`: the text `code`'s `print` calls write is blanked
    /// before the symptom is classified (`print("negative become zero:", n)` shows neither
    /// whatever `n` is), and [`Self::computed_output`] leaves it out. `full_stdout` is what
    /// the run printed before [`MAX_STDOUT`] cut it.
    #[must_use]
    pub fn of_script(mut self, code: &str, full_stdout: &str) -> Self {
        self.written = printed_literals(code);
        if !self.written.is_empty() {
            self.symptom = self.symptom_of(&without_literals(full_stdout, &self.written));
        }
        self
    }

    /// This run read as printed, the script's own text counted like the rest (from the
    /// output it keeps, which [`MAX_STDOUT`] may have cut).
    pub(crate) fn as_printed(&self) -> Self {
        Self {
            symptom: self.symptom_of(&self.stdout),
            written: Vec::new(),
            ..self.clone()
        }
    }

    fn symptom_of(&self, stdout: &str) -> Symptom {
        let crashed = !matches!(self.termination, Termination::Exited(0));
        read_symptom(stdout, &self.stderr, crashed, &self.metrics)
    }

    /// What the run showed, in a few lines: a crash's exception with its whole message
    /// (Keras puts the cause on the lines after the first), or the end of what it printed.
    pub fn shown(&self) -> String {
        let tail = |text: &str, chars: usize| {
            let skip = text.chars().count().saturating_sub(chars);
            text.chars().skip(skip).collect::<String>()
        };
        match &self.traceback {
            Some(t) => exception_text(&self.stderr, &t.error_type).map_or_else(
                || format!("{}: {}", t.error_type, t.message),
                |text| tail(text, SHOWN_OUTPUT),
            ),
            None => tail(self.stdout.trim_end(), SHOWN_OUTPUT),
        }
    }
}

/// The exception's whole text in `output`: from the last line that names `error_type`
/// (possibly qualified, possibly indented) to the end. Keras wraps an error raised inside a
/// compiled function in `ValueError: in user code:` and gives the cause on the lines after,
/// under the same type: the cause is the last such line.
pub(crate) fn exception_text<'a>(output: &'a str, error_type: &str) -> Option<&'a str> {
    if error_type.is_empty() {
        return None;
    }
    let (at, _) = output.match_indices(&format!("{error_type}:")).last()?;
    let start = output[..at].rfind('\n').map_or(0, |n| n + 1);
    Some(output[start..].trim())
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
    // Python imports a dotted module's packages first, so `No module named 'a.b'` means
    // `a` is installed and has no `b` (an API that moved or was removed): a bug in the
    // script that a rewrite can fix, not a package this machine lacks. (A namespace
    // package's part shipped apart, like `google.protobuf`, reads the same; such a run is
    // refined on instead of stopping with an approximated result.)
    let missing = traceback.as_ref().and_then(|t| {
        if t.error_type == "ModuleNotFoundError" || t.error_type == "ImportError" {
            MISSING_MODULE
                .captures(&t.message)
                .filter(|c| !c[1].contains('.'))
                .map(|c| c[1].to_owned())
        } else {
            None
        }
    });
    let missing = missing.or_else(|| NEEDS_GPU.is_match(stderr).then(|| "a CUDA GPU".to_owned()));
    let found = metrics(stdout);
    let symptom = read_symptom(stdout, stderr, crashed, &found);
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
        written: Vec::new(),
    }
}

/// The symptom a run's output shows, classified like a report: a crash's traceback, the
/// warnings on stderr, and the printed `metrics` (a loss that grows a thousandfold is
/// exploding). `stdout` may be the printed output with the script's own text blanked
/// ([`super::written`]); the metrics are read from what it really printed.
fn read_symptom(stdout: &str, stderr: &str, crashed: bool, metrics: &[(String, f64)]) -> Symptom {
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
    let losses: Vec<f64> = metrics
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
    symptom
}

fn strip_tracebacks(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("Traceback") && !l.starts_with("  File "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // An installed package without the submodule the script imports.
        let stderr = "Traceback (most recent call last):\n  File \"<string>\", line 2, in <module>\nModuleNotFoundError: No module named 'keras.layers.core'\n";
        let run = observe(Termination::Exited(1), "", stderr, 1);
        assert_eq!(run.missing, None);
        assert_eq!(run.symptom.error_type.as_deref(), Some("ModuleNotFoundError"));
        let stderr = "Traceback (most recent call last):\nAssertionError: Torch not compiled with CUDA enabled\n";
        assert_eq!(
            observe(Termination::Exited(1), "", stderr, 1).missing.as_deref(),
            Some("a CUDA GPU")
        );
    }
}
