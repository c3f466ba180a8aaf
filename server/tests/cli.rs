//! The `replayground` binary: `trace` and `debug` on a small program, and its errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use replayground_shared::{Outcome, State, StopKind, Trace};

const PROGRAM: &str = "def add(a, b):\n    total = a + b\n    return total\n\nx = add(1, 2)\nprint(x)\ny = x * 2\n";

/// The binary, sandboxed when bubblewrap is installed (the programs here are the test's own).
fn replayground() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_replayground"));
    cmd.args(crate::common::sandbox_flags());
    cmd
}

fn write_program(dir: &Path, name: &str, code: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, code).unwrap();
    path
}

fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A failure is one line on stderr, and a non-zero exit.
fn assert_fails_with(output: &Output, needle: &str) {
    assert!(!output.status.success(), "expected a failure");
    assert!(
        output.stdout.is_empty(),
        "nothing on stdout: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    let stderr = stderr_of(output);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.contains("UNSAFE")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    assert!(lines[0].contains(needle), "{needle:?} not in {stderr}");
}

#[test]
fn trace_prints_the_trace_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let program = write_program(dir.path(), "add.py", PROGRAM);
    let output = replayground().arg("trace").arg(&program).output().unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let trace: Trace = serde_json::from_slice(&output.stdout).unwrap();
    trace.validate().unwrap();
    assert_eq!(trace.outcome, Outcome::Finished);
    assert_eq!(trace.stdout, "3\n");
    assert!(trace.frames.iter().any(|f| f.function == "add"));
}

#[test]
fn trace_reads_stdin_from_a_file_and_caps_steps() {
    let dir = tempfile::tempdir().unwrap();
    let program = write_program(dir.path(), "echo.py", "line = input()\nprint(line.upper())\n");
    let input = write_program(dir.path(), "input.txt", "shout\n");
    let output = replayground()
        .arg("trace")
        .arg(&program)
        .arg("--stdin")
        .arg(&input)
        .output()
        .unwrap();
    let trace: Trace = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(trace.stdout, "SHOUT\n");

    let output = replayground()
        .arg("trace")
        .arg(&program)
        .args(["--max-steps", "2"])
        .output()
        .unwrap();
    let trace: Trace = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(trace.events.len(), 2);
    assert!(matches!(trace.outcome, Outcome::LimitReached { .. }));
}

#[test]
fn debug_prints_one_state_per_stop() {
    let dir = tempfile::tempdir().unwrap();
    let program = write_program(dir.path(), "add.py", PROGRAM);
    let output = replayground()
        .arg("debug")
        .arg(&program)
        .args([
            "--actions",
            "step_over,step_into,step_over,step_return,breakpoint:7,continue",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        !stdout.contains("3\n\n"),
        "the program's own output stays out of stdout"
    );
    let states: Vec<State> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let summary: Vec<(StopKind, Option<u32>, Option<&str>)> = states
        .iter()
        .map(|s| (s.event, s.line, s.function.as_deref()))
        .collect();
    assert_eq!(
        summary,
        [
            (StopKind::Line, Some(1), Some("<module>")),
            (StopKind::Line, Some(5), Some("<module>")),
            (StopKind::Call, Some(1), Some("add")),
            (StopKind::Line, Some(2), Some("add")),
            (StopKind::Return, Some(3), Some("add")),
            (StopKind::Line, Some(7), Some("<module>")),
            (StopKind::End, None, None),
        ]
    );
    assert_eq!(states[4].value.as_deref(), Some("3"));
    assert_eq!(states[4].locals.as_ref().unwrap().get("total"), Some("3"));
    assert_eq!(states[5].globals.as_ref().unwrap().get("x"), Some("3"));
}

#[test]
fn debug_stops_printing_when_actions_run_out() {
    let dir = tempfile::tempdir().unwrap();
    let program = write_program(dir.path(), "add.py", PROGRAM);
    let output = replayground()
        .arg("debug")
        .arg(&program)
        .args(["--actions", "step_over"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(output.stdout).unwrap().lines().count(), 2);
}

#[test]
fn a_missing_file_is_one_clear_sentence() {
    let output = replayground()
        .args(["trace", "/nonexistent/missing.py"])
        .output()
        .unwrap();
    assert_fails_with(
        &output,
        "cannot read the program /nonexistent/missing.py: it does not exist",
    );
    let output = replayground()
        .args(["debug", "/nonexistent/missing.py"])
        .output()
        .unwrap();
    assert_fails_with(&output, "does not exist");
}

#[test]
fn debugging_a_syntax_error_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let program = write_program(dir.path(), "bad.py", "x = 1\ndef broken(:\n    pass\n");
    let output = replayground()
        .arg("debug")
        .arg(&program)
        .args(["--actions", "step_into"])
        .output()
        .unwrap();
    assert_fails_with(&output, "has a syntax error on line 2");

    // `trace` reports it as the trace's outcome instead.
    let output = replayground().arg("trace").arg(&program).output().unwrap();
    assert!(output.status.success());
    let trace: Trace = serde_json::from_slice(&output.stdout).unwrap();
    assert!(matches!(trace.outcome, Outcome::SyntaxError { line: Some(2), .. }));
}

#[test]
fn a_bad_action_is_refused_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let program = write_program(dir.path(), "add.py", PROGRAM);
    let output = replayground()
        .arg("debug")
        .arg(&program)
        .args(["--actions", "step_into,jump_around"])
        .output()
        .unwrap();
    assert_fails_with(&output, "unknown debugger action `jump_around`");
}

#[test]
fn a_missing_bubblewrap_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let program = write_program(dir.path(), "add.py", PROGRAM);
    let output = Command::new(env!("CARGO_BIN_EXE_replayground"))
        .arg("trace")
        .arg(&program)
        .env("REPLAYGROUND_BWRAP", "/nonexistent/bwrap")
        .output()
        .unwrap();
    assert_fails_with(
        &output,
        "bubblewrap (bwrap) is not installed, so untrusted code cannot be sandboxed",
    );
}

#[test]
fn serialize_prints_the_trace_language_and_it_parses_back() {
    let dir = tempfile::tempdir().unwrap();
    let program = write_program(dir.path(), "add.py", PROGRAM);
    for inverse in [false, true] {
        let mut cmd = replayground();
        cmd.arg("serialize")
            .arg(&program)
            .args(["--actions", "step_into,step_into,step_over,step_over,step_over"]);
        if inverse {
            cmd.arg("--inverse");
        }
        let output = cmd.output().unwrap();
        assert!(output.status.success(), "{}", stderr_of(&output));
        let text = String::from_utf8(output.stdout).unwrap();
        let trajectory = replayground_shared::trace_lang::parse(&text).unwrap();
        assert_eq!(trajectory.code, PROGRAM);
        assert_eq!(trajectory.steps.len(), 6, "{text}");
        let first = &trajectory.steps[if inverse { 5 } else { 0 }].state;
        assert_eq!((first.event, first.line), (StopKind::Line, Some(1)), "{text}");
        let callee = trajectory
            .steps
            .iter()
            .find(|s| s.state.event == StopKind::Call)
            .expect("the call of add");
        assert_eq!(callee.state.locals.as_ref().unwrap().get("a"), Some("1"));
        assert_eq!(text.contains("<|inverse|>"), inverse);
        assert_eq!(text.contains("<|reverse_"), inverse);
    }
}

#[test]
fn serialize_refuses_a_bad_action() {
    let dir = tempfile::tempdir().unwrap();
    let program = write_program(dir.path(), "add.py", PROGRAM);
    let output = replayground()
        .arg("serialize")
        .arg(&program)
        .args(["--actions", "leap"])
        .output()
        .unwrap();
    assert_fails_with(&output, "unknown debugger action `leap`");
}
