//! The HTTP API and the static playground.
//!
//! `POST /api/trace` runs a program in the sandbox and answers with its [`Trace`];
//! every failure is `{"error": "one sentence"}` with a status that says whose fault it
//! is: 400 unreadable request, 413 too large, 422 well-formed but invalid, 503 the
//! sandbox is busy or unavailable.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use replayground_shared::Trace;
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use tower_http::services::{ServeDir, ServeFile};

use crate::runner::Tracer;
use crate::sandbox::{RunLimits, Sandbox};

/// Request-size and queueing limits of the API.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// Largest program accepted. Default 64 KiB.
    pub max_code_bytes: usize,
    /// Largest standard input accepted. Default 256 KiB.
    pub max_stdin_bytes: usize,
    /// Sandbox jobs that run at once; more requests wait. Default 4.
    pub max_jobs: usize,
    /// How long a request waits for a free job before 503. Default 10 s.
    pub queue_timeout: Duration,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            max_code_bytes: 64 * 1024,
            max_stdin_bytes: 256 * 1024,
            max_jobs: 4,
            queue_timeout: Duration::from_secs(10),
        }
    }
}

/// Shared by every request.
#[derive(Clone)]
pub struct AppState {
    pub sandbox: Arc<dyn Sandbox>,
    pub tracer: Tracer,
    /// One permit per sandbox job that may run at once.
    pub jobs: Arc<Semaphore>,
    pub config: ApiConfig,
}

impl AppState {
    pub fn new(sandbox: Arc<dyn Sandbox>, python: &Path, limits: RunLimits, config: ApiConfig) -> Self {
        let tracer = Tracer::new(Arc::clone(&sandbox), python, limits);
        let jobs = Arc::new(Semaphore::new(config.max_jobs.max(1)));
        Self {
            sandbox,
            tracer,
            jobs,
            config,
        }
    }
}

/// The API, plus the static playground from `static_dir` (unknown paths get its
/// `index.html`, so the browser app can route).
pub fn router(state: AppState, static_dir: Option<&Path>) -> Router {
    let body_limit = state.config.max_code_bytes + state.config.max_stdin_bytes + 16 * 1024;
    let api = Router::new()
        .route("/healthz", get(healthz))
        .route("/api/trace", post(trace))
        .layer(DefaultBodyLimit::max(body_limit))
        .with_state(state);
    match static_dir {
        Some(dir) => api.fallback_service(ServeDir::new(dir).fallback(ServeFile::new(dir.join("index.html")))),
        None => api,
    }
}

#[derive(Serialize)]
struct Health {
    status: &'static str,
    sandbox: String,
}

async fn healthz(State(state): State<AppState>) -> Json<Health> {
    Json(Health {
        status: "ok",
        sandbox: state.sandbox.describe(),
    })
}

/// The body of `POST /api/trace`.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct TraceRequest {
    pub code: String,
    #[serde(default)]
    pub stdin: Option<String>,
    /// At most this many trace events (capped by the server's own limit).
    #[serde(default)]
    pub max_steps: Option<u32>,
}

/// An API failure: a status and one sentence.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(serde_json::json!({ "error": self.message }))).into_response()
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        match rejection {
            JsonRejection::MissingJsonContentType(_) => Self::new(
                StatusCode::BAD_REQUEST,
                "Send the request as JSON with Content-Type: application/json.",
            ),
            JsonRejection::JsonDataError(e) => Self::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!(
                    "The request is not a trace request ({}); send {{\"code\": \"...\"}}.",
                    e.body_text()
                ),
            ),
            JsonRejection::JsonSyntaxError(e) => Self::new(
                StatusCode::BAD_REQUEST,
                format!("The request is not valid JSON ({}).", e.body_text()),
            ),
            other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => Self::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "The request is too large; send a shorter program or input.",
            ),
            other => Self::new(
                StatusCode::BAD_REQUEST,
                format!("The request could not be read ({}).", other.body_text()),
            ),
        }
    }
}

#[tracing::instrument(skip_all, fields(code_bytes))]
async fn trace(
    State(state): State<AppState>,
    body: Result<Json<TraceRequest>, JsonRejection>,
) -> Result<Json<Trace>, ApiError> {
    let Json(request) = body?;
    tracing::Span::current().record("code_bytes", request.code.len());
    let config = &state.config;
    if request.code.len() > config.max_code_bytes {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "The program is longer than {} KiB; send a shorter one.",
                config.max_code_bytes / 1024
            ),
        ));
    }
    let stdin = request.stdin.unwrap_or_default();
    if stdin.len() > config.max_stdin_bytes {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "The standard input is longer than {} KiB; send less.",
                config.max_stdin_bytes / 1024
            ),
        ));
    }
    let mut limits = state.tracer.limits().clone();
    if let Some(steps) = request.max_steps {
        if steps == 0 || steps > limits.max_events {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("max_steps must be between 1 and {}.", limits.max_events),
            ));
        }
        limits.max_events = steps;
    }
    let permit = tokio::time::timeout(config.queue_timeout, Arc::clone(&state.jobs).acquire_owned())
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "The server is busy running other programs; try again in a few seconds.",
            )
        })?;
    let run = state.tracer.run(&request.code, &stdin, &limits).await;
    drop(permit);
    match run {
        Ok(run) => Ok(Json(run.trace)),
        Err(e) => {
            tracing::error!("sandbox failure: {e}");
            Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use replayground_shared::Outcome;
    use tower::ServiceExt;

    use super::*;
    use crate::sandbox::{BoxFuture, Job, RunReport, SandboxError, StdoutSink, Termination};

    /// Answers every job with a fixed tracer stream.
    struct FakeSandbox(&'static str);

    impl Sandbox for FakeSandbox {
        fn describe(&self) -> String {
            "fake".into()
        }

        fn run<'a>(&'a self, _job: Job, stdout: StdoutSink<'a>) -> BoxFuture<'a, Result<RunReport, SandboxError>> {
            Box::pin(async move {
                stdout(self.0.as_bytes());
                Ok(RunReport {
                    termination: Termination::Exited(0),
                    stderr: String::new(),
                    stdout_bytes: self.0.len() as u64,
                    elapsed: Duration::ZERO,
                    uid: None,
                    stray_processes: 0,
                })
            })
        }
    }

    fn app() -> Router {
        let stream = "{\"t\":\"x\",\"outcome\":{\"kind\":\"finished\"}}\n";
        let state = AppState::new(
            Arc::new(FakeSandbox(stream)),
            Path::new("/usr/bin/python3"),
            RunLimits::default(),
            ApiConfig {
                max_code_bytes: 100,
                ..ApiConfig::default()
            },
        );
        router(state, None)
    }

    async fn post(body: &str, content_type: &str) -> (StatusCode, serde_json::Value) {
        let request = Request::post("/api/trace")
            .header("content-type", content_type)
            .body(Body::from(body.to_owned()))
            .unwrap();
        let response = app().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn traces_a_program() {
        let (status, body) = post(r#"{"code": "x = 1"}"#, "application/json").await;
        assert_eq!(status, StatusCode::OK);
        let trace: Trace = serde_json::from_value(body).unwrap();
        assert_eq!(trace.outcome, Outcome::Finished);
    }

    #[tokio::test]
    async fn bad_requests_get_one_sentence_and_the_right_status() {
        for (body, content_type, status) in [
            ("{", "application/json", StatusCode::BAD_REQUEST),
            (r#"{"code": 1}"#, "application/json", StatusCode::UNPROCESSABLE_ENTITY),
            (r#"{"code": "x"}"#, "text/plain", StatusCode::BAD_REQUEST),
            (
                r#"{"code": "x", "max_steps": 0}"#,
                "application/json",
                StatusCode::UNPROCESSABLE_ENTITY,
            ),
        ] {
            let (got, json) = post(body, content_type).await;
            assert_eq!(got, status, "{body}");
            assert!(json["error"].as_str().is_some_and(|e| e.ends_with('.')), "{json}");
        }
        let long = serde_json::json!({ "code": "x".repeat(200) }).to_string();
        assert_eq!(post(&long, "application/json").await.0, StatusCode::PAYLOAD_TOO_LARGE);
    }

    #[tokio::test]
    async fn health_names_the_sandbox() {
        let response = app()
            .oneshot(Request::get("/healthz").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&bytes).unwrap()["sandbox"],
            "fake"
        );
    }
}
