//! The reproducers of the hardening issue, run for real: each hostile input is bounded
//! in bytes, events, seconds or memory, and the test asserts the bound.
//!
//! Like `sandbox.rs`, these need bubblewrap (CI runs them as root); without it they
//! print why and pass.

use std::fmt::Write as _;
use std::io::Read as _;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use replayground_server::sandbox::RunLimits;
use replayground_shared::{Limit, Outcome, Trace};

use crate::sandbox::{SERIAL, bubblewrap, contained, quick_limits};

const MIB: u64 = 1 << 20;

/// The program: ten globals with 100,000-character names, then an endless loop.
/// Two changes keep it stepping until the trace's byte cap: the loop spans two lines
/// (Python 3.11 reports no line events for a one-line `while True: pass`), and `g` is
/// deleted (as a local, `globals()` costs the tracer a 1 MB repr, 12 ms, per step, so
/// the CPU limit would end the run after ~400 steps).
const LONG_NAMES: &str =
    "g = globals()\nfor i in range(10): g['v%d_' % i + 'a'*100000] = i\ndel i, g\nwhile True:\n    pass\n";

/// `replayground serve` in its own process, so that its peak RSS is its own.
struct Server {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Server {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_replayground"))
            .arg("serve")
            .arg("--addr")
            .arg(addr.to_string())
            .arg("--db")
            .arg(format!("sqlite://{}", dir.path().join("shares.db").display()))
            .arg("--static-dir")
            .arg(dir.path())
            .args(["--no-model", "--no-embeddings"])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let server = Self { child, addr, _dir: dir };
        let client = reqwest::Client::new();
        let started = Instant::now();
        while client.get(server.url("/healthz")).send().await.is_err() {
            assert!(started.elapsed() < Duration::from_secs(60), "the server did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        server
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The most resident memory the server has used so far (`VmHWM`).
    fn peak_rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .expect("VmHWM in /proc/PID/status");
        kib * 1024
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Issue item 1: the program above at 100,000 steps. Every event repeated all ten names,
/// so memory grew with name length times steps (2 GB at 1,000 steps).
#[tokio::test]
async fn long_names_at_100k_steps_stay_under_300_mb_of_server_rss() {
    let Some(_bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    let server = Server::start().await;
    let response = reqwest::Client::new()
        .post(server.url("/api/trace"))
        .json(&serde_json::json!({ "code": LONG_NAMES, "stdin": "", "max_steps": 100_000 }))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let body = response.bytes().await.unwrap();
    let peak = server.peak_rss();
    let trace: Trace = serde_json::from_slice(&body).unwrap();
    eprintln!(
        "long names: {} events, response {} bytes, server peak RSS {} MiB, outcome {:?}",
        trace.events.len(),
        body.len(),
        peak / MIB,
        trace.outcome
    );
    let cap = RunLimits::default().max_stdout_bytes;
    assert!((body.len() as u64) <= cap, "the trace is {} bytes", body.len());
    assert!(peak < 300 * MIB, "peak server RSS {} MiB", peak / MIB);
    assert!(
        matches!(
            trace.outcome,
            Outcome::LimitReached {
                limit: Limit::Output,
                ..
            }
        ),
        "{:?}",
        trace.outcome
    );
    assert!(trace.events.len() > 1000, "the trace up to the cap is kept");
    let longest = trace.events[trace.events.len() - 1]
        .locals
        .iter()
        .map(|b| b.name.chars().count())
        .max()
        .unwrap();
    assert!(
        longest <= RunLimits::default().repr_chars as usize,
        "a name of {longest} chars"
    );
}

/// Runs a program that writes into the tracer's stream, with `max_steps` 10: the trace
/// keeps at most 10 events and the run ends at once.
async fn forged(bwrap: &std::sync::Arc<replayground_server::sandbox::Bubblewrap>, code: &str) -> Outcome {
    let limits = RunLimits {
        max_events: 10,
        ..quick_limits()
    };
    let started = Instant::now();
    let run = contained(bwrap, code, &limits).await;
    assert!(run.trace.events.len() <= 10, "{} events", run.trace.events.len());
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    run.trace.outcome
}

/// Issue item 2: a final line written by the program into the tracer's stream, over and
/// over, used to replace the trace (300,003 events for `max_steps` 10).
#[tokio::test]
async fn a_final_line_forged_through_the_stream_is_refused() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    let forge = "import os\nfor _ in range(300000):\n    os.write(3, b'{\"t\":\"x\",\"outcome\":{\"kind\":\"finished\"}}\\n')\n";
    let outcome = forged(&bwrap, forge).await;
    assert!(matches!(outcome, Outcome::Crashed { .. }), "{outcome:?}");

    // One forged final line, then a quiet exit: the key and the counts do not match.
    let once = "import os\nos.write(3, b'{\"t\":\"x\",\"outcome\":{\"kind\":\"finished\"}}\\n')\nos._exit(0)\n";
    let Outcome::Crashed { message } = forged(&bwrap, once).await else {
        panic!("a forged final line was believed")
    };
    assert!(message.contains("wrote into the tracer's output"), "{message}");
}

/// Forged event lines count against the step limit in the server, not only in the tracer.
#[tokio::test]
async fn forged_events_stop_at_the_step_limit() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    let forge = "import os\nline = b'{\"t\":\"e\",\"k\":\"line\",\"f\":0,\"l\":1,\"o\":0,\"e\":0}\\n'\nwhile True:\n    os.write(3, line * 100)\n";
    let outcome = forged(&bwrap, forge).await;
    assert!(!matches!(outcome, Outcome::Finished), "{outcome:?}");
}

/// Forged nesting: every event opens a new frame. Building the state tree scanned the
/// whole stack per event (80,000 events took 14.8 s).
#[test]
fn forged_deep_nesting_builds_a_state_tree_in_linear_time() {
    use replayground_shared::trace::{Event, EventKind, Frame};
    let n = 80_000u32;
    let mut trace = Trace::empty(Outcome::Finished);
    for id in 0..n {
        trace.frames.push(Frame {
            function: "f".into(),
            parent: id.checked_sub(1),
            depth: id,
            is_generator: false,
            called_from_library: false,
        });
        trace.events.push(Event {
            kind: EventKind::Line,
            frame: id,
            line: 1,
            locals: Vec::new().into(),
            value: None,
            stdout_len: 0,
            stderr_len: 0,
            internal: false,
            generator_exit: false,
        });
    }
    let started = Instant::now();
    let tree = replayground_shared::StateTree::new(trace).unwrap();
    let elapsed = started.elapsed();
    eprintln!("state tree of {n} nested events: {elapsed:?}");
    assert_eq!(tree.depth_of(n as usize - 1), n - 1);
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
}

/// A tar.gz holding `entries` (header, data), gzip-compressed as it is written.
fn tar_gz(entries: Vec<(tar::Header, Box<dyn std::io::Read>)>) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let mut builder = tar::Builder::new(gz);
    for (header, data) in entries {
        builder.append(&header, data).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

fn header(kind: tar::EntryType, path: &[u8], size: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.as_old_mut().name[..path.len()].copy_from_slice(path);
    header.set_size(size);
    header.set_mode(0o644);
    header.set_cksum();
    header
}

/// Issue item 4: a GNU long-name header of 256 MiB, gzipped to a few hundred KB. The
/// `tar` crate read it whole into memory before any limit applied (4.39 GB of RSS for a
/// 1 MB upload).
#[test]
fn a_huge_long_name_header_is_refused_before_it_is_read() {
    use replayground_server::repro::project::{MAX_EXTENDED_HEADER_BYTES, Project, ProjectError};
    let size = 256 * MIB;
    let archive = tar_gz(vec![(
        header(tar::EntryType::GNULongName, b"././@LongLink", size),
        Box::new(std::io::repeat(b'a').take(size)),
    )]);
    eprintln!("long-name bomb: {} bytes compressed", archive.len());
    assert!(archive.len() < 2 * MIB as usize);
    let started = Instant::now();
    let error = Project::from_archive("bomb.tar.gz", &archive).unwrap_err();
    let elapsed = started.elapsed();
    eprintln!("refused in {elapsed:?}: {error}");
    assert!(
        matches!(error, ProjectError::HeaderTooLong { bytes, .. } if bytes == size),
        "{error}"
    );
    assert!(elapsed < Duration::from_secs(1), "{elapsed:?}");

    // A long name within the limit still names the file.
    let name = format!("{}/train.py", "deep".repeat(60));
    assert!(name.len() as u64 <= MAX_EXTENDED_HEADER_BYTES);
    let code = b"print('hi')\n";
    let archive = tar_gz(vec![
        (
            header(tar::EntryType::GNULongName, b"././@LongLink", name.len() as u64),
            Box::new(std::io::Cursor::new(name.clone().into_bytes())),
        ),
        (
            header(tar::EntryType::Regular, b"short.py", code.len() as u64),
            Box::new(&code[..]),
        ),
        (
            header(tar::EntryType::Regular, b"setup.py", code.len() as u64),
            Box::new(&code[..]),
        ),
    ]);
    let project = Project::from_archive("ok.tar.gz", &archive).unwrap();
    let paths: Vec<&str> = project.files.iter().map(|f| f.path.as_str()).collect();
    assert!(paths.contains(&name.as_str()), "{paths:?}");
}

/// A tar.gz that unpacks past 100 MB stops at the limit instead of reading on.
#[test]
fn a_tar_gz_bomb_stops_at_the_unpacked_limit() {
    use replayground_server::repro::project::{MAX_UNPACKED_BYTES, Project, ProjectError};
    let size = 4 * MAX_UNPACKED_BYTES;
    let archive = tar_gz(vec![(
        header(tar::EntryType::Regular, b"data.bin", size),
        Box::new(std::io::repeat(0).take(size)),
    )]);
    let started = Instant::now();
    let error = Project::from_archive("bomb.tar.gz", &archive).unwrap_err();
    eprintln!("{} MiB bomb refused in {:?}: {error}", size / MIB, started.elapsed());
    assert!(matches!(error, ProjectError::TooLargeUnpacked), "{error}");
}

/// Issue item 3: `/dev` and `/dev/shm` were tmpfs of half the host's RAM, uncounted by
/// the address-space limit (1 GiB written in 0.45 s).
#[tokio::test]
async fn dev_is_read_only_and_dev_shm_holds_one_mib() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    let code = "\
import os
def fill(path):
    written = 0
    try:
        with open(path, 'wb') as f:
            while written < 1 << 30:
                f.write(b'x' * (1 << 16))
                written += 1 << 16
                f.flush()
    except OSError as e:
        return written, e.errno
    return written, 0
print(fill('/dev/shm/fill'))
print(fill('/dev/fill'))
";
    let run = contained(&bwrap, code, &quick_limits()).await;
    assert_eq!(run.trace.outcome, Outcome::Finished, "{:?}", run.trace.stderr);
    let lines: Vec<&str> = run.trace.stdout.lines().collect();
    eprintln!("/dev/shm, /dev: {lines:?}");
    let shm_written: u64 = lines[0]
        .trim_matches(['(', ')'])
        .split(", ")
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        shm_written <= RunLimits::default().shm_bytes,
        "{shm_written} bytes in /dev/shm"
    );
    assert!(lines[0].ends_with(", 28)"), "ENOSPC: {}", lines[0]);
    assert_eq!(lines[1], "(0, 30)", "EROFS in /dev");
}

/// An in-process server with a fake sandbox and `config` (no rate limit).
async fn fake_server(config: replayground_server::app::ServerConfig) -> (crate::common::Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = replayground_server::app::ServerConfig {
        rate_limit_per_second: 0,
        ..config
    };
    let state = crate::common::state(
        crate::common::fake(crate::common::Fake::Stream(crate::common::stream(1))),
        crate::common::sqlite_store(dir.path()).await,
        config,
    );
    (crate::common::start(state).await, dir)
}

/// Issue item 6: 1,100 silent connections used up the file descriptors and `/healthz`
/// timed out. Now one address holds at most `max_connections_per_ip`, and a connection
/// that sends no request head is closed after `header_read_timeout`.
#[tokio::test]
async fn silent_connections_are_capped_per_address_and_closed() {
    use tokio::io::AsyncReadExt as _;
    let (server, _dir) = fake_server(replayground_server::app::ServerConfig {
        header_read_timeout: Duration::from_secs(1),
        max_connections_per_ip: 50,
        ..replayground_server::app::ServerConfig::default()
    })
    .await;
    // The silent clients come from 127.0.0.2, the health check from 127.0.0.1.
    let started = Instant::now();
    let mut silent = Vec::new();
    for _ in 0..200 {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
        silent.push(socket.connect(server.addr).await.unwrap());
    }
    let health = tokio::time::timeout(
        Duration::from_secs(2),
        crate::common::http(server.addr, "GET", "/healthz", None),
    )
    .await
    .expect("healthz answers while silent connections are open")
    .unwrap();
    assert_eq!(health.status, 200);
    // Past the cap a connection is closed at once; the rest when the timeout strikes.
    let closings: Vec<_> = silent
        .into_iter()
        .map(|mut stream| {
            tokio::spawn(async move {
                let mut buf = [0u8; 256];
                loop {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return started.elapsed(),
                        Ok(_) => {}
                    }
                }
            })
        })
        .collect();
    let (mut closed_at_once, mut closed_by_timeout) = (0, 0);
    for closing in closings {
        let closed = tokio::time::timeout(Duration::from_secs(4), closing)
            .await
            .expect("a silent connection stayed open past the header timeout")
            .unwrap();
        if closed < Duration::from_millis(950) {
            closed_at_once += 1;
        } else {
            closed_by_timeout += 1;
        }
    }
    eprintln!("silent connections: {closed_at_once} refused at once, {closed_by_timeout} closed by the timeout");
    assert_eq!(closed_at_once + closed_by_timeout, 200);
    assert!(closed_by_timeout <= 50, "{closed_by_timeout} were admitted");
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
}

/// Issue item 7: the WebSocket accepted any `Origin`, so another site's page could run
/// programs through its visitors' browsers.
#[tokio::test]
async fn a_websocket_from_another_origin_is_refused() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
    let (server, _dir) = fake_server(replayground_server::app::ServerConfig::default()).await;
    let with_origin = |origin: &str| {
        let mut request = format!("ws://{}/api/ws", server.addr).into_client_request().unwrap();
        request.headers_mut().insert("origin", origin.parse().unwrap());
        request
    };
    match tokio_tungstenite::connect_async(with_origin("http://evil.example")).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => assert_eq!(response.status(), 403),
        other => panic!("another origin was let in: {other:?}"),
    }
    let own = format!("http://{}", server.addr);
    assert!(tokio_tungstenite::connect_async(with_origin(&own)).await.is_ok());
    let no_origin = format!("ws://{}/api/ws", server.addr);
    assert!(
        tokio_tungstenite::connect_async(no_origin).await.is_ok(),
        "non-browser clients send none"
    );
}

/// Issue item 7: a 5 MB source file gave a `crashed` trace without detail and exit
/// status 0. Now the CLI refuses it with one sentence and a non-zero status.
#[test]
fn a_five_megabyte_program_is_refused_by_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("big.py");
    std::fs::write(&program, "x = 1\n".repeat(5 * 1024 * 1024 / 6)).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_replayground"));
    if bubblewrap().is_none() {
        cmd.arg("--unsafe-no-sandbox");
    }
    let output = cmd.arg("trace").arg(&program).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("the limit is 102,400 bytes"), "{stderr}");
    assert!(output.stdout.is_empty());
}

/// Issue item 5: a 1,000-function project's reproduction, cancelled while its chunks were
/// being embedded, burned a core for 72 s after its job slot was freed. Now the agent
/// (and so the job holding the slot) ends only once the embedding thread has stopped:
/// no embedding progress arrives after it returned.
#[tokio::test]
async fn a_cancelled_reproduction_stops_embedding_before_it_ends() {
    use std::sync::{Arc, Mutex};

    use replayground_server::repro::agent::{AgentConfig, AgentDeps, run_agent};
    use replayground_server::repro::embed::Embedder;
    use replayground_server::repro::project::{Project, SourceFile};
    use replayground_shared::repro::{AgentEvent, BugReport};

    let Some(dir) = Embedder::locate() else {
        eprintln!("SKIPPED: no embedding model (cargo xtask setup installs it)");
        return;
    };
    let _serial = SERIAL.lock().await;
    let embedder = Arc::new(Embedder::load(&dir).unwrap());
    let files = (0..100)
        .map(|f| SourceFile {
            path: format!("pkg/module_{f}.py"),
            text: (0..10).fold(String::new(), |mut text, i| {
                let _ = writeln!(
                    text,
                    "def step_{f}_{i}(model, batch):\n    loss = model(batch).mean()\n    loss.backward()\n    return loss.item() * {i}\n"
                );
                text
            }),
        })
        .collect();
    let project = Arc::new(Project {
        files,
        notes: Vec::new(),
    });
    let deps = AgentDeps {
        sandbox: crate::common::fake(crate::common::Fake::Broken),
        python: "/usr/bin/python3".into(),
        embedder: Some(embedder),
        reranker: None,
        llm: None,
        neural: None,
    };
    let report = BugReport {
        title: "Loss becomes NaN".into(),
        description: "After a few steps the training loss is nan.".into(),
        observed: "loss nan".into(),
        expected: "a finite loss".into(),
        ..BugReport::default()
    };
    let (events, mut received) = tokio::sync::mpsc::channel(64);
    let last_embedding = Arc::new(Mutex::new(None::<Instant>));
    let started_embedding = Arc::new(tokio::sync::Notify::new());
    let drain = tokio::spawn({
        let (last, started) = (Arc::clone(&last_embedding), Arc::clone(&started_embedding));
        async move {
            while let Some(event) = received.recv().await {
                if let AgentEvent::Progress { message, .. } = event
                    && message.starts_with("embedding ")
                    && !message.starts_with("embedding 0/")
                {
                    *last.lock().unwrap() = Some(Instant::now());
                    started.notify_one();
                }
            }
        }
    });
    let cancel = tokio_util::sync::CancellationToken::new();
    let agent = tokio::spawn({
        let cancel = cancel.clone();
        async move { run_agent(report, Some(project), &deps, &AgentConfig::default(), events, cancel).await }
    });
    tokio::time::timeout(Duration::from_secs(60), started_embedding.notified())
        .await
        .expect("the chunks are being embedded");
    let cancelled = Instant::now();
    cancel.cancel();
    agent.await.unwrap();
    let returned = Instant::now();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let last = last_embedding.lock().unwrap().expect("embedding progress was seen");
    eprintln!(
        "cancelled repro: returned {:?} after the cancel; last embedding progress {:?} before it returned",
        returned - cancelled,
        returned.saturating_duration_since(last)
    );
    assert!(last <= returned, "embedding went on after the job ended");
    assert!(
        returned - cancelled < Duration::from_secs(10),
        "{:?}",
        returned - cancelled
    );
    drain.abort();
}

/// Issue item 7: a seccomp filter refuses `io_uring`, keyrings, eBPF, userfaultfd, perf
/// events and ptrace with EPERM (without it, `io_uring_setup(1, NULL)` reaches the
/// kernel and fails with EFAULT).
#[tokio::test]
async fn a_seccomp_filter_refuses_io_uring_and_friends() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    if !cfg!(target_arch = "x86_64") {
        eprintln!("SKIPPED: the system call numbers below are x86_64's");
        return;
    }
    let code = "\
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for name, nr, args in [('io_uring_setup', 425, (1, 0)), ('keyctl', 250, (0, 0)), ('bpf', 321, (0, 0, 0)),
                       ('userfaultfd', 323, (0,)), ('perf_event_open', 298, (0, 0, -1, -1, 0))]:
    ctypes.set_errno(0)
    result = libc.syscall(nr, *args)
    print(name, result, ctypes.get_errno())
print('getpid', libc.syscall(39) > 0)
";
    let run = contained(&bwrap, code, &quick_limits()).await;
    assert_eq!(run.trace.outcome, Outcome::Finished, "{}", run.trace.stderr);
    let lines: Vec<&str> = run.trace.stdout.lines().collect();
    eprintln!("seccomp: {lines:?}");
    for name in ["io_uring_setup", "keyctl", "bpf", "userfaultfd", "perf_event_open"] {
        assert!(lines.contains(&format!("{name} -1 1").as_str()), "{name}: {lines:?}");
    }
    assert!(lines.contains(&"getpid True"), "other calls work: {lines:?}");
}

/// Issue item 7: shares had no total cap, kept 900 KB of input a rerun refuses, and
/// stored unknown fields.
#[tokio::test]
async fn shares_are_capped_in_total_and_checked_like_a_rerun() {
    let (server, _dir) = fake_server(replayground_server::app::ServerConfig {
        max_share_storage_bytes: 4096,
        ..replayground_server::app::ServerConfig::default()
    })
    .await;
    let share = |payload: serde_json::Value| {
        let body = serde_json::json!({ "kind": "playground", "payload": payload }).to_string();
        let addr = server.addr;
        async move {
            crate::common::http(addr, "POST", "/api/share", Some(&body))
                .await
                .unwrap()
        }
    };
    let big_stdin = "x".repeat(900 * 1024);
    assert_eq!(
        share(serde_json::json!({ "code": "x = 1", "stdin": big_stdin }))
            .await
            .status,
        413
    );
    let unknown = share(serde_json::json!({ "code": "x = 1", "secret": "kept?" })).await;
    assert_eq!(unknown.status, 400);
    assert!(String::from_utf8_lossy(&unknown.body).contains("secret"));
    let mut stored = 0;
    let mut refused = None;
    for i in 0..20 {
        let reply = share(serde_json::json!({ "code": format!("x = {i}\n{}", "#".repeat(500)) })).await;
        match reply.status {
            201 => stored += 1,
            status => {
                refused = Some((status, String::from_utf8_lossy(&reply.body).into_owned()));
                break;
            }
        }
    }
    eprintln!("shares stored under a 4 KiB cap: {stored}, then {refused:?}");
    let (status, body) = refused.expect("the cap refuses a share");
    assert_eq!(status, 507);
    assert!(body.contains("share storage is full"), "{body}");
    assert!(stored * 500 <= 4096);
}

/// Issue item 3: each job runs under a memory cgroup (v2 `memory.max`, or v1's
/// `memory.limit_in_bytes`), which counts the tmpfs pages and kernel buffers that
/// `RLIMIT_AS` misses. Where the machine gives no cgroup the server says why.
#[tokio::test]
async fn each_job_runs_in_a_memory_cgroup_where_the_machine_allows() {
    use replayground_server::sandbox::{cgroup_memory_limit, processes_of_uid};
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    let cgroups = match bwrap.memory_cgroups() {
        Ok(cgroups) => cgroups,
        Err(why) => {
            eprintln!("SKIPPED: no memory cgroup on this machine: {why}");
            return;
        }
    };
    let uids = bwrap
        .uid_range()
        .expect("cgroups need root, and root gets dedicated uids");
    let limits = quick_limits();
    let running = tokio::spawn({
        let bwrap = std::sync::Arc::clone(&bwrap);
        let limits = limits.clone();
        async move { contained(&bwrap, "import time\ntime.sleep(1.5)\n", &limits).await }
    });
    // The job's processes, seen from the host: their memory cgroup and its limit.
    let mut seen = None;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let pid = uids.clone().find_map(|uid| processes_of_uid(uid).first().copied());
        if let Some(pid) = pid
            && let Ok(own) = std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
        {
            seen = Some(own);
            break;
        }
    }
    let own = seen.expect("the job's process was seen");
    let limit = own.lines().find_map(|line| {
        let path = line.rsplit(':').next()?;
        let (dir, file) = if line.starts_with("0::") {
            (format!("/sys/fs/cgroup{path}"), "memory.max")
        } else if line.split(':').nth(1)?.split(',').any(|c| c == "memory") {
            (format!("/sys/fs/cgroup/memory{path}"), "memory.limit_in_bytes")
        } else {
            return None;
        };
        std::fs::read_to_string(format!("{dir}/{file}"))
            .ok()?
            .trim()
            .parse::<u64>()
            .ok()
    });
    eprintln!("memory cgroup ({cgroups}): limit {limit:?} for {own:?}");
    let expected = cgroup_memory_limit(&limits);
    // The kernel rounds the limit down to whole pages.
    assert!(
        limit.is_some_and(|l| l <= expected && l + 4096 > expected),
        "{limit:?}, expected {expected}"
    );
    assert_eq!(running.await.unwrap().trace.outcome, Outcome::Finished);
}
