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
use replayground_shared::protocol::{ErrorCode, MAX_PREDICT_SAMPLES, PredictRequest, ServerMessage, TraceRequest};
use tokio::sync::mpsc;

use super::JobContext;
use crate::app::TraceFailure;
use crate::jobs::{BUSY_RETRY_AFTER_S, RequestError, TraceJob};

/// A `predict` request, checked at the boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PredictJob {
    pub(crate) trace: TraceJob,
    pub(crate) question: Question,
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
            neural: false,
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

/// Runs a predict job: its tokens go out as the job's messages; the returned message ends
/// the job. `None` means it was cancelled (the caller says how).
#[tracing::instrument(skip_all, fields(job = context.id, action = %job.question.action))]
pub(super) async fn run(context: &JobContext, job: PredictJob) -> Option<ServerMessage> {
    match run_inner(context, job).await {
        Ok(message) => message,
        Err((code, message)) => Some(context.error(code, message)),
    }
}

async fn run_inner(context: &JobContext, job: PredictJob) -> Result<Option<ServerMessage>, Failure> {
    let (state, cancel) = (&context.state, &context.cancel);
    // No model: say so before any program runs.
    let model = state.neural.ready().map_err(|m| (ErrorCode::NoModel, m))?;
    let Some(trace) = trace_again(context, &job).await? else {
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
    let token_message = |(sample, text): (u32, String)| ServerMessage::PredictToken { sample, text };
    let predictions = loop {
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Ok(None),
            Some(token) = tokens.recv() => {
                if !context.send(token_message(token)).await {
                    return Ok(None);
                }
            }
            result = &mut generation => {
                while let Ok(token) = tokens.try_recv() {
                    if !context.send(token_message(token)).await {
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
async fn trace_again(context: &JobContext, job: &PredictJob) -> Result<Option<replayground_shared::Trace>, Failure> {
    match context
        .state
        .run_in_slot(context.client, &job.trace, &context.cancel, async || true, &mut |_| {})
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
