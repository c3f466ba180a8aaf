//! The `replayground` command line: trace a program, step through it, or serve the
//! playground. Every flag can also be set from a `REPLAYGROUND_*` environment variable.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use axum::http::HeaderName;
use clap::{Args, Parser, Subcommand};
use replayground_shared::trace_lang::{self, Direction};
use replayground_shared::{Action, Debugger, Outcome, StateTree, Stop, Trace};

use crate::app::{AppState, ServerConfig, WsConfig};
use crate::http::{self, termination_signal};
use crate::neural;
use crate::runner::{DEFAULT_PYTHON, Tracer};
use crate::sandbox::{Bubblewrap, BubblewrapConfig, RunLimits, Sandbox, Unsandboxed};
use crate::store::{DEFAULT_DB_URL, Store};

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

/// `--python` as the sandbox must see it: a relative path (`.tools/dl/bin/python`) is made
/// absolute against the working directory, since programs run in another; a bare name
/// (`python3`) is left to the search path. Links are kept: a virtual environment's
/// `bin/python` is how Python finds its environment.
fn absolute_interpreter(python: PathBuf) -> PathBuf {
    if python.is_relative() && python.components().count() > 1 {
        std::path::absolute(&python).unwrap_or(python)
    } else {
        python
    }
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
    Serve(Box<ServeArgs>),
    /// Print the stops of debugger actions in the neural debugger's trace language
    /// (docs/trace-language.md).
    Serialize(SerializeArgs),
    /// Build the neural debugger's training corpus: generated programs, real traces,
    /// sampled trajectories (CruxEval near-copies left out).
    Corpus(neural::commands::CorpusArgs),
    /// Train (or resume training) a Qwen2-architecture neural debugger on a corpus.
    Train(neural::commands::TrainArgs),
    /// Write a checkpoint's weights as a model folder to ship: bf16 by default, in shards of
    /// at most --shard-mib each.
    ExportModel(neural::commands::ExportArgs),
    /// Predict each stop of debugger actions with a model, beside the real one.
    Predict(neural::commands::PredictArgs),
    /// Evaluate a model (`--suite next-state|cruxeval-o|cruxeval-i`) against baselines; prints JSON.
    Eval(neural::commands::EvalArgs),
    /// Redraw a training run's loss curve (DIR/loss.png from DIR/loss.csv).
    PlotLoss(neural::commands::PlotLossArgs),
    /// Check that the neural debugger's decoding bounds admit every real step of corpus
    /// trajectories; prints how much they bound (JSON) and fails on a refusal.
    CheckBounds(neural::commands::CheckBoundsArgs),
    /// Reproduce a bug report (RepGen): restructure, plan, generate and check candidate
    /// scripts in the sandbox; streams progress (or JSON lines) and writes the final script.
    Repro(crate::repro::cli::ReproArgs),
    /// Benchmark the reproduction agent on a suite of bug reports (tests/repro-suite): retrieval,
    /// training-loop detection, symptom classification and reproduction rate per stage.
    BenchRepro(crate::repro::bench::BenchReproArgs),
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
    /// Where shares are stored: `sqlite://PATH` (created when missing) or `postgres://USER:PASS@HOST/DB`.
    #[arg(long, env = "REPLAYGROUND_DB", value_name = "URL", default_value = DEFAULT_DB_URL)]
    pub db: String,
    /// The built browser app (index.html and its assets).
    #[arg(long, env = "REPLAYGROUND_STATIC_DIR", value_name = "DIR", default_value = "dist")]
    pub static_dir: PathBuf,
    /// Sandbox jobs that run at once (HTTP and WebSocket together).
    #[arg(long, env = "REPLAYGROUND_MAX_JOBS", value_name = "N", default_value_t = 4)]
    pub max_jobs: usize,
    /// Jobs that may wait for a free slot; beyond that clients get 429 at once.
    #[arg(long, env = "REPLAYGROUND_MAX_QUEUED_JOBS", value_name = "N", default_value_t = 32)]
    pub max_queued_jobs: usize,
    /// How long a job waits for a slot before it is refused with 429.
    #[arg(long, env = "REPLAYGROUND_QUEUE_TIMEOUT", value_name = "DURATION", default_value = "10s", value_parser = humantime::parse_duration)]
    pub queue_timeout: Duration,
    /// Sustained API requests and WebSocket jobs per second per client IP (0: no limit).
    #[arg(
        long,
        env = "REPLAYGROUND_RATE_LIMIT_PER_SECOND",
        value_name = "N",
        default_value_t = 10
    )]
    pub rate_limit_per_second: u32,
    /// Requests a client may make at once above the sustained rate.
    #[arg(long, env = "REPLAYGROUND_RATE_LIMIT_BURST", value_name = "N", default_value_t = 100)]
    pub rate_limit_burst: u32,
    /// Take the client IP for rate limits from this header's last address (e.g.
    /// x-forwarded-for), when a reverse proxy you run sets it.
    #[arg(long, env = "REPLAYGROUND_CLIENT_IP_HEADER", value_name = "NAME")]
    pub client_ip_header: Option<HeaderName>,
    /// After SIGTERM or Ctrl-C, running jobs get this long to finish before they are cancelled.
    #[arg(long, env = "REPLAYGROUND_SHUTDOWN_GRACE", value_name = "DURATION", default_value = "10s", value_parser = humantime::parse_duration)]
    pub shutdown_grace: Duration,
    /// A connection that sends no request head for this long (also idle between requests) is closed.
    #[arg(long, env = "REPLAYGROUND_HEADER_READ_TIMEOUT", value_name = "DURATION", default_value = "10s", value_parser = humantime::parse_duration)]
    pub header_read_timeout: Duration,
    /// Open connections one client address may hold.
    #[arg(
        long,
        env = "REPLAYGROUND_MAX_CONNECTIONS_PER_IP",
        value_name = "N",
        default_value_t = 256
    )]
    pub max_connections_per_ip: usize,
    /// Open connections in all (keep it below the file descriptor limit, `ulimit -n`).
    #[arg(long, env = "REPLAYGROUND_MAX_CONNECTIONS", value_name = "N", default_value_t = 768)]
    pub max_connections: usize,
    /// Serve Prometheus metrics at /metrics (off: they are public to anyone who can reach the server).
    #[arg(long, env = "REPLAYGROUND_METRICS")]
    pub metrics: bool,
    /// Another origin whose pages may open the WebSocket (repeatable; the server's own always may).
    #[arg(
        long = "allowed-origin",
        env = "REPLAYGROUND_ALLOWED_ORIGINS",
        value_name = "URL",
        value_delimiter = ','
    )]
    pub allowed_origins: Vec<String>,
    /// Share payloads the store may hold in all, in MiB; past it new shares are refused.
    #[arg(
        long,
        env = "REPLAYGROUND_MAX_SHARE_STORAGE_MIB",
        value_name = "MIB",
        default_value_t = 1024
    )]
    pub max_share_storage_mib: u64,
    /// A WebSocket client must say hello within this.
    #[arg(long, env = "REPLAYGROUND_WS_HANDSHAKE_TIMEOUT", value_name = "DURATION", default_value = "5s", value_parser = humantime::parse_duration)]
    pub ws_handshake_timeout: Duration,
    /// A WebSocket session without messages or running jobs for this long is closed.
    #[arg(long, env = "REPLAYGROUND_WS_IDLE_TIMEOUT", value_name = "DURATION", default_value = "5m", value_parser = humantime::parse_duration)]
    pub ws_idle_timeout: Duration,
    /// A WebSocket session is closed this long after it opened.
    #[arg(long, env = "REPLAYGROUND_WS_SESSION_TIMEOUT", value_name = "DURATION", default_value = "1h", value_parser = humantime::parse_duration)]
    pub ws_session_timeout: Duration,
    /// Largest WebSocket message a client may send.
    #[arg(
        long,
        env = "REPLAYGROUND_WS_MAX_MESSAGE_KIB",
        value_name = "KIB",
        default_value_t = 512
    )]
    pub ws_max_message_kib: usize,
    /// Jobs one WebSocket session may run at once.
    #[arg(long, env = "REPLAYGROUND_WS_MAX_JOBS", value_name = "N", default_value_t = 2)]
    pub ws_max_jobs: usize,
    /// Server messages queued for one WebSocket client.
    #[arg(long, env = "REPLAYGROUND_WS_OUTBOUND_QUEUE", value_name = "N", default_value_t = 64)]
    pub ws_outbound_queue: usize,
    /// A WebSocket client that accepts no data for this long is disconnected.
    #[arg(long, env = "REPLAYGROUND_WS_SEND_TIMEOUT", value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration)]
    pub ws_send_timeout: Duration,
    /// Trace events per streamed chunk.
    #[arg(
        long,
        env = "REPLAYGROUND_TRACE_CHUNK_EVENTS",
        value_name = "N",
        default_value_t = 2000
    )]
    pub trace_chunk_events: usize,
    /// The neural debugger's engine: a model folder (config.json, tokenizer.json,
    /// *.safetensors), or a code LLM prompted in context (`qwen-0.5b`, `qwen-1.5b`,
    /// `gguf:FILE`), any of them with `+steps` to answer multi-event actions one step
    /// into at a time and check steps back forward (slower); default: `qwen-0.5b` where `cargo xtask setup` installed it (the
    /// best engine that answers a step within 2 s here once the program is read ahead;
    /// see the README's neural-debugger table), else the bundled
    /// models/neural-debugger-tiny when the server starts in a checkout.
    #[arg(
        long,
        alias = "neural-model",
        env = "REPLAYGROUND_MODEL_DIR",
        value_name = "ENGINE",
        conflicts_with = "no_model"
    )]
    pub model_dir: Option<PathBuf>,
    /// Serve without the neural debugger (neural mode off).
    #[arg(long, env = "REPLAYGROUND_NO_MODEL")]
    pub no_model: bool,
    #[command(flatten)]
    pub agent: crate::repro::agent::AgentModels,
}

impl ServeArgs {
    /// The server's configuration; `static_dir` is what exists of `--static-dir`.
    pub fn config(&self, static_dir: Option<PathBuf>) -> ServerConfig {
        ServerConfig {
            static_dir,
            max_jobs: self.max_jobs.max(1),
            max_queued_jobs: self.max_queued_jobs,
            queue_timeout: self.queue_timeout,
            rate_limit_per_second: self.rate_limit_per_second,
            rate_limit_burst: self.rate_limit_burst,
            client_ip_header: self.client_ip_header.clone(),
            shutdown_grace: self.shutdown_grace,
            header_read_timeout: self.header_read_timeout,
            max_connections_per_ip: self.max_connections_per_ip,
            max_connections: self.max_connections,
            metrics: self.metrics,
            allowed_origins: self.allowed_origins.clone(),
            max_share_storage_bytes: self.max_share_storage_mib << 20,
            ws: WsConfig {
                handshake_timeout: self.ws_handshake_timeout,
                idle_timeout: self.ws_idle_timeout,
                session_timeout: self.ws_session_timeout,
                max_message_bytes: self.ws_max_message_kib.max(1) * 1024,
                max_jobs_per_session: self.ws_max_jobs.max(1),
                outbound_queue: self.ws_outbound_queue.max(2),
                send_timeout: self.ws_send_timeout,
                events_per_chunk: self.trace_chunk_events.max(1),
            },
        }
    }
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
pub async fn run(mut cli: Cli) -> anyhow::Result<ExitCode> {
    cli.options.python = absolute_interpreter(cli.options.python);
    match cli.command {
        Command::Trace(args) => {
            let trace = trace_file(&cli.options, &args).await?;
            let mut out = std::io::stdout().lock();
            serde_json::to_writer(&mut out, &trace)?;
            writeln!(out)?;
            // A trace the tracer could not finish is printed, and the exit status says so.
            if let Outcome::Crashed { message } = &trace.outcome {
                tracing::error!("could not trace {}: {message}", args.file.display());
                return Ok(ExitCode::FAILURE);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Debug(args) => debug(&cli.options, &args).await,
        Command::Serialize(args) => serialize(&cli.options, &args).await,
        Command::Corpus(args) => neural::commands::corpus(&args, cli.options.sandbox()?, &cli.options.python).await,
        Command::Train(args) => tokio::task::spawn_blocking(move || neural::commands::train(&args)).await?,
        Command::ExportModel(args) => neural::commands::export(&args),
        Command::Predict(args) => {
            let program = ProgramArgs {
                file: args.file.clone(),
                stdin: None,
                max_steps: None,
            };
            let (code, _) = read_program(&program)?;
            let tree = steppable(&cli.options, &program).await?;
            tokio::task::spawn_blocking(move || neural::commands::predict(&args, &tree, &code)).await?
        }
        Command::Eval(args) => neural::commands::eval(args, cli.options.sandbox()?, &cli.options.python).await,
        Command::PlotLoss(args) => neural::commands::plot_loss(&args),
        Command::CheckBounds(args) => neural::commands::check_bounds(&args),
        Command::BenchRepro(args) => {
            crate::repro::bench::command(&args, cli.options.sandbox()?, &cli.options.python).await
        }
        Command::Repro(args) => {
            crate::repro::cli::command(&args, cli.options.sandbox()?, cli.options.python.clone()).await
        }
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
    // The server's limits: a larger program is refused here, not lost in a crashed trace.
    let request = replayground_shared::protocol::TraceRequest {
        code,
        stdin,
        max_steps: None,
        neural: false,
    };
    if let Err(message) = request.check() {
        bail!("{}: {}", args.file.display(), message.trim_end_matches('.'));
    }
    let (code, stdin) = (request.code, request.stdin);
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
    if !options.unsafe_no_sandbox && args.max_jobs > options.sandbox_slots as usize {
        bail!(
            "--max-jobs ({}) is more than --sandbox-slots ({}); every concurrent job needs its own sandbox uid",
            args.max_jobs,
            options.sandbox_slots
        );
    }
    let store = Store::connect(&args.db)
        .await
        .map_err(|e| anyhow::anyhow!("cannot open the share store {}: {e}", redact_url(&args.db)))?;
    tracing::info!(store = store.backend(), "share store ready (migrations applied)");
    let sandbox: Arc<dyn Sandbox> = if options.unsafe_no_sandbox {
        Arc::new(Unsandboxed::new())
    } else {
        let bwrap = options.bubblewrap()?;
        bwrap.self_test().await?;
        Arc::new(bwrap)
    };
    tracing::info!(sandbox = %sandbox.describe(), "sandbox ready");
    let static_dir = if args.static_dir.join("index.html").is_file() {
        Some(args.static_dir.clone())
    } else {
        tracing::warn!(
            "{} has no index.html, so only the API is served; build the browser app first (cargo xtask build-frontend)",
            args.static_dir.display()
        );
        None
    };
    let tracer = Tracer::new(sandbox, &options.python, options.limits());
    let state = AppState::new(tracer, store, args.config(static_dir));
    state.neural.start(args.no_model, args.model_dir.clone());
    state.set_agent(crate::repro::agent::AgentDeps::load(
        &args.agent,
        Arc::clone(state.tracer.sandbox()),
        state.tracer.python().to_owned(),
        Some(state.neural.clone()),
    )?);
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .with_context(|| format!("cannot listen on {}; is another server using it?", args.addr))?;
    let bound = listener.local_addr().unwrap_or(args.addr);
    tracing::info!("listening on http://{bound}");
    let shutdown = state.shutdown.clone();
    let grace = args.shutdown_grace;
    tokio::spawn(async move {
        termination_signal().await;
        shutdown.begin(grace);
    });
    http::serve(listener, state).await?;
    tracing::info!("stopped");
    Ok(ExitCode::SUCCESS)
}

/// A database URL without its password, for messages.
fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_interpreter_is_made_absolute_and_a_bare_name_is_searched() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            absolute_interpreter(PathBuf::from(".tools/dl/bin/python")),
            cwd.join(".tools/dl/bin/python")
        );
        assert_eq!(absolute_interpreter(PathBuf::from("python3")), PathBuf::from("python3"));
        assert_eq!(
            absolute_interpreter(PathBuf::from("/usr/bin/python3")),
            PathBuf::from("/usr/bin/python3")
        );
    }

    #[test]
    fn passwords_stay_out_of_messages() {
        assert_eq!(redact_url("postgres://me:secret@db/x"), "postgres://me:***@db/x");
        assert_eq!(redact_url("postgres://me@db/x"), "postgres://me@db/x");
        assert_eq!(redact_url("sqlite://data/x.db"), "sqlite://data/x.db");
    }

    #[test]
    fn every_serve_flag_has_an_environment_variable() {
        use clap::CommandFactory as _;
        let cli = Cli::command();
        let serve = cli.find_subcommand("serve").unwrap();
        for arg in serve.get_arguments() {
            if arg.get_id() == "help" || arg.get_id() == "version" {
                continue;
            }
            let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
            assert!(
                env.as_deref().is_some_and(|e| e.starts_with("REPLAYGROUND_")),
                "--{} has no REPLAYGROUND_ variable",
                arg.get_id()
            );
        }
    }
}
