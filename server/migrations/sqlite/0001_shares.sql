-- Shared playground views and reproduction transcripts.
CREATE TABLE shares (
    id         TEXT PRIMARY KEY NOT NULL,
    kind       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    -- SHA-256 of kind and payload: identical shares get the same id.
    digest     TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);
