//! HTTP to the server, for both pages: one small `fetch` client and one way of reading
//! the server's refusals.

use replayground_shared::TraceError;
use wasm_bindgen::JsCast;

use super::wire::WireMessage;

/// Why a request to the server (a trace, a prediction, a share) gave the page nothing it
/// can use, as a sentence the page shows as it is.
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
    #[error("The run was cancelled. Press Run to trace the program again.")]
    Cancelled,
}

/// A finished HTTP exchange as the page reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpReply {
    /// A 2xx status.
    pub ok: bool,
    pub status: u16,
    pub status_text: String,
    pub body: String,
}

impl HttpReply {
    /// `404 Not Found` (just `404` where the browser gives no text).
    pub fn status_line(&self) -> String {
        format!("{} {}", self.status, self.status_text).trim().to_owned()
    }
}

/// `fetch` with an optional JSON body, read as text. The page's own small client: gloo-net's
/// builder, error types and `serde_json::Value` cost the wasm bundle more than this.
/// The error is the browser's reason (`TypeError: Failed to fetch`).
pub async fn fetch_text(method: &str, url: &str, json: Option<&str>) -> Result<HttpReply, String> {
    use wasm_bindgen_futures::JsFuture;
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    if let Some(json) = json {
        let headers = web_sys::Headers::new().map_err(js_reason)?;
        headers.set("content-type", "application/json").map_err(js_reason)?;
        init.set_headers(&headers);
        init.set_body(&wasm_bindgen::JsValue::from_str(json));
    }
    let window = web_sys::window().ok_or_else(|| "the page has no window".to_owned())?;
    let response: web_sys::Response = JsFuture::from(window.fetch_with_str_and_init(url, &init))
        .await
        .map_err(js_reason)?
        .unchecked_into();
    let text = JsFuture::from(response.text().map_err(js_reason)?)
        .await
        .map_err(js_reason)?;
    Ok(HttpReply {
        ok: response.ok(),
        status: response.status(),
        status_text: response.status_text(),
        body: text.as_string().unwrap_or_default(),
    })
}

/// A rejected promise's reason as `Name: message`.
#[allow(clippy::needless_pass_by_value)] // by value to fit `map_err`
pub(crate) fn js_reason(error: wasm_bindgen::JsValue) -> String {
    match error.dyn_ref::<js_sys::Error>() {
        Some(e) => format!("{}: {}", String::from(e.name()), String::from(e.message())),
        None => error
            .as_string()
            .unwrap_or_else(|| "the browser gave no reason".to_owned()),
    }
}

/// The server's own sentence when it sent `{"error": "..."}`, else the bare status.
pub fn error_from_body(status: &str, body: &str) -> RunError {
    match serde_json::from_str::<WireMessage>(body).map(|m| m.error) {
        Ok(Some(error)) if !error.trim().is_empty() => RunError::Server(error),
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
}
