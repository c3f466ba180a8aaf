//! The HTTP API: traces, shares (on SQLite and, when configured, Postgres), errors,
//! limits, health, metrics, the static app and graceful shutdown.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use common::{Fake, fake, nonce, real_sandbox, sqlite_store, state, stores, stream};
use http_body_util::BodyExt as _;
use replayground_server::app::{AppState, ServerConfig};
use replayground_server::http::router;
use replayground_shared::protocol::{MAX_CODE_BYTES, MAX_SHARE_PAYLOAD_BYTES};
use replayground_shared::{Outcome, Trace};
use serde_json::{Value, json};
use tower::ServiceExt as _;

fn config() -> ServerConfig {
    ServerConfig {
        rate_limit_per_second: 0,
        ..ServerConfig::default()
    }
}

async fn app_with(
    sandbox: Arc<dyn replayground_server::sandbox::Sandbox>,
    config: ServerConfig,
) -> (Router, AppState, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let state = state(sandbox, sqlite_store(dir.path()).await, config);
    (router(state.clone()), state, dir)
}

struct Answer {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// The error sentence of a JSON error answer.
    fn error(&self) -> String {
        let json = self.json();
        let sentence = json["error"]
            .as_str()
            .unwrap_or_else(|| panic!("no error in {json}"))
            .to_owned();
        assert!(sentence.ends_with('.'), "{sentence}");
        assert!(!sentence.contains('\n'), "{sentence}");
        sentence
    }
}

async fn call(app: &Router, request: Request<Body>) -> Answer {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.unwrap().to_bytes().to_vec();
    Answer { status, headers, body }
}

fn post(path: &str, content_type: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut request = Request::post(path);
    if let Some(content_type) = content_type {
        request = request.header(header::CONTENT_TYPE, content_type);
    }
    request.body(body.into()).unwrap()
}

fn post_json(path: &str, body: &Value) -> Request<Body> {
    post(path, Some("application/json"), body.to_string())
}

fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
}

#[tokio::test]
async fn traces_a_program() {
    let (app, _, _dir) = app_with(fake(Fake::Stream(stream(3))), config()).await;
    let answer = call(
        &app,
        post_json("/api/trace", &json!({"code": "x = 1", "stdin": "", "max_steps": 10})),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    let trace: Trace = serde_json::from_slice(&answer.body).unwrap();
    trace.validate().unwrap();
    assert_eq!(trace.events.len(), 3);
    assert_eq!(trace.stdout, "hello\n");
}

#[tokio::test]
async fn traces_for_real_and_a_syntax_error_is_a_trace_not_an_error() {
    let (app, _, _dir) = app_with(real_sandbox(), config()).await;
    let answer = call(
        &app,
        post_json(
            "/api/trace",
            &json!({"code": "x = input()\nprint(x * 2)\n", "stdin": "ab\n"}),
        ),
    )
    .await;
    assert_eq!(
        answer.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let trace: Trace = serde_json::from_slice(&answer.body).unwrap();
    trace.validate().unwrap();
    assert_eq!(trace.outcome, Outcome::Finished);
    assert_eq!(trace.stdout, "abab\n");

    let answer = call(&app, post_json("/api/trace", &json!({"code": "def f(:\n    pass\n"}))).await;
    assert_eq!(answer.status, StatusCode::OK);
    let trace: Trace = serde_json::from_slice(&answer.body).unwrap();
    assert!(
        matches!(trace.outcome, Outcome::SyntaxError { line: Some(1), .. }),
        "{:?}",
        trace.outcome
    );
}

#[tokio::test]
async fn a_crashed_tracer_is_422() {
    let (app, _, _dir) = app_with(fake(Fake::Stream("Traceback: not a trace\n".into())), config()).await;
    let answer = call(&app, post_json("/api/trace", &json!({"code": "x = 1"}))).await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        answer.error().starts_with("The program could not be traced"),
        "{}",
        answer.error()
    );
}

#[tokio::test]
async fn bad_trace_requests_get_one_sentence_and_the_server_keeps_serving() {
    let (app, _, _dir) = app_with(fake(Fake::Stream(stream(1))), config()).await;
    let json = Some("application/json");
    let big_code = json!({"code": "x".repeat(MAX_CODE_BYTES + 1)}).to_string();
    let big_stdin = json!({"code": "x", "stdin": "y".repeat(MAX_CODE_BYTES + 1)}).to_string();
    let huge_body = format!("{{\"code\": \"{}\"}}", "x".repeat(2 * 1024 * 1024));
    let cases: Vec<(Option<&str>, Vec<u8>, StatusCode, &str)> = vec![
        (json, b"{".to_vec(), StatusCode::BAD_REQUEST, "not valid JSON"),
        (json, b"".to_vec(), StatusCode::BAD_REQUEST, "not valid JSON"),
        (
            json,
            br#"{"code": 1}"#.to_vec(),
            StatusCode::BAD_REQUEST,
            "invalid type",
        ),
        (json, b"[1, 2]".to_vec(), StatusCode::BAD_REQUEST, "expected shape"),
        (json, b"{}".to_vec(), StatusCode::BAD_REQUEST, "missing field `code`"),
        (
            json,
            br#"{"code": "x", "lang": "py"}"#.to_vec(),
            StatusCode::BAD_REQUEST,
            "unknown field `lang`",
        ),
        (
            json,
            br#"{"code": "x", "max_steps": "ten"}"#.to_vec(),
            StatusCode::BAD_REQUEST,
            "invalid type",
        ),
        (
            json,
            br#"{"code": "x", "max_steps": 0}"#.to_vec(),
            StatusCode::BAD_REQUEST,
            "max_steps",
        ),
        (
            json,
            br#"{"code": "x", "max_steps": -1}"#.to_vec(),
            StatusCode::BAD_REQUEST,
            "invalid value",
        ),
        (
            json,
            b"{\"code\": \"\xff\xfe\"}".to_vec(),
            StatusCode::BAD_REQUEST,
            "UTF-8",
        ),
        (
            Some("text/plain"),
            br#"{"code": "x"}"#.to_vec(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type",
        ),
        (
            None,
            br#"{"code": "x"}"#.to_vec(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type",
        ),
        (
            json,
            big_code.into_bytes(),
            StatusCode::PAYLOAD_TOO_LARGE,
            "limit is 102,400 bytes (100 KB)",
        ),
        (
            json,
            big_stdin.into_bytes(),
            StatusCode::PAYLOAD_TOO_LARGE,
            "limit is 102,400 bytes (100 KB)",
        ),
        (json, huge_body.into_bytes(), StatusCode::PAYLOAD_TOO_LARGE, "too large"),
    ];
    for (content_type, body, status, needle) in cases {
        let answer = call(&app, post("/api/trace", content_type, body.clone())).await;
        let shown = String::from_utf8_lossy(&body[..body.len().min(60)]).into_owned();
        assert_eq!(
            answer.status,
            status,
            "{shown}: {}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(answer.headers[header::CONTENT_TYPE], "application/json", "{shown}");
        let sentence = answer.error();
        assert!(sentence.contains(needle), "{shown}: {sentence:?} lacks {needle:?}");
        // The server still serves.
        let ok = call(&app, post_json("/api/trace", &json!({"code": "x = 1"}))).await;
        assert_eq!(ok.status, StatusCode::OK);
    }
}

#[tokio::test]
async fn a_full_queue_is_429_with_retry_after() {
    let config = ServerConfig {
        max_jobs: 1,
        max_queued_jobs: 0,
        ..config()
    };
    let (app, state, _dir) = app_with(fake(Fake::Slow(Duration::from_secs(2), stream(1))), config).await;
    let first = tokio::spawn({
        let app = app.clone();
        async move { call(&app, post_json("/api/trace", &json!({"code": "x = 1"}))).await }
    });
    common::eventually(Duration::from_secs(30), "the first job holds its slot", || {
        state.jobs.running() > 0
    })
    .await;
    let answer = call(&app, post_json("/api/trace", &json!({"code": "x = 2"}))).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(answer.headers[header::RETRY_AFTER], "5");
    assert!(answer.error().contains("busy"));
    assert_eq!(first.await.unwrap().status, StatusCode::OK);

    // A waiter that gets no slot in time is refused the same way.
    let config = ServerConfig {
        max_jobs: 1,
        max_queued_jobs: 4,
        queue_timeout: Duration::from_millis(100),
        ..ServerConfig::default()
    };
    let (app, state, _dir) = app_with(fake(Fake::Slow(Duration::from_secs(2), stream(1))), config).await;
    let _first = tokio::spawn({
        let app = app.clone();
        async move { call(&app, post_json("/api/trace", &json!({"code": "x = 1"}))).await }
    });
    common::eventually(Duration::from_secs(30), "the first job holds its slot", || {
        state.jobs.running() > 0
    })
    .await;
    let answer = call(&app, post_json("/api/trace", &json!({"code": "x = 2"}))).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(answer.headers.contains_key(header::RETRY_AFTER));
}

#[tokio::test]
async fn no_sandbox_is_503_and_the_health_check_says_why() {
    let (app, _, _dir) = app_with(fake(Fake::Broken), config()).await;
    let answer = call(&app, post_json("/api/trace", &json!({"code": "x = 1"}))).await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(answer.error().contains("namespaces are disabled"), "{}", answer.error());
    let health = call(&app, get("/healthz")).await;
    assert_eq!(health.status, StatusCode::SERVICE_UNAVAILABLE);
    let json = health.json();
    assert_eq!(json["status"], "unavailable");
    assert!(json["error"].as_str().unwrap().contains("sandbox"), "{json}");
}

#[tokio::test]
async fn clients_over_their_rate_get_429_and_others_do_not() {
    let config = ServerConfig {
        rate_limit_per_second: 1,
        rate_limit_burst: 3,
        ..ServerConfig::default()
    };
    let (app, _, _dir) = app_with(fake(Fake::Stream(stream(1))), config).await;
    for _ in 0..3 {
        assert_eq!(
            call(&app, get("/api/share/AAAAAAAAAAAA")).await.status,
            StatusCode::NOT_FOUND
        );
    }
    let answer = call(&app, get("/api/share/AAAAAAAAAAAA")).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(answer.headers[header::RETRY_AFTER], "1");
    assert!(answer.error().contains("Too many requests"));
    // The static app and health checks are not rate limited.
    assert_eq!(call(&app, get("/healthz")).await.status, StatusCode::OK);
    // Another address has its own budget.
    let mut other = get("/api/share/AAAAAAAAAAAA");
    other
        .extensions_mut()
        .insert(axum::extract::ConnectInfo(std::net::SocketAddr::from((
            [127, 0, 0, 9],
            1234,
        ))));
    assert_eq!(call(&app, other).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn shares_round_trip_on_every_store() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path()).await {
        let backend = store.backend();
        let app = router(state(fake(Fake::Stream(stream(1))), store, config()));
        // The nonce keeps shares of runs against one Postgres apart (a share holds only a view's fields).
        let payload = json!({"code": format!("print(1)  # {}", nonce()), "stdin": "", "breakpoints": [1], "step": 2});
        let created = call(
            &app,
            post_json("/api/share", &json!({"kind": "playground", "payload": payload})),
        )
        .await;
        assert_eq!(
            created.status,
            StatusCode::CREATED,
            "{backend}: {}",
            String::from_utf8_lossy(&created.body)
        );
        let created = created.json();
        let id = created["id"].as_str().unwrap().to_owned();
        assert!(id.len() >= 10 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_eq!(created["url"], format!("/s/{id}"));

        let fetched = call(&app, get(&format!("/api/share/{id}"))).await;
        assert_eq!(fetched.status, StatusCode::OK, "{backend}");
        let fetched = fetched.json();
        assert_eq!(fetched["kind"], "playground");
        assert_eq!(fetched["payload"], payload);
        assert!(fetched["created_at"].as_str().unwrap().ends_with('Z'));

        let again = call(
            &app,
            post_json("/api/share", &json!({"kind": "playground", "payload": payload})),
        )
        .await;
        assert_eq!(again.json()["id"], id, "{backend}: identical payloads share an id");

        let repro = json!({"kind": "repro", "payload": {"transcript": ["a", "b"], "nonce": nonce()}});
        let repro = call(&app, post_json("/api/share", &repro)).await;
        assert_eq!(repro.status, StatusCode::CREATED);
        let repro_id = repro.json()["id"].as_str().unwrap().to_owned();
        assert_ne!(repro_id, id);
        assert_eq!(
            call(&app, get(&format!("/api/share/{repro_id}"))).await.json()["kind"],
            "repro"
        );
    }
}

#[tokio::test]
async fn bad_shares_and_unknown_ids_get_clear_errors_on_every_store() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path()).await {
        let app = router(state(fake(Fake::Stream(stream(1))), store, config()));
        let big_code = json!({"kind": "playground", "payload": {"code": "x".repeat(MAX_CODE_BYTES + 1)}});
        let big_payload = json!({"kind": "repro", "payload": {"log": "x".repeat(MAX_SHARE_PAYLOAD_BYTES)}});
        for (body, status, needle) in [
            (
                json!({"kind": "gist", "payload": {}}),
                StatusCode::BAD_REQUEST,
                "unknown variant",
            ),
            (
                json!({"kind": "repro"}),
                StatusCode::BAD_REQUEST,
                "missing field `payload`",
            ),
            (
                json!({"kind": "repro", "payload": 1, "x": 2}),
                StatusCode::BAD_REQUEST,
                "unknown field",
            ),
            (
                json!({"kind": "playground", "payload": {"x": 1}}),
                StatusCode::BAD_REQUEST,
                "code",
            ),
            (
                big_code,
                StatusCode::PAYLOAD_TOO_LARGE,
                "limit is 102,400 bytes (100 KB)",
            ),
            (
                big_payload,
                StatusCode::PAYLOAD_TOO_LARGE,
                "limit is 1,048,576 bytes (1024 KB)",
            ),
        ] {
            let answer = call(&app, post_json("/api/share", &body)).await;
            assert_eq!(answer.status, status, "{}", answer.error());
            assert!(answer.error().contains(needle), "{} lacks {needle}", answer.error());
        }
        for id in [
            "AAAAAAAAAAAA",
            "short",
            "..%2F..%2Fetc%2Fpasswd",
            "%FF%FE",
            &"A".repeat(500),
        ] {
            let answer = call(&app, get(&format!("/api/share/{id}"))).await;
            assert_eq!(answer.status, StatusCode::NOT_FOUND, "{id}");
            assert!(answer.error().contains("no share"), "{id}");
        }
        let ok = call(
            &app,
            post_json("/api/share", &json!({"kind": "repro", "payload": {"n": nonce()}})),
        )
        .await;
        assert_eq!(ok.status, StatusCode::CREATED, "the server still serves");
    }
}

#[tokio::test]
async fn unknown_api_paths_and_methods_are_json() {
    let (app, _, _dir) = app_with(fake(Fake::Stream(stream(1))), config()).await;
    for (request, status) in [
        (get("/api/nope"), StatusCode::NOT_FOUND),
        (get("/api"), StatusCode::NOT_FOUND),
        (get("/api/share/"), StatusCode::NOT_FOUND),
        (post("/api/trace/extra", None, ""), StatusCode::NOT_FOUND),
        (get("/api/trace"), StatusCode::METHOD_NOT_ALLOWED),
        (
            Request::delete("/api/share/AAAAAAAAAAAA").body(Body::empty()).unwrap(),
            StatusCode::METHOD_NOT_ALLOWED,
        ),
        (get("/nothing-here"), StatusCode::NOT_FOUND),
        (get("/api/ws"), StatusCode::BAD_REQUEST),
    ] {
        let path = request.uri().path().to_owned();
        let answer = call(&app, request).await;
        assert_eq!(answer.status, status, "{path}");
        answer.error();
    }
}

#[tokio::test]
async fn health_and_metrics() {
    let (closed, _, _closed_dir) = app_with(fake(Fake::Stream(stream(2))), config()).await;
    assert_eq!(
        call(&closed, get("/metrics")).await.status,
        StatusCode::NOT_FOUND,
        "metrics are opt-in"
    );
    let config = ServerConfig {
        metrics: true,
        ..config()
    };
    let (app, _, _dir) = app_with(fake(Fake::Stream(stream(2))), config).await;
    let health = call(&app, get("/healthz")).await;
    assert_eq!(health.status, StatusCode::OK);
    let json = health.json();
    assert_eq!(json["status"], "ok");
    assert_eq!(json["store"], "sqlite");
    assert_eq!(json["sandbox"], "fake");

    assert_eq!(
        call(&app, post_json("/api/trace", &json!({"code": "x = 1"})))
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(call(&app, get("/api/nope")).await.status, StatusCode::NOT_FOUND);
    let metrics = call(&app, get("/metrics")).await;
    assert_eq!(metrics.status, StatusCode::OK);
    assert!(
        metrics.headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("application/openmetrics-text")
    );
    let text = String::from_utf8(metrics.body).unwrap();
    for needle in [
        r#"replayground_http_requests_total{route="/api/trace",method="POST",status="200"} 1"#,
        r#"replayground_http_requests_total{route="/api/{*rest}",method="GET",status="404"} 1"#,
        r#"replayground_http_request_duration_seconds_count{route="/api/trace"} 1"#,
        r#"replayground_sandbox_runs_total{outcome="finished"} 1"#,
        "replayground_sandbox_run_duration_seconds_count 1",
        "replayground_websockets_active 0",
        "replayground_jobs_running 0",
        "replayground_jobs_queued 0",
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
}

const INDEX: &str = "<!DOCTYPE html><html><head>\n<script type=\"module\">\nimport init from '/app-0123456789abcdef.js';\nawait init();\n</script>\n</head><body></body></html>\n";

#[tokio::test]
async fn the_static_app_has_cache_headers_a_csp_for_its_script_and_compression() {
    let site = tempfile::tempdir().unwrap();
    std::fs::write(site.path().join("index.html"), INDEX).unwrap();
    let js = "export default function init() { return 42; }\n".repeat(200);
    std::fs::write(site.path().join("app-0123456789abcdef.js"), &js).unwrap();
    std::fs::write(site.path().join("app-0123456789abcdef_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    std::fs::write(site.path().join("notes.txt"), "plain").unwrap();
    let config = ServerConfig {
        static_dir: Some(site.path().to_owned()),
        ..config()
    };
    let (app, _, _dir) = app_with(fake(Fake::Stream(stream(1))), config).await;

    for path in ["/", "/index.html", "/s/AbCdEfGhIjKl"] {
        let answer = call(&app, get(path)).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        assert_eq!(answer.body, INDEX.as_bytes(), "{path}");
        assert_eq!(answer.headers[header::CACHE_CONTROL], "no-cache");
        assert!(
            answer.headers[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("text/html")
        );
        let csp = answer.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(
            csp.starts_with("default-src 'self'; script-src 'self' 'wasm-unsafe-eval' 'sha256-"),
            "{csp}"
        );
        assert!(csp.ends_with("style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'"));
    }
    let first = call(&app, get("/")).await;
    let etag = first.headers[header::ETAG].clone();
    let revalidated = call(
        &app,
        Request::get("/")
            .header(header::IF_NONE_MATCH, etag)
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(revalidated.status, StatusCode::NOT_MODIFIED);

    let asset = call(
        &app,
        Request::get("/app-0123456789abcdef.js")
            .header(header::ACCEPT_ENCODING, "gzip")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(asset.status, StatusCode::OK);
    assert_eq!(
        asset.headers[header::CACHE_CONTROL],
        "public, max-age=31536000, immutable"
    );
    assert_eq!(asset.headers[header::CONTENT_ENCODING], "gzip");
    assert!(asset.body.len() < js.len() / 4, "{} bytes gzipped", asset.body.len());

    let wasm = call(&app, get("/app-0123456789abcdef_bg.wasm")).await;
    assert_eq!(wasm.headers[header::CONTENT_TYPE], "application/wasm");
    assert_eq!(
        wasm.headers[header::CACHE_CONTROL],
        "public, max-age=31536000, immutable"
    );
    assert_eq!(
        call(&app, get("/notes.txt")).await.headers[header::CACHE_CONTROL],
        "no-cache"
    );
    let missing = call(&app, get("/app-ffffffffffffffff.js")).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    missing.error();
}

#[tokio::test]
async fn every_response_has_security_headers_and_a_request_id() {
    let (app, _, _dir) = app_with(fake(Fake::Stream(stream(1))), config()).await;
    for request in [
        get("/healthz"),
        get("/api/nope"),
        post_json("/api/trace", &json!({"code": "x"})),
    ] {
        let answer = call(&app, request).await;
        let h = &answer.headers;
        assert!(
            h[header::CONTENT_SECURITY_POLICY]
                .to_str()
                .unwrap()
                .contains("frame-ancestors 'none'")
        );
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(h[header::REFERRER_POLICY], "no-referrer");
        assert_eq!(h[header::X_FRAME_OPTIONS], "DENY");
        assert_eq!(h["x-request-id"].len(), 36, "a UUID");
    }
    let mine = Request::get("/healthz")
        .header("x-request-id", "abc-123")
        .body(Body::empty())
        .unwrap();
    assert_eq!(call(&app, mine).await.headers["x-request-id"], "abc-123");
}

#[tokio::test]
async fn shutdown_lets_a_running_job_finish() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        shutdown_grace: Duration::from_secs(10),
        ..config()
    };
    let running = common::start(state(
        fake(Fake::Slow(Duration::from_millis(500), stream(2))),
        sqlite_store(dir.path()).await,
        config,
    ))
    .await;
    let addr = running.addr;
    let request =
        tokio::spawn(async move { common::http(addr, "POST", "/api/trace", Some(r#"{"code": "x = 1"}"#)).await });
    common::eventually(Duration::from_secs(30), "the job holds its slot", || {
        running.state.jobs.running() > 0
    })
    .await;
    running.state.shutdown.begin(Duration::from_secs(10));
    let reply = request.await.unwrap().unwrap();
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    let ended = tokio::time::timeout(Duration::from_secs(5), running.server).await;
    assert!(ended.is_ok(), "the server stops once its job is done");
    assert!(
        common::http(addr, "GET", "/healthz", None).await.is_err(),
        "no longer accepting"
    );
}

#[tokio::test]
async fn shutdown_cancels_jobs_after_the_grace_period() {
    let dir = tempfile::tempdir().unwrap();
    let running = common::start(state(
        fake(Fake::Slow(Duration::from_secs(60), stream(2))),
        sqlite_store(dir.path()).await,
        config(),
    ))
    .await;
    let addr = running.addr;
    let request =
        tokio::spawn(async move { common::http(addr, "POST", "/api/trace", Some(r#"{"code": "x = 1"}"#)).await });
    common::eventually(Duration::from_secs(30), "the job holds its slot", || {
        running.state.jobs.running() > 0
    })
    .await;
    let started = std::time::Instant::now();
    running.state.shutdown.begin(Duration::from_millis(300));
    let reply = request.await.unwrap().unwrap();
    assert_eq!(reply.status, 503);
    assert!(reply.json()["error"].as_str().unwrap().contains("shutting down"));
    tokio::time::timeout(Duration::from_secs(5), running.server)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}
