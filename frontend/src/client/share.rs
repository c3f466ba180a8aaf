//! The server's share store (`/api/share`), for both pages: a playground view or a
//! reproduction goes in under its kind, a short `/s/{id}` link comes back. Each page reads
//! the stored payload of its own kind and words the failures with what still works.

use replayground_shared::protocol::{ShareCreated, ShareKind};
use serde::Serialize;

use super::http::{RunError, error_from_body, fetch_text};

/// Where the pages store a short link.
pub const SHARE_URL: &str = "/api/share";
/// The path prefix of a short link.
pub const SHORT_LINK_PREFIX: &str = "/s/";

/// The body of `POST /api/share`: the shared `ShareRequest` on the wire, written without
/// going through `serde_json::Value` (smaller wasm).
#[derive(Debug, Serialize)]
struct ShareBody<'a, T> {
    kind: ShareKind,
    payload: &'a T,
}

/// Why a share was not stored.
#[derive(Debug)]
pub enum StoreError {
    /// The payload could not be written as JSON.
    Unwritable(serde_json::Error),
    /// The server could not be reached (the browser's reason).
    Unreachable(String),
    /// The server answered with an error.
    Refused(RunError),
    /// The server's answer is not a share link (why it cannot be read).
    NotALink(serde_json::Error),
}

/// Stores `payload` as a share of `kind`; answers the short link, absolute against `origin`.
pub async fn store<T: Serialize>(kind: ShareKind, payload: &T, origin: &str) -> Result<String, StoreError> {
    let body = serde_json::to_string(&ShareBody { kind, payload }).map_err(StoreError::Unwritable)?;
    let reply = fetch_text("POST", SHARE_URL, Some(&body))
        .await
        .map_err(StoreError::Unreachable)?;
    if !reply.ok {
        return Err(StoreError::Refused(error_from_body(
            &reply.status.to_string(),
            &reply.body,
        )));
    }
    let created: ShareCreated = serde_json::from_str(&reply.body).map_err(StoreError::NotALink)?;
    Ok(if created.url.starts_with('/') {
        format!("{origin}{}", created.url)
    } else {
        created.url
    })
}

/// The body of `GET /api/share/{id}` (a `SharedItem`, read by the page that asked for it),
/// or why there is none as a clause for the page's sentence (`the server could not be
/// reached (…)`).
pub async fn fetch(id: &str) -> Result<String, String> {
    let reply = fetch_text("GET", &format!("{SHARE_URL}/{id}"), None)
        .await
        .map_err(|e| format!("the server could not be reached ({e})"))?;
    if !reply.ok {
        return Err(error_from_body(&reply.status.to_string(), &reply.body)
            .to_string()
            .trim_end_matches('.')
            .to_owned());
    }
    Ok(reply.body)
}

#[cfg(test)]
mod tests {
    use replayground_shared::protocol::ShareRequest;
    use replayground_shared::share::PlaygroundView;

    use super::*;

    #[test]
    fn the_share_body_is_the_shared_share_request() {
        let view = PlaygroundView {
            code: "x = 1\n".into(),
            stdin: "in".into(),
            breakpoints: vec![1],
            step: Some(2),
        };
        let body = serde_json::to_string(&ShareBody {
            kind: ShareKind::Playground,
            payload: &view,
        })
        .unwrap();
        let request: ShareRequest = serde_json::from_str(&body).unwrap();
        assert_eq!(request.kind, ShareKind::Playground);
        assert_eq!(serde_json::from_value::<PlaygroundView>(request.payload).unwrap(), view);
    }
}
