//! Share links: the whole view in the URL fragment (stateless, via `shared::share`), or a
//! short `/s/{id}` link stored by the server's share API.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use replayground_shared::protocol::ShareKind;
use replayground_shared::share::{PlaygroundView, ShareLinkError};
use serde::Deserialize;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::client::http::js_reason;
use crate::client::share::{self, SHORT_LINK_PREFIX, StoreError};

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

/// The version prefix of a fragment link (as `shared::share` writes it).
const PREFIX: &str = "v1.";
/// A decoded view larger than this is refused, as `shared::share` does.
const MAX_DECODED_BYTES: usize = 2 * 1024 * 1024;

/// A fragment that could not be opened, as the sentence the page shows.
pub async fn decode_fragment(fragment: &str) -> Result<PlaygroundView, String> {
    let opened = match packed_bytes(fragment) {
        Ok(packed) => match inflate_raw(&packed).await {
            Some(json) => view_from_json(&json),
            None => Err(ShareLinkError::NotDeflate),
        },
        Err(e) => Err(e),
    };
    opened.map_err(|e| format!("This share link cannot be opened: {e}. The editor shows the example program instead."))
}

/// The fragment (without `#`) of a view: the format of `shared::share::encode`
/// (`v1.` + URL-safe base64 of raw deflate of the JSON), compressed by the browser.
pub async fn encode_fragment(view: &PlaygroundView) -> Result<String, String> {
    let json = serde_json::to_string(view).map_err(|e| e.to_string())?;
    let packed = transform("CompressionStream", json.as_bytes(), usize::MAX)
        .await
        .map_err(|e| format!("The browser could not compress the link ({})", js_reason(e)))?;
    Ok(fragment_of(&packed))
}

/// `v1.` + URL-safe base64 (no padding) of deflated bytes.
fn fragment_of(packed: &[u8]) -> String {
    format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(packed))
}

/// The deflated bytes of a fragment (with or without the leading `#`).
fn packed_bytes(fragment: &str) -> Result<Vec<u8>, ShareLinkError> {
    let fragment = fragment.trim().trim_start_matches('#');
    let body = fragment.strip_prefix(PREFIX).ok_or(ShareLinkError::UnknownVersion)?;
    URL_SAFE_NO_PAD.decode(body).map_err(|_| ShareLinkError::NotBase64)
}

fn view_from_json(json: &[u8]) -> Result<PlaygroundView, ShareLinkError> {
    let text = std::str::from_utf8(json).map_err(|e| ShareLinkError::BadContents(e.to_string()))?;
    serde_json::from_str(text).map_err(|e| ShareLinkError::BadContents(e.to_string()))
}

/// Inflates a link's bytes, refusing more than [`MAX_DECODED_BYTES`]; `None` if they are
/// not raw deflate.
async fn inflate_raw(packed: &[u8]) -> Option<Vec<u8>> {
    transform("DecompressionStream", packed, MAX_DECODED_BYTES).await.ok()
}

/// Runs `bytes` through the browser's `CompressionStream` or `DecompressionStream`
/// (`deflate-raw`), reading at most `limit` bytes out. The browser's own deflate instead
/// of `shared::share`'s `miniz_oxide`: ~30 KB less wasm, and the links are the same format.
async fn transform(class: &str, bytes: &[u8], limit: usize) -> Result<Vec<u8>, JsValue> {
    let constructor: js_sys::Function =
        js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str(class))?.dyn_into()?;
    // A compression stream is a {readable, writable} pair, as `pipeThrough` wants.
    let pair: web_sys::ReadableWritablePair =
        js_sys::Reflect::construct(&constructor, &js_sys::Array::of1(&JsValue::from_str("deflate-raw")))?
            .unchecked_into();
    let blob = web_sys::Blob::new_with_u8_array_sequence(&js_sys::Array::of1(&js_sys::Uint8Array::from(bytes)))?;
    let reader: web_sys::ReadableStreamDefaultReader = blob.stream().pipe_through(&pair).get_reader().unchecked_into();
    let mut out = Vec::new();
    loop {
        let chunk = JsFuture::from(reader.read()).await?;
        if js_sys::Reflect::get(&chunk, &JsValue::from_str("done"))?.is_truthy() {
            return Ok(out);
        }
        let value: js_sys::Uint8Array = js_sys::Reflect::get(&chunk, &JsValue::from_str("value"))?.unchecked_into();
        if out.len() + value.length() as usize > limit {
            let _ = reader.cancel();
            return Err(JsValue::from_str("the link's contents are too large"));
        }
        out.extend(value.to_vec());
    }
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
    share::store(ShareKind::Playground, view, origin)
        .await
        .map_err(|e| match e {
            StoreError::Unwritable(e) => e.to_string(),
            StoreError::Unreachable(e) => {
                format!("Could not reach the server ({e}); the long link above still works.")
            }
            StoreError::Refused(e) => {
                format!("The server did not store the link: {e}. The long link above still works.")
            }
            StoreError::NotALink(e) => format!("The server's answer is not a share link ({e})."),
        })
}

/// Fetches the view behind a short link.
pub async fn load_short_link(id: &str) -> Result<PlaygroundView, String> {
    let failed =
        |why: String| format!("This short link cannot be opened: {why}. The editor shows the example program instead.");
    let body = share::fetch(id).await.map_err(failed)?;
    read_shared_view(&body).map_err(failed)
}

/// The playground view in a `GET /api/share/{id}` answer, or why there is none.
fn read_shared_view(body: &str) -> Result<PlaygroundView, String> {
    let item: ItemKind = serde_json::from_str(body).map_err(|e| format!("the server's answer is not a share ({e})"))?;
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
        assert!(
            read_shared_view("<html>")
                .unwrap_err()
                .starts_with("the server's answer is not a share")
        );
    }

    #[test]
    fn fragments_are_shared_shares_format() {
        // shared::share writes `v1.` + base64url(deflate(json)); this page reads the same.
        let fragment = replayground_shared::share::encode(&view());
        let packed = packed_bytes(&format!("#{fragment}")).unwrap();
        assert_eq!(fragment_of(&packed), fragment);
        let json = miniz_oxide::inflate::decompress_to_vec(&packed).unwrap();
        assert_eq!(view_from_json(&json), Ok(view()));
        assert_eq!(packed_bytes("v2.abc"), Err(ShareLinkError::UnknownVersion));
        assert_eq!(packed_bytes("v1.!!!"), Err(ShareLinkError::NotBase64));
        assert!(matches!(
            view_from_json(b"{\"code\": 1}"),
            Err(ShareLinkError::BadContents(_))
        ));
    }
}
