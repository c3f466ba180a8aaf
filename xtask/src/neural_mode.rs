//! `cargo xtask test`'s check of the playground's default neural engine: the embedded
//! Qwen2.5-Coder-0.5B in context, walked through the first realistic programs as a
//! student steps through them (`eval --suite playground`: each program read ahead as the
//! server does after a run in neural mode, then step into from the first stop). It fails
//! when a question goes unanswered or fewer answers match the real run than measured.
//! The seconds a step are printed, never asserted (this machine is shared and noisy).

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::project::Project;

/// Programs of tests/neural-real/programs, from the first, and steps into each.
const PROGRAMS: usize = 3;
const STEPS: usize = 4;
/// Answers of the 12 that must equal the real state. Greedy decoding: the same checkout
/// answers the same (measured twice; the bundled tiny model gets 7 of the 12).
const FLOOR: usize = 7;
const FLOOR_MEASURED: &str = "9 of 12 (2026-12-05, debug build; 2026-12-06 with five worked examples, release build)";

pub(crate) fn check(project: &Project) -> Result<()> {
    let (programs, steps) = (PROGRAMS.to_string(), STEPS.to_string());
    let args = ["eval", "--suite", "playground", "--model", "qwen-0.5b"];
    let args = args
        .into_iter()
        .chain(["--limit", &programs, "--per-trajectory", &steps, "--json"]);
    let report = crate::project::replayground_json(project, args)?;
    judge(&report)
}

fn judge(report: &Value) -> Result<()> {
    let number = |key: &str| report[key].as_f64().with_context(|| format!("the report has no {key}"));
    let (n, accuracy, refused) = (number("n")?, number("pass_at_1")?, number("refused")?);
    let matched = (n * accuracy).round() as usize;
    println!(
        "neural mode (default engine): {matched} of {n} steps match the real run (floor {FLOOR}; measured {FLOOR_MEASURED}); {:.2} s a step (p90 {:.2} s) after reading each program in {:.1} s",
        number("seconds_per_step")?,
        number("seconds_p90")?,
        number("program_read_seconds")?,
    );
    if n as usize != PROGRAMS * STEPS || refused > 0.0 {
        bail!(
            "{n} steps asked, {refused} refused: expected {} answered",
            PROGRAMS * STEPS
        );
    }
    if matched < FLOOR {
        bail!("{matched} of {n} answers match the real run, below the floor of {FLOOR}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_and_every_answer_are_checked() {
        let report = |n: f64, pass: f64, refused: f64| {
            serde_json::json!({"n": n, "pass_at_1": pass, "refused": refused, "seconds_per_step": 1.0,
                "seconds_p90": 2.0, "program_read_seconds": 5.0})
        };
        assert!(judge(&report(12.0, 10.0 / 12.0, 0.0)).is_ok());
        assert!(judge(&report(12.0, 6.0 / 12.0, 0.0)).is_err());
        assert!(judge(&report(12.0, 1.0, 1.0)).is_err());
        assert!(judge(&report(8.0, 1.0, 0.0)).is_err());
        assert!(judge(&serde_json::json!({})).is_err());
    }
}
