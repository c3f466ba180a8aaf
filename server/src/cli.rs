//! The `replayground` command line: trace a program, step through it, or serve the
//! playground. Every flag can also be set from a `REPLAYGROUND_*` environment variable.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use replayground_shared::trace_lang::{self, Direction};
use replayground_shared::{Action, Debugger, Outcome, StateTree, Stop, Trace};

use crate::api::{ApiConfig, AppState, router};
use crate::runner::{DEFAULT_PYTHON, Tracer};
use crate::sandbox::{Bubblewrap, BubblewrapConfig, RunLimits, Sandbox, Unsandboxed};

#[derive(Debug, Parser)]
#[command(
    name = "replayground",
    version,
    about = "See what a Python program does: trace it, step through it like pdb, or serve the playground."
)]
pub struct Cli {
    #[command(flatten)]
    pub options: RunOptions,
    #[command(subcommand)]
    pub command: Command,
}

/// How programs are run; shared by every subcommand.
#[derive(Debug, Clone, Args)]
pub struct RunOptions {
    /// Run programs WITHOUT a sandbox, with this process's rights. Only on a machine you
    /// own, for code you trust.
    #[arg(long, global = true, env = "REPLAYGROUND_UNSAFE_NO_SANDBOX")]
    pub unsafe_no_sandbox: bool,
    /// The Python interpreter, as seen inside the sandbox.
    #[arg(long, global = true, env = "REPLAYGROUND_PYTHON", value_name = "PATH", default_value = DEFAULT_PYTHON)]
    pub python: PathBuf,
    /// The bubblewrap executable.
    #[arg(
        long,
        global = true,
        env = "REPLAYGROUND_BWRAP",
        value_name = "PATH",
        default_value = "bwrap"
    )]
    pub bwrap: PathBuf,
    /// When running as root, sandbox job N runs as uid/gid BASE + N.
    #[arg(
        long,
        global = true,
        env = "REPLAYGROUND_SANDBOX_UID_BASE",
        value_name = "UID",
        default_value_t = 61000
    )]
    pub sandbox_uid_base: u32,
    /// Dedicated sandbox uids, hence jobs that can run at once on this machine.
    #[arg(
        long,
        global = true,
        env = "REPLAYGROUND_SANDBOX_SLOTS",
        value_name = "N",
        default_value_t = 16
    )]
    pub sandbox_slots: u32,
    /// CPU time of one run.
    #[arg(
        long,
        global = true,
        env = "REPLAYGROUND_CPU_SECONDS",
        value_name = "S",
        default_value_t = 5
    )]
    pub cpu_seconds: u64,
    /// Wall-clock time of one run.
    #[arg(
        long,
        global = true,
        env = "REPLAYGROUND_WALL_SECONDS",
        value_name = "S",
        default_value_t = 10
    )]
    pub wall_seconds: u64,
    /// Memory (address space) of one run.
    #[arg(
        long,
        global = true,
        env = "REPLAYGROUND_MEMORY_MIB",
        value_name = "MIB",
        default_value_t = 512
    )]
    pub memory_mib: u64,
    /// The program's stdout plus stderr.
    #[arg(
        long,
        global = true,
        env = "REPLAYGROUND_MAX_OUTPUT_KIB",
        value_name = "KIB",
        default_value_t = 1024
    )]
    pub max_output_kib: u64,
    /// Trace events of one run (the server-wide ceiling for `max_steps`).
    #[arg(
        long,
        global = true,
        env = "REPLAYGROUND_MAX_EVENTS",
        value_name = "N",
        default_value_t = 100_000
    )]
    pub max_events: u32,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Trace a program and print its trace as JSON.
    Trace(ProgramArgs),
    /// Step through a program with debugger actions; prints one JSON state per stop.
    Debug(DebugArgs),
    /// Serve the playground and its HTTP API.
    Serve(ServeArgs),
    /// Print the stops of debugger actions in the neural debugger's trace language
    /// (docs/trace-language.md).
    Serialize(SerializeArgs),
}

/// A program to run.
#[derive(Debug, Clone, Args)]
pub struct ProgramArgs {
    /// The Python file.
    pub file: PathBuf,
    /// A file whose contents are the program's standard input.
    #[arg(long, env = "REPLAYGROUND_STDIN", value_name = "FILE")]
    pub stdin: Option<PathBuf>,
    /// Stop after this many trace events.
    #[arg(long, env = "REPLAYGROUND_MAX_STEPS", value_name = "N")]
    pub max_steps: Option<u32>,
}

#[derive(Debug, Clone, Args)]
pub struct DebugArgs {
    #[command(flatten)]
    pub program: ProgramArgs,
    /// Comma-separated debugger actions: `step_into`, `step_over`, `step_return`, `continue`, `breakpoint:N`.
    #[arg(long, env = "REPLAYGROUND_ACTIONS", value_name = "LIST", default_value = "")]
    pub actions: String,
}

#[derive(Debug, Clone, Args)]
pub struct SerializeArgs {
    #[command(flatten)]
    pub debug: DebugArgs,
    /// Write the stops from last to first, joined by reverse actions.
    #[arg(long)]
    pub inverse: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "REPLAYGROUND_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// The built browser app (index.html and its assets).
    #[arg(long, env = "REPLAYGROUND_STATIC_DIR", value_name = "DIR", default_value = "dist")]
    pub static_dir: PathBuf,
    /// Sandbox jobs that run at once; further requests wait.
    #[arg(long, env = "REPLAYGROUND_MAX_JOBS", value_name = "N", default_value_t = 4)]
    pub max_jobs: usize,
}

impl RunOptions {
    pub fn limits(&self) -> RunLimits {
        RunLimits {
            max_events: self.max_events,
            cpu_time: Duration::from_secs(self.cpu_seconds.max(1)),
            wall_time: Duration::from_secs(self.wall_seconds.max(1)),
            memory_bytes: self.memory_mib << 20,
            max_output_bytes: self.max_output_kib << 10,
            ..RunLimits::default()
        }
    }

    /// The sandbox these options ask for, or why there is none.
    pub fn sandbox(&self) -> anyhow::Result<Arc<dyn Sandbox>> {
        Ok(if self.unsafe_no_sandbox {
            Arc::new(Unsandboxed::new())
        } else {
            Arc::new(self.bubblewrap()?)
        })
    }

    fn bubblewrap(&self) -> anyhow::Result<Bubblewrap> {
        let config = BubblewrapConfig {
            bwrap: self.bwrap.clone(),
            uid_base: self.sandbox_uid_base,
            slots: self.sandbox_slots.max(1),
            ..BubblewrapConfig::default()
        };
        Ok(Bubblewrap::detect(config)?)
    }
}

/// Runs the parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Trace(args) => {
            let trace = trace_file(&cli.options, &args).await?;
            let mut out = std::io::stdout().lock();
            serde_json::to_writer(&mut out, &trace)?;
            writeln!(out)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Debug(args) => debug(&cli.options, &args).await,
        Command::Serialize(args) => serialize(&cli.options, &args).await,
        Command::Serve(args) => serve(&cli.options, &args).await,
    }
}

fn read_program(args: &ProgramArgs) -> anyhow::Result<(String, String)> {
    let code = read_text(&args.file, "program")?;
    let stdin = match &args.stdin {
        Some(path) => read_text(path, "standard input")?,
        None => String::new(),
    };
    Ok((code, stdin))
}

fn read_text(path: &Path, what: &str) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).map_err(|e| {
        let reason = match e.kind() {
            std::io::ErrorKind::NotFound => "it does not exist".to_owned(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
            _ => e.to_string(),
        };
        anyhow::anyhow!("cannot read the {what} {}: {reason}; check the path", path.display())
    })?;
    String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("the {what} {} is not UTF-8 text; save it as UTF-8", path.display()))
}

async fn trace_file(options: &RunOptions, args: &ProgramArgs) -> anyhow::Result<Trace> {
    let (code, stdin) = read_program(args)?;
    let mut limits = options.limits();
    if let Some(steps) = args.max_steps {
        if steps == 0 {
            bail!("--max-steps must be at least 1");
        }
        limits.max_events = steps;
    }
    let tracer = Tracer::new(options.sandbox()?, &options.python, limits);
    Ok(tracer.trace(&code, &stdin).await?)
}

/// Traces the program of `args` for stepping: refuses programs that cannot be
/// stepped through (syntax errors, tracer failures) with a sentence saying why.
async fn steppable(options: &RunOptions, args: &ProgramArgs) -> anyhow::Result<StateTree> {
    let trace = trace_file(options, args).await?;
    let file = args.file.display();
    match &trace.outcome {
        Outcome::SyntaxError { message, line, .. } => {
            let at = line.map(|l| format!(" on line {l}")).unwrap_or_default();
            bail!("{file} has a syntax error{at}: {message}; fix it and run again");
        }
        Outcome::Crashed { message } => bail!("could not trace {file}: {message}"),
        Outcome::LimitReached { .. } => {
            tracing::warn!("{} Stepping through the part that ran.", trace.outcome.describe());
        }
        _ => {}
    }
    StateTree::new(trace).context("the trace cannot be stepped through")
}

async fn debug(options: &RunOptions, args: &DebugArgs) -> anyhow::Result<ExitCode> {
    // Bad actions are refused before the program runs.
    let actions = Action::parse_list(&args.actions)?;
    let tree = steppable(options, &args.program).await?;
    let mut debugger = Debugger::new(&tree);
    let mut out = std::io::stdout().lock();
    let mut stop = debugger.position();
    let mut actions = actions.into_iter();
    loop {
        writeln!(out, "{}", serde_json::to_string(&tree.state(stop))?)?;
        if stop == Stop::End {
            break;
        }
        let Some(action) = actions.next() else { break };
        stop = debugger.apply(action);
    }
    Ok(ExitCode::SUCCESS)
}

async fn serialize(options: &RunOptions, args: &SerializeArgs) -> anyhow::Result<ExitCode> {
    let actions = Action::parse_list(&args.debug.actions)?;
    let (code, _) = read_program(&args.debug.program)?;
    let tree = steppable(options, &args.debug.program).await?;
    let direction = if args.inverse {
        Direction::Inverse
    } else {
        Direction::Forward
    };
    let trajectory = trace_lang::record(&tree, &code, &actions, direction);
    let text = trace_lang::serialize(&trajectory).with_context(|| {
        format!(
            "{} cannot be written in the trace language",
            args.debug.program.file.display()
        )
    })?;
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(options: &RunOptions, args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let sandbox: Arc<dyn Sandbox> = if options.unsafe_no_sandbox {
        Arc::new(Unsandboxed::new())
    } else {
        let bwrap = options.bubblewrap()?;
        bwrap.self_test().await?;
        Arc::new(bwrap)
    };
    tracing::info!(sandbox = %sandbox.describe(), "sandbox ready");
    if !options.unsafe_no_sandbox && args.max_jobs > options.sandbox_slots as usize {
        bail!(
            "--max-jobs ({}) is more than --sandbox-slots ({}); every concurrent job needs its own sandbox uid",
            args.max_jobs,
            options.sandbox_slots
        );
    }
    let static_dir = if args.static_dir.join("index.html").is_file() {
        Some(args.static_dir.as_path())
    } else {
        tracing::warn!(
            "{} has no index.html, so only the API is served; build the browser app first (cargo xtask build-frontend)",
            args.static_dir.display()
        );
        None
    };
    let config = ApiConfig {
        max_jobs: args.max_jobs,
        ..ApiConfig::default()
    };
    let app = router(
        AppState::new(sandbox, &options.python, options.limits(), config),
        static_dir,
    );
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .with_context(|| format!("cannot listen on {}; is another server using it?", args.addr))?;
    let bound = listener.local_addr().unwrap_or(args.addr);
    tracing::info!("listening on http://{bound}");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(ExitCode::SUCCESS)
}
