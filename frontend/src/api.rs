//! The server's HTTP API as the page uses it.

use gloo_net::http::Request;
use replayground_shared::{StateTree, Trace, TraceError};
use serde::{Deserialize, Serialize};

/// Where the page asks for a trace (same origin as the page).
pub const TRACE_URL: &str = "/api/trace";

/// The body of `POST /api/trace`.
#[derive(Debug, Clone, Serialize)]
pub struct TraceRequest<'a> {
    pub code: &'a str,
    pub stdin: &'a str,
}

/// The body the server sends with a non-2xx status.
#[derive(Debug, Clone, Deserialize)]
pub struct ErrorBody {
    pub error: String,
}

/// Why a run produced no trace, as a sentence the page shows as it is.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    #[error("Could not reach the server ({0}). Check that it is running (`cargo xtask serve`) and try again.")]
    Network(String),
    /// The server's own sentence, shown as it is.
    #[error("{0}")]
    Server(String),
    #[error("The server answered {0} without saying why. Try again, or look at the server's log.")]
    Status(String),
    #[error(
        "The server's answer is not a trace this page can read ({0}). Reload the page: it may be older than the server."
    )]
    Unreadable(String),
    #[error("The server sent a trace this page cannot step through: {0}")]
    Invalid(#[from] TraceError),
}

/// Runs `code` with `stdin` under the server's tracer and indexes the trace for stepping.
pub async fn run_program(code: &str, stdin: &str) -> Result<StateTree, RunError> {
    let response = Request::post(TRACE_URL)
        .json(&TraceRequest { code, stdin })
        .map_err(|e| RunError::Unreadable(e.to_string()))?
        .send()
        .await
        .map_err(|e| RunError::Network(e.to_string()))?;
    if !response.ok() {
        let status = format!("{} {}", response.status(), response.status_text())
            .trim()
            .to_owned();
        let body = response.text().await.unwrap_or_default();
        return Err(error_from_body(&status, &body));
    }
    let trace: Trace = response.json().await.map_err(|e| RunError::Unreadable(e.to_string()))?;
    Ok(StateTree::new(trace)?)
}

/// The server's own sentence when it sent `{"error": "..."}`, else the bare status.
pub fn error_from_body(status: &str, body: &str) -> RunError {
    match serde_json::from_str::<ErrorBody>(body) {
        Ok(ErrorBody { error }) if !error.trim().is_empty() => RunError::Server(error),
        _ => RunError::Status(status.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_errors_keep_the_servers_sentence() {
        let error = error_from_body("413 Payload Too Large", r#"{"error": "The request is too large."}"#);
        assert_eq!(error.to_string(), "The request is too large.");
        let bare = error_from_body("502 Bad Gateway", "<html>proxy error</html>");
        assert_eq!(bare, RunError::Status("502 Bad Gateway".into()));
    }

    #[test]
    fn the_request_body_has_code_and_stdin() {
        let json = serde_json::to_string(&TraceRequest {
            code: "print(1)",
            stdin: "",
        })
        .unwrap();
        assert_eq!(json, r#"{"code":"print(1)","stdin":""}"#);
    }
}
