//! The Trunk-built browser app: `index.html` for `/` and `/s/{id}` (never cached, with a
//! Content-Security-Policy that admits exactly its inline bootstrap script), and the
//! hashed assets (`name-<hash>.js`, `_bg.wasm`, `.css`) cached for a year.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::error::ApiError;

/// The policy every response carries. `'wasm-unsafe-eval'` lets the page compile its
/// WebAssembly; nothing else may run or load from elsewhere.
pub const BASE_CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'";

const IMMUTABLE: &str = "public, max-age=31536000, immutable";
const NO_CACHE: &str = "no-cache";

/// `index.html`, reread when the file changes (a new frontend build needs no restart).
#[derive(Debug)]
pub struct IndexPage {
    path: PathBuf,
    cached: Mutex<Option<Loaded>>,
}

#[derive(Debug, Clone)]
struct Loaded {
    modified: Option<SystemTime>,
    html: bytes::Bytes,
    csp: HeaderValue,
    etag: HeaderValue,
}

impl IndexPage {
    pub fn new(static_dir: &Path) -> Self {
        Self {
            path: static_dir.join("index.html"),
            cached: Mutex::new(None),
        }
    }

    fn load(&self) -> std::io::Result<Loaded> {
        let modified = std::fs::metadata(&self.path)?.modified().ok();
        if let Ok(cached) = self.cached.lock()
            && let Some(loaded) = cached.as_ref()
            && loaded.modified == modified
            && modified.is_some()
        {
            return Ok(loaded.clone());
        }
        let html = std::fs::read(&self.path)?;
        let text = String::from_utf8_lossy(&html);
        let csp = csp_for(&text);
        let digest = Sha256::digest(&html);
        let etag = format!(
            "\"{}\"",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..12])
        );
        let loaded = Loaded {
            modified,
            html: html.into(),
            csp: HeaderValue::from_str(&csp).unwrap_or(HeaderValue::from_static(BASE_CSP)),
            etag: HeaderValue::from_str(&etag).unwrap_or(HeaderValue::from_static("\"index\"")),
        };
        if let Ok(mut cached) = self.cached.lock() {
            *cached = Some(loaded.clone());
        }
        Ok(loaded)
    }

    /// The page, or 304 when the browser's copy is current.
    pub fn response(&self, request_headers: &HeaderMap) -> Response {
        let loaded = match self.load() {
            Ok(loaded) => loaded,
            Err(e) => {
                tracing::error!("cannot read {}: {e}", self.path.display());
                return ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "The browser app is not available on this server; build it with cargo xtask build-frontend.",
                )
                .into_response();
            }
        };
        let fresh = request_headers
            .get(header::IF_NONE_MATCH)
            .is_some_and(|tag| tag.as_bytes() == loaded.etag.as_bytes());
        let mut response = if fresh {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            Response::new(Body::from(loaded.html))
        };
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(NO_CACHE));
        headers.insert(header::ETAG, loaded.etag);
        headers.insert(header::CONTENT_SECURITY_POLICY, loaded.csp);
        response
    }
}

/// `GET /`, `GET /index.html` and `GET /s/{id}` (the app then fetches `/api/share/{id}`).
pub async fn index(State(page): State<std::sync::Arc<IndexPage>>, headers: HeaderMap) -> Response {
    page.response(&headers)
}

/// [`BASE_CSP`] plus the hash of every inline script of `html` (Trunk's bootstrap module).
pub fn csp_for(html: &str) -> String {
    let hashes: Vec<String> = inline_scripts(html)
        .map(|script| {
            let digest = Sha256::digest(script.as_bytes());
            format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(digest))
        })
        .collect();
    if hashes.is_empty() {
        return BASE_CSP.to_owned();
    }
    BASE_CSP.replacen(
        "'wasm-unsafe-eval'",
        &format!("'wasm-unsafe-eval' {}", hashes.join(" ")),
        1,
    )
}

/// The contents of `<script>` elements without a `src`.
fn inline_scripts(html: &str) -> impl Iterator<Item = &str> {
    let lower = html.to_ascii_lowercase();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(start) = lower[at..].find("<script").map(|i| at + i) {
        let Some(open_end) = lower[start..].find('>').map(|i| start + i + 1) else {
            break;
        };
        let Some(close) = lower[open_end..].find("</script").map(|i| open_end + i) else {
            break;
        };
        if !lower[start..open_end].contains("src=") {
            found.push(&html[open_end..close]);
        }
        at = close;
    }
    found.into_iter()
}

/// Whether `path` names a file whose name carries a content hash (`name-<16+ hex>.ext`,
/// Trunk's `_bg.wasm` included): such a file never changes.
pub fn is_hashed_asset(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or_default();
    let Some((stem, _ext)) = name.rsplit_once('.') else {
        return false;
    };
    let stem = stem.strip_suffix("_bg").unwrap_or(stem);
    stem.rsplit_once('-')
        .is_some_and(|(_, hash)| hash.len() >= 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Cache headers for files served from the static folder.
pub async fn cache_headers(request: Request, next: Next) -> Response {
    let immutable = is_hashed_asset(request.uri().path());
    let mut response = next.run(request).await;
    if response.status().is_success() || response.status() == StatusCode::NOT_MODIFIED {
        let value = if immutable { IMMUTABLE } else { NO_CACHE };
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_assets_are_recognised() {
        for (path, hashed) in [
            ("/replayground-frontend-faff85e6510a16e2.js", true),
            ("/replayground-frontend-faff85e6510a16e2_bg.wasm", true),
            ("/style-ae1ee8ff3745faec.css", true),
            ("/favicon-55315213a660f4ac.svg", true),
            ("/index.html", false),
            ("/", false),
            ("/style.css", false),
            ("/my-file.js", false),
            ("/x-faff85e6510a16eg.js", false),
        ] {
            assert_eq!(is_hashed_asset(path), hashed, "{path}");
        }
    }

    #[test]
    fn the_policy_admits_exactly_the_inline_scripts() {
        let html = "<html><script type=\"module\">\nimport init from '/a.js';\n</script>\
                    <script src=\"/b.js\"></script><SCRIPT>x()</SCRIPT></html>";
        let csp = csp_for(html);
        let expected =
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(b"\nimport init from '/a.js';\n"));
        assert!(csp.contains(&format!("'sha256-{expected}'")), "{csp}");
        assert_eq!(csp.matches("'sha256-").count(), 2, "{csp}");
        assert!(csp.starts_with("default-src 'self'; script-src 'self' 'wasm-unsafe-eval' 'sha256-"));
        assert_eq!(csp_for("<p>no scripts</p>"), BASE_CSP);
    }
}
