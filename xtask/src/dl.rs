//! `cargo xtask setup --with dl`: the deep-learning frameworks the real bug reports of
//! `tests/repro-real` need, in a virtual environment the sandbox can run
//! (`--python .tools/dl/bin/python`). Opt-in: about 6 GB, not in CI's default path.
//!
//! The environment is made from Debian's `/usr/bin/python3` (the sandbox's default
//! interpreter, so its standard library is already mounted) in `.tools/dl`; `cargo xtask
//! test` makes a TensorFlow-only one in `.tools/dl-tf` for its subset of the real reports.
//! Unlike the models they are not kept in the cache under the home folder: the sandbox's
//! unprivileged uids must be able to read them, and root's home is closed to them (a
//! checkout under it gets them in /opt/replayground instead).

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::project::{Project, run};

/// The interpreter the environments are made from.
const BASE_PYTHON: &str = "/usr/bin/python3";

/// A Python environment with deep-learning frameworks, made from Debian's interpreter.
pub(crate) struct Frameworks {
    /// Relative to the root; `--python` takes `<folder>/bin/python`.
    folder: &'static str,
    requirements: &'static [&'static str],
    /// Python that imports what the sandbox will run, printing the versions.
    import_check: &'static str,
    size: &'static str,
}

/// The versions the dataset's reproductions ran with and its reports state
/// (`requirements.txt`: tensorflow 2.15.1, keras 2.15.0, torch 2.4.0), so that a report's
/// exception is one these frameworks raise: every one of the 24 crash reproductions of
/// `tests/repro-real` that runs here raises the reported type with them, while with
/// TensorFlow 2.21 / Keras 3 and torch 2.15 five end otherwise (another type, or no error;
/// 2026-12-03, the top-level README has the table). `tensorflow-cpu` 2.15.1 brings keras 2.15
/// and numpy 1.26 and has wheels for Debian's Python 3.11. torch has no CPU-only build on
/// `PyPI`: its CUDA build pulls the NVIDIA libraries (about 3 GB) and runs on the CPU.
const TENSORFLOW_CPU: &str = "tensorflow-cpu==2.15.1";

/// `--with dl`: both frameworks, for every case of `tests/repro-real`, and the libraries
/// the reports load and score their data with, at the versions their `requirements.txt`
/// state: pandas, scikit-learn, torchvision (the build made for torch 2.4.0; it brings
/// Pillow), matplotlib and tqdm (13's progress bar).
pub(crate) const ALL: Frameworks = Frameworks {
    folder: ".tools/dl",
    requirements: &[
        TENSORFLOW_CPU,
        "torch==2.4.0",
        "torchvision==0.19.0",
        "pandas==2.2.2",
        "scikit-learn==1.5.1",
        "matplotlib==3.9.2",
        "tqdm==4.66.4",
    ],
    import_check: "import tensorflow as tf, keras, torch, torchvision, pandas, sklearn, matplotlib, tqdm; print('tensorflow', tf.__version__, 'keras', keras.__version__, 'torch', torch.__version__, 'torchvision', torchvision.__version__, 'pandas', pandas.__version__, 'scikit-learn', sklearn.__version__)",
    size: "about 6 GB",
};

/// TensorFlow and Keras alone, for the TensorFlow cases `cargo xtask test` runs
/// (`repro_real::ci_subset`): a sixth of the download, no NVIDIA libraries.
pub(crate) const TENSORFLOW: Frameworks = Frameworks {
    folder: ".tools/dl-tf",
    requirements: &[TENSORFLOW_CPU],
    import_check: "import tensorflow as tf, keras; print('tensorflow', tf.__version__, 'keras', keras.__version__)",
    size: "about 1.3 GB",
};

/// Where the environment is made outside a checkout whose folders are closed to other
/// users (a clone under root's home): the sandbox could not mount it there.
const OUTSIDE_CLOSED_CHECKOUT: &str = "/opt/replayground";

/// Where `frameworks` lives: in the checkout when the sandbox's uids can reach it, else
/// (as root) under /opt/replayground.
fn location(project: &Project, frameworks: &Frameworks) -> Result<PathBuf> {
    let venv = project.root.join(frameworks.folder);
    let Some(closed) = closed_ancestor(&venv) else {
        return Ok(venv);
    };
    if crate::project::is_root() {
        let name = Path::new(frameworks.folder).file_name().expect("a folder name");
        return Ok(Path::new(OUTSIDE_CLOSED_CHECKOUT).join(name));
    }
    bail!(
        "{} is closed to other users, so the sandbox could not read {}; \
         clone the project where other users may enter (chmod o+x {})",
        closed.display(),
        venv.display(),
        closed.display()
    )
}

/// Whether the environment in `venv` holds `frameworks` as pinned, on an interpreter the
/// sandbox can start.
fn installed(venv: &Path, frameworks: &Frameworks) -> bool {
    let pinned = fs::read_to_string(venv.join(STAMP)).is_ok_and(|stamp| stamp == frameworks.requirements.join("\n"));
    pinned && unreachable_interpreter(venv).is_none()
}

/// Where the environment's interpreter really lives, when a folder above it is closed to
/// the sandbox's uids: an environment made by hand from a Python under root's home (pyenv's
/// `/root/.pyenv`) links to it, and inside the sandbox that Python cannot start. Such an
/// environment is made again.
fn unreachable_interpreter(venv: &Path) -> Option<PathBuf> {
    let real = fs::canonicalize(venv.join("bin/python")).ok()?;
    let closed = closed_ancestor(&real)?;
    println!(
        "setup: {} runs {}, under {}, which the sandbox's uids cannot enter: making it again from {BASE_PYTHON}",
        venv.display(),
        real.display(),
        closed.display()
    );
    Some(real)
}

/// Written last into an environment whose packages all installed and imported.
const STAMP: &str = "replayground-requirements.txt";

/// `cargo xtask setup --with dl`.
pub(crate) fn install(project: &Project) -> Result<()> {
    install_frameworks(project, &ALL).map(drop)
}

/// Makes the environment unless it is there as pinned; returns its interpreter.
pub(crate) fn install_frameworks(project: &Project, frameworks: &Frameworks) -> Result<PathBuf> {
    let venv = location(project, frameworks)?;
    let what = format!(
        "deep-learning frameworks ({}), in {}",
        frameworks.requirements.join(" "),
        venv.display()
    );
    let python = venv.join("bin/python");
    if installed(&venv, frameworks) {
        println!("setup: {:<16} {what}", "already present");
        return Ok(python);
    }
    build(&venv, frameworks)?;
    println!(
        "setup: {:<16} {what}; run with --python {}",
        "installed",
        python.display()
    );
    Ok(python)
}

/// The sandbox runs programs as unprivileged uids: every folder above the environment
/// must let them through, or bwrap cannot mount it. The first that does not, if any.
fn closed_ancestor(venv: &Path) -> Option<PathBuf> {
    venv.ancestors()
        .skip(1)
        .find(|folder| fs::metadata(folder).is_ok_and(|meta| meta.permissions().mode() & 0o001 == 0))
        .map(Path::to_path_buf)
}

/// A fresh environment with the pinned packages; the stamp is written last, so an
/// interrupted install is redone from scratch next time.
fn build(venv: &Path, frameworks: &Frameworks) -> Result<()> {
    if venv.symlink_metadata().is_ok() {
        fs::remove_file(venv)
            .or_else(|_| fs::remove_dir_all(venv))
            .with_context(|| format!("could not delete the old {}", venv.display()))?;
    }
    println!(
        "setup: installing {} into {} ({}, a few minutes)...",
        frameworks.requirements.join(" "),
        venv.display(),
        frameworks.size
    );
    run(Command::new(BASE_PYTHON).args(["-m", "venv"]).arg(venv))?;
    let python = venv.join("bin/python");
    run(Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-cache-dir",
            "--only-binary=:all:",
        ])
        .args(frameworks.requirements))?;
    // The frameworks must import, as the sandbox will run them.
    run(Command::new(&python).args(["-c", frameworks.import_check]))?;
    let stamp = venv.join(STAMP);
    fs::write(&stamp, frameworks.requirements.join("\n"))
        .with_context(|| format!("could not write {}", stamp.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_environment_on_a_python_in_a_closed_folder_is_not_installed() {
        let root = std::env::temp_dir().join(format!("replayground-dl-{}", std::process::id()));
        let closed = root.join("home");
        let venv = root.join("venv");
        fs::create_dir_all(closed.join("bin")).unwrap();
        fs::create_dir_all(venv.join("bin")).unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        fs::write(closed.join("bin/python3"), "").unwrap();
        std::os::unix::fs::symlink(closed.join("bin/python3"), venv.join("bin/python")).unwrap();
        fs::write(venv.join(STAMP), TENSORFLOW.requirements.join("\n")).unwrap();

        fs::set_permissions(&closed, fs::Permissions::from_mode(0o755)).unwrap();
        let open = installed(&venv, &TENSORFLOW);
        fs::set_permissions(&closed, fs::Permissions::from_mode(0o700)).unwrap();
        let shut = installed(&venv, &TENSORFLOW);
        fs::set_permissions(&closed, fs::Permissions::from_mode(0o755)).unwrap();
        fs::remove_dir_all(&root).unwrap();
        assert!(open, "a stamped environment on a reachable Python is installed");
        assert!(
            !shut,
            "one whose Python lies in a folder closed to others is made again"
        );
    }
}
