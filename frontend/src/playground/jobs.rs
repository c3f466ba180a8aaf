//! The playground's jobs on the server: a trace (streamed over the WebSocket, or one POST
//! where the socket cannot open) and a neural prediction, both through [`crate::client`].

use std::cell::RefCell;
use std::rc::Rc;

use futures::StreamExt;
use futures::channel::mpsc::UnboundedSender;
use replayground_shared::protocol::{
    ClientMessage, NeuralCapability, PredictRequest, Prediction, TraceAssembler, TraceRequest as ProtocolTraceRequest,
};
use replayground_shared::{Event, Frame, Outcome, State, StateTree, Value};
use serde::Serialize;

use crate::client::http::{RunError, error_from_body, fetch_text};
use crate::client::socket::{PageSocket, SocketEvent, send_cancel, socket_url};
use crate::client::wire::{WireEnvelope, required};

/// Where the page asks for a trace (same origin as the page).
pub const TRACE_URL: &str = "/api/trace";

/// The body of `POST /api/trace`.
#[derive(Debug, Clone, Serialize)]
pub struct TraceRequest<'a> {
    pub code: &'a str,
    pub stdin: &'a str,
}

/// Runs `code` with `stdin` under the server's tracer and indexes the trace for stepping.
pub async fn run_program(code: &str, stdin: &str) -> Result<StateTree, RunError> {
    let body = serde_json::to_string(&TraceRequest { code, stdin }).map_err(|e| RunError::Unreadable(e.to_string()))?;
    let reply = fetch_text("POST", TRACE_URL, Some(&body))
        .await
        .map_err(RunError::Network)?;
    if !reply.ok {
        return Err(error_from_body(&reply.status_line(), &reply.body));
    }
    let trace = crate::client::wire::trace_from_json(&reply.body).map_err(|e| RunError::Unreadable(e.to_string()))?;
    Ok(StateTree::new(trace)?)
}

/// How far a streamed run has got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunProgress {
    /// Events received so far.
    pub events: usize,
    /// Whether the trace streams (false: the page fell back to one POST).
    pub streaming: bool,
}

/// Stops a run started by [`run_program_streaming`]: the server is told to stop the job
/// and the run ends at once with [`RunError::Cancelled`].
#[derive(Debug, Clone, Default)]
pub struct CancelRun(Rc<RefCell<CancelState>>);

#[derive(Debug, Default)]
struct CancelState {
    cancelled: bool,
    /// The socket and job to send `cancel` for, once the job is started.
    job: Option<(web_sys::WebSocket, u64)>,
    /// Wakes the run's loop.
    wake: Option<UnboundedSender<SocketEvent>>,
}

impl CancelRun {
    pub fn cancel(&self) {
        let mut state = self.0.borrow_mut();
        state.cancelled = true;
        if let Some((socket, job)) = &state.job {
            send_cancel(socket, 3, *job);
        }
        if let Some(wake) = state.wake.take() {
            let _ = wake.unbounded_send(SocketEvent::CancelRequested);
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.borrow().cancelled
    }
}

/// A message handed to the socket, or the connection is gone.
fn sent(ok: bool) -> Result<(), RunError> {
    if ok {
        Ok(())
    } else {
        Err(RunError::Network("the connection closed".to_owned()))
    }
}

/// Runs `code` with `stdin`, the trace streaming over the WebSocket (`on_progress` after
/// each chunk); falls back to [`run_program`] when the socket cannot open. In neural mode
/// (`neural`) the server's neural debugger reads the program once it has run.
pub async fn run_program_streaming(
    code: &str,
    stdin: &str,
    neural: bool,
    cancel: &CancelRun,
    on_progress: impl Fn(RunProgress),
) -> Result<StateTree, RunError> {
    let opened = socket_url().and_then(|url| PageSocket::open(&url));
    let Some((socket, mut events)) = opened else {
        return post_instead(code, stdin, cancel, &on_progress).await;
    };
    cancel.0.borrow_mut().wake = Some(socket.waker());
    // The handshake: a socket that does not open in time (or closes first) means POST instead.
    match events.next().await {
        Some(SocketEvent::Open) => {}
        _ if cancel.is_cancelled() => return Err(RunError::Cancelled),
        _ => {
            drop(socket);
            return post_instead(code, stdin, cancel, &on_progress).await;
        }
    }
    sent(socket.hello())?;
    let job = 2;
    let mut assembler = TraceAssembler::default();
    let mut started = false;
    loop {
        let text = match events.next().await {
            Some(SocketEvent::Message(text)) => text,
            Some(SocketEvent::Open | SocketEvent::OpenTimedOut) => continue,
            _ if cancel.is_cancelled() => return Err(RunError::Cancelled),
            Some(SocketEvent::Closed(reason)) if !reason.is_empty() => return Err(RunError::Server(reason)),
            _ => return Err(RunError::Network("the connection closed during the run".to_owned())),
        };
        match read_server_message(&text)? {
            Incoming::Welcome(_) => {
                sent(socket.send(
                    job,
                    ClientMessage::Trace {
                        request: ProtocolTraceRequest {
                            code: code.to_owned(),
                            stdin: stdin.to_owned(),
                            max_steps: None,
                            neural,
                        },
                    },
                ))?;
                cancel.0.borrow_mut().job = Some((socket.web_socket(), job));
                if cancel.is_cancelled() {
                    cancel.cancel();
                }
            }
            Incoming::TraceStart { job: j } if j == job => {
                started = true;
                on_progress(RunProgress {
                    events: 0,
                    streaming: true,
                });
            }
            Incoming::TraceChunk { job: j, chunk } if j == job && started => {
                assembler.push(chunk.frames, chunk.values, chunk.events);
                on_progress(RunProgress {
                    events: assembler.events_so_far(),
                    streaming: true,
                });
            }
            Incoming::TraceEnd { job: j, end } if j == job => {
                return Ok(StateTree::new(assembler.finish(end.stdout, end.stderr, end.outcome))?);
            }
            Incoming::Cancelled { job: j } if j == job => return Err(RunError::Cancelled),
            Incoming::Error { message } => return Err(RunError::Server(message)),
            _ => {}
        }
    }
}

/// What a `predict` job reports while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PredictProgress {
    /// The server's model, once the session opened.
    Model(String),
    /// A piece of the state line candidate `sample` is writing.
    Token(u32, String),
}

/// The end of a `predict` job: the candidates and the real state (`ServerMessage::PredictEnd`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PredictEnd {
    pub predictions: Vec<Prediction>,
    pub actual: State,
}

/// Asks the server's neural debugger for `request` over a WebSocket of its own (closing
/// it stops the job on the server). Neural mode needs the socket: there is no POST form.
pub async fn predict_streaming(
    request: PredictRequest,
    cancel: &CancelRun,
    // A trait object: neural mode and predict mode share one copy of this function in the wasm.
    on_progress: &dyn Fn(PredictProgress),
) -> Result<PredictEnd, RunError> {
    let unreachable = || RunError::Network("the WebSocket did not open".to_owned());
    let (socket, mut events) = socket_url()
        .and_then(|url| PageSocket::open(&url))
        .ok_or_else(unreachable)?;
    cancel.0.borrow_mut().wake = Some(socket.waker());
    let job = 2;
    loop {
        let text = match events.next().await {
            _ if cancel.is_cancelled() => return Err(RunError::Cancelled),
            Some(SocketEvent::Open) => {
                sent(socket.hello())?;
                continue;
            }
            Some(SocketEvent::Message(text)) => text,
            Some(SocketEvent::OpenTimedOut) => continue,
            Some(SocketEvent::Closed(reason)) if !reason.is_empty() => return Err(RunError::Server(reason)),
            _ => {
                return Err(RunError::Network(
                    "the connection closed during the prediction".to_owned(),
                ));
            }
        };
        match read_server_message(&text)? {
            Incoming::Welcome(neural) => {
                if !neural.available {
                    return Err(RunError::Server(
                        neural
                            .reason
                            .unwrap_or_else(|| "Neural mode is off on this server.".to_owned()),
                    ));
                }
                on_progress(PredictProgress::Model(neural.model.unwrap_or_default()));
                sent(socket.send(
                    job,
                    ClientMessage::Predict {
                        request: request.clone(),
                    },
                ))?;
                cancel.0.borrow_mut().job = Some((socket.web_socket(), job));
            }
            Incoming::PredictToken { job: j, sample, text } if j == job => {
                on_progress(PredictProgress::Token(sample, text));
            }
            Incoming::PredictEnd { job: j, end } if j == job => return Ok(end),
            Incoming::Cancelled { job: j } if j == job => return Err(RunError::Cancelled),
            Incoming::Error { message } => return Err(RunError::Server(message)),
            _ => {}
        }
    }
}

/// The run as one POST, when the trace cannot stream; a cancelled one is dropped when
/// it returns (a request cannot be stopped midway).
async fn post_instead(
    code: &str,
    stdin: &str,
    cancel: &CancelRun,
    on_progress: &impl Fn(RunProgress),
) -> Result<StateTree, RunError> {
    on_progress(RunProgress::default());
    let result = run_program(code, stdin).await;
    if cancel.is_cancelled() {
        return Err(RunError::Cancelled);
    }
    result
}

/// A server message as the run reads it (see `ServerMessage` in the shared protocol).
///
/// Read through the flat [`WireMessage`](crate::client::wire::WireMessage) rather than as the internally tagged
/// `ServerMessage`: serde buffers such an enum and compiles a second copy of every trace
/// deserializer for the buffer, about 100 KiB of wasm.
#[derive(Debug, PartialEq)]
enum Incoming {
    Welcome(NeuralCapability),
    TraceStart {
        job: u64,
    },
    TraceChunk {
        job: u64,
        chunk: ChunkBody,
    },
    TraceEnd {
        job: u64,
        end: EndBody,
    },
    Cancelled {
        job: u64,
    },
    PredictToken {
        job: u64,
        sample: u32,
        text: String,
    },
    PredictEnd {
        job: u64,
        end: PredictEnd,
    },
    Error {
        message: String,
    },
    /// `pong`, or a message of a newer server this page does not need.
    Other,
}

#[derive(Debug, PartialEq)]
struct ChunkBody {
    frames: Vec<Frame>,
    values: Vec<Value>,
    events: Vec<Event>,
}

#[derive(Debug, PartialEq)]
struct EndBody {
    stdout: String,
    stderr: String,
    outcome: Outcome,
}

fn read_server_message(text: &str) -> Result<Incoming, RunError> {
    read_wire_message(text).map_err(|e| RunError::Unreadable(e.to_string()))
}

/// Reads any message through the one flat [`WireMessage`](crate::client::wire::WireMessage), inside its envelope.
fn read_wire_message(text: &str) -> Result<Incoming, serde_json::Error> {
    let WireEnvelope { job, body: m } = serde_json::from_str(text)?;
    let job = job.unwrap_or_default();
    Ok(match m.kind.as_str() {
        "welcome" => Incoming::Welcome(m.neural.unwrap_or_default()),
        "predict_token" => Incoming::PredictToken {
            job,
            sample: required(m.sample, "sample")?,
            text: required(m.text, "text")?,
        },
        "predict_end" => Incoming::PredictEnd {
            job,
            end: PredictEnd {
                predictions: required(m.predictions, "predictions")?,
                actual: required(m.actual, "actual")?,
            },
        },
        "trace_start" => Incoming::TraceStart { job },
        "trace_chunk" => Incoming::TraceChunk {
            job,
            chunk: ChunkBody {
                frames: required(m.frames, "frames")?,
                values: required(m.values, "values")?,
                events: required(m.events, "events")?,
            },
        },
        "trace_end" => Incoming::TraceEnd {
            job,
            end: EndBody {
                stdout: required(m.stdout, "stdout")?,
                stderr: required(m.stderr, "stderr")?,
                outcome: required(m.outcome, "outcome")?,
            },
        },
        "cancelled" => Incoming::Cancelled { job },
        "error" => Incoming::Error {
            message: required(m.message, "message")?,
        },
        _ => Incoming::Other,
    })
}

#[cfg(test)]
mod tests {
    use replayground_shared::Trace;

    use super::*;

    #[test]
    fn server_messages_read_as_the_shared_protocol_writes_them() {
        use replayground_shared::protocol::{Envelope, ErrorCode, PROTOCOL_VERSION, ServerMessage, SessionLimits};
        let read = |message: ServerMessage| {
            let envelope = Envelope::job(7, message).numbered(3);
            read_server_message(&serde_json::to_string(&envelope).unwrap()).unwrap()
        };
        let welcome = ServerMessage::Welcome {
            protocol: PROTOCOL_VERSION,
            server: "test".into(),
            limits: SessionLimits::default(),
            neural: NeuralCapability {
                available: true,
                model: Some("tiny".into()),
                reason: None,
            },
        };
        assert!(matches!(read(welcome), Incoming::Welcome(n) if n.available && n.model.as_deref() == Some("tiny")));
        let token = ServerMessage::PredictToken {
            sample: 1,
            text: "<|line|>".into(),
        };
        assert_eq!(
            read(token),
            Incoming::PredictToken {
                job: 7,
                sample: 1,
                text: "<|line|>".into()
            }
        );
        let end = ServerMessage::PredictEnd {
            predictions: Vec::new(),
            actual: State::end(),
        };
        assert!(matches!(read(end), Incoming::PredictEnd { job: 7, end } if end.actual == State::end()));
        assert_eq!(read(ServerMessage::TraceStart), Incoming::TraceStart { job: 7 });
        let trace = Trace::empty(Outcome::Finished);
        let chunk = ServerMessage::TraceChunk {
            frames: trace.frames.clone(),
            values: trace.values.clone(),
            events: trace.events.clone(),
        };
        assert!(matches!(read(chunk), Incoming::TraceChunk { job: 7, .. }));
        let end = ServerMessage::TraceEnd {
            stdout: "out".into(),
            stderr: String::new(),
            outcome: Outcome::Finished,
        };
        assert_eq!(
            read(end),
            Incoming::TraceEnd {
                job: 7,
                end: EndBody {
                    stdout: "out".into(),
                    stderr: String::new(),
                    outcome: Outcome::Finished
                }
            }
        );
        assert_eq!(read(ServerMessage::Cancelled), Incoming::Cancelled { job: 7 });
        let error = ServerMessage::Error {
            reply_to: None,
            code: ErrorCode::Busy,
            message: "Busy; try again.".into(),
            retry_after_s: Some(2),
        };
        assert_eq!(
            read(error),
            Incoming::Error {
                message: "Busy; try again.".into()
            }
        );
        assert_eq!(read(ServerMessage::Pong { reply_to: 1 }), Incoming::Other);
        assert!(read_server_message("not json").is_err());
        // A message without its envelope is not one.
        assert!(read_server_message(r#"{"type":"trace_start","job":7}"#).is_err());
    }

    #[test]
    fn the_request_body_has_code_and_stdin() {
        let json = serde_json::to_string(&TraceRequest {
            code: "print(1)",
            stdin: "",
        })
        .unwrap();
        assert_eq!(json, r#"{"code":"print(1)","stdin":""}"#);
    }
}
