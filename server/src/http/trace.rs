//! `POST /api/trace`: run a program in the sandbox and answer with its trace.
//!
//! A program that runs is a 200 whatever it does: a syntax error, an uncaught exception,
//! `sys.exit` or a limit are outcomes the page shows. 422 means no trace could be made
//! (the tracer crashed, e.g. the program broke its output stream).

use std::net::IpAddr;

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use replayground_shared::protocol::TraceRequest;
use replayground_shared::{Outcome, Trace};

use super::ClientIp;
use super::error::{ApiError, ApiJson};
use crate::app::{AppState, RunError};
use crate::jobs::TraceJob;
use crate::sandbox::SandboxError;

#[tracing::instrument(skip_all, fields(code_bytes, outcome))]
pub async fn trace(
    State(state): State<AppState>,
    client: Option<Extension<ClientIp>>,
    ApiJson(request): ApiJson<TraceRequest>,
) -> Result<Json<Trace>, ApiError> {
    tracing::Span::current().record("code_bytes", request.code.len());
    let job = TraceJob::try_from(request)?;
    let client = client.map_or(IpAddr::from([0, 0, 0, 0]), |Extension(ClientIp(ip))| ip);
    let _permit = state.jobs.acquire(client, &state.shutdown.draining).await?;
    let run = state
        .run_trace(&job, &state.shutdown.cancel_jobs, &mut |_| {})
        .await
        .map_err(run_error)?;
    let trace = run.trace;
    tracing::Span::current().record("outcome", crate::metrics::outcome_label(&trace.outcome));
    if let Outcome::Crashed { message } = &trace.outcome {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("The program could not be traced: {}.", message.trim_end_matches('.')),
        ));
    }
    Ok(Json(trace))
}

pub(super) fn run_error(e: RunError) -> ApiError {
    match e {
        RunError::Cancelled => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "The server is shutting down and stopped this program; try again in a moment.",
        )
        .retry_after(5),
        RunError::Sandbox(e @ SandboxError::Busy { .. }) => {
            ApiError::new(StatusCode::TOO_MANY_REQUESTS, sentence(&e.to_string())).retry_after(5)
        }
        RunError::Sandbox(e) => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, sentence(&e.to_string())),
    }
}

/// A sandbox message as a sentence: capitalised, ending in a full stop.
pub(crate) fn sentence(message: &str) -> String {
    let message = message.trim().trim_end_matches('.');
    let mut chars = message.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => "The sandbox failed.".to_owned(),
    }
}
