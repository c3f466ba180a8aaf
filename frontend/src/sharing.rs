//! Share links: the whole view in the URL fragment (stateless, via `shared::share`), or a
//! short `/s/{id}` link stored by the server's share API.

use replayground_shared::protocol::{ShareCreated, ShareKind};
use replayground_shared::share::{self, PlaygroundView};
use serde::{Deserialize, Serialize};

use crate::api::{error_from_body, fetch_text};

/// Where the page stores a short link.
pub const SHARE_URL: &str = "/api/share";
/// The path prefix of a short link.
pub const SHORT_LINK_PREFIX: &str = "/s/";

/// What the page was asked to open when it loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkTarget {
    /// A view from the URL fragment (`#v1.…`).
    Fragment(String),
    /// A short link's id (`/s/{id}`).
    Short(String),
    None,
}

/// Reads the page's own address: a fragment wins over a short-link path.
pub fn link_target(pathname: &str, hash: &str) -> LinkTarget {
    let fragment = hash.trim_start_matches('#');
    if !fragment.is_empty() {
        return LinkTarget::Fragment(fragment.to_owned());
    }
    match pathname.strip_prefix(SHORT_LINK_PREFIX) {
        Some(id) if !id.is_empty() && !id.contains('/') => LinkTarget::Short(id.to_owned()),
        _ => LinkTarget::None,
    }
}

/// A fragment that could not be opened, as the sentence the page shows.
pub fn decode_fragment(fragment: &str) -> Result<PlaygroundView, String> {
    share::decode(fragment)
        .map_err(|e| format!("This share link cannot be opened: {e}. The editor shows the example program instead."))
}

/// The full stateless link for a view, on `origin`.
pub fn fragment_link(origin: &str, view: &PlaygroundView) -> String {
    format!("{origin}/#{}", share::encode(view))
}

/// The body of `POST /api/share` for a playground view: the shared `ShareRequest` on the
/// wire, written without going through `serde_json::Value` (smaller wasm).
#[derive(Debug, Serialize)]
struct ShareBody<'a> {
    kind: ShareKind,
    payload: &'a PlaygroundView,
}

/// The kind of a `GET /api/share/{id}` answer (a `SharedItem`), read before its payload.
#[derive(Debug, Deserialize)]
struct ItemKind {
    kind: ShareKind,
}

/// A `SharedItem` holding a playground view.
#[derive(Debug, Deserialize)]
struct PlaygroundItem {
    payload: PlaygroundView,
}

/// Stores `view` on the server; answers the absolute short link.
pub async fn create_short_link(origin: &str, view: &PlaygroundView) -> Result<String, String> {
    let body = serde_json::to_string(&ShareBody {
        kind: ShareKind::Playground,
        payload: view,
    })
    .map_err(|e| e.to_string())?;
    let reply = fetch_text("POST", SHARE_URL, Some(&body))
        .await
        .map_err(|e| format!("Could not reach the server ({e}); the long link above still works."))?;
    if !reply.ok {
        return Err(format!(
            "The server did not store the link: {}. The long link above still works.",
            error_from_body(&reply.status.to_string(), &reply.body)
        ));
    }
    let created: ShareCreated =
        serde_json::from_str(&reply.body).map_err(|e| format!("The server's answer is not a share link ({e})."))?;
    Ok(if created.url.starts_with('/') {
        format!("{origin}{}", created.url)
    } else {
        created.url
    })
}

/// Fetches the view behind a short link.
pub async fn load_short_link(id: &str) -> Result<PlaygroundView, String> {
    let failed =
        |why: String| format!("This short link cannot be opened: {why}. The editor shows the example program instead.");
    let reply = fetch_text("GET", &format!("{SHARE_URL}/{id}"), None)
        .await
        .map_err(|e| failed(format!("the server could not be reached ({e})")))?;
    if !reply.ok {
        return Err(failed(
            error_from_body(&reply.status.to_string(), &reply.body)
                .to_string()
                .trim_end_matches('.')
                .to_owned(),
        ));
    }
    read_shared_view(&reply.body).map_err(failed)
}

/// The playground view in a `GET /api/share/{id}` answer, or why there is none.
fn read_shared_view(body: &str) -> Result<PlaygroundView, String> {
    let item: ItemKind =
        serde_json::from_str(body).map_err(|e| format!("the server's answer is not a share ({e})"))?;
    if item.kind != ShareKind::Playground {
        return Err(format!("it holds a {} share, not a playground", item.kind.as_str()));
    }
    serde_json::from_str::<PlaygroundItem>(body)
        .map(|item| item.payload)
        .map_err(|e| format!("its contents are not a playground view ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_says_what_to_open() {
        assert_eq!(link_target("/", ""), LinkTarget::None);
        assert_eq!(link_target("/", "#v1.abc"), LinkTarget::Fragment("v1.abc".into()));
        assert_eq!(link_target("/s/Ab3", ""), LinkTarget::Short("Ab3".into()));
        assert_eq!(link_target("/s/", ""), LinkTarget::None);
    }

    fn view() -> PlaygroundView {
        PlaygroundView {
            code: "x = 1\n".into(),
            stdin: "in".into(),
            breakpoints: vec![1],
            step: Some(2),
        }
    }

    #[test]
    fn the_share_body_is_the_shared_share_request() {
        use replayground_shared::protocol::ShareRequest;
        let view = view();
        let body = serde_json::to_string(&ShareBody {
            kind: ShareKind::Playground,
            payload: &view,
        })
        .unwrap();
        let request: ShareRequest = serde_json::from_str(&body).unwrap();
        assert_eq!(request.kind, ShareKind::Playground);
        assert_eq!(serde_json::from_value::<PlaygroundView>(request.payload).unwrap(), view);
    }

    #[test]
    fn shared_items_are_read_by_kind_then_payload() {
        use replayground_shared::protocol::SharedItem;
        let item = |kind, payload| {
            serde_json::to_string(&SharedItem {
                kind,
                payload,
                created_at: "2026-01-01T00:00:00Z".into(),
            })
            .unwrap()
        };
        let playground = item(ShareKind::Playground, serde_json::to_value(view()).unwrap());
        assert_eq!(read_shared_view(&playground), Ok(view()));
        let repro = item(ShareKind::Repro, serde_json::json!({"script": "x"}));
        assert_eq!(
            read_shared_view(&repro),
            Err("it holds a repro share, not a playground".to_owned())
        );
        let broken = item(ShareKind::Playground, serde_json::json!({"stdin": 3}));
        assert!(
            read_shared_view(&broken)
                .unwrap_err()
                .starts_with("its contents are not a playground view"),
        );
        assert!(read_shared_view("<html>").unwrap_err().starts_with("the server's answer is not a share"));
    }

    #[test]
    fn fragment_links_round_trip_and_corrupt_ones_say_so() {
        let view = PlaygroundView {
            code: "x = 1\n".into(),
            stdin: String::new(),
            breakpoints: vec![1],
            step: Some(2),
        };
        let link = fragment_link("http://h", &view);
        let fragment = link.split_once('#').unwrap().1;
        assert_eq!(decode_fragment(fragment), Ok(view));
        let error = decode_fragment("v1.!!!").unwrap_err();
        assert!(
            error.starts_with("This share link cannot be opened: this link is damaged"),
            "{error}"
        );
    }
}
