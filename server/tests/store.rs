//! The share store, with the same tests on SQLite and on Postgres.
//!
//! Postgres runs when `REPLAYGROUND_TEST_POSTGRES_URL` names a database
//! (`cargo xtask test` starts a throwaway cluster and sets it); without it the
//! Postgres half says so on stderr and checks SQLite only.

use replayground_server::store::{Store, is_valid_id};
use replayground_shared::protocol::ShareKind;
use serde_json::json;

async fn stores() -> Vec<(Store, tempfile::TempDir)> {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("nested/shares.db").display());
    let mut out = vec![(Store::connect(&url).await.expect("sqlite opens"), dir)];
    match std::env::var("REPLAYGROUND_TEST_POSTGRES_URL") {
        Ok(pg) if !pg.is_empty() => {
            out.push((
                Store::connect(&pg).await.expect("the test Postgres is reachable"),
                tempfile::tempdir().unwrap(),
            ));
        }
        _ => eprintln!("store tests: REPLAYGROUND_TEST_POSTGRES_URL is not set, so only SQLite is tested"),
    }
    out
}

#[tokio::test]
async fn shares_round_trip_on_every_backend() {
    for (store, _dir) in stores().await {
        let payload = json!({"code": "print(1)", "step": 3, "nonce": rand_nonce()});
        let id = store.put(ShareKind::Playground, &payload).await.unwrap();
        assert!(is_valid_id(&id), "{} gave id {id}", store.backend());
        let item = store.get(&id).await.unwrap().expect("the share is found");
        assert_eq!(item.kind, ShareKind::Playground);
        assert_eq!(item.payload, payload);
        assert!(item.created_at.ends_with('Z'), "{}", item.created_at);
        store.ping().await.unwrap();
    }
}

#[tokio::test]
async fn identical_payloads_share_an_id_and_others_do_not() {
    for (store, _dir) in stores().await {
        let payload = json!({"code": "x = 1", "nonce": rand_nonce()});
        let a = store.put(ShareKind::Playground, &payload).await.unwrap();
        let b = store.put(ShareKind::Playground, &payload).await.unwrap();
        assert_eq!(a, b, "{}", store.backend());
        let c = store.put(ShareKind::Repro, &payload).await.unwrap();
        assert_ne!(a, c, "a different kind is a different share");
        let d = store
            .put(ShareKind::Playground, &json!({"code": "x = 2", "nonce": rand_nonce()}))
            .await
            .unwrap();
        assert_ne!(a, d);
    }
}

#[tokio::test]
async fn unknown_and_malformed_ids_are_not_found() {
    for (store, _dir) in stores().await {
        assert!(store.get("AAAAAAAAAAAA").await.unwrap().is_none());
        assert!(store.get("../../etc/passwd").await.unwrap().is_none());
        assert!(store.get("").await.unwrap().is_none());
    }
}

#[tokio::test]
async fn a_share_survives_reopening_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("shares.db").display());
    let id = {
        let store = Store::connect(&url).await.unwrap();
        store
            .put(ShareKind::Playground, &json!({"code": "kept"}))
            .await
            .unwrap()
    };
    let store = Store::connect(&url).await.unwrap();
    assert_eq!(store.get(&id).await.unwrap().unwrap().payload, json!({"code": "kept"}));
}

#[tokio::test]
async fn unsupported_urls_are_explained() {
    let err = Store::connect("mysql://localhost/x").await.unwrap_err().to_string();
    assert!(err.contains("not supported"), "{err}");
}

/// Tests on a shared Postgres database must not see each other's rows.
fn rand_nonce() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    (t as u64) ^ u64::from(std::process::id()).rotate_left(32)
}
