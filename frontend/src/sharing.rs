//! Share links: the whole view in the URL fragment (stateless, via `shared::share`), or a
//! short `/s/{id}` link stored by the server's share API.

use gloo_net::http::Request;
use replayground_shared::protocol::{ShareCreated, ShareKind, ShareRequest, SharedItem};
use replayground_shared::share::{self, PlaygroundView};

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

/// Stores `view` on the server; answers the absolute short link.
pub async fn create_short_link(origin: &str, view: &PlaygroundView) -> Result<String, String> {
    let payload = serde_json::to_value(view).map_err(|e| e.to_string())?;
    let request = ShareRequest {
        kind: ShareKind::Playground,
        payload,
    };
    let response = Request::post(SHARE_URL)
        .json(&request)
        .map_err(|e| e.to_string())?
        .send()
        .await
        .map_err(|e| format!("Could not reach the server ({e}); the long link above still works."))?;
    if !response.ok() {
        let body = response.text().await.unwrap_or_default();
        return Err(format!(
            "The server did not store the link: {}. The long link above still works.",
            crate::api::error_from_body(&response.status().to_string(), &body)
        ));
    }
    let created: ShareCreated = response
        .json()
        .await
        .map_err(|e| format!("The server's answer is not a share link ({e})."))?;
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
    let response = Request::get(&format!("{SHARE_URL}/{id}"))
        .send()
        .await
        .map_err(|e| failed(format!("the server could not be reached ({e})")))?;
    if !response.ok() {
        let body = response.text().await.unwrap_or_default();
        return Err(failed(
            crate::api::error_from_body(&response.status().to_string(), &body)
                .to_string()
                .trim_end_matches('.')
                .to_owned(),
        ));
    }
    let item: SharedItem = response
        .json()
        .await
        .map_err(|e| failed(format!("the server's answer is not a share ({e})")))?;
    if item.kind != ShareKind::Playground {
        return Err(failed(format!(
            "it holds a {} share, not a playground",
            item.kind.as_str()
        )));
    }
    serde_json::from_value(item.payload).map_err(|e| failed(format!("its contents are not a playground view ({e})")))
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
