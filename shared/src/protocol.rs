//! The wire protocol between the browser (or any client) and the server.
//!
//! HTTP bodies and WebSocket messages are JSON. Every WebSocket message, either way, is
//! an [`Envelope`]: `{"seq": 3, "job": 2, "body": {"type": "trace_end", ...}}`, its
//! number, the job it concerns (when it concerns one) and its body, internally tagged
//! (`"type"`). The first client message must be a [`ClientMessage::Hello`] naming
//! [`PROTOCOL_VERSION`].
//!
//! Numbers: the client numbers its messages with strictly increasing `seq` values of its
//! choosing; a job (a `trace`, `repro` or `predict` message) is named by its message's
//! `seq`, which every answer carries as `job`, and a `cancel` names its job the same way.
//! The server numbers its own messages 1, 2, 3, ... in the order they are sent, and names
//! the client message it answers in `reply_to` (or `job`).
//!
//! A trace job's answer is `trace_start`, then `trace_chunk`s, then exactly one of
//! `trace_end`, `cancelled` or `error`.

use serde::{Deserialize, Serialize};

use crate::repro::{AgentEvent, ReproRequest};
use crate::state::State;
use crate::trace::{Event, Frame, Outcome, Trace, Value};

/// Bumped whenever a message changes incompatibly.
pub const PROTOCOL_VERSION: u32 = 2;

/// Largest program the server accepts, in bytes.
pub const MAX_CODE_BYTES: usize = 100 * 1024;
/// Largest stdin the server accepts, in bytes.
pub const MAX_STDIN_BYTES: usize = 100 * 1024;
/// Largest share payload, in bytes of JSON.
pub const MAX_SHARE_PAYLOAD_BYTES: usize = 1024 * 1024;

/// `POST /api/trace` and the WebSocket `trace` message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceRequest {
    pub code: String,
    #[serde(default)]
    pub stdin: String,
    /// At most this many events (the server caps it at its own limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// The page is in neural mode (WebSocket only): once the program has run, the
    /// server's neural debugger reads it while the page shows the run, so that the
    /// first prediction does not wait 4–7 s for a code LLM to read the program.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub neural: bool,
}

impl TraceRequest {
    /// Checks sizes before any work is done; the message says what to change.
    pub fn check(&self) -> Result<(), String> {
        use crate::text::size_and_limit;
        if self.code.len() > MAX_CODE_BYTES {
            return Err(format!(
                "The program is {}. Trace a smaller program.",
                size_and_limit(self.code.len(), MAX_CODE_BYTES)
            ));
        }
        if self.stdin.len() > MAX_STDIN_BYTES {
            return Err(format!(
                "The input is {}. Give a shorter input.",
                size_and_limit(self.stdin.len(), MAX_STDIN_BYTES)
            ));
        }
        if self.max_steps == Some(0) {
            return Err("max_steps must be at least 1.".to_owned());
        }
        Ok(())
    }
}

/// Most candidates one `predict` job samples.
pub const MAX_PREDICT_SAMPLES: u32 = 8;

/// The WebSocket `predict` message: ask the neural debugger where `action` leads from a
/// stop of the program's run, beside what really happens there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PredictRequest {
    pub code: String,
    #[serde(default)]
    pub stdin: String,
    /// The stop to predict from: an event index of the run, or the number of events
    /// for the stop after the last one (the timeline's numbering).
    pub at_event: u32,
    /// A debugger action as the CLI names it: `step_over`, `breakpoint:12`, `reverse_step_into`, ...
    pub action: String,
    /// Candidates to sample (1 = the model's most likely answer); at most [`MAX_PREDICT_SAMPLES`].
    #[serde(default = "one_sample")]
    pub samples: u32,
    /// Breakpoints set in the page: `continue` stops there in the real run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub breakpoints: Vec<u32>,
}

fn one_sample() -> u32 {
    1
}

/// One candidate of a `predict` job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prediction {
    pub sample: u32,
    /// The state line the model wrote, in the trace language.
    pub text: String,
    /// The parsed state (reprs normalised as the trace language writes them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<State>,
    /// Why the text is not a state (then it counts as wrong).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parse_error: Option<String>,
    /// Whether it equals the real state, field for field.
    pub matches: bool,
    /// Reverse actions: whether the real run could have been in this state, i.e. the
    /// mirrored forward action from it really leads to the stop asked about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistent: Option<bool>,
    pub tokens: u32,
    pub elapsed_ms: u64,
}

/// Whether this server can run the neural debugger, announced in [`ServerMessage::Welcome`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeuralCapability {
    pub available: bool,
    /// The model's name (its directory) when one is loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Why neural mode is unavailable, as a sentence for the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Every error body of the HTTP API: one clear sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    pub error: String,
}

/// What kind of failure a WebSocket [`ServerMessage::Error`] reports, for clients that
/// react differently (retry when busy, give up on a bad request).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The message could not be read (not JSON, unknown type or field, wrong types).
    BadMessage,
    /// The handshake failed: no `hello` first, or an unsupported protocol version.
    Handshake,
    /// A program, input or message is over a size limit.
    TooLarge,
    /// Every sandbox job slot and the wait queue are full; retry after `retry_after_s`.
    Busy,
    /// This client sent too many jobs too quickly; retry after `retry_after_s`.
    RateLimited,
    /// The program ran, but its trace could not be produced (the tracer crashed).
    CannotTrace,
    /// The sandbox is not usable on the server.
    NoSandbox,
    /// `cancel` named a job that is not running.
    UnknownJob,
    /// The server is shutting down and takes no new jobs.
    ShuttingDown,
    /// A `predict` job, but the server has no neural debugger model loaded.
    NoModel,
    /// Anything else.
    #[default]
    Internal,
}

/// Limits of a WebSocket session, announced in [`ServerMessage::Welcome`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionLimits {
    /// Largest client message, in bytes.
    pub max_message_bytes: u64,
    /// The session is closed after this many seconds without a message or a running job.
    pub idle_timeout_s: u64,
    /// The session is closed this many seconds after it opened.
    pub session_timeout_s: u64,
    /// Jobs that may run at once in this session.
    pub max_jobs: u32,
    /// Most events in one `trace_chunk`.
    pub events_per_chunk: u32,
}

/// What a share link holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShareKind {
    /// A playground view: code, stdin, breakpoints, step.
    Playground,
    /// A reproduction agent transcript and its script.
    Repro,
}

impl ShareKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Playground => "playground",
            Self::Repro => "repro",
        }
    }
}

/// `POST /api/share`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShareRequest {
    pub kind: ShareKind,
    pub payload: serde_json::Value,
}

/// `201` answer to `POST /api/share`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareCreated {
    pub id: String,
    pub url: String,
}

/// `GET /api/share/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedItem {
    pub kind: ShareKind,
    pub payload: serde_json::Value,
    /// RFC 3339 UTC.
    pub created_at: String,
}

/// A WebSocket message: its number, the job it concerns, and what it says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope<B> {
    /// The sender's number for this message (see the module header).
    pub seq: u64,
    /// The job the message concerns: set on every answer of a job and on `cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<u64>,
    pub body: B,
}

impl<B> Envelope<B> {
    /// A message about no job, numbered when it is sent.
    pub fn new(body: B) -> Self {
        Self {
            seq: 0,
            job: None,
            body,
        }
    }

    /// A message about `job`, numbered when it is sent.
    pub fn job(job: u64, body: B) -> Self {
        Self {
            seq: 0,
            job: Some(job),
            body,
        }
    }

    /// The same message numbered `seq`.
    #[must_use]
    pub fn numbered(self, seq: u64) -> Self {
        Self { seq, ..self }
    }
}

/// What the client sends.
pub type ClientEnvelope = Envelope<ClientMessage>;
/// What the server sends.
pub type ServerEnvelope = Envelope<ServerMessage>;

/// A message from the client on the WebSocket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMessage {
    /// Must be first, within the handshake timeout.
    Hello {
        protocol: u32,
    },
    /// Trace a program; the answer streams as `trace_*` messages whose `job` is this
    /// message's `seq`.
    Trace {
        request: TraceRequest,
    },
    /// Run the reproduction agent; its events stream as `agent` messages (`job` = this
    /// message's `seq`), ending with a `finished` or `failed` event (or `cancelled`).
    Repro {
        request: ReproRequest,
    },
    /// Ask the neural debugger for the stop an action leads to; the answer streams as
    /// `predict_token`s and ends with `predict_end` (or `cancelled` / `error`).
    Predict {
        request: PredictRequest,
    },
    /// Stop the running job the envelope's `job` names. (Braces, not a unit variant: serde
    /// refuses unknown fields only in struct variants.)
    Cancel {},
    Ping {},
}

/// A message from the server on the WebSocket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    Welcome {
        protocol: u32,
        server: String,
        #[serde(default)]
        limits: SessionLimits,
        #[serde(default)]
        neural: NeuralCapability,
    },
    /// A trace starts: its frames are complete once `trace_end` arrives.
    TraceStart,
    /// The next events of the trace, in order, with the values they introduce.
    TraceChunk {
        frames: Vec<Frame>,
        values: Vec<Value>,
        events: Vec<Event>,
    },
    /// The trace is complete.
    TraceEnd {
        stdout: String,
        stderr: String,
        outcome: Outcome,
    },
    /// One step of a reproduction job.
    Agent { event: AgentEvent },
    /// A piece of the state line the model is writing for candidate `sample`.
    PredictToken { sample: u32, text: String },
    /// A `predict` job's answer: the candidates beside the real state the action leads to.
    PredictEnd {
        predictions: Vec<Prediction>,
        actual: State,
    },
    /// A job was cancelled at the client's request.
    Cancelled,
    /// The answer to the client's `ping` number `reply_to`.
    Pong {
        #[serde(default)]
        reply_to: u64,
    },
    /// Something went wrong; the envelope's `job` names the job when it concerns one (and
    /// ends it), `reply_to` the client message it answers when that message could be read.
    Error {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reply_to: Option<u64>,
        #[serde(default)]
        code: ErrorCode,
        message: String,
        /// For `busy` and `rate_limited`: seconds to wait before trying again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_s: Option<u64>,
    },
}

/// Reassembles a trace from `trace_*` messages.
#[derive(Debug, Default)]
pub struct TraceAssembler {
    frames: Vec<Frame>,
    values: Vec<Value>,
    events: Vec<Event>,
}

impl TraceAssembler {
    /// Adds a chunk's contents (chunks append; they never rewrite).
    pub fn push(&mut self, frames: Vec<Frame>, values: Vec<Value>, events: Vec<Event>) {
        self.frames.extend(frames);
        self.values.extend(values);
        self.events.extend(events);
    }

    pub fn events_so_far(&self) -> usize {
        self.events.len()
    }

    pub fn finish(self, stdout: String, stderr: String, outcome: Outcome) -> Trace {
        Trace {
            version: crate::trace::TRACE_FORMAT_VERSION,
            events: self.events,
            frames: self.frames,
            values: self.values,
            stdout,
            stderr,
            outcome,
        }
    }
}

/// The contents of one `trace_chunk`: new frames, new values, then events.
pub type ChunkContents = (Vec<Frame>, Vec<Value>, Vec<Event>);

/// How much of a trace has been sent: the first `frames`, `values` and `events`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceProgress {
    pub frames: usize,
    pub values: usize,
    pub events: usize,
}

/// Splits a trace into chunk contents of at most `events_per_chunk` events, each
/// carrying the frames and values first needed by its events.
pub fn chunk_trace(trace: &Trace, events_per_chunk: usize) -> Vec<ChunkContents> {
    let mut out = chunk_trace_from(trace, TraceProgress::default(), events_per_chunk);
    if out.is_empty() {
        out.push((Vec::new(), Vec::new(), Vec::new()));
    }
    out
}

/// Like [`chunk_trace`], for the part of `trace` after `sent` (a prefix already sent,
/// e.g. while the program ran). Empty when nothing is left.
pub fn chunk_trace_from(trace: &Trace, sent: TraceProgress, events_per_chunk: usize) -> Vec<ChunkContents> {
    let per = events_per_chunk.max(1);
    let mut out = Vec::new();
    let (mut frames_sent, mut values_sent) = (sent.frames.min(trace.frames.len()), sent.values.min(trace.values.len()));
    let events = trace.events.get(sent.events..).unwrap_or_default();
    for events in events.chunks(per) {
        let mut max_frame = frames_sent;
        let mut max_value = values_sent;
        for e in events {
            max_frame = max_frame.max(e.frame as usize + 1);
            for id in e.locals.iter().map(|b| b.value).chain(e.value) {
                max_value = max_value.max(id as usize + 1);
            }
        }
        // Values refer only to values interned before them, so a prefix suffices.
        let max_value = closure_end(trace, values_sent, max_value);
        out.push((
            trace.frames[frames_sent..max_frame].to_vec(),
            trace.values[values_sent..max_value].to_vec(),
            events.to_vec(),
        ));
        frames_sent = max_frame;
        values_sent = max_value;
    }
    if frames_sent < trace.frames.len() || values_sent < trace.values.len() {
        out.push((
            trace.frames[frames_sent..].to_vec(),
            trace.values[values_sent..].to_vec(),
            Vec::new(),
        ));
    }
    out
}

/// Extends a value prefix end so that every value in it has its children in it too.
fn closure_end(trace: &Trace, start: usize, mut end: usize) -> usize {
    let mut i = start;
    while i < end {
        for child in trace.values[i].shape.children() {
            end = end.max(child as usize + 1);
        }
        i += 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Binding, EventKind, Shape};

    #[test]
    fn client_messages_are_tagged_and_strict() {
        let m: ClientEnvelope = serde_json::from_str(r#"{"seq":1,"body":{"type":"hello","protocol":2}}"#).unwrap();
        assert_eq!(m, Envelope::new(ClientMessage::Hello { protocol: 2 }).numbered(1));
        let extra = r#"{"seq":1,"body":{"type":"hello","protocol":2,"x":2}}"#;
        assert!(serde_json::from_str::<ClientEnvelope>(extra).is_err());
        assert!(serde_json::from_str::<ClientEnvelope>(r#"{"seq":1,"body":{"type":"launch"}}"#).is_err());
        assert!(serde_json::from_str::<ClientEnvelope>(r#"{"type":"hello","seq":1,"protocol":1}"#).is_err());
        let cancel: ClientEnvelope = serde_json::from_str(r#"{"seq":5,"job":2,"body":{"type":"cancel"}}"#).unwrap();
        assert_eq!(
            (cancel.seq, cancel.job, cancel.body),
            (5, Some(2), ClientMessage::Cancel {})
        );
        for extra in [
            r#"{"seq":6,"body":{"type":"ping","extra":true}}"#,
            r#"{"seq":6,"body":{"type":"ping"},"extra":true}"#,
        ] {
            assert!(serde_json::from_str::<ClientEnvelope>(extra).is_err(), "{extra}");
        }
    }

    #[test]
    fn trace_request_limits_are_explained() {
        let big = TraceRequest {
            code: "x".repeat(MAX_CODE_BYTES + 1),
            stdin: String::new(),
            max_steps: None,
            neural: false,
        };
        assert!(big.check().unwrap_err().contains("limit is 102,400 bytes (100 KB)"));
        let zero = TraceRequest {
            code: "x".into(),
            stdin: String::new(),
            max_steps: Some(0),
            neural: false,
        };
        assert!(zero.check().is_err());
    }

    #[test]
    fn chunks_reassemble_to_the_same_trace() {
        let mut t = Trace::empty(Outcome::Finished);
        for f in 0..3u32 {
            t.frames.push(Frame {
                function: format!("f{f}"),
                parent: f.checked_sub(1),
                depth: f,
                is_generator: false,
                called_from_library: false,
            });
        }
        for v in 0..10u32 {
            let shape = if v > 0 && v % 3 == 0 {
                Shape::List {
                    items: vec![v - 1, v - 2],
                    truncated: false,
                }
            } else {
                Shape::Scalar
            };
            t.values.push(Value {
                repr: v.to_string(),
                type_name: "int".into(),
                object_id: u64::from(v),
                shape,
            });
        }
        for i in 0..25u32 {
            t.events.push(Event {
                kind: EventKind::Line,
                frame: (i / 10).min(2),
                line: i + 1,
                locals: vec![Binding {
                    name: "x".into(),
                    value: (i * 2) % 10,
                }]
                .into(),
                value: None,
                stdout_len: 0,
                stderr_len: 0,
                internal: false,
                generator_exit: false,
            });
        }
        let mut asm = TraceAssembler::default();
        for (frames, values, events) in chunk_trace(&t, 7) {
            asm.push(frames, values, events);
            let partial = asm.events_so_far();
            assert!(partial <= t.events.len());
        }
        let back = asm.finish(String::new(), String::new(), Outcome::Finished);
        assert_eq!(back, t);
        back.validate().unwrap();

        // A prefix sent live, the rest after the run: the same trace again.
        for split in [0, 1, 9, 24, 25] {
            let mut asm = TraceAssembler::default();
            let head = Trace {
                events: t.events[..split].to_vec(),
                ..t.clone()
            };
            let needed = chunk_trace(&head, 1000);
            let mut sent = TraceProgress::default();
            for (frames, values, events) in needed {
                sent.frames += frames.len();
                sent.values += values.len();
                sent.events += events.len();
                asm.push(frames, values, events);
            }
            for (frames, values, events) in chunk_trace_from(&t, sent, 4) {
                assert!(events.len() <= 4);
                asm.push(frames, values, events);
            }
            assert_eq!(
                asm.finish(String::new(), String::new(), Outcome::Finished),
                t,
                "split {split}"
            );
        }
        let all = TraceProgress {
            frames: t.frames.len(),
            values: t.values.len(),
            events: t.events.len(),
        };
        assert!(chunk_trace_from(&t, all, 4).is_empty());
    }

    #[test]
    fn a_trace_request_says_neural_mode_only_when_on() {
        let off: TraceRequest = serde_json::from_str(r#"{"code":"x = 1"}"#).unwrap();
        assert!(!off.neural);
        assert_eq!(serde_json::to_string(&off).unwrap(), r#"{"code":"x = 1","stdin":""}"#);
        let on = TraceRequest { neural: true, ..off };
        let json = serde_json::to_string(&on).unwrap();
        assert_eq!(json, r#"{"code":"x = 1","stdin":"","neural":true}"#);
        assert_eq!(serde_json::from_str::<TraceRequest>(&json).unwrap(), on);
    }

    #[test]
    fn predict_messages_name_their_job() {
        let text =
            r#"{"seq":4,"body":{"type":"predict","request":{"code":"x = 1","at_event":1,"action":"step_over"}}}"#;
        let Envelope {
            seq,
            body: ClientMessage::Predict { request },
            ..
        } = serde_json::from_str(text).unwrap()
        else {
            panic!("a predict message");
        };
        assert_eq!((seq, request.samples, request.breakpoints.len()), (4, 1, 0));
        let bad = r#"{"seq":4,"body":{"type":"predict","request":{"code":"","at_event":1,"action":"s","x":1}}}"#;
        assert!(serde_json::from_str::<ClientEnvelope>(bad).is_err());
        let token = Envelope::job(
            4,
            ServerMessage::PredictToken {
                sample: 0,
                text: "<|line|>".into(),
            },
        )
        .numbered(9);
        let json = serde_json::to_value(&token).unwrap();
        assert_eq!((json["seq"].as_u64(), json["job"].as_u64()), (Some(9), Some(4)));
        assert_eq!(json["body"]["type"], "predict_token");
        // A welcome from a server without neural mode still parses.
        let old: ServerEnvelope =
            serde_json::from_str(r#"{"seq":1,"body":{"type":"welcome","protocol":2,"server":"x"}}"#).unwrap();
        assert!(matches!(old.body, ServerMessage::Welcome { neural, .. } if !neural.available));
    }

    #[test]
    fn server_messages_are_numbered_and_name_their_job() {
        let m = Envelope::job(
            7,
            ServerMessage::Error {
                reply_to: None,
                code: ErrorCode::Busy,
                message: "The server is busy.".into(),
                retry_after_s: Some(2),
            },
        )
        .numbered(42);
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!((json["seq"].as_u64(), json["job"].as_u64()), (Some(42), Some(7)));
        assert_eq!(json["body"]["type"], "error");
        assert_eq!(json["body"]["code"], "busy");
        let unit = serde_json::to_value(Envelope::job(3, ServerMessage::TraceStart).numbered(1)).unwrap();
        assert_eq!(
            unit,
            serde_json::json!({"seq": 1, "job": 3, "body": {"type": "trace_start"}})
        );
        // Errors without a code still parse.
        let old: ServerEnvelope = serde_json::from_str(r#"{"seq":1,"body":{"type":"error","message":"x"}}"#).unwrap();
        assert!(matches!(
            old.body,
            ServerMessage::Error {
                code: ErrorCode::Internal,
                ..
            }
        ));
    }
}
