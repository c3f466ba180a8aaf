//! The realistic benchmark: hand-written programs that look like what users paste
//! (`tests/neural-real/programs/`: classes, generators, closures, recursion, exceptions,
//! comprehensions, mutation and aliasing), none of them from the generator. Each is
//! traced for real and walked by the debugger policy with its own seed, so the same
//! checkout always asks the same questions. No training set may hold a near-copy of
//! them: `replayground corpus` adds them to its dedup reference.

use std::path::{Path, PathBuf};

use rand::SeedableRng as _;
use rand::rngs::StdRng;
use replayground_shared::trace_lang::Direction;
use replayground_shared::{StateTree, Trace};

use super::dedup::{Reference, top_level_blocks};
use super::eval::Walk;
use super::policy::Policy;
use replayground_exec::runner::Tracer;

/// The programs' folder, relative to a checkout.
pub const DEFAULT_DIR: &str = "tests/neural-real/programs";

/// One benchmark program.
#[derive(Debug, Clone)]
pub struct Program {
    /// The file name without `.py`, e.g. `01_bank_account`.
    pub name: String,
    pub source: String,
}

/// The programs' folder of the checkout around the working directory.
pub fn default_dir() -> PathBuf {
    PathBuf::from(DEFAULT_DIR)
}

/// Every `*.py` in `dir`, by the number its name starts with, then by name: `100_x` comes
/// after `99_y`, so adding a program never moves the seeds of those before it.
pub fn load(dir: &Path) -> anyhow::Result<Vec<Program>> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot read the realistic benchmark's programs in {}: {e} (run from the checkout, or pass --data DIR)",
            dir.display()
        )
    })?;
    let mut programs = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "py") {
            let source = std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            let name = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
            programs.push(Program { name, source });
        }
    }
    anyhow::ensure!(!programs.is_empty(), "{} holds no .py programs", dir.display());
    programs.sort_by(|a, b| (number(&a.name), &a.name).cmp(&(number(&b.name), &b.name)));
    Ok(programs)
}

/// The number a program's name starts with (`07_closure` → 7); none sorts first.
fn number(name: &str) -> Option<u64> {
    let digits = name.find(|c: char| !c.is_ascii_digit()).unwrap_or(name.len());
    name[..digits].parse().ok()
}

/// Program `i`'s trajectory: its real trace walked by the default policy seeded with
/// `seed + i`, with the breakpoints the walk set where an inverse trajectory does not
/// record them (the playground's page knows its own). A program that does not trace is
/// an error naming it (the benchmark must not shrink silently).
pub async fn trajectories(tracer: &Tracer, programs: &[Program], seed: u64) -> anyhow::Result<Vec<Walk>> {
    let policy = Policy::default();
    let mut out = Vec::with_capacity(programs.len());
    for (i, (program, trace)) in programs.iter().zip(traces(tracer, programs).await?).enumerate() {
        let tree = StateTree::new(trace).map_err(|e| anyhow::anyhow!("{}: {e}", program.name))?;
        let mut rng = StdRng::seed_from_u64(seed.wrapping_add(i as u64));
        let (trajectory, breakpoints) = policy.walk(&tree, &program.source, &mut rng);
        // A forward trajectory's own actions tell which were set by each step.
        let inverse = trajectory.direction == Direction::Inverse;
        out.push(Walk {
            trajectory,
            breakpoints: inverse.then_some(breakpoints),
        });
    }
    Ok(out)
}

/// Each program's real run, in order; a program that does not trace is an error naming it.
pub async fn traces(tracer: &Tracer, programs: &[Program]) -> anyhow::Result<Vec<Trace>> {
    let mut out = Vec::with_capacity(programs.len());
    for program in programs {
        let trace = tracer
            .trace(&program.source, "")
            .await
            .map_err(|e| anyhow::anyhow!("{}: {e}", program.name))?;
        anyhow::ensure!(!trace.events.is_empty(), "{}: the trace is empty", program.name);
        out.push(trace);
    }
    Ok(out)
}

/// Adds every program, and each of its top-level functions and classes on its own, to
/// `reference`, so that no corpus holds a near-copy of one.
pub fn keep_out_of(reference: &mut Reference, programs: &[Program]) {
    for program in programs {
        reference.add(format!("neural-real/{}", program.name), &program.source);
        for (name, block) in top_level_blocks(&program.source) {
            reference.add(format!("neural-real/{}:{name}", program.name), &block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::{Curriculum, generate};

    fn programs() -> Vec<Program> {
        load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(DEFAULT_DIR)).unwrap()
    }

    #[test]
    fn the_benchmark_holds_forty_programs_that_no_generated_program_copies() {
        let programs = programs();
        assert!(programs.len() >= 40, "{} programs", programs.len());
        let mut reference = Reference::default();
        keep_out_of(&mut reference, &programs);
        for program in &programs {
            let hit = reference.near_copy(&program.source);
            assert!(hit.is_some(), "{} is not recognised as itself", program.name);
        }
        for seed in 0..300 {
            let generated = generate(
                seed,
                Curriculum {
                    level: (seed % 5) as u8,
                },
            );
            assert_eq!(reference.near_copy(&generated.source), None, "{}", generated.source);
        }
    }

    #[test]
    fn programs_come_in_the_order_of_their_numbers_so_a_new_one_moves_no_seed() {
        let dir = std::env::temp_dir().join(format!("replayground-order-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["100_late", "09_early", "10_middle", "99_last_two_digits", "notes"] {
            std::fs::write(dir.join(format!("{name}.py")), "print(1)\n").unwrap();
        }
        let names: Vec<String> = load(&dir).unwrap().into_iter().map(|p| p.name).collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            names,
            ["notes", "09_early", "10_middle", "99_last_two_digits", "100_late"]
        );
        let checkout: Vec<String> = programs().into_iter().map(|p| p.name).collect();
        let mut by_name = checkout.clone();
        by_name.sort();
        let two_digits = |names: &[String]| {
            names
                .iter()
                .filter(|n| n.as_bytes().get(2) == Some(&b'_'))
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(two_digits(&checkout), two_digits(&by_name), "01–99 keep their places");
    }

    #[test]
    fn a_copied_benchmark_function_is_caught_inside_another_program() {
        let programs = programs();
        let mut reference = Reference::default();
        keep_out_of(&mut reference, &programs);
        let search = programs.iter().find(|p| p.name == "04_binary_search").unwrap();
        let (_, function) = top_level_blocks(&search.source).remove(0);
        let renamed = function.replace("items", "seq").replace("target", "wanted");
        let disguised = format!("{renamed}\n\nimport math\nprint(binary_search([1, 3], math.floor(3.5)))\n");
        let hit = reference
            .near_copy(&disguised)
            .expect("a renamed benchmark function is a near-copy");
        assert!(hit.id.ends_with(":binary_search"), "{hit:?}");
    }

    #[test]
    fn top_level_blocks_end_where_module_code_starts() {
        let source = "import os\n\n@dec\ndef f(x):\n    return x\n\n\nclass A(B):\n    y = 1\n\nprint(f(2))\n";
        let blocks = top_level_blocks(source);
        let names: Vec<&str> = blocks.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["f", "A"]);
        assert_eq!(blocks[0].1, "def f(x):\n    return x\n\n\n");
        assert_eq!(blocks[1].1, "class A(B):\n    y = 1\n\n");
    }
}
