//! `cargo xtask setup --with dl`: the deep-learning frameworks the real bug reports of
//! `tests/repro-real` need, in a virtual environment the sandbox can run
//! (`--python .tools/dl/bin/python`). Opt-in: about 6 GB, not in CI's default path.
//!
//! The environment is made from Debian's `/usr/bin/python3` (the sandbox's default
//! interpreter, so its standard library is already mounted) in `.tools/dl`. Unlike the
//! models it is not kept in the cache under the home folder: the sandbox's unprivileged
//! uids must be able to read it, and root's home is closed to them.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::project::{Project, run};

/// Where the environment is linked from, relative to the root; `--python` takes
/// `.tools/dl/bin/python`.
pub(crate) const TOOLS_DL: &str = ".tools/dl";

/// Pinned from `PyPI` (2026-12-01). `tensorflow-cpu` brings keras 3. torch has no CPU-only
/// build on `PyPI`: its CUDA build pulls the NVIDIA libraries (about 4 GB) and runs on the
/// CPU when there is no GPU; importing it maps about 3 GB of address space, so a script
/// that imports torch gets a 4 GiB address-space limit in the sandbox.
const REQUIREMENTS: [&str; 2] = ["tensorflow-cpu==2.21.0", "torch==2.15.0"];

/// The interpreter the environment is made from.
const BASE_PYTHON: &str = "/usr/bin/python3";

pub(crate) fn install(project: &Project) -> Result<()> {
    let what = format!("deep-learning frameworks ({}), in {TOOLS_DL}", REQUIREMENTS.join(" "));
    let venv = project.root.join(TOOLS_DL);
    readable_by_everyone(&venv)?;
    let stamp = venv.join("replayground-requirements.txt");
    let wanted = REQUIREMENTS.join("\n");
    let outcome = if fs::read_to_string(&stamp).is_ok_and(|have| have == wanted) {
        "already present"
    } else {
        build(&venv, &stamp, &wanted)?;
        "installed"
    };
    println!("setup: {outcome:<16} {what}; run with --python {TOOLS_DL}/bin/python");
    Ok(())
}

/// The sandbox runs programs as unprivileged uids: every folder above the environment
/// must let them through, or bwrap cannot mount it.
fn readable_by_everyone(venv: &Path) -> Result<()> {
    for folder in venv.ancestors().skip(1) {
        let Ok(meta) = fs::metadata(folder) else { continue };
        if meta.permissions().mode() & 0o001 == 0 {
            bail!(
                "{} is closed to other users, so the sandbox could not read {}; \
                 clone the project where other users may enter (chmod o+x {})",
                folder.display(),
                venv.display(),
                folder.display()
            );
        }
    }
    Ok(())
}

/// A fresh environment with the pinned packages; the stamp is written last, so an
/// interrupted install is redone from scratch next time.
fn build(venv: &Path, stamp: &Path, wanted: &str) -> Result<()> {
    if venv.symlink_metadata().is_ok() {
        fs::remove_file(venv)
            .or_else(|_| fs::remove_dir_all(venv))
            .with_context(|| format!("could not delete the old {}", venv.display()))?;
    }
    println!(
        "setup: installing {} into {} (about 6 GB, a few minutes)...",
        REQUIREMENTS.join(" "),
        venv.display()
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
        .args(REQUIREMENTS))?;
    // Both frameworks must import, as the sandbox will run them.
    run(Command::new(&python).args([
        "-c",
        "import tensorflow as tf, keras, torch; print('tensorflow', tf.__version__, 'keras', keras.__version__, 'torch', torch.__version__)",
    ]))?;
    fs::write(stamp, wanted).with_context(|| format!("could not write {}", stamp.display()))
}
