//! `replayground-load`: load a running `replayground serve` over its WebSocket API.
//!
//! - `trace`: many concurrent sessions, each tracing a small program again and again for
//!   a bounded time; reports sessions held, traces per second and latency percentiles.
//! - `idle`: holds many idle (greeted) sessions and reports the server's resident memory
//!   growth per connection, read from `/proc/<pid>/status` of `--server-pid`.
//!
//! Loopback only: the URL must name 127.0.0.1, `localhost` or `[::1]`. Counts and times
//! are capped. Many connections need a higher open-file limit on both sides, e.g.
//! `ulimit -n 65536` in the shells that start the server and this tool.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use clap::{Args, Parser, Subcommand};
use futures_util::{SinkExt as _, StreamExt as _};
use replayground_shared::protocol::{
    ClientMessage, Envelope, ErrorCode, PROTOCOL_VERSION, ServerEnvelope, ServerMessage, TraceRequest,
};
use tokio::net::TcpStream;
use tokio::sync::Mutex;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

const MAX_SESSIONS: usize = 20_000;
const MAX_DURATION: Duration = Duration::from_secs(600);

const DEFAULT_PROGRAM: &str = "\
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

total = 0
for i in range(8):
    total += fib(i)
print(total)
";

#[derive(Debug, Parser)]
#[command(
    name = "replayground-load",
    about = "Load a local replayground server over its WebSocket API."
)]
struct Cli {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Debug, Subcommand)]
enum Mode {
    /// Concurrent sessions tracing a small program repeatedly.
    Trace(TraceArgs),
    /// Idle sessions held open; the server's memory per connection.
    Idle(IdleArgs),
}

#[derive(Debug, Args)]
struct Common {
    /// The server's WebSocket endpoint (loopback only).
    #[arg(long, default_value = "ws://127.0.0.1:8080/api/ws")]
    url: String,
    /// The server's process id, to report its resident memory (`VmRSS`).
    #[arg(long)]
    server_pid: Option<u32>,
    /// Sessions opened at once while connecting (the rest wait).
    #[arg(long, default_value_t = 64)]
    connect_concurrency: usize,
}

#[derive(Debug, Args)]
struct TraceArgs {
    #[command(flatten)]
    common: Common,
    /// Concurrent sessions.
    #[arg(long, default_value_t = 32)]
    sessions: usize,
    /// How long to keep tracing.
    #[arg(long, default_value = "20s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// A Python file to trace instead of the built-in small program.
    #[arg(long)]
    program: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
struct IdleArgs {
    #[command(flatten)]
    common: Common,
    /// Idle connections to hold.
    #[arg(long, default_value_t = 1000)]
    connections: usize,
    /// How long to hold them after all are open.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    hold: Duration,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.mode {
            Mode::Trace(args) => trace(args).await,
            Mode::Idle(args) => idle(args).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Refuses anything but a loopback address.
fn check_url(url: &str) -> anyhow::Result<()> {
    let rest = url
        .strip_prefix("ws://")
        .context("the URL must start with ws:// (loopback only, no TLS)")?;
    let host = rest.split('/').next().unwrap_or_default();
    let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
    if !["127.0.0.1", "localhost", "[::1]"].contains(&host) {
        bail!("{url} is not a loopback address; this tool only loads a server on this machine (127.0.0.1)");
    }
    Ok(())
}

fn check_bounds(sessions: usize, duration: Duration) -> anyhow::Result<()> {
    if sessions == 0 || sessions > MAX_SESSIONS {
        bail!("the number of sessions must be between 1 and {MAX_SESSIONS}");
    }
    if duration > MAX_DURATION {
        bail!("the duration may be at most {} s", MAX_DURATION.as_secs());
    }
    Ok(())
}

/// Opens a session and says hello; the server's welcome has arrived when this returns.
async fn open(url: &str) -> anyhow::Result<Socket> {
    let (mut socket, _) = tokio_tungstenite::connect_async(url)
        .await
        .with_context(|| format!("cannot connect to {url}"))?;
    send(
        &mut socket,
        1,
        ClientMessage::Hello {
            protocol: PROTOCOL_VERSION,
        },
    )
    .await?;
    match receive(&mut socket).await?.body {
        ServerMessage::Welcome { .. } => Ok(socket),
        other => bail!("the server answered hello with {other:?}"),
    }
}

/// Sends `message` numbered `seq` (a job's message names the job).
async fn send(socket: &mut Socket, seq: u64, message: ClientMessage) -> anyhow::Result<()> {
    let envelope = Envelope::new(message).numbered(seq);
    socket
        .send(Message::Text(serde_json::to_string(&envelope)?.into()))
        .await?;
    Ok(())
}

async fn receive(socket: &mut Socket) -> anyhow::Result<ServerEnvelope> {
    loop {
        match socket.next().await {
            Some(Ok(Message::Text(text))) => return Ok(serde_json::from_str(text.as_str())?),
            Some(Ok(Message::Close(frame))) => bail!("the server closed the session: {frame:?}"),
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e.into()),
            None => bail!("the connection ended"),
        }
    }
}

/// Opens `n` sessions, `concurrency` at a time.
async fn open_many(url: &str, n: usize, concurrency: usize) -> (Vec<Socket>, Vec<String>) {
    let results: Vec<anyhow::Result<Socket>> = futures_util::stream::iter(0..n)
        .map(|_| open(url))
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let mut sockets = Vec::new();
    let mut errors = Vec::new();
    for result in results {
        match result {
            Ok(socket) => sockets.push(socket),
            Err(e) => errors.push(format!("{e:#}")),
        }
    }
    (sockets, errors)
}

#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    errors: Mutex<BTreeMap<String, u64>>,
    latencies: Mutex<Vec<Duration>>,
    events: AtomicU64,
    held: AtomicUsize,
}

impl Tally {
    async fn error(&self, kind: String) {
        *self.errors.lock().await.entry(kind).or_default() += 1;
    }
}

async fn trace(args: TraceArgs) -> anyhow::Result<()> {
    check_url(&args.common.url)?;
    check_bounds(args.sessions, args.duration)?;
    let code = match &args.program {
        Some(path) => std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?,
        None => DEFAULT_PROGRAM.to_owned(),
    };
    let rss_before = args.common.server_pid.and_then(rss_kib);
    let connect_started = Instant::now();
    let (sockets, connect_errors) = open_many(&args.common.url, args.sessions, args.common.connect_concurrency).await;
    let connect_time = connect_started.elapsed();
    let tally = Arc::new(Tally::default());
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + args.duration;
    let mut tasks = Vec::new();
    for socket in sockets {
        let tally = Arc::clone(&tally);
        let code = code.clone();
        tasks.push(tokio::spawn(async move {
            session_loop(socket, &code, deadline, &tally).await;
        }));
    }
    let opened = tasks.len();
    for task in tasks {
        let _ = task.await;
    }
    let elapsed = started.elapsed();
    let rss_after = args.common.server_pid.and_then(rss_kib);

    let mut latencies = std::mem::take(&mut *tally.latencies.lock().await);
    latencies.sort_unstable();
    let ok = tally.ok.load(Ordering::Relaxed);
    let mut out = std::io::stdout().lock();
    writeln!(out, "mode: trace, url {}", args.common.url)?;
    writeln!(
        out,
        "sessions: {} requested, {opened} opened in {:.2} s, {} held to the end",
        args.sessions,
        connect_time.as_secs_f64(),
        tally.held.load(Ordering::Relaxed)
    )?;
    for (i, e) in connect_errors.iter().take(3).enumerate() {
        writeln!(out, "  connect error {}: {e}", i + 1)?;
    }
    if connect_errors.len() > 3 {
        writeln!(out, "  ... {} connect errors in all", connect_errors.len())?;
    }
    writeln!(
        out,
        "traces: {ok} complete in {:.1} s = {:.1} traces/s ({} events each on average)",
        elapsed.as_secs_f64(),
        ok as f64 / elapsed.as_secs_f64(),
        tally.events.load(Ordering::Relaxed).checked_div(ok).unwrap_or(0)
    )?;
    if !latencies.is_empty() {
        writeln!(
            out,
            "latency (send trace -> trace_end): p50 {} ms, p90 {} ms, p99 {} ms, max {} ms",
            millis(percentile(&latencies, 0.50)),
            millis(percentile(&latencies, 0.90)),
            millis(percentile(&latencies, 0.99)),
            millis(*latencies.last().unwrap_or(&Duration::ZERO)),
        )?;
    }
    for (kind, n) in tally.errors.lock().await.iter() {
        writeln!(out, "errors: {n} x {kind}")?;
    }
    if let (Some(before), Some(after)) = (rss_before, rss_after) {
        writeln!(out, "server RSS: {before} KiB before, {after} KiB after")?;
    }
    Ok(())
}

async fn session_loop(mut socket: Socket, code: &str, deadline: tokio::time::Instant, tally: &Tally) {
    let mut seq = 1u64;
    let mut survived = true;
    while tokio::time::Instant::now() < deadline {
        seq += 1;
        let request = ClientMessage::Trace {
            request: TraceRequest {
                code: code.to_owned(),
                stdin: String::new(),
                max_steps: None,
                neural: false,
            },
        };
        let sent = Instant::now();
        if send(&mut socket, seq, request).await.is_err() {
            tally.error("connection lost".into()).await;
            survived = false;
            break;
        }
        let mut events = 0u64;
        let result = loop {
            match tokio::time::timeout(Duration::from_secs(60), receive(&mut socket)).await {
                Err(_) => break Err("no answer within 60 s".to_owned()),
                Ok(Err(e)) => break Err(format!("connection lost: {e:#}")),
                Ok(Ok(Envelope { job, body, .. })) => match body {
                    ServerMessage::TraceChunk { events: chunk, .. } => events += chunk.len() as u64,
                    ServerMessage::TraceEnd { .. } if job == Some(seq) => break Ok(()),
                    ServerMessage::Error { code, .. } if job == Some(seq) => break Err(format!("{code:?}")),
                    _ => {}
                },
            }
        };
        match result {
            Ok(()) => {
                tally.ok.fetch_add(1, Ordering::Relaxed);
                tally.events.fetch_add(events, Ordering::Relaxed);
                tally.latencies.lock().await.push(sent.elapsed());
            }
            Err(kind) => {
                let lost = kind.starts_with("connection lost") || kind.starts_with("no answer");
                let busy = kind == format!("{:?}", ErrorCode::Busy) || kind == format!("{:?}", ErrorCode::RateLimited);
                tally.error(kind).await;
                if lost {
                    survived = false;
                    break;
                }
                if busy {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }
    if survived {
        tally.held.fetch_add(1, Ordering::Relaxed);
    }
    let _ = socket.close(None).await;
}

async fn idle(args: IdleArgs) -> anyhow::Result<()> {
    check_url(&args.common.url)?;
    check_bounds(args.connections, args.hold)?;
    let pid = args.common.server_pid;
    let rss_before = pid.and_then(rss_kib);
    let started = Instant::now();
    let (mut sockets, errors) = open_many(&args.common.url, args.connections, args.common.connect_concurrency).await;
    let connect_time = started.elapsed();
    // Let the server's allocator settle before measuring.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_held = pid.and_then(rss_kib);
    // Ping every session once: they are all still alive and served.
    let mut alive = 0usize;
    for (i, socket) in sockets.iter_mut().enumerate() {
        if send(socket, 2 + i as u64, ClientMessage::Ping {}).await.is_ok()
            && matches!(
                tokio::time::timeout(Duration::from_secs(10), receive(socket)).await,
                Ok(Ok(Envelope {
                    body: ServerMessage::Pong { .. },
                    ..
                }))
            )
        {
            alive += 1;
        }
    }
    tokio::time::sleep(args.hold).await;
    let held = sockets.len();
    for mut socket in sockets {
        let _ = socket.close(None).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_after = pid.and_then(rss_kib);

    let mut out = std::io::stdout().lock();
    writeln!(out, "mode: idle, url {}", args.common.url)?;
    writeln!(
        out,
        "connections: {} requested, {held} open after {:.2} s, {alive} answered a ping after the hold",
        args.connections,
        connect_time.as_secs_f64()
    )?;
    if let Some(e) = errors.first() {
        writeln!(out, "  {} connect errors, first: {e}", errors.len())?;
    }
    match (rss_before, rss_held) {
        (Some(before), Some(held_rss)) if held > 0 => {
            let growth = held_rss.saturating_sub(before);
            writeln!(
                out,
                "server RSS: {before} KiB before, {held_rss} KiB with {held} sessions open = {growth} KiB more, {:.1} KiB per connection",
                growth as f64 / held as f64
            )?;
            if let Some(after) = rss_after {
                writeln!(out, "server RSS after closing them: {after} KiB")?;
            }
        }
        _ => writeln!(out, "server RSS: pass --server-pid PID to measure it")?,
    }
    Ok(())
}

/// `VmRSS` of a process, in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn millis(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_urls_are_loaded() {
        assert!(check_url("ws://127.0.0.1:8080/api/ws").is_ok());
        assert!(check_url("ws://localhost:1/api/ws").is_ok());
        assert!(check_url("ws://[::1]:8080/api/ws").is_ok());
        assert!(check_url("ws://10.0.0.1:8080/api/ws").is_err());
        assert!(check_url("ws://example.com/api/ws").is_err());
        assert!(check_url("wss://127.0.0.1/api/ws").is_err());
        assert!(check_bounds(MAX_SESSIONS + 1, Duration::from_secs(1)).is_err());
        assert!(check_bounds(10, Duration::from_secs(601)).is_err());
    }

    #[test]
    fn percentiles_pick_from_the_sorted_samples() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&samples, 0.5), Duration::from_millis(51));
        assert_eq!(percentile(&samples, 0.99), Duration::from_millis(99));
    }
}
