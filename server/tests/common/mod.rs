//! Helpers shared by the server's API, WebSocket and crash tests: fake sandboxes that
//! replay a tracer stream, the real sandbox, stores on every backend, and a server on
//! a free loopback port.

// Each test binary uses its own subset of these helpers.
#![allow(dead_code)]

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use replayground_server::app::{AppState, ServerConfig};
use replayground_server::runner::{DEFAULT_PYTHON, Tracer};
use replayground_server::sandbox::{
    BoxFuture, Bubblewrap, BubblewrapConfig, Job, RunLimits, RunReport, Sandbox, SandboxError, StdoutSink, Termination,
    Unsandboxed,
};
use replayground_server::store::Store;
use replayground_shared::protocol::{
    ClientEnvelope, ClientMessage, Envelope, PROTOCOL_VERSION, ServerEnvelope, ServerMessage,
};
use tokio::sync::Notify;

/// What a [`FakeSandbox`] does with every job.
#[derive(Clone)]
pub(crate) enum Fake {
    /// Writes this tracer stream and exits.
    Stream(String),
    /// Waits this long (killed like a real program when the job is dropped), then streams.
    Slow(Duration, String),
    /// Writes the first part, waits for `gate`, then writes the rest: the test sees what
    /// the server streams while the "program" still runs.
    Gated(String, String, Arc<Notify>),
    /// Cannot run anything.
    Broken,
}

pub(crate) struct FakeSandbox(pub(crate) Fake);

fn exited(bytes: usize) -> RunReport {
    RunReport {
        termination: Termination::Exited(0),
        stderr: String::new(),
        stdout_bytes: bytes as u64,
        elapsed: Duration::ZERO,
        uid: None,
        stray_processes: 0,
    }
}

impl Sandbox for FakeSandbox {
    fn describe(&self) -> String {
        "fake".into()
    }

    fn run<'a>(&'a self, job: Job, stdout: StdoutSink<'a>) -> BoxFuture<'a, Result<RunReport, SandboxError>> {
        Box::pin(async move {
            let key = request_key(&job);
            let signed = |s: &str| sign(s, &key);
            match &self.0 {
                Fake::Stream(s) => {
                    let s = signed(s);
                    let _ = stdout(s.as_bytes());
                    Ok(exited(s.len()))
                }
                Fake::Slow(delay, s) => {
                    tokio::time::sleep(*delay).await;
                    let s = signed(s);
                    let _ = stdout(s.as_bytes());
                    Ok(exited(s.len()))
                }
                Fake::Gated(first, rest, gate) => {
                    let _ = stdout(first.as_bytes());
                    gate.notified().await;
                    let whole = signed(&format!("{first}{rest}"));
                    let _ = stdout(&whole.as_bytes()[first.len()..]);
                    Ok(exited(first.len() + rest.len()))
                }
                Fake::Broken => Err(SandboxError::Broken {
                    path: "/usr/bin/bwrap".into(),
                    detail: "namespaces are disabled".into(),
                }),
            }
        })
    }
}

/// The key the runner put in the tracer's request.
fn request_key(job: &Job) -> String {
    serde_json::from_slice::<serde_json::Value>(&job.stdin)
        .ok()
        .and_then(|request| request.get("key")?.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Signs a tracer stream's final line the way `tracer.py` does: the run's key and the
/// counts of frame, value and event lines before it.
pub(crate) fn sign(stream: &str, key: &str) -> String {
    let mut counts = [0u64; 3];
    let mut out = String::with_capacity(stream.len() + 64);
    for line in stream.split_inclusive('\n') {
        let tag = line.get(6..7).unwrap_or("");
        match tag {
            "f" => counts[0] += 1,
            "v" => counts[1] += 1,
            "e" => counts[2] += 1,
            _ => {}
        }
        if let Some(rest) = line.strip_prefix(r#"{"t":"x","#) {
            let [f, v, e] = counts;
            let _ = write!(out, r#"{{"t":"x","k":"{key}","n":[{f},{v},{e}],{rest}"#);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// A valid tracer stream: one frame, `events` line events with a changing local, and
/// `hello\n` on stdout.
pub(crate) fn stream(events: usize) -> String {
    let mut s = stream_head();
    s.push_str(&stream_events(0, events));
    s.push_str(&stream_end());
    s
}

/// Line events `from..to` (each interns value `i`).
pub(crate) fn stream_events(from: usize, to: usize) -> String {
    let mut s = String::new();
    for i in from..to {
        let _ = write!(
            s,
            "{{\"t\":\"v\",\"id\":{i},\"repr\":\"{i}\",\"type\":\"int\",\"object_id\":{i}}}\n\
             {{\"t\":\"e\",\"k\":\"line\",\"f\":0,\"l\":{},\"o\":0,\"e\":0,\"v\":[[\"i\",{i}]]}}\n",
            i + 1
        );
    }
    s
}

pub(crate) fn stream_head() -> String {
    "{\"t\":\"f\",\"id\":0,\"function\":\"<module>\",\"parent\":null,\"depth\":0,\"is_generator\":false,\"called_from_library\":false}\n"
        .to_owned()
}

pub(crate) fn stream_end() -> String {
    "{\"t\":\"o\",\"fd\":1,\"s\":\"hello\\n\"}\n{\"t\":\"x\",\"outcome\":{\"kind\":\"finished\"}}\n".to_owned()
}

pub(crate) fn bwrap_installed() -> bool {
    std::process::Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Bubblewrap when installed (CI runs as root with it); otherwise no sandbox, for the
/// test's own programs only.
pub(crate) fn real_sandbox() -> Arc<dyn Sandbox> {
    match Bubblewrap::detect(BubblewrapConfig::default()) {
        Ok(bwrap) => Arc::new(bwrap),
        Err(e) => {
            assert!(
                !sandbox_required(),
                "{e}; `cargo xtask test` requires the sandbox (run `cargo xtask setup`)"
            );
            eprintln!("running the test's programs without a sandbox: {e}");
            Arc::new(Unsandboxed::new())
        }
    }
}

/// The flags that let the `replayground` binary run the test's own programs: none with
/// bubblewrap; `--unsafe-no-sandbox` without it, unless `cargo xtask test` requires the
/// sandbox (then the test fails here).
pub(crate) fn sandbox_flags() -> &'static [&'static str] {
    if bwrap_installed() {
        return &[];
    }
    assert!(
        !sandbox_required(),
        "bubblewrap (bwrap) is not installed and `cargo xtask test` requires it: run `cargo xtask setup`"
    );
    &["--unsafe-no-sandbox"]
}

/// Set by `cargo xtask test` (after `setup` installed bubblewrap): a test that needs the
/// sandbox fails without one instead of skipping or running unsandboxed.
pub(crate) fn sandbox_required() -> bool {
    std::env::var_os("REPLAYGROUND_TEST_REQUIRE_SANDBOX").is_some_and(|v| v == "1")
}

/// Waits until `condition` holds, looking every 10 ms; fails the test after `limit`.
/// Tests wait for what they need this way, never for a fixed time.
pub(crate) async fn eventually(limit: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !condition() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub(crate) fn fake(fake: Fake) -> Arc<dyn Sandbox> {
    Arc::new(FakeSandbox(fake))
}

/// A SQLite store in `dir`.
pub(crate) async fn sqlite_store(dir: &Path) -> Store {
    let url = format!("sqlite://{}", dir.join("shares.db").display());
    Store::connect(&url).await.expect("sqlite opens")
}

/// SQLite, and Postgres when `REPLAYGROUND_TEST_POSTGRES_URL` names one.
pub(crate) async fn stores(dir: &Path) -> Vec<Store> {
    let mut out = vec![sqlite_store(dir).await];
    match std::env::var("REPLAYGROUND_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => out.push(Store::connect(&url).await.expect("the test Postgres is reachable")),
        _ => eprintln!("REPLAYGROUND_TEST_POSTGRES_URL is not set, so only SQLite is tested"),
    }
    out
}

pub(crate) fn state(sandbox: Arc<dyn Sandbox>, store: Store, config: ServerConfig) -> AppState {
    let tracer = Tracer::new(sandbox, DEFAULT_PYTHON, RunLimits::default());
    AppState::new(tracer, store, config)
}

/// A server on a free loopback port; it stops when the test's shutdown begins.
pub(crate) struct Running {
    pub(crate) addr: SocketAddr,
    pub(crate) state: AppState,
    pub(crate) server: tokio::task::JoinHandle<std::io::Result<()>>,
}

pub(crate) async fn start(state: AppState) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(replayground_server::http::serve(listener, state.clone()));
    Running { addr, state, server }
}

/// A unique JSON number, so that tests sharing a Postgres database never collide.
pub(crate) fn nonce() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    (t as u64) ^ u64::from(std::process::id()).rotate_left(32)
}

/// A response read by [`http`].
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
}

/// One HTTP/1.1 request over a fresh connection (`Connection: close`, no compression):
/// enough for tests against a real listening server.
pub(crate) async fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    json_body: Option<&str>,
) -> std::io::Result<Reply> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    let body = json_body.unwrap_or("");
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if json_body.is_some() {
        let _ = write!(
            request,
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        );
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("no end of headers"))?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other("no status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Ok(Reply { status, headers, body })
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = raw.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&raw[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&raw[end + 2..end + 2 + size]);
        raw = &raw[end + 2 + size + 2..];
    }
    out
}

/// A test client's WebSocket to a [`Running`] server.
pub(crate) type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens a WebSocket to the server without greeting it.
pub(crate) async fn ws_open(running: &Running) -> Socket {
    let (socket, _) = tokio_tungstenite::connect_async(format!("ws://{}/api/ws", running.addr))
        .await
        .unwrap();
    socket
}

/// A client message numbered `seq` (a job's message: the job is `seq`).
pub(crate) fn numbered(seq: u64, body: ClientMessage) -> ClientEnvelope {
    Envelope::new(body).numbered(seq)
}

/// A `cancel` of `job`, numbered `seq`.
pub(crate) fn cancel(seq: u64, job: u64) -> ClientEnvelope {
    Envelope::job(job, ClientMessage::Cancel {}).numbered(seq)
}

/// Opens a WebSocket, says hello and returns the server's welcome.
pub(crate) async fn ws_greeted(running: &Running) -> (Socket, ServerMessage) {
    let mut socket = ws_open(running).await;
    ws_send(
        &mut socket,
        &numbered(
            1,
            ClientMessage::Hello {
                protocol: PROTOCOL_VERSION,
            },
        ),
    )
    .await;
    let welcome = ws_message(&mut socket).await.body;
    assert!(
        matches!(welcome, ServerMessage::Welcome { .. }),
        "no welcome: {welcome:?}"
    );
    (socket, welcome)
}

pub(crate) async fn ws_send(socket: &mut Socket, message: &ClientEnvelope) {
    use futures_util::SinkExt as _;
    socket
        .send(tokio_tungstenite::tungstenite::Message::Text(
            serde_json::to_string(message).unwrap().into(),
        ))
        .await
        .unwrap();
}

/// What the socket delivered next: a message, or the end of the session.
#[derive(Debug)]
pub(crate) enum Received {
    Message(ServerEnvelope),
    Closed(Option<tokio_tungstenite::tungstenite::protocol::CloseFrame>),
}

/// The next message or the close, within `wait`.
pub(crate) async fn ws_receive(socket: &mut Socket, wait: Duration) -> Received {
    use futures_util::StreamExt as _;
    use tokio_tungstenite::tungstenite::Message;
    loop {
        let next = tokio::time::timeout(wait, socket.next())
            .await
            .unwrap_or_else(|_| panic!("the server answers within {} s", wait.as_secs()));
        match next {
            Some(Ok(Message::Text(text))) => return Received::Message(serde_json::from_str(text.as_str()).unwrap()),
            Some(Ok(Message::Close(frame))) => return Received::Closed(frame),
            Some(Ok(_)) => {}
            Some(Err(_)) | None => return Received::Closed(None),
        }
    }
}

/// The next message; a closed session fails the test. Debug builds run the agent and the
/// models slowly, so the wait is generous.
pub(crate) async fn ws_message(socket: &mut Socket) -> ServerEnvelope {
    ws_message_within(socket, Duration::from_secs(120)).await
}

/// The next message within `wait`; a closed session fails the test.
pub(crate) async fn ws_message_within(socket: &mut Socket, wait: Duration) -> ServerEnvelope {
    match ws_receive(socket, wait).await {
        Received::Message(message) => message,
        Received::Closed(frame) => panic!("closed: {frame:?}"),
    }
}
