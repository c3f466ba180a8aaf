//! `POST /api/trace`: run a program in the sandbox and answer with its trace.
//!
//! A program that runs is a 200 whatever it does: a syntax error, an uncaught exception,
//! `sys.exit` or a limit are outcomes the page shows. 422 means no trace could be made
//! (the tracer crashed, e.g. the program broke its output stream).

use std::net::IpAddr;

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use replayground_shared::Trace;
use replayground_shared::protocol::TraceRequest;

use super::ClientIp;
use super::error::{ApiError, ApiJson};
use crate::app::{AppState, TraceFailure};
use crate::jobs::TraceJob;

#[tracing::instrument(skip_all, fields(code_bytes, outcome))]
pub async fn trace(
    State(state): State<AppState>,
    client: Option<Extension<ClientIp>>,
    ApiJson(request): ApiJson<TraceRequest>,
) -> Result<Json<Trace>, ApiError> {
    tracing::Span::current().record("code_bytes", request.code.len());
    let job = TraceJob::try_from(request)?;
    let client = client.map_or(IpAddr::from([0, 0, 0, 0]), |Extension(ClientIp(ip))| ip);
    let cancel = &state.shutdown.cancel_jobs;
    let trace = state
        .run_in_slot(client, &job, cancel, async || true, &mut |_| {})
        .await
        .map_err(api_error)?;
    tracing::Span::current().record("outcome", crate::metrics::outcome_label(&trace.outcome));
    Ok(Json(trace))
}

/// The HTTP answer for a trace job that gave nothing to show.
pub(super) fn api_error(e: TraceFailure) -> ApiError {
    match e {
        TraceFailure::Cancelled => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "The server is shutting down and stopped this program; try again in a moment.",
        )
        .retry_after(5),
        TraceFailure::Queue(e) => e.into(),
        TraceFailure::SandboxBusy(message) => ApiError::new(StatusCode::TOO_MANY_REQUESTS, message).retry_after(5),
        TraceFailure::NoSandbox(message) => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, message),
        TraceFailure::CannotTrace(message) => ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message),
    }
}
