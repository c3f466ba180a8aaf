//! The CUDA toolkit the `cuda` feature builds with, from `PyPI`'s NVIDIA wheels: `nvcc`,
//! `cicc` (NVVM), the runtime and C++ headers, and `libcudart` to link against. No GPU,
//! driver or system CUDA is needed to build; the binary needs the driver and the CUDA
//! libraries where it runs.
//!
//! Installed by `cargo xtask setup --with cuda` and by `cargo xtask test` (which checks that
//! the `cuda` feature compiles), into `.tools/cuda` (about 300 MB), skipped when present.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::project::{Project, probe, run};

/// Where the wheels are installed, relative to the root.
const TOOLS_CUDA: &str = ".tools/cuda";

/// CUDA 13.0: the newest release the GPU machines' driver 580 runs. A newer nvcc writes PTX
/// of a newer ISA, which an older driver refuses to load
/// (`CUDA_ERROR_UNSUPPORTED_PTX_VERSION`). The wheels of one release must match.
const WHEELS: [&str; 5] = [
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-nvvm==13.0.88",
    "nvidia-cuda-crt==13.0.88",
    "nvidia-cuda-runtime==13.0.88",
    "nvidia-cuda-cccl==13.0.85",
];
/// What `nvcc --version` must say.
const RELEASE: &str = "release 13.0";

/// The GPU the kernels are compiled for when `CUDA_COMPUTE_CAP` is not set: the H100 / H200
/// (`sm_90`). PTX for it also runs on newer GPUs through the driver's JIT.
pub(crate) const DEFAULT_COMPUTE_CAP: &str = "90";

/// The toolkit's root (`bin/nvcc`, `include/`, `lib/`, `nvvm/`).
pub(crate) fn home(project: &Project) -> PathBuf {
    project.root.join(TOOLS_CUDA).join("nvidia/cu13")
}

pub(crate) fn install(project: &Project) -> Result<()> {
    let what = format!("CUDA toolkit for `--features cuda` ({RELEASE}, nvcc from PyPI), in {TOOLS_CUDA}");
    let dir = project.root.join(TOOLS_CUDA);
    let stamp = dir.join("replayground-wheels.txt");
    let wanted = WHEELS.join("\n");
    if fs::read_to_string(&stamp).is_ok_and(|have| have == wanted) && nvcc_release(project).is_some() {
        println!("setup: {:<16} {what}", "already present");
        return Ok(());
    }
    if dir.exists() {
        fs::remove_dir_all(&dir).with_context(|| format!("could not delete the old {}", dir.display()))?;
    }
    println!("setup: installing {} (about 90 MB to download)...", WHEELS.join(" "));
    run(Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-deps",
            "--only-binary=:all:",
            "--no-cache-dir",
            "--target",
        ])
        .arg(&dir)
        .args(WHEELS))?;
    let home = home(project);
    make_executable(&home.join("bin"))?;
    make_executable(&home.join("nvvm/bin"))?;
    // The linker looks for `libcudart.so`; the wheel ships only the versioned name.
    let lib = home.join("lib");
    let versioned = fs::read_dir(&lib)
        .with_context(|| format!("the runtime wheel left no {}", lib.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .find(|name| name.starts_with("libcudart.so."))
        .context("the runtime wheel has no libcudart.so.*")?;
    std::os::unix::fs::symlink(&versioned, lib.join("libcudart.so"))?;
    match nvcc_release(project) {
        Some(version) if version.contains(RELEASE) => {}
        Some(version) => bail!("the installed nvcc says {version:?}, expected {RELEASE}"),
        None => bail!("the installed nvcc does not run; is g++ installed?"),
    }
    fs::write(&stamp, wanted).with_context(|| format!("could not write {}", stamp.display()))?;
    println!("setup: {:<16} {what}", "installed");
    Ok(())
}

fn make_executable(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    for entry in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.is_file() {
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(())
}

/// `nvcc --version`'s release line, or `None` when it does not run.
fn nvcc_release(project: &Project) -> Option<String> {
    let out = probe(Command::new(home(project).join("bin/nvcc")).arg("--version"))?;
    out.lines().find(|l| l.contains("release")).map(str::to_owned)
}

/// Sets what candle's build scripts need to compile and link the `cuda` feature with the
/// toolkit above: `nvcc` first on `PATH`, `CUDA_HOME`, the compute capability (kept when
/// the caller set one) and `libcudart` on the link path.
pub(crate) fn build_env(project: &Project, cmd: &mut Command) -> Result<()> {
    let home = home(project);
    if !home.join("bin/nvcc").is_file() {
        bail!("the CUDA toolkit is not installed; run `cargo xtask setup --with cuda`");
    }
    let path =
        std::env::join_paths(std::iter::once(home.join("bin")).chain(std::env::split_paths(&project.tool_path()?)))?;
    cmd.env("PATH", path)
        .env("CUDA_HOME", &home)
        .env("LIBRARY_PATH", home.join("lib"))
        .env(
            "CUDA_COMPUTE_CAP",
            std::env::var("CUDA_COMPUTE_CAP").unwrap_or_else(|_| DEFAULT_COMPUTE_CAP.to_owned()),
        );
    Ok(())
}

/// `cargo check --features cuda`: the GPU build compiles (its kernels included) on a
/// machine without a GPU.
pub(crate) fn check(project: &Project) -> Result<()> {
    let mut cmd = project.cargo()?;
    cmd.args(["check", "-p", "replayground-server", "--features", "cuda"]);
    build_env(project, &mut cmd)?;
    run(&mut cmd)
}
