//! `cargo xtask gpu-train`: one self-contained folder that trains the neural debugger on a
//! GPU machine that has the NVIDIA driver, CUDA libraries and Python but no Rust and no
//! internet (the device machines these sessions borrow, see docs/neural-debugger.md).
//!
//! The folder holds the `cuda` build of `replayground` (gzip'd), `libcudart`, a packed
//! corpus, `run.sh` (the one command to run there) and `anchor.py` (`PyTorch`'s Qwen2 on the
//! same configuration, for throughput). It must travel in 64 MiB with the checkout, so its
//! size is checked here. `--smoke` runs the same `run.sh` here on the CPU with a tiny
//! model, and checks what it writes: everything but CUDA itself.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};

use crate::cuda;
use crate::project::{Project, pip_download, probe, relative, run};

/// The bundle plus the checkout (about 10 MiB) must stay under the 64 MiB the device machine
/// receives.
const BUNDLE_LIMIT: u64 = 48 << 20;
/// What the GPU machine may send back: files, and bytes per file.
const MAX_RETURNED_FILES: usize = 8;
const MAX_RETURNED_BYTES: u64 = 16 << 20;
/// The corpus files training reads (programs.jsonl is not needed there).
const CORPUS_FILES: [&str; 3] = ["train.jsonl", "heldout.jsonl", "manifest.json"];
/// Real code for the corpus beside the generated programs (`corpus --pypi`): MIT-licensed
/// plain-Python algorithms and data structures.
const REAL_CODE_WHEELS: [&str; 1] = ["algorithms==1.0.1"];
/// Scripts copied into the bundle from `xtask/gpu-train/`.
const SCRIPTS: [&str; 2] = ["run.sh", "anchor.py"];

pub(crate) struct Options {
    /// The bundle folder (replaced).
    pub(crate) out: PathBuf,
    /// A corpus made by `replayground corpus`; otherwise one is built with `programs`.
    pub(crate) corpus: Option<PathBuf>,
    pub(crate) programs: u64,
    /// Leave out the real code (the `algorithms` package and the standard library).
    pub(crate) generated_only: bool,
    /// Extra arguments for `replayground corpus`.
    pub(crate) corpus_args: Vec<String>,
    /// Build a CPU bundle and run it here with a tiny model instead.
    pub(crate) smoke: bool,
}

pub(crate) fn gpu_train(project: &Project, options: &Options) -> Result<()> {
    // The corpus is traced by the CPU build: the cuda one needs the driver to start.
    let cpu = cpu_binary(project)?;
    let binary = if options.smoke {
        cpu.clone()
    } else {
        cuda_binary(project)?
    };
    let corpus = match &options.corpus {
        Some(dir) => dir.clone(),
        None => build_corpus(project, &cpu, options)?,
    };
    assemble(project, &binary, &corpus, &options.out)?;
    if options.smoke {
        smoke(&options.out)?;
    } else {
        println!(
            "gpu-train: on the GPU machine, from the checkout (carry {}): OUT=$OUT bash {}/run.sh",
            relative(&options.out, &project.root),
            relative(&options.out, &project.root)
        );
    }
    Ok(())
}

/// The `cuda` build, stripped (the `gpu` profile), in its own profile folder so that it
/// never replaces the CPU binary the tests run.
fn cuda_binary(project: &Project) -> Result<PathBuf> {
    cuda::install(project)?;
    let mut cmd = project.cargo()?;
    cmd.args([
        "build",
        "--profile",
        "gpu",
        "-p",
        "replayground-server",
        "--bin",
        "replayground",
        "--features",
        "cuda",
    ]);
    // Linking needs libcuda and the math libraries; stubs stand in for them here.
    let stubs = project.target_dir().join("cuda-link-stubs");
    cuda::link_stubs(project, &stubs)?;
    cuda::build_env(project, &mut cmd, std::slice::from_ref(&stubs))?;
    run(&mut cmd)?;
    let binary = project.target_dir().join("gpu/replayground");
    // Every CUDA symbol must resolve by the sonames the GPU machine has: the binary starts
    // here against the stubs (`--help` calls none of them).
    run(Command::new(&binary).arg("--help").env(
        "LD_LIBRARY_PATH",
        std::env::join_paths([stubs, cuda::home(project).join("lib")])?,
    ))?;
    Ok(binary)
}

/// The CPU debug build the tests use.
fn cpu_binary(project: &Project) -> Result<PathBuf> {
    run(project
        .cargo()?
        .args(["build", "-p", "replayground-server", "--bin", "replayground"]))?;
    Ok(project.target_dir().join("debug/replayground"))
}

/// A corpus of `programs` generated programs, the real code (unless `generated_only`) and
/// `corpus_args`, kept under the target folder and reused while its inputs are the same.
fn build_corpus(project: &Project, binary: &Path, options: &Options) -> Result<PathBuf> {
    let mut args = options.corpus_args.clone();
    if !options.generated_only {
        let wheels = project.target_dir().join("gpu-train-wheels");
        let wanted = REAL_CODE_WHEELS.iter().all(|w| {
            let name = w.replace("==", "-");
            fs::read_dir(&wheels)
                .is_ok_and(|mut d| d.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with(&name))))
        });
        if !wanted {
            pip_download(&wheels, REAL_CODE_WHEELS.map(str::to_owned))?;
        }
        args.extend(["--pypi".to_owned(), wheels.display().to_string(), "--stdlib".to_owned()]);
    }
    let key = format!("{} {}", options.programs, args.join(" "));
    let dir = project
        .target_dir()
        .join(format!("gpu-train-corpus-{}", short_hash(&key)));
    if dir.join("manifest.json").is_file() {
        println!("gpu-train: reusing the corpus in {}", dir.display());
        return Ok(dir);
    }
    run(Command::new(binary)
        .current_dir(&project.root)
        .args(["corpus", "--out"])
        .arg(&dir)
        .args(["--programs", &options.programs.to_string(), "--seed", "1"])
        .args(&args))?;
    Ok(dir)
}

fn short_hash(text: &str) -> String {
    use sha2::{Digest as _, Sha256};
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(4).fold(String::new(), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    })
}

/// Writes the bundle folder and checks its size.
fn assemble(project: &Project, binary: &Path, corpus: &Path, out: &Path) -> Result<()> {
    for file in CORPUS_FILES {
        ensure!(
            corpus.join(file).is_file(),
            "{} has no {file}; pass --corpus a folder made by `replayground corpus`",
            corpus.display()
        );
    }
    if out.exists() {
        fs::remove_dir_all(out).with_context(|| format!("cannot replace {}", out.display()))?;
    }
    fs::create_dir_all(out.join("lib"))?;
    run(Command::new("sh")
        .arg("-c")
        .arg("gzip -9 -c \"$0\" > \"$1\"")
        .arg(binary)
        .arg(out.join("replayground.gz")))?;
    if let Some(cudart) = cudart(project) {
        fs::copy(
            &cudart,
            out.join("lib").join(cudart.file_name().context("a file name")?),
        )?;
    }
    run(Command::new("tar")
        .arg("-czf")
        .arg(out.join("corpus.tar.gz"))
        .arg("-C")
        .arg(corpus)
        .args(CORPUS_FILES))?;
    for script in SCRIPTS {
        fs::copy(project.root.join("xtask/gpu-train").join(script), out.join(script))?;
    }
    let version = probe(project.command("git")?.args(["describe", "--always", "--dirty"]))
        .unwrap_or_else(|| "unknown".to_owned());
    fs::write(out.join("VERSION"), format!("{version}\n"))?;
    let mut total = 0;
    for entry in walk(out)? {
        let size = fs::metadata(&entry)?.len();
        total += size;
        println!("gpu-train: {:>10} {}", human(size), relative(&entry, &project.root));
    }
    println!("gpu-train: {:>10} in all (limit {})", human(total), human(BUNDLE_LIMIT));
    ensure!(
        total <= BUNDLE_LIMIT,
        "the bundle is {} and must stay under {} to travel with the checkout; use a smaller corpus (--programs)",
        human(total),
        human(BUNDLE_LIMIT)
    );
    Ok(())
}

/// The versioned `libcudart.so.N` of the toolkit, when it is installed.
fn cudart(project: &Project) -> Option<PathBuf> {
    let lib = cuda::home(project).join("lib");
    fs::read_dir(lib)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libcudart.so."))
        })
}

fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(walk(&path)?);
        } else {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn human(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

/// Runs the bundle's `run.sh` here on the CPU with a tiny model and checks what comes back
/// against the device machine's limits.
fn smoke(bundle: &Path) -> Result<()> {
    let out = tempfile::tempdir()?;
    let work = tempfile::tempdir()?;
    run(Command::new("bash")
        .arg(bundle.join("run.sh"))
        .env("OUT", out.path())
        .env("WORK", work.path())
        .env("DEVICE", "cpu")
        .env("MINUTES", "0.3")
        .env("ANCHOR_SECONDS", "1")
        .env("HIDDEN", "64")
        .env("LAYERS", "2")
        .env("HEADS", "4")
        .env("CONTEXT", "128")
        .env("BATCH", "4")
        .env("VOCAB", "1024"))?;
    let files = walk(out.path())?;
    let names: Vec<String> = files
        .iter()
        .filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    println!("gpu-train: the smoke run wrote {}", names.join(", "));
    ensure!(
        files.len() <= MAX_RETURNED_FILES,
        "run.sh wrote {} files; the device machine returns at most {MAX_RETURNED_FILES}",
        files.len()
    );
    for file in &files {
        let size = fs::metadata(file)?.len();
        ensure!(
            size <= MAX_RETURNED_BYTES,
            "{} is {}; the device machine returns files of at most {}",
            file.display(),
            human(size),
            human(MAX_RETURNED_BYTES)
        );
    }
    for wanted in ["loss.csv", "summary.json", "meta.tar.gz"] {
        ensure!(names.iter().any(|n| n == wanted), "run.sh wrote no {wanted}");
    }
    if !names
        .iter()
        .any(|n| n.starts_with("model") && n.ends_with(".safetensors"))
    {
        bail!("run.sh wrote no weights");
    }
    let summary: serde_json::Value = serde_json::from_str(&fs::read_to_string(out.path().join("summary.json"))?)?;
    let tokens_per_second = summary["tokens_per_second"].as_f64().unwrap_or(0.0);
    ensure!(
        tokens_per_second > 0.0,
        "summary.json has no tokens_per_second: {summary}"
    );
    println!(
        "gpu-train: smoke run ok: {} steps, {} parameters, {tokens_per_second:.0} tokens/s on the CPU",
        summary["steps"], summary["parameters"]
    );
    Ok(())
}
