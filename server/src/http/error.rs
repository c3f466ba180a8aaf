//! Every failure of the HTTP API is `{"error": "one clear sentence"}` with a status that
//! says whose fault it is. [`ApiJson`] replaces axum's `Json` extractor, whose rejections
//! are plain text, and [`json_errors`] turns any other plain error (a layer's, a
//! method that is not allowed) into the same shape.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use replayground_shared::protocol::{self, ShareRequest, TraceRequest};
use serde::de::DeserializeOwned;

use crate::jobs::{BUSY_RETRY_AFTER_S, QueueError, RequestError};

/// An API failure: a status, one sentence, and for 429/503 when to try again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub retry_after_s: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            retry_after_s: None,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    #[must_use]
    pub fn retry_after(mut self, seconds: u64) -> Self {
        self.retry_after_s = Some(seconds);
        self
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = protocol::ApiError { error: self.message };
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(seconds) = self.retry_after_s {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

impl From<RequestError> for ApiError {
    fn from(e: RequestError) -> Self {
        match e {
            RequestError::TooLarge(m) => Self::too_large(m),
            RequestError::Invalid(m) => Self::bad_request(m),
        }
    }
}

impl From<QueueError> for ApiError {
    fn from(e: QueueError) -> Self {
        match e {
            QueueError::Full | QueueError::TimedOut => {
                Self::new(StatusCode::TOO_MANY_REQUESTS, e.to_string()).retry_after(BUSY_RETRY_AFTER_S)
            }
            QueueError::ShuttingDown => Self::new(StatusCode::SERVICE_UNAVAILABLE, e.to_string()).retry_after(5),
        }
    }
}

/// A JSON request body: an example of its shape, shown when a body does not match.
pub trait JsonBody: DeserializeOwned {
    const SHAPE: &'static str;
}

impl JsonBody for TraceRequest {
    const SHAPE: &'static str = r#"{"code": "...", "stdin": "...", "max_steps": 1000} (stdin and max_steps optional)"#;
}

impl JsonBody for ShareRequest {
    const SHAPE: &'static str = r#"{"kind": "playground" or "repro", "payload": {...}}"#;
}

/// Like `axum::Json`, with rejections as [`ApiError`]s: 415 without a JSON content type,
/// 413 over the route's body limit, 400 for invalid UTF-8, malformed JSON, wrong types,
/// missing or unknown fields.
#[derive(Debug, Clone)]
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: JsonBody> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        if !has_json_content_type(request.headers()) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Send the request body as JSON with the header Content-Type: application/json.",
            ));
        }
        let bytes = Bytes::from_request(request, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::too_large(
                    "The request body is too large: programs and inputs may be at most 100 KB each, shares at most 1 MB.",
                )
            } else {
                ApiError::bad_request(format!(
                    "The request body could not be read ({}).",
                    rejection.body_text().trim_end_matches('.')
                ))
            }
        })?;
        Ok(Self(parse_json(&bytes)?))
    }
}

/// Parses a JSON body of type `T`, or says in one sentence what is wrong with it.
pub fn parse_json<T: JsonBody>(bytes: &[u8]) -> Result<T, ApiError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        ApiError::bad_request(format!(
            "The request body is not valid UTF-8 (at byte {}); send UTF-8 JSON.",
            e.valid_up_to()
        ))
    })?;
    serde_json::from_str(text).map_err(|e| {
        use serde_json::error::Category;
        match e.classify() {
            Category::Data => ApiError::bad_request(format!(
                "The request body does not have the expected shape ({e}); send {}.",
                T::SHAPE
            )),
            Category::Syntax | Category::Eof | Category::Io => {
                ApiError::bad_request(format!("The request body is not valid JSON ({e}); send {}.", T::SHAPE))
            }
        }
    })
}

fn has_json_content_type(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| {
            let mime = mime.trim();
            mime.eq_ignore_ascii_case("application/json")
                || (mime.len() > 5 && mime[..mime.len() - 5].contains('/') && mime.ends_with("+json"))
        })
}

/// Unknown paths under `/api`.
pub async fn api_not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::not_found(format!(
        "There is no API endpoint {method} {}; the endpoints are POST /api/trace, POST /api/share, GET /api/share/{{id}} and GET /api/ws.",
        uri.path()
    ))
}

/// Any other unknown path.
pub async fn not_found(uri: Uri) -> ApiError {
    ApiError::not_found(format!("There is nothing at {}.", uri.path()))
}

pub async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("{} does not accept {method} requests.", uri.path()),
    )
}

/// A panic in a handler: logged, and answered as a JSON 500.
#[allow(clippy::needless_pass_by_value)] // `CatchPanicLayer` hands the payload over by value
pub fn panic_response(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let detail = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("unknown panic");
    tracing::error!("a request handler panicked: {detail}");
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "The server hit an internal error; try again, and report it if it persists.",
    )
    .into_response()
}

/// The safety net: an error response without a JSON body (from a layer or axum itself)
/// becomes `{"error": ...}` with the same status and headers.
pub async fn json_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if is_json {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    let sentence = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "The request body is too large.".to_owned(),
        StatusCode::REQUEST_TIMEOUT => "The request took too long to arrive.".to_owned(),
        other => format!(
            "The request failed: {} {}.",
            other.as_u16(),
            other.canonical_reason().unwrap_or("error")
        ),
    };
    let body = serde_json::to_vec(&protocol::ApiError { error: sentence }).unwrap_or_default();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::CONTENT_ENCODING);
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Response::from_parts(parts, Body::from(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_errors_are_one_sentence() {
        for body in [
            &b"{"[..],
            br#"{"code": 1}"#,
            br#"{"code": "x", "extra": 1}"#,
            b"{}",
            b"{\"code\": \"\xff\"}",
        ] {
            let e = parse_json::<TraceRequest>(body).unwrap_err();
            assert_eq!(e.status, StatusCode::BAD_REQUEST);
            assert!(e.message.ends_with('.'), "{}", e.message);
            assert!(!e.message.contains('\n'), "{}", e.message);
        }
        assert!(
            parse_json::<TraceRequest>(b"{\"code\": \"\xff\"}")
                .unwrap_err()
                .message
                .contains("UTF-8")
        );
    }

    #[test]
    fn json_content_types() {
        let mut headers = axum::http::HeaderMap::new();
        assert!(!has_json_content_type(&headers));
        for (value, ok) in [
            ("application/json", true),
            ("application/json; charset=utf-8", true),
            ("Application/JSON", true),
            ("application/vnd.api+json", true),
            ("text/plain", false),
            ("+json", false),
        ] {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(value));
            assert_eq!(has_json_content_type(&headers), ok, "{value}");
        }
    }
}
