//! `GET /api/ws`: a WebSocket session that runs jobs and streams their results.
//!
//! The session is one `tokio::select!` loop over a small [`Event`] enum. The client must
//! say `hello` with [`PROTOCOL_VERSION`] within the handshake timeout; afterwards it may
//! start jobs (`trace`), `cancel` them and `ping`. A job runs in its own task and streams
//! `trace_start`, `trace_chunk`s while the program runs, then one of `trace_end`,
//! `cancelled` or `error`. New job kinds (neural debugger, reproduction agent) add a
//! [`JobSpec`] variant and a task; the session loop does not change.
//!
//! Memory is bounded per session: one writer task drains two bounded queues, `control`
//! (answers to the client's messages; a client that fills it by not reading is
//! disconnected) and `data` (job output; a full queue makes jobs wait, and their
//! output waits in the tracer's assembler, itself bounded by the run limits). A client
//! that accepts nothing for `send_timeout` is disconnected.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::extract::{Extension, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::stream::SplitSink;
use futures_util::{SinkExt as _, StreamExt as _};
use replayground_shared::protocol::{
    ClientEnvelope, ClientMessage, Envelope, ErrorCode, PROTOCOL_VERSION, ServerEnvelope, ServerMessage, SessionLimits,
};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::ClientIp;
use super::error::ApiError;
use super::repro::ReproJob;
use crate::app::{AppState, retry_after_secs};
use crate::jobs::{BUSY_RETRY_AFTER_S, QueueError, RequestError, TraceJob};

mod jobs;

use jobs::predict::PredictJob;
use jobs::{JobContext, JobSpec};

/// A trace that runs longer than this between chunks streams what it has so far.
const LIVE_FLUSH: Duration = Duration::from_millis(100);
/// After the session decides to close, queued messages and the close frame get this long.
const CLOSE_FLUSH: Duration = Duration::from_secs(2);
/// The socket's initial read buffer. tungstenite's default (128 KiB, zero-filled up front)
/// made an idle session cost ~140 KiB of RSS (`replayground-load idle`); larger messages
/// grow the buffer as they arrive.
const READ_BUFFER_BYTES: usize = 4 * 1024;

/// `GET /api/ws`.
#[tracing::instrument(skip_all)]
/// A browser's `Origin` must be this server (the `Host` it asked for) or an allowed
/// origin; clients that send none (the CLI, tests, curl) are not browsers and may connect.
fn same_origin(headers: &HeaderMap, allowed: &[String]) -> Result<(), String> {
    let Some(origin) = headers.get(axum::http::header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin.to_str().unwrap_or("an unreadable origin");
    let host = headers.get(axum::http::header::HOST).and_then(|h| h.to_str().ok());
    let origin_host = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    let own = matches!((origin_host, host), (Some(o), Some(h)) if o.eq_ignore_ascii_case(h));
    if own || allowed.iter().any(|a| a.trim_end_matches('/') == origin) {
        Ok(())
    } else {
        Err(origin.to_owned())
    }
}

pub async fn upgrade(
    State(state): State<AppState>,
    client: Option<Extension<ClientIp>>,
    headers: HeaderMap,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    if let Err(origin) = same_origin(&headers, &state.config.allowed_origins) {
        // Another site's page would otherwise run programs with its visitors' sessions.
        return ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "This WebSocket was opened from another site ({origin}); open the playground from this server, or start it with --allowed-origin {origin}."
            ),
        )
        .into_response();
    }
    let ws = match ws {
        Ok(ws) => ws,
        Err(rejection) => {
            return ApiError::new(
                rejection.status(),
                "GET /api/ws is a WebSocket endpoint; connect with a WebSocket client.",
            )
            .into_response();
        }
    };
    if state.shutdown.draining.is_cancelled() {
        return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "The server is shutting down; reconnect in a moment.",
        )
        .retry_after(5)
        .into_response();
    }
    let ip = client.map_or(IpAddr::from([0, 0, 0, 0]), |Extension(ClientIp(ip))| ip);
    let session_id = headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
        .to_owned();
    let max = state.config.ws.max_message_bytes;
    ws.max_message_size(max)
        .max_frame_size(max)
        .read_buffer_size(READ_BUFFER_BYTES)
        .on_failed_upgrade(|e| tracing::warn!("WebSocket upgrade failed: {e}"))
        .on_upgrade(move |socket| {
            let tasks = state.shutdown.tasks.clone();
            tasks.track_future(run_session(socket, state, ip, session_id))
        })
}

/// What a session reacts to.
#[derive(Debug)]
enum Event {
    Inbound(Option<Result<Message, axum::Error>>),
    JobEnded(u64),
    HandshakeTimeout,
    Idle,
    SessionOver,
    WriterGone(WriterEnd),
    Draining,
}

/// What the loop does next.
#[derive(Debug)]
enum Flow {
    Continue,
    /// Close with this code and reason (queued messages are flushed first).
    Close(u16, String),
    /// The connection is gone; just clean up.
    Gone,
}

/// How the writer task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WriterEnd {
    Closed,
    Disconnected,
    Stalled,
}

/// A client message, checked: the domain form of [`ClientMessage`].
#[derive(Debug)]
enum Request {
    Hello {
        protocol: u32,
    },
    Job {
        id: u64,
        spec: Result<JobSpec, RequestError>,
    },
    /// `None`: the envelope named no job.
    Cancel {
        job: Option<u64>,
    },
    Ping,
}

impl From<ClientEnvelope> for Request {
    fn from(Envelope { seq, job, body }: ClientEnvelope) -> Self {
        match body {
            ClientMessage::Hello { protocol } => Self::Hello { protocol },
            ClientMessage::Trace { request } => Self::Job {
                id: seq,
                spec: TraceJob::try_from(request).map(JobSpec::Trace),
            },
            ClientMessage::Repro { request } => Self::Job {
                id: seq,
                spec: ReproJob::try_from(request).map(|job| JobSpec::Repro(Box::new(job))),
            },
            ClientMessage::Predict { request } => Self::Job {
                id: seq,
                spec: PredictJob::try_from(request).map(JobSpec::Predict),
            },
            ClientMessage::Cancel {} => Self::Cancel { job },
            ClientMessage::Ping {} => Self::Ping,
        }
    }
}

struct Session {
    state: AppState,
    ip: IpAddr,
    control: mpsc::Sender<ServerEnvelope>,
    data: mpsc::Sender<ServerEnvelope>,
    ended_tx: mpsc::UnboundedSender<u64>,
    /// Cancels every job of the session (a child of the server's `cancel_jobs`).
    cancel_all: CancellationToken,
    jobs: HashMap<u64, CancellationToken>,
    last_seq: Option<u64>,
    greeted: bool,
    draining: bool,
}

/// Counts the session in `websockets_active` for as long as it lives.
struct ActiveGuard(AppState);

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.0.metrics.websockets_active.dec();
    }
}

#[tracing::instrument(skip_all, fields(session_id = %session_id, client = %ip))]
async fn run_session(socket: WebSocket, state: AppState, ip: IpAddr, session_id: String) {
    state.metrics.websockets_active.inc();
    state.metrics.websocket_sessions.inc();
    let _active = ActiveGuard(state.clone());
    let config = state.config.ws.clone();
    let (sink, mut stream) = socket.split();
    let (control, control_rx) = mpsc::channel(config.outbound_queue.max(2));
    let (data, data_rx) = mpsc::channel(config.outbound_queue.max(2));
    let (close_tx, close_rx) = oneshot::channel();
    let mut writer = tokio::spawn(write_loop(sink, control_rx, data_rx, close_rx, config.send_timeout));
    let (ended_tx, mut ended_rx) = mpsc::unbounded_channel();
    let mut session = Session {
        cancel_all: state.shutdown.cancel_jobs.child_token(),
        state: state.clone(),
        ip,
        control,
        data,
        ended_tx,
        jobs: HashMap::new(),
        last_seq: None,
        greeted: false,
        draining: false,
    };
    tracing::debug!("session opened");

    let opened = tokio::time::Instant::now();
    let handshake_deadline = opened + config.handshake_timeout;
    let session_deadline = opened + config.session_timeout;
    let mut idle_deadline = opened + config.idle_timeout;
    let draining = state.shutdown.draining.clone();
    let flow = loop {
        let event = tokio::select! {
            message = stream.next() => Event::Inbound(message),
            Some(job) = ended_rx.recv() => Event::JobEnded(job),
            () = tokio::time::sleep_until(handshake_deadline), if !session.greeted => Event::HandshakeTimeout,
            () = tokio::time::sleep_until(idle_deadline), if session.jobs.is_empty() => Event::Idle,
            () = tokio::time::sleep_until(session_deadline) => Event::SessionOver,
            end = &mut writer => Event::WriterGone(end.unwrap_or(WriterEnd::Disconnected)),
            () = draining.cancelled(), if !session.draining => Event::Draining,
        };
        if matches!(event, Event::Inbound(Some(Ok(_)))) {
            idle_deadline = tokio::time::Instant::now() + config.idle_timeout;
        }
        let writer_gone = matches!(event, Event::WriterGone(_));
        match session.handle(event, &config) {
            Flow::Continue => {}
            flow => break (flow, writer_gone),
        }
    };

    session.cancel_all.cancel();
    let (flow, writer_gone) = flow;
    match flow {
        Flow::Close(code, reason) => {
            tracing::info!(code, %reason, "closing the session");
            let _ = close_tx.send(CloseFrame {
                code,
                reason: truncate_reason(&reason).into(),
            });
        }
        Flow::Gone | Flow::Continue => drop(close_tx),
    }
    // Drop the session's senders so that the writer ends once the close frame is out.
    drop(session);
    if !writer_gone
        && tokio::time::timeout(CLOSE_FLUSH + Duration::from_secs(1), &mut writer)
            .await
            .is_err()
    {
        writer.abort();
    }
    tracing::debug!(seconds = opened.elapsed().as_secs_f64(), "session ended");
}

impl Session {
    fn handle(&mut self, event: Event, config: &crate::app::WsConfig) -> Flow {
        match event {
            Event::Inbound(None) => Flow::Gone,
            Event::Inbound(Some(Err(e))) => {
                if is_too_long(e) {
                    Flow::Close(
                        close_code::SIZE,
                        format!("a message was larger than {} KiB", config.max_message_bytes / 1024),
                    )
                } else {
                    Flow::Gone
                }
            }
            Event::Inbound(Some(Ok(message))) => self.inbound(message, config),
            Event::JobEnded(job) => {
                self.jobs.remove(&job);
                if self.draining && self.jobs.is_empty() {
                    Flow::Close(close_code::AWAY, "the server is shutting down".into())
                } else {
                    Flow::Continue
                }
            }
            Event::HandshakeTimeout => {
                let message = format!(
                    "No hello arrived within {} s; send {{\"seq\": 1, \"body\": {{\"type\": \"hello\", \"protocol\": {PROTOCOL_VERSION}}}}} first.",
                    config.handshake_timeout.as_secs_f64()
                );
                self.reply(error(None, None, ErrorCode::Handshake, message));
                Flow::Close(close_code::POLICY, "no hello in time".into())
            }
            Event::Idle => Flow::Close(
                close_code::NORMAL,
                format!("idle for {} s", config.idle_timeout.as_secs()),
            ),
            Event::SessionOver => Flow::Close(
                close_code::NORMAL,
                format!(
                    "session limit of {} s reached; reconnect",
                    config.session_timeout.as_secs()
                ),
            ),
            Event::WriterGone(end) => {
                if end == WriterEnd::Stalled {
                    tracing::warn!(
                        "the client accepted nothing for {} s; dropping the session",
                        config.send_timeout.as_secs()
                    );
                }
                Flow::Gone
            }
            Event::Draining => {
                self.draining = true;
                if self.jobs.is_empty() {
                    Flow::Close(close_code::AWAY, "the server is shutting down".into())
                } else {
                    Flow::Continue
                }
            }
        }
    }

    fn inbound(&mut self, message: Message, config: &crate::app::WsConfig) -> Flow {
        let text = match message {
            Message::Text(text) => text,
            Message::Binary(_) => {
                return self.bad_message(None, "Send JSON text messages, not binary ones.".into());
            }
            Message::Ping(_) | Message::Pong(_) => return Flow::Continue,
            Message::Close(_) => return Flow::Close(close_code::NORMAL, String::new()),
        };
        let message: ClientEnvelope = match serde_json::from_str(text.as_str()) {
            Ok(message) => message,
            Err(e) => {
                let seq = serde_json::from_str::<serde_json::Value>(text.as_str())
                    .ok()
                    .and_then(|v| v.get("seq").and_then(serde_json::Value::as_u64));
                return self.bad_message(
                    seq,
                    format!("The message is not a client message ({e}); send {{\"seq\": N, \"body\": {{\"type\": ...}}}} as the protocol's ClientMessage says."),
                );
            }
        };
        let seq = message.seq;
        if let Some(last) = self.last_seq
            && seq <= last
        {
            return self.bad_message(
                Some(seq),
                format!("Message seq {seq} is not greater than the previous seq {last}; number messages in increasing order."),
            );
        }
        self.last_seq = Some(seq);
        match (self.greeted, Request::from(message)) {
            (false, Request::Hello { protocol }) if protocol == PROTOCOL_VERSION => {
                self.greeted = true;
                self.reply(Envelope::new(ServerMessage::Welcome {
                    protocol: PROTOCOL_VERSION,
                    server: format!("replayground {}", env!("CARGO_PKG_VERSION")),
                    limits: SessionLimits {
                        max_message_bytes: config.max_message_bytes as u64,
                        idle_timeout_s: config.idle_timeout.as_secs(),
                        session_timeout_s: config.session_timeout.as_secs(),
                        max_jobs: config.max_jobs_per_session as u32,
                        events_per_chunk: config.events_per_chunk as u32,
                    },
                    neural: self.state.neural.capability(),
                }))
            }
            (false, Request::Hello { protocol }) => {
                self.reply(error(
                    None,
                    Some(seq),
                    ErrorCode::Handshake,
                    format!("This server speaks protocol {PROTOCOL_VERSION}, not {protocol}; reload the page."),
                ));
                Flow::Close(close_code::POLICY, "unsupported protocol version".into())
            }
            (false, _) => {
                self.reply(error(
                    None,
                    Some(seq),
                    ErrorCode::Handshake,
                    "The first message must be hello.".into(),
                ));
                Flow::Close(close_code::POLICY, "the first message must be hello".into())
            }
            (true, Request::Hello { .. }) => self.bad_message(Some(seq), "This session already said hello.".into()),
            (true, Request::Ping) => self.reply(Envelope::new(ServerMessage::Pong { reply_to: seq })),
            (true, Request::Cancel { job: None }) => self.bad_message(
                Some(seq),
                "A cancel must name its job: set the envelope's \"job\".".into(),
            ),
            (true, Request::Cancel { job: Some(job) }) => match self.jobs.get(&job) {
                Some(token) => {
                    token.cancel();
                    Flow::Continue
                }
                None => self.reply(error(
                    None,
                    Some(seq),
                    ErrorCode::UnknownJob,
                    format!("No job {job} is running in this session."),
                )),
            },
            (true, Request::Job { id, spec }) => self.start_job(id, spec, config),
        }
    }

    fn start_job(&mut self, id: u64, spec: Result<JobSpec, RequestError>, config: &crate::app::WsConfig) -> Flow {
        let refuse = |code, message: String| error(Some(id), Some(id), code, message);
        let spec = match spec {
            Ok(JobSpec::Repro(mut job)) => match job.resolve(&self.state.projects) {
                Ok(()) => JobSpec::Repro(job),
                Err(m) => return self.reply(refuse(ErrorCode::BadMessage, m)),
            },
            Ok(spec) => spec,
            Err(RequestError::TooLarge(m)) => return self.reply(refuse(ErrorCode::TooLarge, m)),
            Err(RequestError::Invalid(m)) => return self.reply(refuse(ErrorCode::BadMessage, m)),
        };
        if self.draining {
            return self.reply(refuse(ErrorCode::ShuttingDown, QueueError::ShuttingDown.to_string()));
        }
        if self.jobs.len() >= config.max_jobs_per_session {
            return self.reply(refuse(
                ErrorCode::Busy,
                format!(
                    "This session already runs {} jobs; wait for one to end or cancel it.",
                    self.jobs.len()
                ),
            ));
        }
        if let Some(limiter) = &self.state.limiter
            && let Err(wait) = limiter.check(self.ip)
        {
            self.state.metrics.rejected("rate_limited");
            let seconds = retry_after_secs(wait);
            let mut refusal = refuse(
                ErrorCode::RateLimited,
                format!("Too many programs from your address; wait {seconds} s and try again."),
            );
            if let ServerMessage::Error { retry_after_s, .. } = &mut refusal.body {
                *retry_after_s = Some(seconds);
            }
            return self.reply(refusal);
        }
        let token = self.cancel_all.child_token();
        self.jobs.insert(id, token.clone());
        let context = JobContext {
            state: self.state.clone(),
            id,
            data: self.data.clone(),
            cancel: token,
            events_per_chunk: config.events_per_chunk.max(1),
            client: self.ip,
        };
        let ended = self.ended_tx.clone();
        let job = context.run(spec);
        self.state.shutdown.tasks.spawn(async move {
            job.await;
            let _ = ended.send(id);
        });
        Flow::Continue
    }

    fn bad_message(&mut self, seq: Option<u64>, message: String) -> Flow {
        if self.greeted {
            self.reply(error(None, seq, ErrorCode::BadMessage, message))
        } else {
            self.reply(error(None, seq, ErrorCode::Handshake, message));
            Flow::Close(close_code::POLICY, "the first message must be hello".into())
        }
    }

    /// Queues an answer; a client that lets the answers pile up is disconnected.
    fn reply(&mut self, message: ServerEnvelope) -> Flow {
        match self.control.try_send(message) {
            Ok(()) => Flow::Continue,
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::warn!("the client is not reading its messages; dropping the session");
                Flow::Close(close_code::POLICY, "the client is not reading its messages".into())
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Flow::Gone,
        }
    }
}

fn error(job: Option<u64>, reply_to: Option<u64>, code: ErrorCode, message: String) -> ServerEnvelope {
    let retry_after_s = (code == ErrorCode::Busy && job.is_some()).then_some(BUSY_RETRY_AFTER_S);
    Envelope {
        seq: 0,
        job,
        body: ServerMessage::Error {
            reply_to,
            code,
            message,
            retry_after_s,
        },
    }
}

/// A close reason must fit in 123 bytes.
fn truncate_reason(reason: &str) -> String {
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    reason[..end].to_owned()
}

fn is_too_long(e: axum::Error) -> bool {
    use tokio_tungstenite::tungstenite::Error;
    e.into_inner()
        .downcast_ref::<Error>()
        .is_some_and(|e| matches!(e, Error::Capacity(_)))
}

/// Sends queued messages, numbering them, until told to close or the client is gone.
async fn write_loop(
    mut sink: SplitSink<WebSocket, Message>,
    mut control: mpsc::Receiver<ServerEnvelope>,
    mut data: mpsc::Receiver<ServerEnvelope>,
    mut close: oneshot::Receiver<CloseFrame>,
    send_timeout: Duration,
) -> WriterEnd {
    let mut seq = 0u64;
    loop {
        let next = tokio::select! {
            biased;
            frame = &mut close => {
                return close_with(sink, &mut control, &mut data, &mut seq, frame.ok()).await;
            }
            Some(message) = control.recv() => message,
            Some(message) = data.recv() => message,
        };
        seq += 1;
        let Ok(text) = serde_json::to_string(&next.numbered(seq)) else {
            continue;
        };
        let sent = tokio::select! {
            biased;
            frame = &mut close => Err(frame.ok()),
            sent = tokio::time::timeout(send_timeout, sink.send(Message::Text(text.into()))) => Ok(sent),
        };
        match sent {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(_))) => return WriterEnd::Disconnected,
            Ok(Err(_)) => return WriterEnd::Stalled,
            Err(frame) => return close_with(sink, &mut control, &mut data, &mut seq, frame).await,
        }
    }
}

/// Flushes what is queued, then sends the close frame; all within [`CLOSE_FLUSH`].
async fn close_with(
    mut sink: SplitSink<WebSocket, Message>,
    control: &mut mpsc::Receiver<ServerEnvelope>,
    data: &mut mpsc::Receiver<ServerEnvelope>,
    seq: &mut u64,
    frame: Option<CloseFrame>,
) -> WriterEnd {
    let flush = async {
        while let Ok(message) = control.try_recv().or_else(|_| data.try_recv()) {
            *seq += 1;
            if let Ok(text) = serde_json::to_string(&message.numbered(*seq)) {
                sink.send(Message::Text(text.into())).await?;
            }
        }
        sink.send(Message::Close(frame)).await?;
        sink.close().await
    };
    match tokio::time::timeout(CLOSE_FLUSH, flush).await {
        Ok(Ok(())) => WriterEnd::Closed,
        Ok(Err(_)) => WriterEnd::Disconnected,
        Err(_) => WriterEnd::Stalled,
    }
}
