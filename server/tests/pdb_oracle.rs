//! The debugger actions against pdb itself.
//!
//! Every fixture program under `tests/fixtures/programs` is traced once with the real
//! tracer (through the `replayground trace` CLI, in the sandbox), then many seeded
//! random action scripts are answered twice: by the state tree in `shared`, and by
//! `CPython`'s `bdb` driving the same program (`tests/pdb_oracle.py`). The stops,
//! locals included, must be identical.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use replayground_shared::trace_lang::normalize_repr;
use replayground_shared::{Action, StateTree, Stop, Trace};
use serde_json::Value;

const SCRIPTS_PER_PROGRAM: usize = 40;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/programs")
}

fn fixture_programs() -> Vec<PathBuf> {
    let mut programs: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("fixture folder exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    programs.sort();
    programs
}

fn sandbox_flags() -> Vec<&'static str> {
    let has_bwrap = Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    // Fixture programs are our own, so running them unsandboxed where bubblewrap is
    // missing is safe; CI has bubblewrap and exercises the real sandbox.
    if has_bwrap { vec![] } else { vec!["--unsafe-no-sandbox"] }
}

fn trace_of(program: &Path) -> Trace {
    let output = Command::new(env!("CARGO_BIN_EXE_replayground"))
        .args(sandbox_flags())
        .arg("trace")
        .arg(program)
        .output()
        .expect("the replayground binary runs");
    assert!(
        output.status.success(),
        "tracing {} failed: {}",
        program.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the trace is valid JSON")
}

/// A small deterministic generator (xorshift64*), so that scripts are reproducible.
struct Rng(u64);

impl Rng {
    fn seeded(name: &str) -> Self {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Self(h | 1)
    }

    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

fn random_script(rng: &mut Rng, lines: &[u32]) -> Vec<String> {
    let len = 3 + rng.below(28);
    (0..len)
        .map(|_| match rng.below(12) {
            0..=3 => "step_into".to_owned(),
            4..=7 => "step_over".to_owned(),
            8 | 9 => "step_return".to_owned(),
            10 => "continue".to_owned(),
            _ => format!("breakpoint:{}", lines[rng.below(lines.len())]),
        })
        .collect()
}

/// Our answer, in the JSON form `replayground debug` prints.
fn our_stops(tree: &StateTree, script: &[String]) -> Vec<Value> {
    let mut breakpoints = BTreeSet::new();
    let mut at = tree.initial_stop();
    let mut out = vec![serde_json::to_value(tree.state(at)).unwrap()];
    if at == Stop::End {
        return out;
    }
    for name in script {
        let action: Action = name.parse().unwrap();
        at = tree.step(at, action, &mut breakpoints);
        out.push(serde_json::to_value(tree.state(at)).unwrap());
        if at == Stop::End {
            break;
        }
    }
    out
}

fn oracle_stops(program: &Path, scripts: &[Vec<String>]) -> Vec<Vec<Value>> {
    // Debian's interpreter: the same one the sandbox runs the tracer with.
    let python = if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    };
    let mut child = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pdb_oracle.py"))
        .arg(program)
        .env("PYTHONHASHSEED", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(scripts).unwrap().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the oracle failed on {}: {}",
        program.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Object addresses differ between two processes; everything else must match.
fn normalized(mut stops: Vec<Value>) -> Vec<Value> {
    fn walk(v: &mut Value) {
        match v {
            Value::String(s) => *s = normalize_repr(s),
            Value::Object(map) => map.values_mut().for_each(walk),
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    stops.iter_mut().for_each(walk);
    stops
}

#[test]
fn debugger_actions_match_pdb_on_every_fixture() {
    let programs = fixture_programs();
    assert!(
        programs.len() >= 30,
        "the oracle corpus needs at least 30 programs, found {}",
        programs.len()
    );
    let mut failures = Vec::new();
    let mut compared = 0;
    for program in &programs {
        let name = program.file_name().unwrap().to_string_lossy().into_owned();
        let tree = StateTree::new(trace_of(program)).expect("the trace validates");
        let lines: Vec<u32> = tree.executed_lines().into_iter().collect();
        assert!(!lines.is_empty(), "{name} executed no lines");
        let mut rng = Rng::seeded(&name);
        let scripts: Vec<Vec<String>> = (0..SCRIPTS_PER_PROGRAM)
            .map(|_| random_script(&mut rng, &lines))
            .collect();
        let expected = oracle_stops(program, &scripts);
        assert_eq!(
            expected.len(),
            scripts.len(),
            "the oracle answered every script of {name}"
        );
        for (script, want) in scripts.iter().zip(expected) {
            compared += 1;
            let got = normalized(our_stops(&tree, script));
            let want = normalized(want);
            if got != want {
                let at = got
                    .iter()
                    .zip(&want)
                    .position(|(a, b)| a != b)
                    .unwrap_or(got.len().min(want.len()));
                failures.push(format!(
                    "{name}: script {script:?}\n  first difference at stop {at}:\n  ours: {}\n  pdb:  {}",
                    got.get(at).map_or("(none)".into(), Value::to_string),
                    want.get(at).map_or("(none)".into(), Value::to_string),
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {compared} scripts differ from pdb:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
