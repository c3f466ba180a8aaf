//! `corpus --pypi` end to end through the real sandbox: a tiny MIT wheel built here gives
//! real-function programs in `programs.jsonl`; a call that cannot work is dropped and counted.
//! (`missing` is eligible: the name it calls might be a builtin, only the run can tell.)

use std::io::{Cursor, Write as _};
use std::sync::Arc;

use replayground_server::neural::corpus::{CorpusConfig, build_with};
use replayground_server::neural::dedup::Reference;
use replayground_server::neural::policy::Policy;
use replayground_server::neural::pypi;
use replayground_server::neural::real_code::{Arguments, CALLS_PER_FUNCTION};
use replayground_server::runner::{DEFAULT_PYTHON, Tracer};
use replayground_server::sandbox::{Bubblewrap, BubblewrapConfig, RunLimits, Sandbox, Unsandboxed};

fn sandbox() -> Arc<dyn Sandbox> {
    match Bubblewrap::detect(BubblewrapConfig::default()) {
        Ok(bwrap) => Arc::new(bwrap),
        // The fixture's functions are written here and terminate.
        Err(_) => Arc::new(Unsandboxed::new()),
    }
}

const MODULE: &str = "import math\n\n\
def total(xs):\n    acc = 0\n    for x in xs:\n        acc += x if isinstance(x, int) else len(x)\n    return acc\n\n\
def shout(s):\n    return str(s).upper() + '!'\n\n\
def missing(n):\n    return undefined_helper(n)\n\n\
def spread(*args):\n    return args\n";

fn wheel() -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    writer.start_file("toy-1.0.dist-info/METADATA", options).unwrap();
    writer
        .write_all(b"Metadata-Version: 2.1\nName: toy\nClassifier: License :: OSI Approved :: MIT License\n\n")
        .unwrap();
    writer.start_file("toy/core.py", options).unwrap();
    writer.write_all(MODULE.as_bytes()).unwrap();
    writer.finish().unwrap().into_inner()
}

#[tokio::test]
async fn real_functions_run_in_the_sandbox_and_broken_calls_are_dropped() {
    let wheels = tempfile::tempdir().unwrap();
    std::fs::write(wheels.path().join("toy-1.0-py3-none-any.whl"), wheel()).unwrap();
    let real = pypi::load_dir(wheels.path(), 1, Arguments::Inferred).unwrap();
    assert_eq!(real.functions_eligible, 3, "{real:?}");
    let offered = real.programs.len() as u64;
    let missing = real
        .programs
        .iter()
        .filter(|p| p.function.ends_with(":missing"))
        .count() as u64;
    assert!(
        missing >= 1 && offered >= 3 && offered <= 3 * CALLS_PER_FUNCTION as u64,
        "{real:?}"
    );
    let out = tempfile::tempdir().unwrap();
    let config = CorpusConfig {
        out: out.path().to_path_buf(),
        programs: 4,
        seed: 1,
        trajectories_per_program: 2,
        jobs: 2,
        policy: Policy::default(),
        heldout_every: 10,
    };
    let tracer = Arc::new(Tracer::new(sandbox(), DEFAULT_PYTHON, RunLimits::default()));
    let stats = build_with(&config, tracer, &Reference::default(), vec![real])
        .await
        .expect("the corpus builds");
    assert_eq!(stats.generated, 4);
    assert_eq!(stats.real_programs, offered);
    assert_eq!(stats.real_call_errors_dropped, missing, "{stats:?}");
    let pypi = &stats.sources["pypi"];
    assert_eq!((pypi.functions_seen, pypi.functions_eligible), (4, 3), "{stats:?}");
    assert_eq!(pypi.functions_kept, 2, "total and shout: {stats:?}");
    assert_eq!(pypi.programs_kept, offered - missing, "{stats:?}");
    let records: Vec<serde_json::Value> = std::fs::read_to_string(out.path().join("programs.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let real: Vec<&serde_json::Value> = records.iter().filter(|r| r["origin"] == "pypi").collect();
    assert_eq!(real.len() as u64, offered - missing, "{records:?}");
    for record in &real {
        assert!(record["events"].as_u64().unwrap() > 0);
        assert_eq!(record["outcome"]["kind"], "finished", "{record}");
    }
    assert!(
        real.iter()
            .any(|r| r["source"].as_str().unwrap().contains("result = total(xs)"))
    );
    assert!(
        real.iter()
            .any(|r| r["source"].as_str().unwrap().contains("result = shout("))
    );
    assert_eq!(records.len() as u64, stats.train_programs + stats.heldout_programs);
}
