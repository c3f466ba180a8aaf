//! `cargo xtask test`'s last step: the reproduction agent on the embedded code LLM against
//! a few real bug reports of `tests/repro-real` (the `ci` split), for real, in the sandbox,
//! with TensorFlow installed (`dl::TENSORFLOW`). The whole suite takes about 90 minutes
//! here and torch's 4 GB; these cases take about 5 minutes and fail the step when the
//! agent reproduces fewer of them than it did when measured, or accepts a script whose
//! run does not show the bug.

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::dl;
use crate::llm::catalogue::{QWEN_CODER_0_5B, TOOLS_MODELS_DIR};
use crate::project::Project;

/// The suite and its split (tests/repro-real/splits.json).
const SUITE: &str = "tests/repro-real";
const SPLIT: &str = "ci";

/// Cases of the four the embedded 0.5B must reproduce (accepted, and a real run shows the
/// true symptom, with the case's expected message). Measured 2026-12-03 (afternoon) on
/// 16 20 22 29 with TensorFlow 2.15.1: 4 of 4 (`tests/repro-real/README.md`, "Splits").
const LLM_FLOOR: usize = 3;
/// The same for the rules alone, run beside it (no sampling). Measured: 4 of 4.
const RULES_FLOOR: usize = 3;

pub(crate) fn ci_subset(project: &Project) -> Result<()> {
    let python = dl::install_frameworks(project, &dl::TENSORFLOW)?;
    let model = project.root.join(TOOLS_MODELS_DIR).join(QWEN_CODER_0_5B.file_name);
    let mut args: Vec<std::ffi::OsString> = vec!["--python".into(), python.into_os_string()];
    args.extend(["bench-repro", "--suite", SUITE, "--split", SPLIT, "--llm"].map(Into::into));
    args.push(format!("gguf:{}", model.display()).into());
    args.extend(["--attempts", "3", "--contexts", "1", "--concurrency", "1", "--json"].map(Into::into));
    // The progress bar and the agent's log go to the terminal; the JSON is read here.
    let summary = crate::project::replayground_json(project, args)?;
    check(&summary)
}

/// Every case ran, neither generator accepted a run that does not show the bug, and each
/// reproduced at least its floor.
fn check(summary: &Value) -> Result<()> {
    let results = summary["results"].as_array().context("the JSON has no results")?;
    let mut failures = Vec::new();
    for case in results {
        let name = case["case"].as_str().unwrap_or("?");
        for field in ["skipped", "error"] {
            if let Some(why) = case[field].as_str() {
                failures.push(format!("{name}: {field}: {why}"));
            }
        }
    }
    let runs: Vec<(&str, &Value)> = results
        .iter()
        .flat_map(|case| {
            let name = case["case"].as_str().unwrap_or("?");
            case["runs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |run| (name, run))
        })
        .collect();
    // `rules`, then the LLM (named by its model, e.g. `gguf:qwen2.5-coder-0.5b-instruct`).
    let mut generators: Vec<&str> = Vec::new();
    for (_, run) in &runs {
        let generator = run["generator"].as_str().unwrap_or("?");
        if !generators.contains(&generator) {
            generators.push(generator);
        }
    }
    if generators.len() < 2 {
        failures.push(format!("expected the rules and an LLM, found {generators:?}"));
    }
    for generator in generators {
        let floor = if generator == "rules" { RULES_FLOOR } else { LLM_FLOOR };
        let runs: Vec<&(&str, &Value)> = runs.iter().filter(|(_, run)| run["generator"] == generator).collect();
        let is = |run: &Value, field: &str| run[field].as_bool() == Some(true);
        let reproduced: Vec<&str> = runs
            .iter()
            .filter(|(_, r)| is(r, "reproduced"))
            .map(|(n, _)| *n)
            .collect();
        println!(
            "repro-real ({SPLIT}): {generator}: reproduced {} of {} ({}), floor {floor}",
            reproduced.len(),
            runs.len(),
            reproduced.join(" ")
        );
        if reproduced.len() < floor {
            failures.push(format!(
                "{generator} reproduced {} of {}, below its floor {floor}",
                reproduced.len(),
                runs.len()
            ));
        }
        for (name, _) in runs.iter().filter(|(_, r)| is(r, "accepted") && !is(r, "reproduced")) {
            failures.push(format!(
                "{generator} accepted a script for {name} whose run does not show the bug"
            ));
        }
    }
    if failures.is_empty() {
        return Ok(());
    }
    bail!(
        "{SUITE} ({SPLIT}; rerun with --transcripts DIR to see why):\n  {}",
        failures.join("\n  ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(generator: &str, accepted: bool, reproduced: bool) -> Value {
        serde_json::json!({"generator": generator, "accepted": accepted, "reproduced": reproduced})
    }

    fn summary(runs: Vec<Vec<Value>>) -> Value {
        let results: Vec<Value> = runs
            .into_iter()
            .enumerate()
            .map(|(i, runs)| serde_json::json!({"case": format!("case-{i}"), "runs": runs}))
            .collect();
        serde_json::json!({ "results": results })
    }

    /// Four cases: the rules reproduce the first `rules`, the LLM the first `llm`; every
    /// acceptance is founded.
    fn four_cases(rules: usize, llm: usize) -> Value {
        summary(
            (0..4)
                .map(|i| vec![run("rules", i < rules, i < rules), run("gguf:qwen", i < llm, i < llm)])
                .collect(),
        )
    }

    #[test]
    fn the_floors_pass_when_both_generators_reproduce_enough() {
        check(&four_cases(RULES_FLOOR, LLM_FLOOR)).expect("the floors themselves pass");
        check(&four_cases(4, 4)).expect("all four pass");
    }

    #[test]
    fn too_few_reproductions_an_unfounded_acceptance_or_a_skip_fail() {
        let error = check(&four_cases(RULES_FLOOR, LLM_FLOOR - 1)).unwrap_err().to_string();
        assert!(
            error.contains(&format!("gguf:qwen reproduced {} of 4", LLM_FLOOR - 1)),
            "{error}"
        );
        let error = check(&four_cases(RULES_FLOOR - 1, 4)).unwrap_err().to_string();
        assert!(error.contains("rules reproduced"), "{error}");

        let mut unfounded = four_cases(4, 4);
        unfounded["results"][3]["runs"][0]["reproduced"] = false.into();
        let error = check(&unfounded).unwrap_err().to_string();
        assert!(error.contains("rules accepted a script for case-3"), "{error}");

        let mut skipped = four_cases(4, 4);
        skipped["results"][1]["skipped"] = "tensorflow is not installed".into();
        let error = check(&skipped).unwrap_err().to_string();
        assert!(error.contains("case-1: skipped: tensorflow"), "{error}");

        let rules_only = summary(vec![vec![run("rules", true, true)]; 4]);
        let error = check(&rules_only).unwrap_err().to_string();
        assert!(error.contains("expected the rules and an LLM"), "{error}");
    }
}
