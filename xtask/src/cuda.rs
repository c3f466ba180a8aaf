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

use anyhow::{Context, Result, bail, ensure};

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
/// the caller set one) and `libcudart` on the link path, with `link_dirs` after it.
pub(crate) fn build_env(project: &Project, cmd: &mut Command, link_dirs: &[PathBuf]) -> Result<()> {
    let home = home(project);
    if !home.join("bin/nvcc").is_file() {
        bail!("the CUDA toolkit is not installed; run `cargo xtask setup --with cuda`");
    }
    let path =
        std::env::join_paths(std::iter::once(home.join("bin")).chain(std::env::split_paths(&project.tool_path()?)))?;
    cmd.env("PATH", path)
        .env("CUDA_HOME", &home)
        .env(
            "LIBRARY_PATH",
            std::env::join_paths(std::iter::once(home.join("lib")).chain(link_dirs.iter().cloned()))?,
        )
        .env(
            "CUDA_COMPUTE_CAP",
            std::env::var("CUDA_COMPUTE_CAP").unwrap_or_else(|_| DEFAULT_COMPUTE_CAP.to_owned()),
        );
    Ok(())
}

/// The CUDA libraries candle links against (cudarc's `dynamic-linking`), each with the
/// soname of its CUDA 13 release, the cudarc module that declares its functions and their
/// common prefix.
const LINKED: [(&str, &str, &str, &str); 5] = [
    ("cuda", "libcuda.so.1", "driver", "cu"),
    ("nvrtc", "libnvrtc.so.13", "nvrtc", "nvrtc"),
    ("curand", "libcurand.so.10", "curand", "curand"),
    ("cublas", "libcublas.so.13", "cublas", "cublas"),
    ("cublasLt", "libcublasLt.so.13", "cublaslt", "cublasLt"),
];

/// Link stubs for the libraries in [`LINKED`], as the CUDA toolkit's `lib/stubs` are: every
/// function cudarc declares, defined empty, under the real library's soname. The binary
/// links here without the driver or 600 MB of math libraries, and loads the real ones by
/// soname where it runs. Written into `dir`, which goes on `LIBRARY_PATH`.
pub(crate) fn link_stubs(project: &Project, dir: &Path) -> Result<()> {
    let cudarc = cudarc_source(project)?;
    fs::create_dir_all(dir)?;
    for (name, soname, module, prefix) in LINKED {
        let declarations = cudarc.join("src").join(module).join("sys/mod.rs");
        let source = fs::read_to_string(&declarations)
            .with_context(|| format!("cannot read cudarc's {}", declarations.display()))?;
        let functions = declared_functions(&source, prefix);
        ensure!(
            !functions.is_empty(),
            "{} declares no {prefix}* functions",
            declarations.display()
        );
        let c = dir.join(format!("{name}.c"));
        let body = functions
            .iter()
            .fold(String::new(), |body, f| body + "void " + f + "(void) {}\n");
        fs::write(&c, body)?;
        run(Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(dir.join(format!("lib{name}.so")))
            .arg(format!("-Wl,-soname,{soname}"))
            .arg(&c))?;
        // The loader looks a library up by its soname.
        let link = dir.join(soname);
        if link.symlink_metadata().is_err() {
            std::os::unix::fs::symlink(format!("lib{name}.so"), link)?;
        }
    }
    Ok(())
}

/// The names of the `extern "C"` functions a cudarc `sys` module declares with `prefix`.
fn declared_functions(source: &str, prefix: &str) -> std::collections::BTreeSet<String> {
    source
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("fn "))
        .filter_map(|rest| rest.split_once('(').map(|(name, _)| name))
        .filter(|name| {
            name.starts_with(prefix)
                && name[prefix.len()..].starts_with(|c: char| c.is_ascii_uppercase())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        .map(str::to_owned)
        .collect()
}

/// Where cargo keeps the cudarc sources the lock file names.
fn cudarc_source(project: &Project) -> Result<PathBuf> {
    let output = project
        .cargo()?
        .args([
            "metadata",
            "--format-version",
            "1",
            "--features",
            "replayground-server/cuda",
        ])
        .output()
        .context("cannot run `cargo metadata`")?;
    ensure!(output.status.success(), "`cargo metadata` failed");
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let manifest = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "cudarc")
        .and_then(|p| p["manifest_path"].as_str())
        .context("the lock file names no cudarc (is the `cuda` feature gone?)")?;
    Ok(Path::new(manifest)
        .parent()
        .context("a manifest has a folder")?
        .to_path_buf())
}

/// `cargo check --features cuda`: the GPU build compiles (its kernels included) on a
/// machine without a GPU.
pub(crate) fn check(project: &Project) -> Result<()> {
    let mut cmd = project.cargo()?;
    cmd.args(["check", "-p", "replayground-server", "--features", "cuda"]);
    build_env(project, &mut cmd, &[])?;
    run(&mut cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stubs_take_the_declared_functions_of_their_library_only() {
        let source = "extern \"C\" {\n    fn cuInit(Flags: c_uint) -> CUresult;\n}\n\
                      pub unsafe fn cuInit(Flags: c_uint) -> CUresult {\n\
                      fn cublasCreate_v2(handle: *mut h) -> s;\n    fn bitand(self, other: Self) -> Self;\n\
                      fn culture() {}\n";
        let names: Vec<String> = declared_functions(source, "cu").into_iter().collect();
        assert_eq!(names, ["cuInit"]);
        let names: Vec<String> = declared_functions(source, "cublas").into_iter().collect();
        assert_eq!(names, ["cublasCreate_v2"]);
    }
}
