//! The reproduction agent's API: project uploads (good, bad, oversized archives), the
//! WebSocket `repro` job (a numpy report streams from `started` to `finished`, cancel,
//! bad reports refused while the session goes on) and the pages behind `/s/{id}`.

use crate::common;

use std::io::Write as _;
use std::time::Duration;

use common::{
    Running, Socket, cancel, numbered, real_sandbox, sqlite_store, start, state, ws_greeted, ws_message, ws_send,
};
use replayground_server::app::ServerConfig;
use replayground_shared::protocol::{ClientMessage, Envelope, ErrorCode, ServerEnvelope, ServerMessage};
use replayground_shared::repro::{
    AgentEvent, BugReport, MAX_PROJECT_ARCHIVE_BYTES, MAX_REPORT_FIELD_BYTES, ReproRequest, ReproTranscript,
};

const MODEL_PY: &str =
    "import numpy as np\n\n\ndef loss(y, p):\n    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))\n";
const TRAIN_PY: &str = "import numpy as np\nfrom model import loss\n\n\ndef train(X, y, lr=10.0):\n    w = np.zeros(X.shape[1])\n    for step in range(20):\n        p = 1 / (1 + np.exp(-X @ w))\n        w -= lr * X.T @ (p - y)\n        print(step, loss(y, p))\n    return w\n";

/// A server with `static_dir` (when given) and no rate limit; the agent has no models.
async fn server(static_dir: Option<std::path::PathBuf>) -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        rate_limit_per_second: 0,
        static_dir,
        ..ServerConfig::default()
    };
    let running = start(state(real_sandbox(), sqlite_store(dir.path()).await, config)).await;
    (running, dir)
}

fn zip_archive(files: &[(&str, &str)]) -> Vec<u8> {
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (path, text) in files {
        out.start_file(*path, zip::write::SimpleFileOptions::default()).unwrap();
        out.write_all(text.as_bytes()).unwrap();
    }
    out.finish().unwrap().into_inner()
}

fn tar_gz_archive(files: &[(&str, &str)]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for (path, text) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, path, text.as_bytes()).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

async fn upload(running: &Running, name: &str, body: Vec<u8>) -> (u16, serde_json::Value) {
    let response = reqwest::Client::new()
        .post(format!("http://{}/api/projects?name={name}", running.addr))
        .header("content-type", "application/octet-stream")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let json = response.json().await.unwrap_or(serde_json::Value::Null);
    (status, json)
}

#[tokio::test]
async fn archives_upload_and_bad_ones_are_refused_with_a_reason() {
    let (running, _dir) = server(None).await;
    let files = [
        ("proj/model.py", MODEL_PY),
        ("proj/train.py", TRAIN_PY),
        ("proj/README.md", "# demo\n"),
    ];

    let (status, created) = upload(&running, "proj.zip", zip_archive(&files)).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["python_files"], 2, "{created}");
    assert_eq!(created["files"], 3, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let summary = common::http(running.addr, "GET", &format!("/api/projects/{id}"), None)
        .await
        .unwrap();
    assert_eq!(summary.status, 200);
    let summary = summary.json();
    assert_eq!(summary["name"], "proj.zip");
    let paths: Vec<&str> = summary["python_paths"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    assert_eq!(paths, ["model.py", "train.py"], "the common top folder is stripped");

    let (status, created) = upload(&running, "proj.tar.gz", tar_gz_archive(&files)).await;
    assert_eq!((status, created["python_files"].as_u64()), (201, Some(2)), "{created}");

    let (status, error) = upload(&running, "notes.zip", b"just some text, not an archive".to_vec()).await;
    assert_eq!(status, 422, "{error}");
    assert!(error["error"].as_str().unwrap().contains("not a zip"), "{error}");

    let (status, error) = upload(&running, "broken.zip", zip_archive(&files)[..40].to_vec()).await;
    assert_eq!(status, 422, "{error}");

    let (status, error) = upload(&running, "big.zip", vec![b'P'; MAX_PROJECT_ARCHIVE_BYTES + 1]).await;
    assert_eq!(status, 413, "{error}");
    assert!(error["error"].as_str().unwrap().contains("20 MB"), "{error}");

    let (status, error) = upload(&running, "empty.zip", Vec::new()).await;
    assert_eq!(status, 400, "{error}");

    let missing = common::http(running.addr, "GET", "/api/projects/nope", None)
        .await
        .unwrap();
    assert_eq!(missing.status, 404);
    assert!(
        missing.json()["error"]
            .as_str()
            .unwrap()
            .contains("upload the archive again")
    );
    assert_eq!(running.state.projects.len(), 2);
}

async fn connect(running: &Running) -> Socket {
    ws_greeted(running).await.0
}

fn nan_report() -> BugReport {
    BugReport {
        title: "Loss becomes NaN in logistic regression".into(),
        description: "Plain numpy gradient descent; after a few steps the loss is nan.".into(),
        observed: "step 2 loss nan\nRuntimeWarning: divide by zero encountered in log".into(),
        expected: "The loss decreases and stays finite.".into(),
        snippets: vec![
            "import numpy as np\np = np.array([0.0, 0.5, 1.0])\ny = np.array([0.0, 1.0, 1.0])\nprint('loss', -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))\n".into(),
        ],
        ..BugReport::default()
    }
}

/// Reads a job's `agent` events until its last one (or another end of the job).
async fn agent_events(socket: &mut Socket, job: u64) -> Result<Vec<AgentEvent>, ServerMessage> {
    let mut events = Vec::new();
    loop {
        let message = ws_message(socket).await;
        match message.body {
            ServerMessage::Agent { event } if message.job == Some(job) => {
                let last = matches!(event, AgentEvent::Finished { .. } | AgentEvent::Failed { .. });
                events.push(event);
                if last {
                    return Ok(events);
                }
            }
            other => return Err(other),
        }
    }
}

#[tokio::test]
async fn a_numpy_report_streams_from_started_to_finished() {
    let (running, _dir) = server(None).await;
    let (status, created) = upload(
        &running,
        "proj.zip",
        zip_archive(&[("model.py", MODEL_PY), ("train.py", TRAIN_PY)]),
    )
    .await;
    assert_eq!(status, 201);
    let mut socket = connect(&running).await;
    let request = ReproRequest {
        report: nan_report(),
        project: created["id"].as_str().map(str::to_owned),
        ablate: Vec::new(),
    };
    ws_send(&mut socket, &numbered(2, ClientMessage::Repro { request })).await;
    let events = agent_events(&mut socket, 2)
        .await
        .unwrap_or_else(|m| panic!("the job ended with {m:?}"));
    assert!(matches!(events[0], AgentEvent::Started { .. }), "{:?}", events[0]);
    let has = |f: fn(&AgentEvent) -> bool| events.iter().any(f);
    assert!(
        has(|e| matches!(e, AgentEvent::Context { contexts, .. } if !contexts.is_empty())),
        "ranked contexts from the project"
    );
    assert!(has(|e| matches!(e, AgentEvent::Report { .. })));
    assert!(has(|e| matches!(e, AgentEvent::AttemptStarted { attempt: 1, .. })));
    assert!(has(|e| matches!(e, AgentEvent::Candidate { .. })));
    assert!(has(|e| matches!(e, AgentEvent::Check { .. })));
    match events.last().unwrap() {
        AgentEvent::Finished { outcome } => {
            let script = outcome.script.as_deref().expect("a final script");
            assert!(script.contains("np.log"), "{script}");
            assert!(outcome.attempts >= 1);
        }
        other => panic!("the run did not finish: {other:?}"),
    }
    // The transcript the browser stores is accepted by the share API.
    let transcript = ReproTranscript {
        report: nan_report(),
        events: events
            .into_iter()
            .filter(|e| !matches!(e, AgentEvent::Token { .. }))
            .collect(),
        script: None,
    };
    let body = serde_json::json!({"kind": "repro", "payload": transcript}).to_string();
    let stored = common::http(running.addr, "POST", "/api/share", Some(&body))
        .await
        .unwrap();
    assert_eq!(stored.status, 201, "{}", String::from_utf8_lossy(&stored.body));
    assert_eq!(running.state.jobs.running(), 0);
}

#[tokio::test]
async fn an_llm_candidate_streams_token_by_token_over_the_websocket() {
    use replayground_server::repro::agent::AgentDeps;
    use replayground_server::repro::llm::{LlmTask, ScriptedLlm, ScriptedReply};
    let reply =
        "```python\nimport numpy as np\np = np.array([0.0, 1.0])\nloss = -np.log(p).mean()\nprint('loss:', loss)\n```";
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        rate_limit_per_second: 0,
        ..ServerConfig::default()
    };
    let app = state(real_sandbox(), sqlite_store(dir.path()).await, config);
    assert!(app.set_agent(AgentDeps {
        sandbox: real_sandbox(),
        python: replayground_server::runner::DEFAULT_PYTHON.into(),
        embedder: None,
        reranker: None,
        llm: Some(std::sync::Arc::new(ScriptedLlm::new(vec![ScriptedReply::For {
            task: LlmTask::Generate,
            reply: reply.into(),
        }]))),
        neural: None,
    }));
    let running = start(app).await;
    let mut socket = connect(&running).await;
    let request = ReproRequest {
        report: BugReport {
            title: "loss is inf when a probability is 0".into(),
            observed: "loss: inf".into(),
            ..BugReport::default()
        },
        ..ReproRequest::default()
    };
    ws_send(&mut socket, &numbered(2, ClientMessage::Repro { request })).await;
    let events = agent_events(&mut socket, 2)
        .await
        .unwrap_or_else(|m| panic!("the job ended with {m:?}"));
    let tokens: Vec<&str> = events
        .iter()
        .take_while(|e| !matches!(e, AgentEvent::Candidate { attempt: 1, .. }))
        .filter_map(|e| match e {
            AgentEvent::Token { attempt: 1, text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        tokens.len() > 5,
        "the candidate streams in pieces before it is complete: {tokens:?}"
    );
    assert!(tokens.concat().contains("np.log(p)"), "{tokens:?}");
    assert!(
        matches!(events.last(), Some(AgentEvent::Finished { .. })),
        "{:?}",
        events.last()
    );
}

#[tokio::test]
async fn a_repro_job_can_be_cancelled() {
    let (running, _dir) = server(None).await;
    let mut socket = connect(&running).await;
    let request = ReproRequest {
        report: nan_report(),
        ..ReproRequest::default()
    };
    ws_send(&mut socket, &numbered(2, ClientMessage::Repro { request })).await;
    assert!(matches!(
        ws_message(&mut socket).await,
        Envelope {
            job: Some(2),
            body: ServerMessage::Agent {
                event: AgentEvent::Started { .. }
            },
            ..
        }
    ));
    let asked = std::time::Instant::now();
    ws_send(&mut socket, &cancel(3, 2)).await;
    loop {
        match ws_message(&mut socket).await {
            Envelope {
                job: Some(2),
                body: ServerMessage::Agent { event },
                ..
            } => {
                assert!(
                    !matches!(event, AgentEvent::Finished { .. }),
                    "finished despite the cancel"
                );
            }
            Envelope {
                job: Some(2),
                body: ServerMessage::Cancelled,
                ..
            } => break,
            other => panic!("{other:?}"),
        }
    }
    assert!(asked.elapsed() < Duration::from_secs(10), "{:?}", asked.elapsed());
    // The slot is freed once the job's task ends.
    common::eventually(Duration::from_secs(5), "the job's slot is freed", || {
        running.state.jobs.running() == 0
    })
    .await;
}

#[tokio::test]
async fn bad_reports_get_clear_errors_and_the_session_goes_on() {
    let (running, _dir) = server(None).await;
    let mut socket = connect(&running).await;
    let refused = |m: ServerEnvelope| match m.body {
        ServerMessage::Error { code, message, .. } => (m.job, code, message),
        other => panic!("{other:?}"),
    };

    ws_send(
        &mut socket,
        &numbered(
            2,
            ClientMessage::Repro {
                request: ReproRequest::default(),
            },
        ),
    )
    .await;
    let (job, code, text) = refused(ws_message(&mut socket).await);
    assert_eq!((job, code), (Some(2), ErrorCode::BadMessage));
    assert!(text.contains("empty"), "{text}");

    let request = ReproRequest {
        report: BugReport {
            observed: "x".repeat(MAX_REPORT_FIELD_BYTES + 10),
            ..BugReport::default()
        },
        ..ReproRequest::default()
    };
    ws_send(&mut socket, &numbered(3, ClientMessage::Repro { request })).await;
    let (job, code, text) = refused(ws_message(&mut socket).await);
    assert_eq!((job, code), (Some(3), ErrorCode::TooLarge));
    assert!(text.contains("observed behaviour"), "{text}");

    let request = ReproRequest {
        report: nan_report(),
        project: Some("expired".into()),
        ablate: Vec::new(),
    };
    ws_send(&mut socket, &numbered(4, ClientMessage::Repro { request })).await;
    let (job, code, text) = refused(ws_message(&mut socket).await);
    assert_eq!((job, code), (Some(4), ErrorCode::BadMessage));
    assert!(text.contains("upload the archive again"), "{text}");

    ws_send(&mut socket, &numbered(5, ClientMessage::Ping {})).await;
    assert!(matches!(
        ws_message(&mut socket).await.body,
        ServerMessage::Pong { reply_to: 5 }
    ));
    assert_eq!(running.state.jobs.running(), 0);
}

#[tokio::test]
async fn stored_reproductions_open_the_reproduction_page() {
    let site = tempfile::tempdir().unwrap();
    std::fs::write(site.path().join("index.html"), "<html>the playground</html>").unwrap();
    std::fs::create_dir(site.path().join("repro")).unwrap();
    std::fs::write(
        site.path().join("repro/index.html"),
        "<html>the reproduction page</html>",
    )
    .unwrap();
    let (running, _dir) = server(Some(site.path().to_owned())).await;
    let get = |path: String| {
        let addr = running.addr;
        async move { common::http(addr, "GET", &path, None).await.unwrap() }
    };
    let share = |kind: &str, payload: serde_json::Value| {
        let body = serde_json::json!({"kind": kind, "payload": payload}).to_string();
        let addr = running.addr;
        async move {
            let reply = common::http(addr, "POST", "/api/share", Some(&body)).await.unwrap();
            assert_eq!(reply.status, 201);
            reply.json()["id"].as_str().unwrap().to_owned()
        }
    };
    let transcript = ReproTranscript {
        report: nan_report(),
        events: vec![AgentEvent::Failed {
            message: "stopped".into(),
        }],
        script: Some("print(1)\n".into()),
    };
    let repro = share("repro", serde_json::to_value(&transcript).unwrap()).await;
    let playground = share("playground", serde_json::json!({"code": "x = 1"})).await;

    let page = get(format!("/s/{repro}")).await;
    assert_eq!(page.status, 200);
    assert!(String::from_utf8_lossy(&page.body).contains("reproduction page"));
    let page = get(format!("/s/{playground}")).await;
    assert!(String::from_utf8_lossy(&page.body).contains("the playground"));
    let page = get("/s/unknown".into()).await;
    assert!(
        String::from_utf8_lossy(&page.body).contains("the playground"),
        "the playground explains bad links"
    );
    let page = get("/repro/".into()).await;
    assert_eq!(page.status, 200);
    assert!(String::from_utf8_lossy(&page.body).contains("reproduction page"));
    assert_eq!(page.header("cache-control"), Some("no-cache"));
    let redirect = get("/repro".into()).await;
    assert_eq!((redirect.status, redirect.header("location")), (308, Some("/repro/")));
}
