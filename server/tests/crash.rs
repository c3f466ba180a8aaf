//! The real `replayground serve` binary: a share it acknowledged survives `kill -9` and
//! a restart; SIGTERM stops it cleanly; a bad database URL is one sentence and a failure.

use crate::common;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::http;
use serde_json::json;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn serve(db: &str, port: u16, dir: &Path) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_replayground"));
    cmd.args(crate::common::sandbox_flags());
    cmd.arg("serve")
        .args(["--addr", &format!("127.0.0.1:{port}"), "--db", db])
        .arg("--static-dir")
        .arg(dir.join("no-app"))
        .env("REPLAYGROUND_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the binary starts")
}

/// Waits until the server answers its health check.
async fn until_healthy(addr: SocketAddr, child: &mut Child) {
    let started = Instant::now();
    loop {
        if let Ok(reply) = http(addr, "GET", "/healthz", None).await
            && reply.status == 200
        {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the server exited with {status} before it was healthy");
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the server did not become healthy"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn an_acknowledged_share_survives_kill_9_and_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("data/shares.db").display());
    let port = free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));

    let mut first = serve(&db, port, dir.path());
    until_healthy(addr, &mut first).await;
    let payload = json!({"code": "print('kept')\n", "step": 4});
    let body = json!({"kind": "playground", "payload": payload}).to_string();
    let created = http(addr, "POST", "/api/share", Some(&body)).await.unwrap();
    assert_eq!(created.status, 201, "{}", String::from_utf8_lossy(&created.body));
    let id = created.json()["id"].as_str().unwrap().to_owned();
    first.kill().unwrap(); // SIGKILL: no chance to flush anything.
    first.wait().unwrap();

    let mut second = serve(&db, port, dir.path());
    until_healthy(addr, &mut second).await;
    let fetched = http(addr, "GET", &format!("/api/share/{id}"), None).await.unwrap();
    second.kill().unwrap();
    second.wait().unwrap();
    assert_eq!(fetched.status, 200, "{}", String::from_utf8_lossy(&fetched.body));
    let fetched = fetched.json();
    assert_eq!(fetched["payload"], payload);
    assert_eq!(fetched["kind"], "playground");
}

#[tokio::test]
async fn sigterm_stops_the_server_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("shares.db").display());
    let port = free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut child = serve(&db, port, dir.path());
    until_healthy(addr, &mut child).await;
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "SIGTERM did not stop the server"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "{status}");
}

#[test]
fn a_bad_database_url_is_one_sentence_and_a_failure() {
    for (url, needle) in [
        ("mysql://localhost/x", "not supported"),
        (
            "postgres://nobody:secret@127.0.0.1:1/none",
            "cannot open the share store",
        ),
    ] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_replayground"));
        cmd.args(crate::common::sandbox_flags());
        let output = cmd
            .args(["serve", "--addr", "127.0.0.1:0", "--db", url])
            .env("REPLAYGROUND_LOG", "off")
            .output()
            .unwrap();
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.contains("UNSAFE")).collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(lines[0].starts_with("error: ") && lines[0].contains(needle), "{stderr}");
        assert!(
            !stderr.contains("secret"),
            "the password stays out of messages: {stderr}"
        );
    }
}
