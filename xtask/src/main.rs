//! Developer tasks for Replayground, run as `cargo xtask <task>`.
// Printing progress for a person is what this program is for.
#![allow(clippy::print_stdout)]

mod architecture;
mod cuda;
mod dl;
mod frontend;
mod gpu_train;
mod llm;
mod neural_mode;
mod postgres;
mod project;
mod repro_real;
mod setup;
mod soak;
mod test;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::project::{Project, run};

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Replayground developer tasks",
    disable_version_flag = true
)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Install the tools the build and the tests need (Debian packages, wasm target,
    /// trunk, wasm-bindgen-cli, binaryen, the code LLM); skips what is already there.
    Setup {
        /// Also install an opt-in extra: `qwen-1.5b` (Qwen2.5-Coder-1.5B-Instruct, 1.1 GB),
        /// `dl` (tensorflow-cpu and torch in `.tools/dl`, about 6 GB, for `--python .tools/dl/bin/python`)
        /// or `cuda` (nvcc and the CUDA headers from `PyPI` in `.tools/cuda`, for `--features cuda`).
        #[arg(long = "with", value_name = "EXTRA")]
        with: Vec<String>,
        /// Only the code LLMs (e.g. to fill a CI cache), none of the other tools.
        #[arg(long)]
        only_models: bool,
    },
    /// Build the browser app with trunk into dist/.
    BuildFrontend {
        /// Optimised build (cargo --release, wasm-opt -Oz), as `serve` uses.
        #[arg(long)]
        release: bool,
    },
    /// Set up, build the frontend and run the server (by default on <http://127.0.0.1:8080>).
    Serve {
        /// Address the server listens on.
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: String,
        /// Extra arguments for `replayground serve`, after `--` (e.g. `-- --unsafe-no-sandbox`).
        #[arg(last = true)]
        server_args: Vec<String>,
    },
    /// Run every check CI runs (.ci/run): format, clippy, tests, wasm builds, browser tests.
    Test,
    /// Check the code's shape (also a step of `test`): no import circles between a crate's
    /// modules, no source file over 700 lines before its tests.
    Architecture,
    /// Benchmark the browser app: parsing, stepping, wasm size, time to interactive.
    BenchFrontend,
    /// The embedded code LLM on candle against llama.cpp (llama-cpp-python, built into
    /// .tools/llama-cpp/ on first use): prompt processing, decode, peak memory.
    BenchLlm {
        /// A Python that has llama-cpp-python and numpy (default: .tools/llama-cpp/bin/python).
        #[arg(long)]
        python: Option<std::path::PathBuf>,
        /// Threads for each engine.
        #[arg(long, default_value_t = 2)]
        threads: u32,
        /// Prompt length in tokens.
        #[arg(long, default_value_t = 512)]
        prompt_tokens: u32,
    },
    /// Bounded mixed load on loopback (classroom clients, hostile programs, uploads,
    /// cancels, silent connections): p50/p99 latency, server RSS, leftover processes.
    Soak {
        /// How long the load runs.
        #[arg(long, default_value_t = 10.0)]
        minutes: f64,
        /// Classroom clients tracing small programs.
        #[arg(long, default_value_t = 30)]
        clients: usize,
        /// Soak a release build (as deployed) instead of the debug build.
        #[arg(long)]
        release: bool,
    },
    /// Prepare one folder that trains the neural debugger on a GPU machine without Rust or
    /// internet (the `cuda` build, a packed corpus, `run.sh`, a `PyTorch` anchor), under 48 MiB.
    GpuTrain {
        /// The folder to write (replaced).
        #[arg(long, default_value = ".tools/gpu-train")]
        out: std::path::PathBuf,
        /// A corpus made by `replayground corpus` (default: build one of --programs).
        #[arg(long)]
        corpus: Option<std::path::PathBuf>,
        /// Generated programs when the corpus is built here.
        #[arg(long, default_value_t = 20_000)]
        programs: u64,
        /// Build a CPU bundle and run its run.sh here with a tiny model, checking the files
        /// it writes against what the GPU machine may return.
        #[arg(long)]
        smoke: bool,
        /// Only generated programs: leave out the real code (the `algorithms` package from
        /// `PyPI` and the standard library's pure-Python functions).
        #[arg(long)]
        generated_only: bool,
        /// Extra arguments for `replayground corpus`, after `--` (e.g. `-- --trajectories-per-program 2`).
        #[arg(last = true)]
        corpus_args: Vec<String>,
    },
    /// Run the criterion benchmarks of the workspace.
    Bench {
        /// Arguments for criterion after `--` (e.g. a benchmark name filter).
        #[arg(last = true)]
        criterion_args: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = Project::locate().and_then(|project| match cli.task {
        Task::Setup { with, only_models } => {
            if only_models {
                llm::install_models(&project, &with)
            } else {
                setup::setup_with(&project, &with)
            }
        }
        Task::BuildFrontend { release } => frontend::build(&project, release),
        Task::Serve { addr, server_args } => serve(&project, &addr, &server_args),
        Task::Test => test::test(&project),
        Task::Architecture => architecture::check(&project),
        Task::GpuTrain {
            out,
            corpus,
            programs,
            smoke,
            generated_only,
            corpus_args,
        } => gpu_train::gpu_train(
            &project,
            &gpu_train::Options {
                out: project.root.join(out),
                corpus,
                programs,
                generated_only,
                corpus_args,
                smoke,
            },
        ),
        Task::Bench { criterion_args } => bench(&project, &criterion_args),
        Task::BenchFrontend => setup::setup(&project).and_then(|()| frontend::bench(&project)),
        Task::BenchLlm {
            python,
            threads,
            prompt_tokens,
        } => llm::bench(&project, python, threads, prompt_tokens),
        Task::Soak {
            minutes,
            clients,
            release,
        } => soak::soak(&project, minutes, clients, release),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // `{:#}` prints the cause chain on one line; a Rust backtrace of xtask itself
            // would only bury the failing command's own output.
            if !error.is::<test::Reported>() {
                eprintln!("error: {error:#}");
            }
            ExitCode::FAILURE
        }
    }
}

fn serve(project: &Project, addr: &str, server_args: &[String]) -> Result<()> {
    setup::setup(project)?;
    frontend::build(project, true)?;
    println!("serve: open http://{addr}/ once the server says it is listening");
    run(project
        .cargo()?
        .args([
            "run",
            "--release",
            "-p",
            "replayground-server",
            "--bin",
            "replayground",
            "--",
        ])
        // The server picks the playground's neural engine itself (the embedded 0.5B where
        // setup installed it, else the bundled model) unless `server_args` choose one.
        .args(["serve", "--addr", addr, "--static-dir", "dist"])
        .args(server_args))
}

fn bench(project: &Project, criterion_args: &[String]) -> Result<()> {
    // `--bench '*'` builds only bench targets, not every library's test harness.
    let mut cargo = project.cargo()?;
    cargo.args(["bench", "--workspace", "--bench", "*"]);
    if !criterion_args.is_empty() {
        cargo.arg("--").args(criterion_args);
    }
    run(&mut cargo)?;
    let criterion = project.root.join("target/criterion");
    let html = criterion.join("report/index.html");
    if html.exists() {
        println!("bench: criterion's report is {}", html.display());
    } else {
        println!(
            "bench: criterion's results are under {} (one folder per benchmark, `new/estimates.json` holds the latest run)",
            criterion.display()
        );
    }
    Ok(())
}
