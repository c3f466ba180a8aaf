//! The training corpus: generated programs → real traces → sampled trajectories.
//!
//! Deterministic for a given seed and configuration: program `i` comes from seed
//! `seed + i`, its trajectories from a generator seeded by the program seed, and the
//! output files list programs in order whatever order the sandbox jobs finish in.
//! Programs that are near-copies of CruxEval functions are dropped (and counted);
//! identical programs are kept once; a tenth of the programs, chosen by a hash of
//! their source, form a held-out split that never appears in training.

use std::collections::HashSet;
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
use super::pypi::PYPI_LEVEL;
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
    /// Real-function programs (`--pypi`) offered to the pipeline.
    pub pypi_programs: u64,
    /// Real-function programs whose call failed on a missing name, import or argument type.
    pub pypi_call_errors_dropped: u64,
    pub train_programs: u64,
    pub heldout_programs: u64,
    pub train_trajectories: u64,
    pub heldout_trajectories: u64,
    pub inverse_trajectories: u64,
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

/// Builds the corpus from the generated programs followed by `real` ones (real functions
/// called with generated arguments, see [`super::pypi`]), which pass the same checks.
pub async fn build_with(
    config: &CorpusConfig,
    tracer: Arc<Tracer>,
    reference: &Reference,
    real: Vec<Program>,
) -> anyhow::Result<CorpusStats> {
    std::fs::create_dir_all(&config.out)?;
    let mut programs_out = writer(&config.out, "programs.jsonl")?;
    let mut train_out = writer(&config.out, "train.jsonl")?;
    let mut heldout_out = writer(&config.out, "heldout.jsonl")?;
    let mut stats = CorpusStats::default();
    let mut seen = HashSet::new();

    let bar = ProgressBar::new(config.programs + real.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} programs {per_sec} eta {eta} {msg}")
            .expect("a valid template"),
    );

    let mut candidates: Vec<Program> = Vec::new();
    stats.pypi_programs = real.len() as u64;
    let generated = (0..config.programs).map(|i| generate(config.seed + i, level_for(i, config.programs)));
    for (i, program) in generated.chain(real).enumerate() {
        if (i as u64) < config.programs {
            stats.generated += 1;
        }
        if reference.near_copy(&program.source).is_some() {
            stats.near_copies_dropped += 1;
            continue;
        }
        if !seen.insert(source_hash(&program.source)) {
            stats.duplicates_dropped += 1;
            continue;
        }
        candidates.push(program);
    }
    bar.inc(stats.near_copies_dropped + stats.duplicates_dropped);

    // Trace in bounded parallel batches, then write in program order.
    for batch in candidates.chunks(config.jobs.max(1) * 4) {
        let mut set = JoinSet::new();
        for (k, program) in batch.iter().enumerate() {
            let tracer = Arc::clone(&tracer);
            let source = program.source.clone();
            set.spawn(async move { (k, tracer.trace(&source, "").await) });
        }
        let mut traced: Vec<Option<_>> = (0..batch.len()).map(|_| None).collect();
        while let Some(joined) = set.join_next().await {
            let (k, result) = joined?;
            traced[k] = Some(result);
        }
        for (program, result) in batch.iter().zip(traced) {
            bar.inc(1);
            let trace = match result.expect("every job reports") {
                Ok(trace) if usable(&trace.outcome) && !trace.events.is_empty() => trace,
                _ => {
                    stats.untraceable_dropped += 1;
                    continue;
                }
            };
            let is_real = program.level == PYPI_LEVEL;
            if is_real && call_failed(&trace.outcome) {
                stats.pypi_call_errors_dropped += 1;
                continue;
            }
            let heldout = source_hash(&program.source).is_multiple_of(config.heldout_every.max(2));
            let outcome = trace.outcome.clone();
            let tree = StateTree::new(trace)?;
            stats.events += tree.len() as u64;
            let split = if heldout { "heldout" } else { "train" };
            serde_json::to_writer(
                &mut programs_out,
                &ProgramRecord {
                    seed: program.seed,
                    level: program.level,
                    split,
                    origin: is_real.then_some("pypi"),
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

/// A real function's call that cannot work here (a name from a sibling module, an
/// uninstalled import, arguments of the wrong type) teaches nothing about the function.
fn call_failed(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Outcome::UncaughtException { exception_type, .. }
            if matches!(exception_type.as_str(), "NameError" | "ImportError" | "ModuleNotFoundError" | "TypeError")
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
