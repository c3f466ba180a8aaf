//! Neural mode over the WebSocket with the bundled model: a `predict` job streams the
//! model's tokens and ends with its prediction beside the real state; reverse actions get
//! k candidates marked consistent or not; bad stops, cancellation and a server without a
//! model answer clearly.

use crate::common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use common::{
    Fake, Running, Socket, cancel, fake, numbered, real_sandbox, sqlite_store, start, state, stream, ws_greeted,
    ws_message, ws_message_within, ws_send,
};
use replayground_server::app::ServerConfig;
use replayground_shared::protocol::{
    ClientEnvelope, ClientMessage, Envelope, ErrorCode, NeuralCapability, PredictRequest, Prediction, ServerMessage,
    TraceAssembler, TraceRequest,
};
use replayground_shared::trace_lang::normalize_state;
use replayground_shared::{Action, State, StateTree, Stop};

const PROGRAM: &str = "def add(a, b):\n    s = a + b\n    return s\n\n\nx = add(1, 2)\ny = x * 2\nprint(y)\n";

fn bundled_model() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/neural-debugger-tiny")
}

async fn server(
    sandbox: std::sync::Arc<dyn replayground_server::sandbox::Sandbox>,
    model: bool,
) -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        rate_limit_per_second: 0,
        ..ServerConfig::default()
    };
    let running = start(state(sandbox, sqlite_store(dir.path()).await, config)).await;
    if model {
        running
            .state
            .neural
            .load(bundled_model())
            .await
            .expect("the bundled model loads");
    }
    (running, dir)
}

async fn connect(running: &Running) -> (Socket, NeuralCapability) {
    let (socket, welcome) = ws_greeted(running).await;
    let ServerMessage::Welcome { neural, .. } = welcome else {
        unreachable!("ws_greeted checks the welcome")
    };
    (socket, neural)
}

/// The run as the page in neural mode has it: traced over the same socket, the model
/// reading the program meanwhile.
async fn trace(socket: &mut Socket, seq: u64) -> StateTree {
    ws_send(
        socket,
        &numbered(
            seq,
            ClientMessage::Trace {
                request: TraceRequest {
                    code: PROGRAM.into(),
                    stdin: String::new(),
                    max_steps: None,
                    neural: true,
                },
            },
        ),
    )
    .await;
    let mut assembler = TraceAssembler::default();
    loop {
        match ws_message(socket).await.body {
            ServerMessage::TraceStart => {}
            ServerMessage::TraceChunk {
                frames, values, events, ..
            } => assembler.push(frames, values, events),
            ServerMessage::TraceEnd {
                stdout,
                stderr,
                outcome,
                ..
            } => return StateTree::new(assembler.finish(stdout, stderr, outcome)).unwrap(),
            other => panic!("not a trace message: {other:?}"),
        }
    }
}

fn predict(seq: u64, at: Stop, tree: &StateTree, action: Action, samples: u32) -> ClientEnvelope {
    predict_at(seq, at.event().unwrap_or(tree.len()) as u32, &action.name(), samples)
}

fn predict_at(seq: u64, at_event: u32, action: &str, samples: u32) -> ClientEnvelope {
    numbered(
        seq,
        ClientMessage::Predict {
            request: PredictRequest {
                code: PROGRAM.into(),
                stdin: String::new(),
                at_event,
                action: action.into(),
                samples,
                breakpoints: Vec::new(),
            },
        },
    )
}

/// How long a prediction may take between two messages. A code LLM prompted in context
/// reads a prompt of some thousand tokens before its first token; on two cores shared with
/// the other tests, in a debug build, that took over two minutes once.
const PREDICTION_WAIT: Duration = Duration::from_secs(600);

/// A predict job's streamed text per sample and its end.
async fn collect(socket: &mut Socket, job: u64) -> Result<(Vec<String>, Vec<Prediction>, State), ServerMessage> {
    let mut texts: Vec<String> = Vec::new();
    loop {
        let m = ws_message_within(socket, PREDICTION_WAIT).await;
        assert_eq!(m.job, Some(job), "{m:?}");
        match m.body {
            ServerMessage::PredictToken { sample, text, .. } => {
                let sample = sample as usize;
                if texts.len() <= sample {
                    texts.resize(sample + 1, String::new());
                }
                texts[sample].push_str(&text);
            }
            ServerMessage::PredictEnd {
                predictions, actual, ..
            } => return Ok((texts, predictions, actual)),
            other => return Err(other),
        }
    }
}

fn real_after(tree: &StateTree, at: Stop, action: Action) -> State {
    normalize_state(&tree.state(tree.step(at, action, &mut BTreeSet::default())))
}

#[tokio::test]
async fn a_step_streams_tokens_and_ends_with_the_prediction_and_the_real_state() {
    let (running, _dir) = server(real_sandbox(), true).await;
    let (mut socket, neural) = connect(&running).await;
    assert!(neural.available, "{neural:?}");
    assert_eq!(neural.model.as_deref(), Some("neural-debugger-tiny"));
    let tree = trace(&mut socket, 2).await;
    let at = tree.initial_stop();
    ws_send(&mut socket, &predict(3, at, &tree, Action::StepOver, 1)).await;
    let (texts, predictions, actual) = collect(&mut socket, 3).await.expect("a prediction");
    assert_eq!(actual, real_after(&tree, at, Action::StepOver));
    assert_eq!(actual.line, Some(6), "step over the def lands on line 6");
    let [prediction] = &predictions[..] else {
        panic!("one prediction: {predictions:?}");
    };
    assert!(prediction.tokens > 0);
    assert_eq!(texts.len(), 1);
    assert_eq!(texts[0], prediction.text, "the streamed tokens are the answer");
    assert!(prediction.text.starts_with("<|"), "{}", prediction.text);
    assert!(
        prediction.state.is_some() != prediction.parse_error.is_some(),
        "a state or a parse error: {prediction:?}"
    );
    assert_eq!(
        prediction.matches,
        prediction.state.as_ref() == Some(&actual),
        "{prediction:?} vs {actual:?}"
    );
    assert_eq!(prediction.consistent, None, "forward actions are scored by exact match");
    eprintln!(
        "prediction: {} tokens in {} ms ({:.0} tokens/s, debug build)",
        prediction.tokens,
        prediction.elapsed_ms,
        f64::from(prediction.tokens) * 1000.0 / prediction.elapsed_ms.max(1) as f64
    );
}

#[tokio::test]
async fn a_reverse_step_samples_candidates_marked_consistent_or_not() {
    let (running, _dir) = server(real_sandbox(), true).await;
    let (mut socket, _) = connect(&running).await;
    let tree = trace(&mut socket, 2).await;
    let mut breakpoints = BTreeSet::default();
    let mut at = tree.initial_stop();
    for action in [Action::StepOver, Action::StepInto, Action::StepInto] {
        at = tree.step(at, action, &mut breakpoints);
    }
    ws_send(&mut socket, &predict(3, at, &tree, Action::ReverseStepInto, 3)).await;
    let (texts, predictions, actual) = collect(&mut socket, 3).await.expect("candidates");
    assert_eq!(actual, real_after(&tree, at, Action::ReverseStepInto));
    assert_eq!(predictions.len(), 3);
    assert_eq!(texts.len(), 3, "every candidate streams");
    for (i, p) in predictions.iter().enumerate() {
        assert_eq!(p.sample as usize, i);
        assert_eq!(texts[i], p.text);
        let consistent = p.consistent.expect("reverse candidates are marked");
        if p.matches {
            assert!(consistent, "the real previous state is consistent: {p:?}");
        }
        if p.state.is_none() {
            assert!(!consistent, "an unparsed candidate is not consistent");
        }
    }
}

#[tokio::test]
async fn a_stop_past_the_run_or_a_step_that_goes_nowhere_is_refused_clearly() {
    let (running, _dir) = server(real_sandbox(), true).await;
    let (mut socket, _) = connect(&running).await;
    let tree = trace(&mut socket, 2).await;
    ws_send(&mut socket, &predict_at(3, 10_000, "step_over", 1)).await;
    let Err(ServerMessage::Error { code, message, .. }) = collect(&mut socket, 3).await else {
        panic!("an error");
    };
    assert_eq!(code, ErrorCode::BadMessage);
    assert!(
        message.contains("past the end") && message.contains("run the program again"),
        "{message}"
    );

    ws_send(&mut socket, &predict(4, Stop::End, &tree, Action::StepOver, 1)).await;
    let Err(ServerMessage::Error { code, message, .. }) = collect(&mut socket, 4).await else {
        panic!("an error");
    };
    assert_eq!(code, ErrorCode::BadMessage);
    assert!(message.contains("ended"), "{message}");

    // Bad requests are refused before anything runs.
    ws_send(&mut socket, &predict_at(5, 1, "jump:3", 1)).await;
    let Err(ServerMessage::Error { code, .. }) = collect(&mut socket, 5).await else {
        panic!("an error");
    };
    assert_eq!(code, ErrorCode::BadMessage);
}

#[tokio::test]
async fn cancel_stops_a_prediction_and_the_model_serves_the_next_one() {
    let (running, _dir) = server(real_sandbox(), true).await;
    let (mut socket, _) = connect(&running).await;
    let tree = trace(&mut socket, 2).await;
    let at = tree.initial_stop();
    ws_send(&mut socket, &predict(4, at, &tree, Action::StepInto, 4)).await;
    assert!(matches!(
        ws_message(&mut socket).await,
        Envelope {
            job: Some(4),
            body: ServerMessage::PredictToken { .. },
            ..
        }
    ));
    ws_send(&mut socket, &cancel(5, 4)).await;
    loop {
        match ws_message(&mut socket).await {
            Envelope {
                job: Some(4),
                body: ServerMessage::PredictToken { .. },
                ..
            } => {}
            Envelope {
                job: Some(4),
                body: ServerMessage::Cancelled,
                ..
            } => break,
            other => panic!("expected the job to be cancelled: {other:?}"),
        }
    }
    ws_send(&mut socket, &predict(6, at, &tree, Action::StepInto, 1)).await;
    let (_, predictions, _) = collect(&mut socket, 6).await.expect("the next prediction runs");
    assert_eq!(predictions.len(), 1);
}

#[tokio::test]
async fn without_a_model_neural_mode_is_off_and_says_why() {
    let (running, _dir) = server(fake(Fake::Stream(stream(3))), false).await;
    let (mut socket, neural) = connect(&running).await;
    assert!(!neural.available);
    assert!(
        neural.reason.as_deref().is_some_and(|r| r.contains("--model-dir")),
        "{neural:?}"
    );
    ws_send(&mut socket, &predict_at(2, 1, "step_into", 1)).await;
    let Err(ServerMessage::Error { code, message: why, .. }) = collect(&mut socket, 2).await else {
        panic!("an error");
    };
    assert_eq!(code, ErrorCode::NoModel);
    assert!(why.contains("--model-dir"), "{why}");

    // A directory that is not a model: a clear reason, and the server keeps serving.
    let empty = tempfile::tempdir().unwrap();
    let reason = running.state.neural.load(empty.path().to_owned()).await.unwrap_err();
    assert!(
        reason.contains("could not be loaded") && reason.contains("config.json"),
        "{reason}"
    );
    let (mut again, neural) = connect(&running).await;
    assert_eq!(neural.reason.as_deref(), Some(reason.as_str()));
    ws_send(&mut again, &numbered(2, ClientMessage::Ping {})).await;
    assert!(matches!(
        ws_message(&mut again).await.body,
        ServerMessage::Pong { reply_to: 2 }
    ));
}

/// `--neural-model qwen-0.5b`: the playground's neural mode on a code LLM prompted in
/// context streams its answer the same way, decoded under the same grammar.
#[tokio::test]
async fn neural_mode_runs_on_a_code_llm_prompted_in_context() {
    let path = replayground_server::neural::in_context::locate("qwen-0.5b")
        .expect("`cargo xtask setup` installs the embedded model");
    let (running, _dir) = server(real_sandbox(), false).await;
    running.state.neural.load(path).await.expect("the GGUF engine loads");
    let (mut socket, neural) = connect(&running).await;
    assert!(neural.available, "{neural:?}");
    let name = neural.model.unwrap_or_default();
    assert!(name.contains("0.5B") && name.ends_with("(in context)"), "{name}");
    let tree = trace(&mut socket, 2).await;
    let at = tree.initial_stop();
    // The engine reads the traced program ahead; on a loaded machine that can outlast the
    // queue's wait, and the server says when to ask again, as a page does.
    let mut job = 3;
    let (texts, predictions, actual) = loop {
        ws_send(&mut socket, &predict(job, at, &tree, Action::StepOver, 1)).await;
        match collect(&mut socket, job).await {
            Err(ServerMessage::Error {
                code: ErrorCode::Busy,
                retry_after_s: Some(wait),
                ..
            }) if job < 8 => tokio::time::sleep(Duration::from_secs(wait)).await,
            answer => break answer.expect("a prediction"),
        }
        job += 1;
    };
    assert_eq!(actual, real_after(&tree, at, Action::StepOver));
    let [prediction] = &predictions[..] else {
        panic!("one prediction: {predictions:?}");
    };
    assert_eq!(texts[0], prediction.text, "the streamed tokens are the answer");
    assert!(
        prediction.state.is_some(),
        "the grammar makes every finished answer parse: {prediction:?}"
    );
    assert_eq!(prediction.matches, prediction.state.as_ref() == Some(&actual));
}
