//! `GET /healthz` and `GET /metrics`, for load balancers and Prometheus.

use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::app::AppState;

#[derive(Debug, Serialize)]
struct Health {
    /// `ok` or `unavailable`.
    status: &'static str,
    /// Why the server is unavailable, as one sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    store: &'static str,
    sandbox: String,
    jobs_running: usize,
    jobs_queued: usize,
    draining: bool,
}

/// 200 when the store answers and the sandbox runs a trial program, 503 with the reason otherwise.
#[tracing::instrument(skip_all)]
pub async fn healthz(State(state): State<AppState>) -> Response {
    let store = match tokio::time::timeout(Duration::from_secs(2), state.store.ping()).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("The share store is not usable: {e}.")),
        Err(_) => Err("The share store did not answer within 2 s.".to_owned()),
    };
    let sandbox = state
        .check_sandbox()
        .await
        .map_err(|e| format!("The sandbox is not usable: {}.", e.trim_end_matches('.')));
    let draining = state.shutdown.draining.is_cancelled();
    let error = match (store, sandbox) {
        (Err(e), _) | (Ok(()), Err(e)) => Some(e),
        (Ok(()), Ok(())) if draining => Some("The server is shutting down.".to_owned()),
        (Ok(()), Ok(())) => None,
    };
    let status = if error.is_some() {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    if let Some(e) = &error {
        tracing::warn!("health check failed: {e}");
    }
    let body = Health {
        status: if error.is_some() { "unavailable" } else { "ok" },
        error,
        store: state.store.backend(),
        sandbox: state.tracer.sandbox().describe(),
        jobs_running: state.jobs.running(),
        jobs_queued: state.jobs.queued(),
        draining,
    };
    (status, Json(body)).into_response()
}

/// The Prometheus exposition.
pub async fn metrics(State(state): State<AppState>) -> Response {
    let mut response = state.metrics.render().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(crate::metrics::CONTENT_TYPE),
    );
    response
}
