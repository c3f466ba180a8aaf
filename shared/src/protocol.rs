//! The wire protocol between the browser (or any client) and the server.
//!
//! HTTP bodies and WebSocket messages are JSON. WebSocket messages are internally
//! tagged (`"type"`), every message carries a sequence number (`seq`), and the first
//! client message must be a [`ClientMessage::Hello`] naming [`PROTOCOL_VERSION`].

use serde::{Deserialize, Serialize};

use crate::trace::{Event, Frame, Outcome, Trace, Value};

/// Bumped whenever a message changes incompatibly.
pub const PROTOCOL_VERSION: u32 = 1;

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
}

impl TraceRequest {
    /// Checks sizes before any work is done; the message says what to change.
    pub fn check(&self) -> Result<(), String> {
        if self.code.len() > MAX_CODE_BYTES {
            return Err(format!(
                "The program is {} KB; the limit is {} KB. Trace a smaller program.",
                self.code.len() / 1024,
                MAX_CODE_BYTES / 1024
            ));
        }
        if self.stdin.len() > MAX_STDIN_BYTES {
            return Err(format!(
                "The input is {} KB; the limit is {} KB.",
                self.stdin.len() / 1024,
                MAX_STDIN_BYTES / 1024
            ));
        }
        if self.max_steps == Some(0) {
            return Err("max_steps must be at least 1.".to_owned());
        }
        Ok(())
    }
}

/// Every error body of the HTTP API: one clear sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    pub error: String,
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

/// A message from the client on the WebSocket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMessage {
    /// Must be first, within the handshake timeout.
    Hello {
        seq: u64,
        protocol: u32,
    },
    /// Trace a program; the answer streams as `trace_*` messages with `job` = `seq`.
    Trace {
        seq: u64,
        request: TraceRequest,
    },
    /// Stop a running job.
    Cancel {
        seq: u64,
        job: u64,
    },
    Ping {
        seq: u64,
    },
}

impl ClientMessage {
    pub fn seq(&self) -> u64 {
        match self {
            Self::Hello { seq, .. } | Self::Trace { seq, .. } | Self::Cancel { seq, .. } | Self::Ping { seq } => *seq,
        }
    }
}

/// A message from the server on the WebSocket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    Welcome {
        seq: u64,
        protocol: u32,
        server: String,
    },
    /// A trace starts: its frames are complete once `trace_end` arrives.
    TraceStart {
        seq: u64,
        job: u64,
    },
    /// The next events of the trace, in order, with the values they introduce.
    TraceChunk {
        seq: u64,
        job: u64,
        frames: Vec<Frame>,
        values: Vec<Value>,
        events: Vec<Event>,
    },
    /// The trace is complete.
    TraceEnd {
        seq: u64,
        job: u64,
        stdout: String,
        stderr: String,
        outcome: Outcome,
    },
    /// A job was cancelled at the client's request.
    Cancelled {
        seq: u64,
        job: u64,
    },
    Pong {
        seq: u64,
    },
    /// Something went wrong; `job` names the job when it concerns one.
    Error {
        seq: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job: Option<u64>,
        message: String,
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

/// Splits a trace into chunk contents of at most `events_per_chunk` events, each
/// carrying the frames and values first needed by its events.
pub fn chunk_trace(trace: &Trace, events_per_chunk: usize) -> Vec<(Vec<Frame>, Vec<Value>, Vec<Event>)> {
    let per = events_per_chunk.max(1);
    let mut out = Vec::new();
    let (mut frames_sent, mut values_sent) = (0usize, 0usize);
    for events in trace.events.chunks(per) {
        let mut max_frame = frames_sent;
        let mut max_value = values_sent;
        for e in events {
            max_frame = max_frame.max(e.frame as usize + 1);
            for id in e.locals.iter().map(|b| b.value).chain(e.value) {
                max_value = max_value.max(id as usize + 1);
            }
        }
        // Values refer only to values interned before them, so a prefix suffices.
        let max_value = max_value.max(values_sent);
        let max_value = closure_end(trace, values_sent, max_value);
        out.push((
            trace.frames[frames_sent..max_frame].to_vec(),
            trace.values[values_sent..max_value].to_vec(),
            events.to_vec(),
        ));
        frames_sent = max_frame;
        values_sent = max_value;
    }
    if out.is_empty() || frames_sent < trace.frames.len() || values_sent < trace.values.len() {
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
        let m: ClientMessage = serde_json::from_str(r#"{"type":"hello","seq":1,"protocol":1}"#).unwrap();
        assert_eq!(m, ClientMessage::Hello { seq: 1, protocol: 1 });
        assert!(serde_json::from_str::<ClientMessage>(r#"{"type":"hello","seq":1,"protocol":1,"x":2}"#).is_err());
        assert!(serde_json::from_str::<ClientMessage>(r#"{"type":"launch","seq":1}"#).is_err());
        let t = r#"{"type":"trace","seq":2,"request":{"code":"x = 1"}}"#;
        assert_eq!(serde_json::from_str::<ClientMessage>(t).unwrap().seq(), 2);
    }

    #[test]
    fn trace_request_limits_are_explained() {
        let big = TraceRequest {
            code: "x".repeat(MAX_CODE_BYTES + 1),
            stdin: String::new(),
            max_steps: None,
        };
        assert!(big.check().unwrap_err().contains("limit is 100 KB"));
        let zero = TraceRequest {
            code: "x".into(),
            stdin: String::new(),
            max_steps: Some(0),
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
                }],
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
    }
}
