//! Share links: a small key-value store on SQLite (default) or Postgres (by URL).
//!
//! Ids are 12 random URL-safe characters (72 bits), so they cannot be guessed or
//! enumerated. A share is stored once per (kind, payload): sharing the same view
//! twice gives the same id. Migrations run at start-up.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use rand::Rng as _;
use replayground_shared::protocol::{ShareKind, SharedItem};
use sha2::{Digest, Sha256};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};

/// Characters of a share id: URL-safe without escaping.
const ID_ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
pub const ID_LEN: usize = 12;

/// The default store: a SQLite file under `./data`.
pub const DEFAULT_DB_URL: &str = "sqlite://data/replayground.db";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the database URL `{0}` is not supported; use sqlite://PATH or postgres://USER@HOST/DB")]
    UnsupportedUrl(String),
    #[error("cannot create the folder for the database at {path}: {source}")]
    Folder { path: String, source: std::io::Error },
    #[error("the database is not usable: {0}")]
    Database(#[from] sqlx::Error),
    #[error("the database schema could not be brought up to date: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    #[error("a stored share is damaged: {0}")]
    Damaged(String),
}

/// Runs the same sqlx expression on whichever pool the store holds. The two pool types
/// differ, so a macro (not a function) writes each query once for both databases; the
/// queries use `$N` placeholders, which SQLite and Postgres both accept.
macro_rules! on_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match $store {
            Store::Sqlite($pool) => $body,
            Store::Postgres($pool) => $body,
        }
    };
}

/// Where shares live.
#[derive(Debug, Clone)]
pub enum Store {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Store {
    /// Opens (creating when needed) the store at `url` and runs the migrations.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = PgPoolOptions::new()
                .max_connections(8)
                .acquire_timeout(Duration::from_secs(5))
                .connect(url)
                .await?;
            sqlx::migrate!("./migrations/postgres").run(&pool).await?;
            return Ok(Self::Postgres(pool));
        }
        if url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                // WAL with NORMAL sync: a committed share survives a crash of the
                // process (kill -9); only a power loss could drop the last commits.
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(Duration::from_secs(5));
            if let Some(parent) = Path::new(options.get_filename())
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
            {
                std::fs::create_dir_all(parent).map_err(|source| StoreError::Folder {
                    path: parent.display().to_string(),
                    source,
                })?;
            }
            let pool = SqlitePoolOptions::new()
                .max_connections(4)
                .connect_with(options)
                .await?;
            sqlx::migrate!("./migrations/sqlite").run(&pool).await?;
            return Ok(Self::Sqlite(pool));
        }
        Err(StoreError::UnsupportedUrl(url.to_owned()))
    }

    pub fn backend(&self) -> &'static str {
        match self {
            Self::Sqlite(_) => "sqlite",
            Self::Postgres(_) => "postgres",
        }
    }

    /// Checks that the database answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        on_pool!(self, pool => sqlx::query("SELECT 1").execute(pool).await.map(drop)?);
        Ok(())
    }

    /// Stores a share and returns its id (the existing id for an identical share).
    pub async fn put(&self, kind: ShareKind, payload: &serde_json::Value) -> Result<String, StoreError> {
        let payload = serde_json::to_string(payload).map_err(|e| StoreError::Damaged(e.to_string()))?;
        let digest = digest(kind, &payload);
        let created_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        // A random id collides with probability ~n/2^72; retry a few times anyway.
        for _ in 0..4 {
            let id = new_id();
            let insert = "INSERT INTO shares (id, kind, payload, digest, created_at) \
                          VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING";
            let inserted = on_pool!(self, pool => sqlx::query(insert)
                .bind(&id)
                .bind(kind.as_str())
                .bind(&payload)
                .bind(&digest)
                .bind(&created_at)
                .execute(pool)
                .await?
                .rows_affected());
            if inserted == 1 {
                return Ok(id);
            }
            if let Some(existing) = self.id_for_digest(&digest).await? {
                return Ok(existing);
            }
        }
        Err(StoreError::Damaged("could not allocate a fresh share id".into()))
    }

    async fn id_for_digest(&self, digest: &str) -> Result<Option<String>, StoreError> {
        let q = "SELECT id FROM shares WHERE digest = $1";
        Ok(on_pool!(self, pool => sqlx::query_scalar(q).bind(digest).fetch_optional(pool).await?))
    }

    /// Bytes of all stored payloads, for the storage cap.
    pub async fn payload_bytes(&self) -> Result<u64, StoreError> {
        let total: i64 = match self {
            Self::Sqlite(pool) => {
                sqlx::query_scalar("SELECT COALESCE(SUM(LENGTH(CAST(payload AS BLOB))), 0) FROM shares")
                    .fetch_one(pool)
                    .await?
            }
            Self::Postgres(pool) => {
                sqlx::query_scalar("SELECT COALESCE(SUM(octet_length(payload)), 0)::BIGINT FROM shares")
                    .fetch_one(pool)
                    .await?
            }
        };
        Ok(u64::try_from(total).unwrap_or(0))
    }

    /// The share with this id, if any.
    pub async fn get(&self, id: &str) -> Result<Option<SharedItem>, StoreError> {
        if !is_valid_id(id) {
            return Ok(None);
        }
        let q = "SELECT kind, payload, created_at FROM shares WHERE id = $1";
        let row: Option<(String, String, String)> =
            on_pool!(self, pool => sqlx::query_as(q).bind(id).fetch_optional(pool).await?);
        let Some((kind, payload, created_at)) = row else {
            return Ok(None);
        };
        let kind = match kind.as_str() {
            "playground" => ShareKind::Playground,
            "repro" => ShareKind::Repro,
            other => return Err(StoreError::Damaged(format!("unknown kind `{other}`"))),
        };
        let payload = serde_json::from_str(&payload).map_err(|e| StoreError::Damaged(e.to_string()))?;
        Ok(Some(SharedItem {
            kind,
            payload,
            created_at,
        }))
    }
}

fn digest(kind: ShareKind, payload: &str) -> String {
    let mut h = Sha256::new();
    h.update(kind.as_str().as_bytes());
    h.update([0]);
    h.update(payload.as_bytes());
    h.finalize().iter().fold(String::with_capacity(64), |mut hex, b| {
        use std::fmt::Write as _;
        let _ = write!(hex, "{b:02x}");
        hex
    })
}

fn new_id() -> String {
    let mut rng = rand::rng();
    (0..ID_LEN)
        .map(|_| ID_ALPHABET[rng.random_range(0..ID_ALPHABET.len())] as char)
        .collect()
}

/// Ids are exactly [`ID_LEN`] characters of [`ID_ALPHABET`].
pub fn is_valid_id(id: &str) -> bool {
    id.len() == ID_LEN && id.bytes().all(|b| ID_ALPHABET.contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_random_and_url_safe() {
        let a = new_id();
        let b = new_id();
        assert_ne!(a, b);
        assert!(is_valid_id(&a));
        assert!(!is_valid_id("short"));
        assert!(!is_valid_id("../../etc/pwd"));
    }
}
