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
    if !crashed && (prints_constant_predictions(stdout) || loss_bounces(metrics)) {
        // The same non-whole value for every row of a printed array (a model whose output
        // does not depend on its input), or a loss that climbs back far above its lowest:
        // training that does not converge.
        symptom.cues.push("not_learning".to_owned());
        if symptom.class == SymptomClass::Unknown {
            symptom.class = SymptomClass::PerformanceDegradation;
        }
    }
    symptom
}

/// Whether the longest series of one training loss the run printed (`loss`, `train mse`;
/// five values or more) climbs back after its lowest value to twice that value or more, and ends above
/// it: a loss that goes down and then bounces (`2.22 1.52 0.62 0.62 1.45 0.71`), not noise
/// around a falling trend.
fn loss_bounces(metrics: &[(String, f64)]) -> bool {
    let is_loss = |name: &str| name.contains("loss") || ["mse", "rmse", "mae"].contains(&name);
    let mut names: Vec<&str> = metrics.iter().map(|(n, _)| n.as_str()).filter(|n| is_loss(n)).collect();
    names.sort_unstable();
    names.dedup();
    // The training loss: a validation loss that rises again is overfitting, not this.
    let training: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !n.starts_with("val_") && !n.starts_with("test_"))
        .collect();
    if !training.is_empty() {
        names = training;
    }
    let series = names
        .into_iter()
        .map(|name| {
            metrics
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, v)| *v)
                .collect::<Vec<f64>>()
        })
        .max_by_key(Vec::len)
        .unwrap_or_default();
    if series.len() < 5 || series.iter().any(|v| !v.is_finite()) {
        return false;
    }
    let (low_at, low) = series
        .iter()
        .copied()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((0, 0.0));
    let after = &series[low_at + 1..];
    let last = series.last().copied().unwrap_or(low);
    low > 0.0 && after.iter().any(|&v| v >= 2.0 * low) && last > 1.1 * low
}

/// Whether the output prints an array of three or more values that are all the same
/// fraction to within 1% (`[0.9990752 0.9998875 0.9983505]`, a sigmoid saturated for every
/// input). Whole numbers are left out: a row of identical labels (`[1 1 1]`) or zeros
/// says nothing.
fn prints_constant_predictions(stdout: &str) -> bool {
    static ARRAY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\[([^\[\]]+)\]").expect("a valid pattern"));
    ARRAY.captures_iter(stdout).any(|c| {
        let values: Option<Vec<f64>> = c[1]
            .split(|ch: char| ch.is_whitespace() || ch == ',')
            .filter(|v| !v.is_empty())
            .map(|v| v.parse::<f64>().ok())
            .collect();
        values.is_some_and(|values| {
            let first = values.first().copied().unwrap_or(0.0);
            values.len() >= 3
                && first.is_finite()
                && first.fract() != 0.0
                && values.iter().all(|v| (v - first).abs() <= 0.01 * first.abs())
        })
    })
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
    fn a_constant_prediction_for_every_input_is_not_learning() {
        let run = |stdout: &str| observe(Termination::Exited(0), stdout, "", 1).symptom;
        let saturated =
            run("final loss: 416.4\n[0.99907523 0.9998875  0.9992178  0.9993113  0.9983505 ]\n[17.34 25.85 14.27]\n");
        assert_eq!(saturated.class, SymptomClass::PerformanceDegradation);
        assert!(saturated.cues.contains(&"not_learning".to_owned()));
        for other in [
            "[1 1 1 1]\n",
            "[0. 0. 0.]\n",
            "[0.51, 0.12, 0.93]\n",
            "[0.50 0.52 0.49]\n",
            "[0.5 0.5]\n",
            "[nan nan nan]\n",
        ] {
            assert!(!run(other).cues.contains(&"not_learning".to_owned()), "{other}");
        }
        let crashed = observe(
            Termination::Exited(1),
            "[0.5 0.5 0.5]\n",
            "Traceback (most recent call last):\nValueError: x\n",
            1,
        );
        assert_eq!(crashed.symptom.class, SymptomClass::Crash);
    }

    #[test]
    fn a_loss_that_bounces_back_up_is_not_learning() {
        let run = |stdout: &str| observe(Termination::Exited(0), stdout, "", 1).symptom;
        let epochs = |values: &[f64]| {
            let lines: Vec<String> = values
                .iter()
                .enumerate()
                .map(|(i, v)| format!("epoch {i} train mse {v}\nval_loss: 9\n"))
                .collect();
            lines.concat()
        };
        let bouncing = run(&epochs(&[2.2244, 1.5225, 0.6165, 0.6165, 1.4495, 0.7142]));
        assert_eq!(bouncing.class, SymptomClass::PerformanceDegradation);
        assert!(bouncing.cues.contains(&"not_learning".to_owned()));
        for healthy in [
            epochs(&[2.2, 1.5, 0.9, 0.7, 0.6, 0.55]),
            epochs(&[2.2, 1.5, 0.3, 0.5, 0.31, 0.3]),
            epochs(&[2.2, 0.3, 0.9]),
        ] {
            assert!(!run(&healthy).cues.contains(&"not_learning".to_owned()), "{healthy}");
        }
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
