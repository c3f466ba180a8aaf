//! The suite's results summed up: rates with their counts, precision and recall of
//! training-loop detection, times, reproduction rates per variant and generator, and
//! the tables `bench-repro` prints.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use super::run::{CaseResult, LoopResult, RECALL_K, RunResult};

/// A share with its counts, e.g. 0.84 (21/25).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    pub hits: usize,
    pub total: usize,
    /// `hits / total`, 0 when there is nothing to count.
    pub rate: f64,
}

impl Rate {
    pub fn new(hits: usize, total: usize) -> Self {
        Self {
            hits,
            total,
            rate: if total == 0 { 0.0 } else { hits as f64 / total as f64 },
        }
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.total == 0 {
            return write!(f, "n/a");
        }
        write!(f, "{:.2} ({}/{})", self.rate, self.hits, self.total)
    }
}

/// Training-loop detection over files: micro-averaged over the cases with a project.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PrecisionRecall {
    pub true_positives: usize,
    pub false_positives: usize,
    pub false_negatives: usize,
    pub precision: Rate,
    pub recall: Rate,
}

impl PrecisionRecall {
    fn of<'a>(results: impl Iterator<Item = &'a LoopResult>) -> Self {
        let (mut tp, mut fp, mut fneg) = (0, 0, 0);
        for r in results {
            let expected: BTreeSet<&String> = r.expected.iter().collect();
            let found: BTreeSet<&String> = r.found.iter().collect();
            tp += expected.intersection(&found).count();
            fp += found.difference(&expected).count();
            fneg += expected.difference(&found).count();
        }
        Self {
            true_positives: tp,
            false_positives: fp,
            false_negatives: fneg,
            precision: Rate::new(tp, tp + fp),
            recall: Rate::new(tp, tp + fneg),
        }
    }
}

/// Mean, median and maximum of some durations, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TimeStats {
    pub mean_ms: u64,
    pub p50_ms: u64,
    pub max_ms: u64,
}

impl TimeStats {
    fn of(mut values: Vec<u64>) -> Self {
        if values.is_empty() {
            return Self {
                mean_ms: 0,
                p50_ms: 0,
                max_ms: 0,
            };
        }
        values.sort_unstable();
        let mean = values.iter().sum::<u64>() / values.len() as u64;
        // Nearest-rank median: the lower middle value of an even count.
        Self {
            mean_ms: mean,
            p50_ms: values[(values.len() - 1) / 2],
            max_ms: values[values.len() - 1],
        }
    }
}

/// The reproduction rate of one generator under one variant.
#[derive(Debug, Clone, Serialize)]
pub struct ReproRate {
    pub variant: String,
    pub generator: String,
    /// Symptom matched by a real run: the benchmark's reproduction rate.
    pub reproduced: Rate,
    /// The agent's own acceptances, including those its checks were wrong about.
    pub accepted: Rate,
    pub approximated: usize,
    pub time: TimeStats,
}

/// The whole benchmark: per-stage scores, then every case.
#[derive(Debug, Clone, Serialize)]
pub struct BenchSummary {
    pub suite: String,
    pub cases: usize,
    /// Symptom classification by the rules, over every case.
    pub symptom_rules: Rate,
    /// Symptom classification by each LLM's restructuring, over the cases it read.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub symptom_llm: BTreeMap<String, Rate>,
    /// Recall@1 / @5 of the buggy file, over the cases with a project.
    pub retrieval_recall_at_1: Rate,
    pub retrieval_recall_at_5: Rate,
    pub training_loops: PrecisionRecall,
    /// The same over the cases that require `torch` or `tensorflow`.
    pub training_loops_frameworks: PrecisionRecall,
    pub reproduction: Vec<ReproRate>,
    /// Wall time per case (stages and every agent run).
    pub time_per_case: TimeStats,
    pub skipped: usize,
    /// Why cases were skipped, with how many each.
    pub skipped_reasons: BTreeMap<String, usize>,
    pub errors: usize,
    pub results: Vec<CaseResult>,
}

impl BenchSummary {
    pub fn new(suite: &str, results: Vec<CaseResult>) -> Self {
        let symptom_rules = Rate::new(
            results.iter().filter(|r| r.symptom.rules == r.symptom.expected).count(),
            results.len(),
        );
        let mut symptom_llm = BTreeMap::new();
        for name in results.iter().flat_map(|r| r.symptom.llm.keys()) {
            symptom_llm.entry(name.clone()).or_insert_with(|| {
                let read: Vec<bool> = results
                    .iter()
                    .filter_map(|r| r.symptom.llm.get(name).map(|class| *class == r.symptom.expected))
                    .collect();
                Rate::new(read.iter().filter(|right| **right).count(), read.len())
            });
        }
        let ranks: Vec<Option<usize>> = results
            .iter()
            .filter_map(|r| r.retrieval.as_ref().map(|x| x.rank))
            .collect();
        let at = |k: usize| {
            Rate::new(
                ranks.iter().filter(|rank| rank.is_some_and(|r| r <= k)).count(),
                ranks.len(),
            )
        };
        let uses_framework = |r: &CaseResult| r.requires.iter().any(|p| p == "torch" || p == "tensorflow");
        let mut groups: Vec<(String, String)> = Vec::new();
        for run in results.iter().flat_map(|r| &r.runs) {
            let key = (run.variant.clone(), run.generator.clone());
            if !groups.contains(&key) {
                groups.push(key);
            }
        }
        let reproduction = groups
            .into_iter()
            .map(|(variant, generator)| {
                let runs: Vec<&RunResult> = results
                    .iter()
                    .flat_map(|r| &r.runs)
                    .filter(|run| run.variant == variant && run.generator == generator)
                    .collect();
                ReproRate {
                    reproduced: Rate::new(runs.iter().filter(|r| r.reproduced).count(), runs.len()),
                    accepted: Rate::new(runs.iter().filter(|r| r.accepted).count(), runs.len()),
                    approximated: runs.iter().filter(|r| r.approximated).count(),
                    time: TimeStats::of(runs.iter().map(|r| r.elapsed_ms).collect()),
                    variant,
                    generator,
                }
            })
            .collect();
        let mut skipped_reasons = BTreeMap::new();
        for reason in results.iter().filter_map(|r| r.skipped.as_ref()) {
            *skipped_reasons.entry(reason.clone()).or_insert(0) += 1;
        }
        Self {
            suite: suite.to_owned(),
            cases: results.len(),
            symptom_rules,
            symptom_llm,
            retrieval_recall_at_1: at(1),
            retrieval_recall_at_5: at(RECALL_K),
            training_loops: PrecisionRecall::of(results.iter().filter_map(|r| r.training_loops.as_ref())),
            training_loops_frameworks: PrecisionRecall::of(
                results
                    .iter()
                    .filter(|r| uses_framework(r))
                    .filter_map(|r| r.training_loops.as_ref()),
            ),
            reproduction,
            time_per_case: TimeStats::of(results.iter().map(|r| r.elapsed_ms).collect()),
            skipped: results.iter().filter(|r| r.skipped.is_some()).count(),
            skipped_reasons,
            errors: results.iter().filter(|r| r.error.is_some()).count(),
            results,
        }
    }

    /// The human-readable report: one table per stage, then one line per case.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let secs = |ms: u64| format!("{:.1}s", ms as f64 / 1000.0);
        let _ = writeln!(out, "Reproduction benchmark: {} ({} cases)\n", self.suite, self.cases);
        let _ = writeln!(out, "{:<44} score", "stage");
        let _ = writeln!(out, "{:<44} {}", "symptom classification (rules)", self.symptom_rules);
        for (name, rate) in &self.symptom_llm {
            let _ = writeln!(out, "{:<44} {rate}", format!("symptom classification ({name})"));
        }
        let _ = writeln!(
            out,
            "{:<44} {}",
            "retrieval recall@1 of the buggy file", self.retrieval_recall_at_1
        );
        let _ = writeln!(
            out,
            "{:<44} {}",
            "retrieval recall@5 of the buggy file", self.retrieval_recall_at_5
        );
        for (label, pr) in [
            ("training loops, all", &self.training_loops),
            ("training loops, torch/tf", &self.training_loops_frameworks),
        ] {
            let _ = writeln!(out, "{:<44} precision {}  recall {}", label, pr.precision, pr.recall);
        }
        let _ = writeln!(
            out,
            "{:<44} mean {}  p50 {}  max {}",
            "time per case",
            secs(self.time_per_case.mean_ms),
            secs(self.time_per_case.p50_ms),
            secs(self.time_per_case.max_ms)
        );
        let _ = writeln!(
            out,
            "\n{:<20} {:<10} {:<16} {:<16} {:<8} time mean / p50 / max",
            "variant", "generator", "reproduced", "accepted", "approx."
        );
        for r in &self.reproduction {
            let _ = writeln!(
                out,
                "{:<20} {:<10} {:<16} {:<16} {:<8} {} / {} / {}",
                r.variant,
                r.generator,
                r.reproduced.to_string(),
                r.accepted.to_string(),
                r.approximated,
                secs(r.time.mean_ms),
                secs(r.time.p50_ms),
                secs(r.time.max_ms)
            );
        }
        let _ = writeln!(out, "\nskipped: {}", self.skipped);
        for (reason, count) in &self.skipped_reasons {
            let _ = writeln!(out, "  {count} × {reason}");
        }
        if self.errors > 0 {
            let _ = writeln!(out, "stage errors: {}", self.errors);
        }
        let _ = writeln!(
            out,
            "\n{:<34} {:<24} {:<24} {:<6} runs",
            "case", "symptom (truth)", "symptom (rules)", "rank"
        );
        for r in &self.results {
            let rank = r
                .retrieval
                .as_ref()
                .map_or("-".to_owned(), |x| x.rank.map_or("miss".to_owned(), |k| k.to_string()));
            let runs = match &r.skipped {
                Some(reason) => format!("skipped: {reason}"),
                None => r
                    .runs
                    .iter()
                    .map(|run| {
                        let mark = if run.reproduced {
                            "✓"
                        } else if run.accepted {
                            "~"
                        } else {
                            "✗"
                        };
                        format!("{}/{} {mark}", run.variant, run.generator)
                    })
                    .collect::<Vec<_>>()
                    .join("  "),
            };
            let _ = writeln!(
                out,
                "{:<34} {:<24} {:<24} {:<6} {runs}",
                r.case,
                r.symptom.expected.as_str(),
                r.symptom.rules.as_str(),
                rank
            );
            if let Some(error) = &r.error {
                let _ = writeln!(out, "    error: {error}");
            }
        }
        let _ = writeln!(
            out,
            "\n✓ reproduced in a real run   ~ accepted by the agent, but not the true symptom or not observed   ✗ not reproduced"
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use replayground_shared::repro::SymptomClass;

    fn loops(expected: &[&str], found: &[&str]) -> LoopResult {
        LoopResult {
            expected: expected.iter().map(|s| (*s).to_owned()).collect(),
            found: found.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn precision_and_recall_count_files() {
        let pr = PrecisionRecall::of(
            [
                loops(&["train.py"], &["train.py", "eval.py"]),
                loops(&["a.py", "b.py"], &[]),
            ]
            .iter(),
        );
        assert_eq!((pr.true_positives, pr.false_positives, pr.false_negatives), (1, 1, 2));
        assert!((pr.precision.rate - 0.5).abs() < 1e-9);
        assert!((pr.recall.rate - 1.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn time_stats_use_the_lower_median() {
        let stats = TimeStats::of(vec![40, 10, 30, 20]);
        assert_eq!((stats.mean_ms, stats.p50_ms, stats.max_ms), (25, 20, 40));
        assert_eq!(TimeStats::of(Vec::new()).max_ms, 0);
    }

    fn run(generator: &str, reproduced: bool) -> RunResult {
        RunResult {
            variant: "full".to_owned(),
            generator: generator.to_owned(),
            accepted: reproduced,
            reproduced,
            message_matches: None,
            approximated: false,
            observed: None,
            score: 0.0,
            attempts: 1,
            elapsed_ms: 10,
            failure: None,
        }
    }

    fn case(name: &str, llm_classes: &[(&str, SymptomClass)], runs: Vec<RunResult>) -> CaseResult {
        CaseResult {
            case: name.to_owned(),
            requires: vec!["numpy".to_owned()],
            symptom: crate::bench::SymptomResult {
                expected: SymptomClass::Crash,
                rules: SymptomClass::Crash,
                llm: llm_classes.iter().map(|(n, c)| ((*n).to_owned(), *c)).collect(),
            },
            retrieval: None,
            training_loops: None,
            runs,
            skipped: None,
            error: None,
            elapsed_ms: 10,
        }
    }

    #[test]
    fn every_llm_gets_its_own_row_and_symptom_score_beside_the_rules() {
        let (small, large) = ("gguf:small", "gguf:large");
        let summary = BenchSummary::new(
            "suite",
            vec![
                case(
                    "a",
                    &[(small, SymptomClass::Crash), (large, SymptomClass::Crash)],
                    vec![run("rules", false), run(small, true), run(large, true)],
                ),
                case(
                    "b",
                    &[(small, SymptomClass::Unknown), (large, SymptomClass::Crash)],
                    vec![run("rules", true), run(small, false), run(large, true)],
                ),
            ],
        );
        let rows: Vec<(&str, usize)> = summary
            .reproduction
            .iter()
            .map(|r| (r.generator.as_str(), r.reproduced.hits))
            .collect();
        assert_eq!(rows, [("rules", 1), (small, 1), (large, 2)]);
        assert_eq!(summary.symptom_llm[small], Rate::new(1, 2));
        assert_eq!(summary.symptom_llm[large], Rate::new(2, 2));
        let table = summary.table();
        assert!(table.contains("symptom classification (gguf:large)"), "{table}");
    }

    #[test]
    fn a_rate_of_nothing_is_not_a_number() {
        assert_eq!(Rate::new(0, 0).to_string(), "n/a");
        assert_eq!(Rate::new(3, 4).to_string(), "0.75 (3/4)");
    }
}
