//! The training corpus: generated programs → real traces → sampled trajectories.
//!
//! Deterministic for a given seed and configuration: program `i` comes from seed
//! `seed + i`, its trajectories from a generator seeded by the program seed, and the
//! output files list programs in order whatever order the sandbox jobs finish in.
//! Programs that are near-copies of CruxEval functions or of the realistic benchmark are
//! dropped (and counted); identical programs are kept once; a tenth of the programs,
//! chosen by a hash of their source (of their function's name for real code, so every
//! call of one function lands on the same side), form a held-out split that never
//! appears in training.

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use replayground_shared::trace_lang::{self, Direction};
use replayground_shared::{Outcome, StateTree};
use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio::task::JoinSet;

use super::dedup::Reference;
use super::generator::{Curriculum, Program, generate};
use super::policy::Policy;
use super::real_code::{Harvest, RealProgram};
use replayground_exec::runner::Tracer;

/// What to build.
#[derive(Debug, Clone)]
pub struct CorpusConfig {
    pub out: PathBuf,
    pub programs: u64,
    pub seed: u64,
    pub trajectories_per_program: usize,
    /// Sandbox jobs at once.
    pub jobs: usize,
    pub policy: Policy,
    /// Every `heldout_every`-th program (by source hash) is held out.
    pub heldout_every: u64,
}

/// Counts written to `manifest.json`.
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct CorpusStats {
    pub generated: u64,
    pub near_copies_dropped: u64,
    pub duplicates_dropped: u64,
    pub untraceable_dropped: u64,
    /// Real-function programs (`--pypi`, `--stdlib`) offered to the pipeline.
    pub real_programs: u64,
    /// Real-function programs whose call failed on a missing name, import or argument type.
    pub real_call_errors_dropped: u64,
    pub train_programs: u64,
    pub heldout_programs: u64,
    pub train_trajectories: u64,
    pub heldout_trajectories: u64,
    pub inverse_trajectories: u64,
    pub events: u64,
    /// Per real-code source (`pypi`, `stdlib`).
    pub sources: BTreeMap<String, SourceStats>,
}

/// What one real-code source gave, function by function.
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct SourceStats {
    /// Top-level functions read.
    pub functions_seen: u64,
    /// Functions that became programs (eligible and with arguments to give).
    pub functions_eligible: u64,
    /// Top-level classes read, those that became programs (construct, then call their
    /// methods), and those with at least one program in the corpus.
    pub classes_seen: u64,
    pub classes_eligible: u64,
    pub classes_kept: u64,
    /// Functions with at least one program in the corpus.
    pub functions_kept: u64,
    /// Functions with at least one program in the corpus that ran to its end.
    pub functions_finished: u64,
    pub programs_offered: u64,
    pub near_copies_dropped: u64,
    /// `function ≈ reference id` for each function with a program dropped as a near-copy.
    pub near_copies: Vec<String>,
    pub duplicates_dropped: u64,
    pub call_errors_dropped: u64,
    pub untraceable_dropped: u64,
    pub programs_kept: u64,
    /// Kept programs that end with the function's own exception.
    pub programs_raising: u64,
    pub events: u64,
}

#[derive(Serialize)]
struct ProgramRecord<'a> {
    seed: u64,
    level: u8,
    split: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    origin: Option<&'static str>,
    events: usize,
    outcome: &'a Outcome,
    source: &'a str,
}

#[derive(Serialize)]
struct TrajectoryRecord<'a> {
    seed: u64,
    direction: &'static str,
    text: &'a str,
}

/// The curriculum level of program `i` of `n`: sizes grow through the corpus.
pub fn level_for(i: u64, n: u64) -> Curriculum {
    let levels = u64::from(Curriculum::MAX_LEVEL) + 1;
    Curriculum {
        level: ((i * levels) / n.max(1)).min(levels - 1) as u8,
    }
}

fn source_hash(source: &str) -> u64 {
    let digest = Sha256::digest(source.as_bytes());
    u64::from_le_bytes(digest[..8].try_into().expect("a SHA-256 has 32 bytes"))
}

/// Builds the corpus into `config.out`.
pub async fn build(config: &CorpusConfig, tracer: Arc<Tracer>, reference: &Reference) -> anyhow::Result<CorpusStats> {
    build_with(config, tracer, reference, Vec::new()).await
}

/// A program on its way into the corpus: generated, or made from a real function.
struct Candidate {
    program: Program,
    real: Option<(&'static str, String)>,
    is_class: bool,
}

/// Builds the corpus from the generated programs followed by the real ones of each
/// harvest (real functions called with generated arguments, see [`super::real_code`]),
/// which pass the same checks.
pub async fn build_with(
    config: &CorpusConfig,
    tracer: Arc<Tracer>,
    reference: &Reference,
    harvests: Vec<Harvest>,
) -> anyhow::Result<CorpusStats> {
    std::fs::create_dir_all(&config.out)?;
    let mut programs_out = writer(&config.out, "programs.jsonl")?;
    let mut train_out = writer(&config.out, "train.jsonl")?;
    let mut heldout_out = writer(&config.out, "heldout.jsonl")?;
    let mut stats = CorpusStats::default();

    let real = offer(harvests, &mut stats);
    let mut kept_functions: BTreeMap<&'static str, HashSet<String>> = BTreeMap::new();
    let mut finished_functions: BTreeMap<&'static str, HashSet<String>> = BTreeMap::new();
    let mut kept_classes: BTreeMap<&'static str, HashSet<String>> = BTreeMap::new();
    let bar = ProgressBar::new(config.programs + real.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} programs {per_sec} eta {eta} {msg}")
            .expect("a valid template"),
    );

    let candidates = admit(config, reference, real, &mut stats);
    bar.inc(stats.near_copies_dropped + stats.duplicates_dropped);

    // Trace in bounded parallel batches, then write in program order.
    for batch in candidates.chunks(config.jobs.max(1) * 4) {
        let mut set = JoinSet::new();
        for (k, candidate) in batch.iter().enumerate() {
            let tracer = Arc::clone(&tracer);
            let source = candidate.program.source.clone();
            set.spawn(async move { (k, tracer.trace(&source, "").await) });
        }
        let mut traced: Vec<Option<_>> = (0..batch.len()).map(|_| None).collect();
        while let Some(joined) = set.join_next().await {
            let (k, result) = joined?;
            traced[k] = Some(result);
        }
        for (candidate, result) in batch.iter().zip(traced) {
            bar.inc(1);
            let program = &candidate.program;
            let mut source = candidate
                .real
                .as_ref()
                .and_then(|(origin, _)| stats.sources.get_mut(*origin));
            let trace = match result.expect("every job reports") {
                Ok(trace) if usable(&trace.outcome) && !trace.events.is_empty() => trace,
                _ => {
                    stats.untraceable_dropped += 1;
                    if let Some(source) = source {
                        source.untraceable_dropped += 1;
                    }
                    continue;
                }
            };
            if let Some(source) = source.as_deref_mut()
                && call_failed(&trace.outcome)
            {
                stats.real_call_errors_dropped += 1;
                source.call_errors_dropped += 1;
                continue;
            }
            // Every call of one real function lands on the same side of the split.
            let split_key = candidate
                .real
                .as_ref()
                .map_or(program.source.as_str(), |(_, f)| f.as_str());
            let heldout = source_hash(split_key).is_multiple_of(config.heldout_every.max(2));
            let outcome = trace.outcome.clone();
            let tree = StateTree::new(trace)?;
            stats.events += tree.len() as u64;
            if let (Some(source), Some((origin, function))) = (source, &candidate.real) {
                source.programs_kept += 1;
                source.events += tree.len() as u64;
                if candidate.is_class {
                    kept_classes.entry(origin).or_default().insert(function.clone());
                } else {
                    kept_functions.entry(origin).or_default().insert(function.clone());
                }
                if candidate.is_class {
                    if !matches!(outcome, Outcome::Finished) {
                        source.programs_raising += 1;
                    }
                } else if matches!(outcome, Outcome::Finished) {
                    finished_functions.entry(origin).or_default().insert(function.clone());
                } else {
                    source.programs_raising += 1;
                }
            }
            let split = if heldout { "heldout" } else { "train" };
            serde_json::to_writer(
                &mut programs_out,
                &ProgramRecord {
                    seed: program.seed,
                    level: program.level,
                    split,
                    origin: candidate.real.as_ref().map(|(origin, _)| *origin),
                    events: tree.len(),
                    outcome: &outcome,
                    source: &program.source,
                },
            )?;
            programs_out.write_all(b"\n")?;
            if heldout {
                stats.heldout_programs += 1;
            } else {
                stats.train_programs += 1;
            }
            let mut rng = ChaCha8Rng::seed_from_u64(program.seed ^ 0x7261_6a65_6374_6f72);
            for _ in 0..config.trajectories_per_program {
                let trajectory = config.policy.sample(&tree, &program.source, &mut rng);
                let text = trace_lang::serialize(&trajectory)?;
                let direction = match trajectory.direction {
                    Direction::Forward => "forward",
                    Direction::Inverse => {
                        stats.inverse_trajectories += 1;
                        "inverse"
                    }
                };
                let out = if heldout { &mut heldout_out } else { &mut train_out };
                serde_json::to_writer(
                    &mut *out,
                    &TrajectoryRecord {
                        seed: program.seed,
                        direction,
                        text: &text,
                    },
                )?;
                out.write_all(b"\n")?;
                if heldout {
                    stats.heldout_trajectories += 1;
                } else {
                    stats.train_trajectories += 1;
                }
            }
        }
        bar.set_message(format!("{} kept", stats.train_programs + stats.heldout_programs));
    }
    bar.finish();
    for (origin, source) in &mut stats.sources {
        source.functions_kept = kept_functions.get(origin.as_str()).map_or(0, |f| f.len() as u64);
        source.functions_finished = finished_functions.get(origin.as_str()).map_or(0, |f| f.len() as u64);
        source.classes_kept = kept_classes.get(origin.as_str()).map_or(0, |f| f.len() as u64);
    }
    for mut w in [programs_out, train_out, heldout_out] {
        w.flush()?;
    }
    let manifest = serde_json::json!({
        "seed": config.seed,
        "programs": config.programs,
        "trajectories_per_program": config.trajectories_per_program,
        "heldout_every": config.heldout_every,
        "policy": format!("{:?}", config.policy),
        "stats": stats,
    });
    std::fs::write(
        config.out.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)?,
    )?;
    Ok(stats)
}

/// The real programs of every harvest, counted per source.
fn offer(harvests: Vec<Harvest>, stats: &mut CorpusStats) -> Vec<RealProgram> {
    let mut real: Vec<RealProgram> = Vec::new();
    for harvest in harvests {
        let source = stats.sources.entry(harvest.origin.as_str().to_owned()).or_default();
        source.functions_seen += harvest.functions_seen;
        source.functions_eligible += harvest.functions_eligible;
        source.classes_seen += harvest.classes_seen;
        source.classes_eligible += harvest.classes_eligible;
        source.programs_offered += harvest.programs.len() as u64;
        real.extend(harvest.programs);
    }
    real
}

/// The programs that may enter the corpus, generated ones first: near-copies of the
/// reference (CruxEval, the realistic benchmark) and repeats are dropped and counted.
fn admit(
    config: &CorpusConfig,
    reference: &Reference,
    real: Vec<RealProgram>,
    stats: &mut CorpusStats,
) -> Vec<Candidate> {
    let mut seen = HashSet::new();
    let mut candidates: Vec<Candidate> = Vec::new();
    stats.real_programs = real.len() as u64;
    let generated = (0..config.programs).map(|i| Candidate {
        program: generate(config.seed + i, level_for(i, config.programs)),
        real: None,
        is_class: false,
    });
    let real = real.into_iter().map(|r| Candidate {
        program: r.program,
        real: Some((r.origin.as_str(), r.function)),
        is_class: r.is_class,
    });
    for candidate in generated.chain(real) {
        let source = candidate
            .real
            .as_ref()
            .and_then(|(origin, _)| stats.sources.get_mut(*origin));
        if candidate.real.is_none() {
            stats.generated += 1;
        }
        if let Some(copy) = reference.near_copy(&candidate.program.source) {
            stats.near_copies_dropped += 1;
            if let (Some(source), Some((_, function))) = (source, &candidate.real) {
                source.near_copies_dropped += 1;
                let note = format!("{function} ≈ {}", copy.id);
                if !source.near_copies.contains(&note) {
                    source.near_copies.push(note);
                }
            }
            continue;
        }
        if !seen.insert(source_hash(&candidate.program.source)) {
            stats.duplicates_dropped += 1;
            if let Some(source) = source {
                source.duplicates_dropped += 1;
            }
            continue;
        }
        candidates.push(candidate);
    }
    candidates
}

/// A real function's call that cannot work here (a name from a sibling module, an
/// uninstalled import, arguments of the wrong type: `TypeError`, or `AttributeError` as
/// in `'int' object has no attribute 'append'`) teaches nothing about the function.
fn call_failed(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Outcome::UncaughtException { exception_type, .. }
            if matches!(
                exception_type.as_str(),
                "NameError" | "ImportError" | "ModuleNotFoundError" | "TypeError" | "AttributeError"
            )
    )
}

/// Runs that end normally or with the program's own exception make good examples;
/// limits and crashes do not.
fn usable(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Finished | Outcome::UncaughtException { .. } | Outcome::Exited { .. }
    )
}

fn writer(dir: &Path, name: &str) -> anyhow::Result<BufWriter<File>> {
    let path = dir.join(name);
    Ok(BufWriter::new(File::create(&path).map_err(|e| {
        anyhow::anyhow!("cannot write {}: {e}", path.display())
    })?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::real_bench;
    use crate::real_code::module::Module;
    use crate::real_code::{self, Arguments, Options, Origin};

    /// The reference `replayground corpus` builds: CruxEval (when the checkout has it,
    /// else its first problem) and the realistic benchmark.
    fn reference() -> Reference {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let cruxeval = root.join("../shared/data/cruxeval/cruxeval.jsonl");
        let mut reference = if cruxeval.is_file() {
            Reference::load_cruxeval(&cruxeval).unwrap()
        } else {
            eprintln!("SKIPPED against the real CruxEval: {} is missing", cruxeval.display());
            let mut sample = Reference::default();
            sample.add("sample_0".into(), CRUXEVAL_SAMPLE_0);
            sample
        };
        let programs = real_bench::load(&root.join(real_bench::DEFAULT_DIR)).unwrap();
        real_bench::keep_out_of(&mut reference, &programs);
        reference
    }

    const CRUXEVAL_SAMPLE_0: &str = "def f(nums):\n    output = []\n    for n in nums:\n        output.append((nums.count(n), n))\n    output.sort(reverse=True)\n    return output";

    /// A package module holding a renamed copy of a benchmark function, a renamed copy of
    /// a CruxEval function, and a function of its own.
    const PLANTED: &str = r#"from __future__ import annotations


def find_index(values: list[int], wanted: int) -> int:
    """Binary search."""
    lo, hi = 0, len(values) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if values[mid] == wanted:
            return mid
        if values[mid] < wanted:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


def count_pairs(numbers: list[int]) -> list[tuple[int, int]]:
    result = []
    for x in numbers:
        result.append((numbers.count(x), x))
    result.sort(reverse=True)
    return result


def spread(values: list[int]) -> int:
    return max(values) - min(values) if values else 0
"#;

    #[test]
    fn planted_copies_of_the_benchmark_and_cruxeval_are_dropped() {
        let options = Options::package(1, Arguments::Inferred, ["pkg".to_owned()].into());
        let mut harvest = Harvest::new(Origin::Pypi);
        real_code::harvest(
            &[Module::parse("pkg/planted.py", PLANTED).unwrap()],
            &options,
            &mut harvest,
        );
        assert_eq!(harvest.functions_eligible, 3, "{harvest:?}");
        let per_function = |name: &str| harvest.programs.iter().filter(|p| p.function.ends_with(name)).count() as u64;
        let planted = per_function(":find_index") + per_function(":count_pairs");
        let own = per_function(":spread");
        assert!(planted >= 2 && own >= 1, "{harvest:?}");
        let config = CorpusConfig {
            out: PathBuf::new(),
            programs: 20,
            seed: 1,
            trajectories_per_program: 1,
            jobs: 1,
            policy: Policy::default(),
            heldout_every: 10,
        };
        let mut stats = CorpusStats::default();
        let real = offer(vec![harvest], &mut stats);
        let admitted = admit(&config, &reference(), real, &mut stats);
        let pypi = &stats.sources["pypi"];
        assert_eq!(pypi.near_copies_dropped, planted, "{stats:?}");
        assert!(
            pypi.near_copies
                .iter()
                .any(|n| n.contains(":find_index ≈ neural-real/04_binary_search")),
            "{:?}",
            pypi.near_copies
        );
        assert!(
            pypi.near_copies.iter().any(|n| n.contains(":count_pairs ≈ sample_0")),
            "{:?}",
            pypi.near_copies
        );
        assert_eq!(
            stats.near_copies_dropped, planted,
            "no generated program is a near-copy: {stats:?}"
        );
        let kept: Vec<&str> = admitted
            .iter()
            .filter_map(|c| c.real.as_ref().map(|(_, f)| f.as_str()))
            .collect();
        assert_eq!(kept.len() as u64, own, "{kept:?}");
        assert!(kept.iter().all(|f| f.ends_with(":spread")), "{kept:?}");
        assert_eq!(stats.generated, 20);
    }

    #[test]
    fn levels_grow_through_the_corpus() {
        assert_eq!(level_for(0, 100).level, 0);
        assert_eq!(level_for(99, 100).level, Curriculum::MAX_LEVEL);
        assert!(
            (0..100)
                .map(|i| level_for(i, 100).level)
                .collect::<Vec<_>>()
                .is_sorted()
        );
    }
}
