//! Where the repository and its tools are, and how to run a program there.

use std::ffi::OsString;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

/// The repository root plus the tool folders that child processes get first on `PATH`.
pub(crate) struct Project {
    pub(crate) root: PathBuf,
    /// `.tools/node_modules/.bin`: the project-local npm tools (binaryen's `wasm-opt`).
    pub(crate) npm_bin: PathBuf,
    /// `$CARGO_HOME/bin` (normally `~/.cargo/bin`): trunk and wasm-bindgen from `cargo install`.
    pub(crate) cargo_bin: PathBuf,
}

impl Project {
    pub(crate) fn locate() -> Result<Self> {
        // xtask/ sits directly under the workspace root. `cargo run` sets the variable at
        // run time too; prefer that, so a binary built from another checkout that shares
        // the target dir still works on the checkout it was started from.
        let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
            .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
        let root = manifest_dir
            .parent()
            .context("the xtask crate has no parent folder")?
            .to_path_buf();
        let cargo_home = match std::env::var_os("CARGO_HOME") {
            Some(home) => PathBuf::from(home),
            None => {
                PathBuf::from(std::env::var_os("HOME").context("neither CARGO_HOME nor HOME is set")?).join(".cargo")
            }
        };
        Ok(Self {
            npm_bin: root.join(".tools/node_modules/.bin"),
            cargo_bin: cargo_home.join("bin"),
            root,
        })
    }

    /// `PATH` with the project's tool folders first, so trunk finds the pinned
    /// wasm-bindgen and wasm-opt instead of trying to download its own.
    pub(crate) fn tool_path(&self) -> Result<OsString> {
        let inherited = std::env::var_os("PATH").unwrap_or_default();
        let dirs = [self.npm_bin.clone(), self.cargo_bin.clone()]
            .into_iter()
            .chain(std::env::split_paths(&inherited));
        std::env::join_paths(dirs).context("a folder on PATH contains a path separator")
    }

    /// A command that runs in the repository root with the tool `PATH`.
    pub(crate) fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Result<Command> {
        let mut cmd = Command::new(program);
        cmd.current_dir(&self.root).env("PATH", self.tool_path()?);
        Ok(cmd)
    }

    /// Where cargo puts build outputs: `$CARGO_TARGET_DIR` (relative to the root) or `target/`.
    pub(crate) fn target_dir(&self) -> PathBuf {
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| self.root.join("target"), |dir| self.root.join(dir))
    }

    /// `cargo` as invoked by `cargo xtask` (the `CARGO` cargo sets), with the tool `PATH`.
    pub(crate) fn cargo(&self) -> Result<Command> {
        self.command(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
    }
}

/// Runs `cmd` with inherited stdio and fails with a clear sentence unless it succeeds.
pub(crate) fn run(cmd: &mut Command) -> Result<()> {
    let shown = display(cmd);
    println!("$ {shown}");
    let status = cmd.status().map_err(|e| spawn_error(cmd, &e))?;
    if !status.success() {
        bail!("`{shown}` failed ({status})");
    }
    Ok(())
}

/// Builds the debug `replayground` binary and runs it in the checkout with `args`, its
/// progress and log on the terminal; returns the JSON it prints (a `--json` command).
pub(crate) fn replayground_json<S: AsRef<std::ffi::OsStr>>(
    project: &Project,
    args: impl IntoIterator<Item = S>,
) -> Result<serde_json::Value> {
    run(project
        .cargo()?
        .args(["build", "-p", "replayground-server", "--bin", "replayground"]))?;
    let binary = project.target_dir().join("debug/replayground");
    let mut cmd = Command::new(&binary);
    cmd.current_dir(&project.root).args(args).stderr(Stdio::inherit());
    println!("$ {}", display(&cmd));
    let output = cmd
        .output()
        .with_context(|| format!("could not run {}", binary.display()))?;
    if !output.status.success() {
        bail!("{} failed ({})", display(&cmd), output.status);
    }
    serde_json::from_slice(&output.stdout).with_context(|| format!("{} did not print its JSON", display(&cmd)))
}

/// The trimmed stdout of `cmd`, or `None` when it is missing or fails: for probes
/// such as `trunk --version`.
pub(crate) fn probe(cmd: &mut Command) -> Option<String> {
    let output = cmd.stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Whether this process runs as root (`id -u` is 0).
pub(crate) fn is_root() -> bool {
    probe(Command::new("id").arg("-u")).is_some_and(|uid| uid == "0")
}

fn spawn_error(cmd: &Command, error: &std::io::Error) -> anyhow::Error {
    let program = cmd.get_program().to_string_lossy();
    if error.kind() == ErrorKind::NotFound {
        anyhow::anyhow!("`{program}` is not installed or not on PATH; run `cargo xtask setup` first")
    } else {
        anyhow::anyhow!("could not start `{program}`: {error}")
    }
}

/// The command line as a person would type it (program name without its folder).
pub(crate) fn display(cmd: &Command) -> String {
    let program = Path::new(cmd.get_program());
    let name = program
        .file_name()
        .unwrap_or(program.as_os_str())
        .to_string_lossy()
        .into_owned();
    std::iter::once(name)
        .chain(cmd.get_args().map(|a| a.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `path` as written from `base` (unchanged when it lies elsewhere), for messages.
pub(crate) fn relative(path: &Path, base: &Path) -> String {
    path.strip_prefix(base).unwrap_or(path).display().to_string()
}

/// `0.4s`, `12.3s`, `3m 05s`.
pub(crate) fn format_duration(d: std::time::Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 60.0 {
        format!("{secs:.1}s")
    } else {
        let whole = d.as_secs();
        format!("{}m {:02}s", whole / 60, whole % 60)
    }
}

/// `pip download` of exactly these wheels (no dependencies, no source builds) into `dir`.
pub(crate) fn pip_download(dir: &Path, requirements: impl IntoIterator<Item = String>) -> Result<()> {
    run(Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "-d",
        ])
        .arg(dir)
        .args(requirements))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_duration(Duration::from_millis(420)), "0.4s");
        assert_eq!(format_duration(Duration::from_millis(59_940)), "59.9s");
        assert_eq!(format_duration(Duration::from_secs(185)), "3m 05s");
    }

    #[test]
    fn commands_display_without_their_folder() {
        let mut cmd = Command::new("/usr/bin/cargo");
        cmd.args(["fmt", "--all"]);
        assert_eq!(display(&cmd), "cargo fmt --all");
    }
}
