//! The playground's neural mode: `predict` jobs that ask the neural debugger where a
//! debugger action leads, shown beside what the real run does (ground truth first).
//!
//! A job re-traces the program in the sandbox (the client's trace is never trusted),
//! then [`replayground_neural::predict`] writes the states before the stop in the trace
//! language and decodes the answer on a blocking thread, one prediction at a time,
//! streaming its tokens.

use std::sync::Arc;

use replayground_neural::predict::{self, Failure, Question};
use replayground_shared::Action;
use replayground_shared::protocol::{
    Envelope, ErrorCode, MAX_PREDICT_SAMPLES, PredictRequest, ServerEnvelope, ServerMessage, TraceRequest,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::app::{AppState, TraceFailure};
use crate::jobs::{BUSY_RETRY_AFTER_S, RequestError, TraceJob};

/// A `predict` request, checked at the boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PredictJob {
    pub trace: TraceJob,
    pub question: Question,
}

impl TryFrom<PredictRequest> for PredictJob {
    type Error = RequestError;

    fn try_from(request: PredictRequest) -> Result<Self, Self::Error> {
        let action: Action = request
            .action
            .parse()
            .map_err(|e: replayground_shared::ActionParseError| {
                RequestError::Invalid(format!("{}.", sentence_case(&e.to_string())))
            })?;
        if matches!(action, Action::Jump(_)) {
            return Err(RequestError::Invalid(
                "jump is not a debugger step the model predicts; ask for a forward or reverse action.".to_owned(),
            ));
        }
        if request.samples == 0 || request.samples > MAX_PREDICT_SAMPLES {
            return Err(RequestError::Invalid(format!(
                "samples must be from 1 to {MAX_PREDICT_SAMPLES}, not {}.",
                request.samples
            )));
        }
        let trace = TraceJob::try_from(TraceRequest {
            code: request.code,
            stdin: request.stdin,
            max_steps: None,
        })?;
        Ok(Self {
            trace,
            question: Question {
                at_event: request.at_event,
                action,
                samples: request.samples,
                breakpoints: request.breakpoints.into_iter().collect(),
            },
        })
    }
}

fn sentence_case(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn failure((code, message): Failure) -> ServerMessage {
    ServerMessage::Error {
        reply_to: None,
        code,
        message,
        retry_after_s: (code == ErrorCode::Busy).then_some(BUSY_RETRY_AFTER_S),
    }
}

/// Queues a job message, waiting for room; `false` when cancelled or the client is gone.
async fn send(out: &mpsc::Sender<ServerEnvelope>, cancel: &CancellationToken, message: ServerEnvelope) -> bool {
    tokio::select! {
        sent = out.send(message) => sent.is_ok(),
        () = cancel.cancelled() => false,
    }
}

/// Runs a predict job: its tokens go to `out`; the returned message ends the job.
/// `None` means it was cancelled (the caller says how).
#[tracing::instrument(skip_all, fields(job = id, action = %job.question.action))]
pub async fn run(
    state: &AppState,
    id: u64,
    job: PredictJob,
    out: &mpsc::Sender<ServerEnvelope>,
    cancel: &CancellationToken,
    client: std::net::IpAddr,
) -> Option<ServerMessage> {
    match run_inner(state, id, job, out, cancel, client).await {
        Ok(message) => message,
        Err(f) => Some(failure(f)),
    }
}

async fn run_inner(
    state: &AppState,
    id: u64,
    job: PredictJob,
    out: &mpsc::Sender<ServerEnvelope>,
    cancel: &CancellationToken,
    client: std::net::IpAddr,
) -> Result<Option<ServerMessage>, Failure> {
    // No model: say so before any program runs.
    let model = state.neural.ready().map_err(|m| (ErrorCode::NoModel, m))?;
    let Some(trace) = trace_again(state, &job, cancel, client).await? else {
        return Ok(None);
    };
    let prepare_model = Arc::clone(&model);
    let PredictJob {
        trace: traced,
        question,
    } = job;
    let prepared = tokio::task::spawn_blocking(move || predict::prepare(&prepare_model, trace, &traced.code, question))
        .await
        .map_err(|e| (ErrorCode::Internal, format!("The prediction failed: {e}.")))??;

    // One prediction at a time; others wait like queued sandbox jobs.
    let guard = tokio::select! {
        guard = tokio::time::timeout(state.config.queue_timeout, model.engine().lock_owned()) => guard
            .map_err(|_| (ErrorCode::Busy, format!("The neural debugger is busy with other predictions; try again in {BUSY_RETRY_AFTER_S} seconds.")))?,
        () = cancel.cancelled() => return Ok(None),
    };
    let (tokens_tx, mut tokens) = mpsc::channel::<(u32, String)>(64);
    let stop = cancel.clone();
    let prepared = Arc::new(prepared);
    let generating = Arc::clone(&prepared);
    let mut generation = tokio::task::spawn_blocking(move || {
        let mut debugger = guard;
        predict::generate(&mut **debugger, &generating, &tokens_tx, &stop)
    });
    let token_message = |(sample, text): (u32, String)| Envelope::job(id, ServerMessage::PredictToken { sample, text });
    let predictions = loop {
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Ok(None),
            Some(token) = tokens.recv() => {
                if !send(out, cancel, token_message(token)).await {
                    return Ok(None);
                }
            }
            result = &mut generation => {
                while let Ok(token) = tokens.try_recv() {
                    if !send(out, cancel, token_message(token)).await {
                        return Ok(None);
                    }
                }
                break result
                    .map_err(|e| (ErrorCode::Internal, format!("The prediction failed: {e}.")))?
                    .map_err(|e| (ErrorCode::Internal, format!("The model failed while predicting: {e:#}.")))?;
            }
        }
    };
    if cancel.is_cancelled() {
        return Ok(None);
    }
    Ok(Some(ServerMessage::PredictEnd {
        predictions,
        actual: prepared.actual().clone(),
    }))
}

/// The program's real run, in a sandbox slot like any trace job; `None` when cancelled.
async fn trace_again(
    state: &AppState,
    job: &PredictJob,
    cancel: &CancellationToken,
    client: std::net::IpAddr,
) -> Result<Option<replayground_shared::Trace>, Failure> {
    match state
        .run_in_slot(client, &job.trace, cancel, async || true, &mut |_| {})
        .await
    {
        Ok(trace) => Ok(Some(trace)),
        Err(TraceFailure::Cancelled) => Ok(None),
        Err(failure) => Err((failure.code(), failure.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_checked() {
        let request = |action: &str, samples| PredictRequest {
            code: "x = 1".into(),
            stdin: String::new(),
            at_event: 1,
            action: action.into(),
            samples,
            breakpoints: vec![3],
        };
        let job = PredictJob::try_from(request("reverse_step_over", 3)).unwrap();
        assert_eq!(
            (job.question.action, job.question.samples),
            (Action::ReverseStepOver, 3)
        );
        assert!(job.question.breakpoints.contains(&3));
        for (action, samples) in [("fly", 1), ("jump:3", 1), ("step_into", 0), ("step_into", 99)] {
            let Err(RequestError::Invalid(message)) = PredictJob::try_from(request(action, samples)) else {
                panic!("{action} × {samples} is refused");
            };
            assert!(message.ends_with('.'), "{message}");
        }
    }
}
