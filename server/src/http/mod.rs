//! The HTTP server: routes, middleware and graceful shutdown.
//!
//! | Route | Answer |
//! | --- | --- |
//! | `POST /api/trace` | the [`Trace`](replayground_shared::Trace) of a program |
//! | `POST /api/share` | 201 `{"id", "url"}` |
//! | `GET /api/share/{id}` | `{"kind", "payload", "created_at"}` |
//! | `POST /api/projects` | 201 `{"id", "files", "python_files", ...}` for a .zip / .tar.gz body ([`repro`]) |
//! | `GET /api/projects/{id}` | the uploaded project's summary |
//! | `GET /api/ws` | the WebSocket session ([`ws`]) |
//! | `GET /healthz` | 200 or 503 with the reason |
//! | `GET /metrics` | Prometheus text (with `--metrics` only) |
//! | `GET /`, `GET /s/{id}` | the browser app's `index.html` (the reproduction page's for a stored reproduction) |
//! | `GET /repro/` | the reproduction page (`repro/index.html`, a second trunk build) |
//! | anything else | a file of the static folder, or a JSON 404 |
//!
//! Every response carries a request id (`x-request-id`) and the security headers; API
//! errors are `{"error": "one sentence"}`.

mod connections;
pub mod error;
pub mod ops;
pub mod repro;
pub mod share;
pub mod static_files;
pub mod trace;
pub mod ws;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, MatchedPath, Path, Request, State};
use axum::handler::HandlerWithoutStateExt as _;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use replayground_shared::protocol::{MAX_CODE_BYTES, MAX_SHARE_PAYLOAD_BYTES, MAX_STDIN_BYTES};
use tokio::net::TcpListener;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::{DefaultOnFailure, DefaultOnResponse, TraceLayer};
use tracing::Level;

use self::error::ApiError;
use self::static_files::{BASE_CSP, IndexPage};
use crate::app::{AppState, retry_after_secs};
use crate::metrics::Metrics;

/// A trace request: the program and its input, JSON-escaped (which can double them).
pub const TRACE_BODY_LIMIT: usize = 2 * (MAX_CODE_BYTES + MAX_STDIN_BYTES) + 16 * 1024;
/// A share request: the payload and its envelope.
pub const SHARE_BODY_LIMIT: usize = MAX_SHARE_PAYLOAD_BYTES + 16 * 1024;
/// Everything else that has a body.
const DEFAULT_BODY_LIMIT: usize = 64 * 1024;

/// The client's address, as the rate limiter saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub IpAddr);

/// The whole application: API, WebSocket, health, metrics and the browser app.
pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route(
            "/api/trace",
            post(trace::trace).layer(DefaultBodyLimit::max(TRACE_BODY_LIMIT)),
        )
        .route(
            "/api/share",
            post(share::create).layer(DefaultBodyLimit::max(SHARE_BODY_LIMIT)),
        )
        .route("/api/share/{id}", get(share::fetch))
        .route(
            "/api/projects",
            post(repro::upload).layer(DefaultBodyLimit::max(repro::PROJECT_BODY_LIMIT)),
        )
        .route("/api/projects/{id}", get(repro::summary))
        .route("/api/ws", get(ws::upgrade))
        .route("/api", any(error::api_not_found))
        .route("/api/{*rest}", any(error::api_not_found))
        .route("/healthz", get(ops::healthz));
    let api = if state.config.metrics {
        api.route("/metrics", get(ops::metrics))
    } else {
        api
    }
    .layer(DefaultBodyLimit::max(DEFAULT_BODY_LIMIT));
    let app = match &state.config.static_dir {
        Some(dir) => {
            let page = Arc::new(IndexPage::new(dir));
            let index = get(static_files::index).with_state(page);
            // The reproduction page is a second trunk build in `dir/repro/`.
            let pages = Arc::new(repro::Pages {
                playground: IndexPage::new(dir),
                repro: IndexPage::new(&dir.join("repro")),
            });
            let repro_page = get(repro::repro_page).with_state(Arc::clone(&pages));
            let shared_page = move |State(state): State<AppState>, Path(id): Path<String>, headers: HeaderMap| {
                let pages = Arc::clone(&pages);
                async move { repro::share_page(&state, &pages, &id, &headers).await }
            };
            let files = ServeDir::new(dir)
                .append_index_html_on_directories(false)
                .fallback(error::not_found.into_service());
            api.route("/", index.clone())
                .route("/index.html", index.clone())
                .route("/s/{id}", get(shared_page))
                .route("/repro", get(repro::repro_redirect))
                .route("/repro/", repro_page.clone())
                .route("/repro/index.html", repro_page)
                .fallback_service(
                    ServiceBuilder::new()
                        .layer(middleware::from_fn(static_files::cache_headers))
                        .service(files),
                )
        }
        None => api.route("/s/{id}", get(no_app)).fallback(error::not_found),
    };
    let request_id = HeaderName::from_static("x-request-id");
    app.method_not_allowed_fallback(error::method_not_allowed)
        .layer(
            ServiceBuilder::new()
                .layer(SetRequestIdLayer::new(request_id.clone(), MakeRequestUuid))
                .layer(
                    TraceLayer::new_for_http()
                        .make_span_with(request_span)
                        .on_request(())
                        .on_response(DefaultOnResponse::new().level(Level::INFO))
                        .on_failure(DefaultOnFailure::new().level(Level::WARN)),
                )
                .layer(PropagateRequestIdLayer::new(request_id))
                .layer(CatchPanicLayer::custom(error::panic_response))
                .layer(SetResponseHeaderLayer::if_not_present(
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static(BASE_CSP),
                ))
                .layer(SetResponseHeaderLayer::overriding(
                    header::X_CONTENT_TYPE_OPTIONS,
                    HeaderValue::from_static("nosniff"),
                ))
                .layer(SetResponseHeaderLayer::overriding(
                    header::REFERRER_POLICY,
                    HeaderValue::from_static("no-referrer"),
                ))
                .layer(SetResponseHeaderLayer::overriding(
                    header::X_FRAME_OPTIONS,
                    HeaderValue::from_static("DENY"),
                ))
                .layer(middleware::from_fn_with_state(
                    Arc::clone(&state.metrics),
                    count_request,
                ))
                .layer(middleware::from_fn(error::json_errors))
                .layer(CompressionLayer::new())
                .layer(middleware::from_fn_with_state(state.clone(), limit_clients)),
        )
        .with_state(state)
}

async fn no_app() -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "This server serves only the API; start it with --static-dir pointing at the built browser app.",
    )
}

fn request_span(request: &Request) -> tracing::Span {
    let id = request
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    tracing::info_span!("request", request_id = %id, method = %request.method(), path = %request.uri().path())
}

/// Counts every request by route template (never by raw path) and status.
async fn count_request(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "other".to_owned(), |p| p.as_str().to_owned());
    let method = match *request.method() {
        Method::GET | Method::HEAD | Method::POST | Method::PUT | Method::DELETE | Method::OPTIONS => {
            request.method().as_str().to_owned()
        }
        _ => "other".to_owned(),
    };
    let started = Instant::now();
    let response = next.run(request).await;
    metrics.request(&route, &method, response.status().as_u16(), started.elapsed());
    response
}

/// The per-client rate limit of `/api/*`, and the [`ClientIp`] of every request.
async fn limit_clients(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let ip = client_ip(
        request.headers(),
        request.extensions().get::<ConnectInfo<SocketAddr>>(),
        state.config.client_ip_header.as_ref(),
    );
    request.extensions_mut().insert(ClientIp(ip));
    if request.uri().path().starts_with("/api/")
        && let Some(limiter) = &state.limiter
        && let Err(wait) = limiter.check(ip)
    {
        state.metrics.rejected("rate_limited");
        let seconds = retry_after_secs(wait);
        return ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!("Too many requests from your address; wait {seconds} s and try again."),
        )
        .retry_after(seconds)
        .into_response();
    }
    next.run(request).await
}

/// The client's IP: the last address of `header` when configured and present (a proxy
/// you run appends the address it saw), else the peer address.
pub fn client_ip(headers: &HeaderMap, peer: Option<&ConnectInfo<SocketAddr>>, header: Option<&HeaderName>) -> IpAddr {
    header
        .and_then(|name| headers.get(name))
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.rsplit(',').next())
        .and_then(|v| v.trim().parse::<IpAddr>().ok())
        .or_else(|| peer.map(|ConnectInfo(addr)| addr.ip()))
        .unwrap_or(IpAddr::from([0, 0, 0, 0]))
}

/// Serves the app on `listener` until `state.shutdown.draining` fires (see
/// [`crate::jobs::Shutdown::begin`]); then lets sessions and jobs end and returns.
///
/// Each connection must send its request head within `header_read_timeout`, also while
/// idle between keep-alive requests (hyper's timer), and each client address may hold at
/// most `max_connections_per_ip` connections, so silent connections cannot use up the
/// server's file descriptors.
pub async fn serve(listener: TcpListener, state: AppState) -> std::io::Result<()> {
    let shutdown = state.shutdown.clone();
    let grace = state.config.shutdown_grace;
    let forget = tokio::spawn({
        let state = state.clone();
        async move {
            loop {
                tokio::time::sleep(Duration::from_secs(60)).await;
                if let Some(limiter) = &state.limiter {
                    limiter.forget_idle();
                    tracing::debug!(clients = limiter.clients(), "rate limiter pruned");
                }
            }
        }
    });
    let app = router(state.clone());
    let connections = connections::Admission::new(state.config.max_connections_per_ip, state.config.max_connections);
    let open = tokio_util::task::TaskTracker::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors: back off instead of spinning.
                    tracing::warn!("accept error: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = shutdown.draining.cancelled() => break,
        };
        let Some(admitted) = connections.admit(peer.ip()) else {
            tracing::debug!(%peer, "connection refused: too many from this address");
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(tower::ServiceExt::map_request(
            app.clone(),
            move |mut request: Request<hyper::body::Incoming>| {
                request.extensions_mut().insert(ConnectInfo(peer));
                request
            },
        ));
        let header_read_timeout = state.config.header_read_timeout;
        let draining = shutdown.draining.clone();
        open.spawn(async move {
            let _admitted = admitted;
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_read_timeout)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .with_upgrades();
            tokio::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                () = draining.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = result {
                tracing::debug!(%peer, "connection ended: {e}");
            }
        });
    }
    open.close();
    // Connections that outlive the grace period (a client that never finishes reading)
    // do not hold the process.
    if tokio::time::timeout(grace + Duration::from_secs(10), open.wait())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the grace period; closing them");
    }
    forget.abort();
    shutdown.tasks.close();
    if tokio::time::timeout(grace + Duration::from_secs(5), shutdown.tasks.wait())
        .await
        .is_err()
    {
        tracing::warn!(left = shutdown.tasks.len(), "sessions still running at exit");
    }
    Ok(())
}

/// Waits for SIGTERM or Ctrl-C.
pub async fn termination_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => tracing::info!("Ctrl-C received"),
        () = terminate => tracing::info!("SIGTERM received"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_ip_comes_from_the_proxy_header_only_when_configured() {
        let peer = ConnectInfo(SocketAddr::from(([10, 0, 0, 1], 5000)));
        let mut headers = HeaderMap::new();
        headers.insert("x-forwarded-for", HeaderValue::from_static("1.2.3.4, 5.6.7.8"));
        let name = HeaderName::from_static("x-forwarded-for");
        assert_eq!(client_ip(&headers, Some(&peer), None), IpAddr::from([10, 0, 0, 1]));
        assert_eq!(
            client_ip(&headers, Some(&peer), Some(&name)),
            IpAddr::from([5, 6, 7, 8])
        );
        headers.insert("x-forwarded-for", HeaderValue::from_static("garbage"));
        assert_eq!(
            client_ip(&headers, Some(&peer), Some(&name)),
            IpAddr::from([10, 0, 0, 1])
        );
    }
}
