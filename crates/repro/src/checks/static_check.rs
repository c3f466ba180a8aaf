//! The static check: `ruff check --select F,E9` (undefined names, missing imports,
//! syntax), which only parses the code and never runs it. (`static` is a keyword.)

use std::path::{Path, PathBuf};
use std::process::Stdio;

use replayground_shared::repro::{CheckKind, CheckVerdict};
use serde::Deserialize;
use tokio::io::AsyncWriteExt as _;

use super::score::{first_few, verdict};

/// The ruff executable: `$REPLAYGROUND_RUFF`, the checkout's `.tools/bin/ruff` (what
/// `cargo xtask setup` installs), or `ruff` on `PATH`.
pub fn locate_ruff() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("REPLAYGROUND_RUFF").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let candidates = [
        PathBuf::from(".tools/bin/ruff"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/bin/ruff"),
    ];
    if let Some(found) = candidates.into_iter().find(|p| p.is_file()) {
        return Some(found);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("ruff"))
            .find(|p| p.is_file())
    })
}

/// One diagnostic of `ruff check --output-format json`.
#[derive(Debug, Clone, Deserialize)]
pub struct RuffDiagnostic {
    /// `None` for syntax errors.
    pub code: Option<String>,
    pub message: String,
    pub location: RuffLocation,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct RuffLocation {
    pub row: u32,
    pub column: u32,
}

/// The diagnostics that make a script fail the static check (the rest are style).
fn is_blocking(diagnostic: &RuffDiagnostic) -> bool {
    match diagnostic.code.as_deref() {
        // ruff 0.14 names syntax errors `invalid-syntax`; older versions gave no code.
        None | Some("invalid-syntax") => true,
        Some(code) => {
            code.starts_with("E9") || ["F821", "F822", "F823", "F706", "F704", "F702", "F701"].contains(&code)
        }
    }
}

/// Runs ruff on `code` (fed on stdin: nothing is written or executed).
pub async fn ruff_diagnostics(ruff: &Path, code: &str) -> Result<Vec<RuffDiagnostic>, String> {
    let mut child = tokio::process::Command::new(ruff)
        .args([
            "check",
            "--select",
            "F,E9",
            "--output-format",
            "json",
            "--no-cache",
            "--isolated",
            "--exit-zero",
        ])
        .args(["--stdin-filename", "candidate.py", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", ruff.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(code.as_bytes())
            .await
            .map_err(|e| format!("cannot feed ruff: {e}"))?;
    }
    let output = child
        .wait_with_output()
        .await
        .map_err(|e| format!("ruff failed: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "ruff exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("ruff's JSON could not be read: {e}"))
}

/// Undefined names, missing imports and syntax errors, by ruff.
pub async fn static_check(code: &str, ruff: Option<&Path>) -> (CheckVerdict, Vec<RuffDiagnostic>) {
    let Some(ruff) = ruff else {
        return (
            verdict(
                CheckKind::Static,
                true,
                None,
                "Static check skipped: ruff is not installed (run `cargo xtask setup`, or set REPLAYGROUND_RUFF).",
            ),
            Vec::new(),
        );
    };
    match ruff_diagnostics(ruff, code).await {
        Ok(diagnostics) => {
            let blocking: Vec<String> = diagnostics
                .iter()
                .filter(|d| is_blocking(d))
                .map(|d| format!("line {}: {}", d.location.row, d.message))
                .collect();
            let verdict = if blocking.is_empty() {
                let notes = diagnostics.len();
                verdict(
                    CheckKind::Static,
                    true,
                    None,
                    if notes == 0 {
                        "ruff found no undefined names.".to_owned()
                    } else {
                        format!("ruff found no undefined names ({notes} minor notes).")
                    },
                )
            } else {
                verdict(
                    CheckKind::Static,
                    false,
                    None,
                    format!("ruff: {}", first_few(&blocking, 8)),
                )
            };
            (verdict, diagnostics)
        }
        Err(e) => (
            verdict(CheckKind::Static, true, None, format!("Static check skipped: {e}.")),
            Vec::new(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ruff_finds_undefined_names_or_says_it_is_missing() {
        let (skipped, _) = static_check("x = y", None).await;
        assert!(skipped.passed && skipped.detail.contains("skipped"));
        let Some(ruff) = locate_ruff() else {
            eprintln!("ruff is not installed; run `cargo xtask setup`");
            return;
        };
        let (v, diagnostics) = static_check("import os\nx = np.zeros(3)\n", Some(&ruff)).await;
        assert!(!v.passed);
        assert!(v.detail.contains("Undefined name `np`"), "{}", v.detail);
        assert!(diagnostics.iter().any(|d| d.code.as_deref() == Some("F401")));
        let (v, _) = static_check("import numpy as np\nprint(np.zeros(3))\n", Some(&ruff)).await;
        assert!(v.passed, "{}", v.detail);
        let (v, _) = static_check("x = (1,\nprint(x\n", Some(&ruff)).await;
        assert!(!v.passed, "syntax errors fail: {}", v.detail);
    }
}
