//! The WebSocket API: handshake, streamed traces (fake and real sandbox), live chunks,
//! cancellation, bad messages, limits, timeouts, slow clients and shutdown.

use crate::common;

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use common::{
    Fake, Received, Running, Socket, cancel, fake, numbered, real_sandbox, sqlite_store, start, state, stream, ws_open,
    ws_receive, ws_send,
};
use futures_util::SinkExt as _;
use replayground_server::app::{ServerConfig, WsConfig};
use replayground_shared::protocol::{
    ClientEnvelope, ClientMessage, Envelope, ErrorCode, PROTOCOL_VERSION, ServerEnvelope, ServerMessage,
    TraceAssembler, TraceRequest,
};
use replayground_shared::{Outcome, Trace};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;

fn config(ws: WsConfig) -> ServerConfig {
    ServerConfig {
        rate_limit_per_second: 0,
        ws,
        ..ServerConfig::default()
    }
}

async fn server(
    sandbox: Arc<dyn replayground_server::sandbox::Sandbox>,
    config: ServerConfig,
) -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let running = start(state(sandbox, sqlite_store(dir.path()).await, config)).await;
    (running, dir)
}

async fn receive(socket: &mut Socket) -> Received {
    ws_receive(socket, Duration::from_secs(20)).await
}

async fn message(socket: &mut Socket) -> ServerEnvelope {
    match receive(socket).await {
        Received::Message(m) => m,
        Received::Closed(frame) => panic!("closed: {frame:?}"),
    }
}

async fn send_text(socket: &mut Socket, text: &str) {
    socket.send(Message::Text(text.to_owned().into())).await.unwrap();
}

/// Reads until the session closes; returns the close frame and the messages before it.
async fn closed(socket: &mut Socket) -> (Option<CloseFrame>, Vec<ServerEnvelope>) {
    let mut before = Vec::new();
    loop {
        match receive(socket).await {
            Received::Message(m) => before.push(m),
            Received::Closed(frame) => return (frame, before),
        }
    }
}

/// [`closed`], keeping only the messages' bodies.
async fn closed_bodies(socket: &mut Socket) -> (Option<CloseFrame>, Vec<ServerMessage>) {
    let (frame, before) = closed(socket).await;
    (frame, before.into_iter().map(|m| m.body).collect())
}

async fn hello(socket: &mut Socket) {
    ws_send(
        socket,
        &numbered(
            1,
            ClientMessage::Hello {
                protocol: PROTOCOL_VERSION,
            },
        ),
    )
    .await;
    assert!(matches!(message(socket).await.body, ServerMessage::Welcome { .. }));
}

fn trace_message(seq: u64, code: &str) -> ClientEnvelope {
    numbered(
        seq,
        ClientMessage::Trace {
            request: TraceRequest {
                code: code.into(),
                stdin: String::new(),
                max_steps: None,
                neural: false,
            },
        },
    )
}

/// Reads one job's messages up to its end; the trace, and how many chunks carried it.
async fn collect_trace(socket: &mut Socket, job: u64) -> Result<(Trace, usize), ServerMessage> {
    let mut assembler = TraceAssembler::default();
    let mut chunks = 0;
    let mut started = false;
    loop {
        let m = message(socket).await;
        assert_eq!(m.job, Some(job), "{m:?}");
        match m.body {
            ServerMessage::TraceStart => started = true,
            ServerMessage::TraceChunk {
                frames, values, events, ..
            } => {
                assert!(started, "trace_start comes first");
                chunks += 1;
                assembler.push(frames, values, events);
            }
            ServerMessage::TraceEnd {
                stdout,
                stderr,
                outcome,
                ..
            } => {
                let trace = assembler.finish(stdout, stderr, outcome);
                trace.validate().expect("the streamed trace is valid");
                return Ok((trace, chunks));
            }
            other => return Err(other),
        }
    }
}

fn close_code(frame: Option<&CloseFrame>) -> u16 {
    frame.map_or(0, |f| u16::from(f.code))
}

#[tokio::test]
async fn hello_welcome_ping_pong_and_numbered_messages() {
    let (running, _dir) = server(fake(Fake::Stream(stream(1))), config(WsConfig::default())).await;
    let mut socket = ws_open(&running).await;
    ws_send(
        &mut socket,
        &numbered(
            10,
            ClientMessage::Hello {
                protocol: PROTOCOL_VERSION,
            },
        ),
    )
    .await;
    let Envelope {
        seq,
        body: ServerMessage::Welcome { protocol, limits, .. },
        ..
    } = message(&mut socket).await
    else {
        panic!("no welcome")
    };
    assert_eq!((seq, protocol), (1, PROTOCOL_VERSION));
    assert_eq!(limits.idle_timeout_s, 300);
    assert_eq!(limits.session_timeout_s, 3600);
    assert_eq!(limits.events_per_chunk, 2000);
    ws_send(&mut socket, &numbered(11, ClientMessage::Ping {})).await;
    assert_eq!(
        message(&mut socket).await,
        Envelope::new(ServerMessage::Pong { reply_to: 11 }).numbered(2)
    );
    assert_eq!(running.state.metrics.websockets_active.get(), 1);
}

#[tokio::test]
async fn the_handshake_is_enforced() {
    let ws = WsConfig {
        handshake_timeout: Duration::from_millis(300),
        ..WsConfig::default()
    };
    let (running, _dir) = server(fake(Fake::Stream(stream(1))), config(ws)).await;

    // Silence.
    let mut socket = ws_open(&running).await;
    let (frame, before) = closed_bodies(&mut socket).await;
    assert_eq!(close_code(frame.as_ref()), 1008);
    assert!(
        matches!(&before[..], [ServerMessage::Error { code: ErrorCode::Handshake, message, .. }] if message.contains("hello")),
        "{before:?}"
    );

    // Something else first.
    let mut socket = ws_open(&running).await;
    ws_send(&mut socket, &numbered(1, ClientMessage::Ping {})).await;
    let (frame, before) = closed_bodies(&mut socket).await;
    assert_eq!(close_code(frame.as_ref()), 1008);
    assert!(matches!(
        &before[..],
        [ServerMessage::Error {
            code: ErrorCode::Handshake,
            ..
        }]
    ));

    // Another protocol version.
    let mut socket = ws_open(&running).await;
    ws_send(&mut socket, &numbered(1, ClientMessage::Hello { protocol: 99 })).await;
    let (frame, before) = closed_bodies(&mut socket).await;
    assert_eq!(close_code(frame.as_ref()), 1008);
    assert!(
        matches!(&before[..], [ServerMessage::Error { code: ErrorCode::Handshake, message, .. }] if message.contains("protocol 2")),
        "{before:?}"
    );

    // Not JSON.
    let mut socket = ws_open(&running).await;
    send_text(&mut socket, "hello?").await;
    let (frame, _) = closed(&mut socket).await;
    assert_eq!(close_code(frame.as_ref()), 1008);
}

#[tokio::test]
async fn a_trace_streams_in_chunks_that_reassemble() {
    let ws = WsConfig {
        events_per_chunk: 10,
        ..WsConfig::default()
    };
    let (running, _dir) = server(fake(Fake::Stream(stream(25))), config(ws)).await;
    let mut socket = ws_open(&running).await;
    hello(&mut socket).await;
    ws_send(&mut socket, &trace_message(2, "x = 1")).await;
    let (trace, chunks) = collect_trace(&mut socket, 2).await.unwrap();
    assert_eq!(trace.events.len(), 25);
    assert_eq!(trace.stdout, "hello\n");
    assert_eq!(chunks, 3);
}

#[tokio::test]
async fn a_real_program_traces_through_the_sandbox_over_the_websocket() {
    let ws = WsConfig {
        events_per_chunk: 20,
        ..WsConfig::default()
    };
    let (running, _dir) = server(real_sandbox(), config(ws)).await;
    let mut socket = ws_open(&running).await;
    hello(&mut socket).await;
    let code = "total = 0\nfor i in range(30):\n    total += i\nprint(total)\n";
    ws_send(&mut socket, &trace_message(2, code)).await;
    let (trace, chunks) = collect_trace(&mut socket, 2).await.unwrap();
    assert_eq!(trace.outcome, Outcome::Finished);
    assert_eq!(trace.stdout, "435\n");
    assert!(trace.events.len() > 60, "{} events", trace.events.len());
    assert!(chunks >= 3, "{chunks} chunks");

    // A syntax error is a trace too.
    ws_send(&mut socket, &trace_message(3, "print(")).await;
    let (trace, _) = collect_trace(&mut socket, 3).await.unwrap();
    assert!(
        matches!(trace.outcome, Outcome::SyntaxError { .. }),
        "{:?}",
        trace.outcome
    );

    // Cancelling kills the program: `cancelled` arrives long before the sleep ends.
    ws_send(&mut socket, &trace_message(4, "import time\ntime.sleep(30)\n")).await;
    assert!(matches!(
        message(&mut socket).await,
        Envelope {
            job: Some(4),
            body: ServerMessage::TraceStart,
            ..
        }
    ));
    let asked = std::time::Instant::now();
    ws_send(&mut socket, &cancel(5, 4)).await;
    loop {
        match message(&mut socket).await {
            Envelope {
                body: ServerMessage::TraceChunk { .. },
                ..
            } => {}
            Envelope {
                job: Some(4),
                body: ServerMessage::Cancelled,
                ..
            } => break,
            other => panic!("{other:?}"),
        }
    }
    assert!(asked.elapsed() < Duration::from_secs(5), "{:?}", asked.elapsed());
    assert_eq!(running.state.jobs.running(), 0);
}

#[tokio::test]
async fn chunks_stream_while_the_program_still_runs() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let first = format!("{}{}", common::stream_head(), common::stream_events(0, 12));
    let rest = format!("{}{}", common::stream_events(12, 30), common::stream_end());
    let ws = WsConfig {
        events_per_chunk: 5,
        ..WsConfig::default()
    };
    let (running, _dir) = server(fake(Fake::Gated(first, rest, Arc::clone(&gate))), config(ws)).await;
    let mut socket = ws_open(&running).await;
    hello(&mut socket).await;
    ws_send(&mut socket, &trace_message(2, "x = 1")).await;
    assert!(matches!(
        message(&mut socket).await,
        Envelope {
            job: Some(2),
            body: ServerMessage::TraceStart,
            ..
        }
    ));
    // The "program" is blocked on the gate: these chunks were streamed live.
    let mut assembler = TraceAssembler::default();
    let mut live_events = 0;
    while live_events < 10 {
        let ServerMessage::TraceChunk {
            frames, values, events, ..
        } = message(&mut socket).await.body
        else {
            panic!("expected a live chunk")
        };
        live_events += events.len();
        assembler.push(frames, values, events);
    }
    gate.notify_one();
    loop {
        match message(&mut socket).await.body {
            ServerMessage::TraceChunk {
                frames, values, events, ..
            } => assembler.push(frames, values, events),
            ServerMessage::TraceEnd {
                stdout,
                stderr,
                outcome,
                ..
            } => {
                let trace = assembler.finish(stdout, stderr, outcome);
                trace.validate().unwrap();
                assert_eq!(trace.events.len(), 30);
                for (i, event) in trace.events.iter().enumerate() {
                    assert_eq!(event.line as usize, i + 1);
                }
                break;
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn bad_messages_get_errors_and_the_session_goes_on() {
    let ws = WsConfig {
        max_jobs_per_session: 1,
        ..WsConfig::default()
    };
    let (running, _dir) = server(fake(Fake::Slow(Duration::from_secs(30), stream(1))), config(ws)).await;
    let mut socket = ws_open(&running).await;
    hello(&mut socket).await;

    let expect_error = |m: ServerEnvelope, want: ErrorCode| match m.body {
        ServerMessage::Error { code, message, .. } if code == want => {
            assert!(message.ends_with('.'), "{message}");
            message
        }
        other => panic!("wanted {want:?}, got {other:?}"),
    };
    send_text(&mut socket, "{not json").await;
    expect_error(message(&mut socket).await, ErrorCode::BadMessage);
    send_text(&mut socket, r#"{"seq":5,"body":{"type":"launch"}}"#).await;
    let m = message(&mut socket).await.body;
    assert!(matches!(m, ServerMessage::Error { reply_to: Some(5), .. }), "{m:?}");
    send_text(&mut socket, r#"{"seq":6,"body":{"type":"ping","extra":true}}"#).await;
    expect_error(message(&mut socket).await, ErrorCode::BadMessage);
    socket.send(Message::Binary(vec![1, 2, 3].into())).await.unwrap();
    expect_error(message(&mut socket).await, ErrorCode::BadMessage);
    ws_send(&mut socket, &numbered(7, ClientMessage::Ping {})).await;
    assert!(matches!(
        message(&mut socket).await.body,
        ServerMessage::Pong { reply_to: 7 }
    ));
    ws_send(&mut socket, &numbered(7, ClientMessage::Ping {})).await;
    assert!(expect_error(message(&mut socket).await, ErrorCode::BadMessage).contains("increasing"));
    ws_send(&mut socket, &cancel(8, 99)).await;
    expect_error(message(&mut socket).await, ErrorCode::UnknownJob);
    ws_send(&mut socket, &numbered(9, ClientMessage::Hello { protocol: 1 })).await;
    expect_error(message(&mut socket).await, ErrorCode::BadMessage);

    // A program over the size limit is refused as a job.
    ws_send(&mut socket, &trace_message(10, &"x".repeat(101 * 1024))).await;
    let m = message(&mut socket).await;
    assert_eq!(m.job, Some(10));
    assert!(expect_error(m, ErrorCode::TooLarge).contains("limit is 102,400 bytes (100 KB)"));

    // One job at a time in this session.
    ws_send(&mut socket, &trace_message(11, "x = 1")).await;
    assert!(matches!(
        message(&mut socket).await,
        Envelope {
            job: Some(11),
            body: ServerMessage::TraceStart,
            ..
        }
    ));
    ws_send(&mut socket, &trace_message(12, "x = 2")).await;
    let m = message(&mut socket).await;
    assert!(
        matches!(
            m,
            Envelope {
                job: Some(12),
                body: ServerMessage::Error {
                    code: ErrorCode::Busy,
                    retry_after_s: Some(_),
                    ..
                },
                ..
            }
        ),
        "{m:?}"
    );
    ws_send(&mut socket, &cancel(13, 11)).await;
    assert!(matches!(
        message(&mut socket).await,
        Envelope {
            job: Some(11),
            body: ServerMessage::Cancelled,
            ..
        }
    ));
    ws_send(&mut socket, &numbered(14, ClientMessage::Ping {})).await;
    assert!(matches!(
        message(&mut socket).await.body,
        ServerMessage::Pong { reply_to: 14 }
    ));
    let metrics = running.state.metrics.render();
    assert!(
        metrics.contains(r#"replayground_sandbox_runs_total{outcome="cancelled"} 1"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn an_oversized_message_closes_with_1009() {
    let ws = WsConfig {
        max_message_bytes: 64 * 1024,
        ..WsConfig::default()
    };
    let (running, _dir) = server(fake(Fake::Stream(stream(1))), config(ws)).await;
    let mut socket = ws_open(&running).await;
    hello(&mut socket).await;
    // The sender may see the connection reset while the frame is still going out.
    let _ = socket
        .send(Message::Text(trace_text(2, &"x".repeat(80 * 1024)).into()))
        .await;
    let (frame, _) = closed(&mut socket).await;
    assert_eq!(close_code(frame.as_ref()), 1009, "{frame:?}");
    let mut again = ws_open(&running).await;
    hello(&mut again).await;
}

fn trace_text(seq: u64, code: &str) -> String {
    serde_json::to_string(&trace_message(seq, code)).unwrap()
}

#[tokio::test]
async fn idle_sessions_are_closed() {
    let ws = WsConfig {
        idle_timeout: Duration::from_millis(300),
        ..WsConfig::default()
    };
    let (running, _dir) = server(fake(Fake::Stream(stream(1))), config(ws)).await;
    let mut socket = ws_open(&running).await;
    hello(&mut socket).await;
    let (frame, _) = closed(&mut socket).await;
    assert_eq!(close_code(frame.as_ref()), 1000);
    assert!(frame.unwrap().reason.contains("idle"));
    common::eventually(Duration::from_secs(5), "the session is gone", || {
        running.state.metrics.websockets_active.get() == 0
    })
    .await;
}

#[tokio::test]
async fn a_client_that_stops_reading_is_dropped() {
    // About 16 MB of trace: far more than the socket buffers hold.
    let mut big = common::stream_head();
    let repr = "y".repeat(2000);
    for i in 0..8000 {
        let _ = write!(
            big,
            "{{\"t\":\"v\",\"id\":{i},\"repr\":\"{repr}\",\"type\":\"str\",\"object_id\":{i}}}\n\
             {{\"t\":\"e\",\"k\":\"line\",\"f\":0,\"l\":1,\"o\":0,\"e\":0,\"v\":[[\"s\",{i}]]}}\n"
        );
    }
    big.push_str(&common::stream_end());
    let ws = WsConfig {
        outbound_queue: 2,
        send_timeout: Duration::from_millis(500),
        events_per_chunk: 200,
        ..WsConfig::default()
    };
    let (running, _dir) = server(fake(Fake::Stream(big)), config(ws)).await;
    let mut socket = ws_open(&running).await;
    hello(&mut socket).await;
    ws_send(&mut socket, &trace_message(2, "x = 1")).await;
    // Read nothing until the server gives up on this client.
    common::eventually(Duration::from_secs(30), "the unread session is dropped", || {
        running.state.metrics.websockets_active.get() == 0
    })
    .await;
    let mut ended = false;
    loop {
        match receive(&mut socket).await {
            Received::Message(Envelope {
                body: ServerMessage::TraceEnd { .. },
                ..
            }) => ended = true,
            Received::Message(_) => {}
            Received::Closed(_) => break,
        }
    }
    assert!(!ended, "the session was dropped before the trace ended");
    common::eventually(Duration::from_secs(5), "the dropped session's job ends", || {
        running.state.jobs.running() == 0
    })
    .await;
    let mut again = ws_open(&running).await;
    hello(&mut again).await;
}

#[tokio::test]
async fn shutdown_finishes_running_jobs_then_closes_with_1001() {
    let (running, _dir) = server(
        fake(Fake::Slow(Duration::from_millis(500), stream(3))),
        config(WsConfig::default()),
    )
    .await;
    let mut socket = ws_open(&running).await;
    hello(&mut socket).await;
    ws_send(&mut socket, &trace_message(2, "x = 1")).await;
    assert!(matches!(
        message(&mut socket).await,
        Envelope {
            job: Some(2),
            body: ServerMessage::TraceStart,
            ..
        }
    ));
    running.state.shutdown.begin(Duration::from_secs(10));
    ws_send(&mut socket, &trace_message(3, "x = 2")).await;
    let (frame, before) = closed(&mut socket).await;
    assert_eq!(close_code(frame.as_ref()), 1001, "{frame:?}");
    assert!(
        before.iter().any(|m| matches!(
            m,
            Envelope {
                job: Some(3),
                body: ServerMessage::Error {
                    code: ErrorCode::ShuttingDown,
                    ..
                },
                ..
            }
        )),
        "{before:?}"
    );
    assert!(
        before.iter().any(|m| matches!(
            m,
            Envelope {
                job: Some(2),
                body: ServerMessage::TraceEnd { .. },
                ..
            }
        )),
        "the running job finished: {before:?}"
    );
    tokio::time::timeout(Duration::from_secs(5), running.server)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
}
