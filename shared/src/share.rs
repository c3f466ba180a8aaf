//! Stateless share links: a playground view packed into a URL fragment.
//!
//! `#v1.<base64url(deflate(json))>`: the JSON of a [`PlaygroundView`], compressed
//! with raw deflate and written in URL-safe base64 without padding. The version
//! prefix lets later formats coexist with old links.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

const PREFIX: &str = "v1.";
/// A decoded view larger than this is refused (a link is never that big honestly).
const MAX_DECODED_BYTES: usize = 2 * 1024 * 1024;

/// Everything needed to restore what a person was looking at.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlaygroundView {
    pub code: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stdin: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub breakpoints: Vec<u32>,
    /// The event index the debugger was at, if a trace was open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
}

/// A link that cannot be opened, with the reason in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShareLinkError {
    #[error("this link was made by a newer or unknown version of Replayground (it does not start with `v1.`)")]
    UnknownVersion,
    #[error("this link is damaged: it is not valid URL-safe base64; check that it was copied whole")]
    NotBase64,
    #[error("this link is damaged: its contents do not decompress; check that it was copied whole")]
    NotDeflate,
    #[error("this link is damaged: {0}")]
    BadContents(String),
}

/// Encodes a view as a URL fragment (without the `#`).
pub fn encode(view: &PlaygroundView) -> String {
    let json = serde_json::to_vec(view).expect("a view always serialises");
    let packed = miniz_oxide::deflate::compress_to_vec(&json, 9);
    format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(packed))
}

/// Decodes a URL fragment (with or without the leading `#`).
pub fn decode(fragment: &str) -> Result<PlaygroundView, ShareLinkError> {
    let fragment = fragment.trim().trim_start_matches('#');
    let body = fragment.strip_prefix(PREFIX).ok_or(ShareLinkError::UnknownVersion)?;
    let packed = URL_SAFE_NO_PAD.decode(body).map_err(|_| ShareLinkError::NotBase64)?;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_DECODED_BYTES)
        .map_err(|_| ShareLinkError::NotDeflate)?;
    serde_json::from_slice(&json).map_err(|e| ShareLinkError::BadContents(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn links_are_compact_and_url_safe() {
        let view = PlaygroundView {
            code: "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\nprint(fib(10))\n".repeat(20),
            stdin: String::new(),
            breakpoints: vec![2, 4],
            step: Some(17),
        };
        let link = encode(&view);
        assert!(
            link.len() < view.code.len() / 4,
            "{} bytes for {} bytes of code",
            link.len(),
            view.code.len()
        );
        assert!(link.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)));
        assert_eq!(decode(&format!("#{link}")).unwrap(), view);
    }

    #[test]
    fn corrupt_links_say_what_is_wrong() {
        assert_eq!(decode("v2.abc"), Err(ShareLinkError::UnknownVersion));
        assert_eq!(decode("v1.***"), Err(ShareLinkError::NotBase64));
        assert_eq!(decode("v1.AAAA"), Err(ShareLinkError::NotDeflate));
        let not_a_view = format!(
            "v1.{}",
            URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(b"[1]", 6))
        );
        assert!(matches!(decode(&not_a_view), Err(ShareLinkError::BadContents(_))));
        let link = encode(&PlaygroundView {
            code: "x = 1".into(),
            ..PlaygroundView::default()
        });
        assert!(decode(&link[..link.len() - 3]).is_err(), "a truncated link is refused");
    }

    proptest! {
        #[test]
        fn any_view_round_trips(code in "\\PC{0,300}", stdin in "\\PC{0,40}", bps in proptest::collection::vec(1u32..500, 0..6), step in proptest::option::of(0u32..100_000)) {
            let view = PlaygroundView { code, stdin, breakpoints: bps, step };
            prop_assert_eq!(decode(&encode(&view)).unwrap(), view);
        }
    }
}
