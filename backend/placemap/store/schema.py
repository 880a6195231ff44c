"""SQLite DDL of the embedded store (WAL). One row per recording; event chunks, keyframes and the
per-chunk placement side tables as blobs; derived results (overview, metrics) as blobs by name;
finished simulation sweeps as JSON."""

from __future__ import annotations

SCHEMA_VERSION = 1

DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS topologies (
    id TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL
);
-- A topology's content address (sha256 of its canonical JSON): the same machine stored once, whoever
-- stores it again (every simulated run of a preset, every import from one host). Topologies stored
-- before it get theirs when the store is first opened (Store._address_old_topologies, which points
-- the recordings of a machine's other rows at the addressed one); a topology row is never changed
-- or deleted.
CREATE TABLE IF NOT EXISTS topology_digests (
    digest TEXT PRIMARY KEY,
    topology_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS recordings (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    source TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    format TEXT,
    topology_id TEXT,
    error TEXT,
    progress REAL,
    event_count INTEGER NOT NULL DEFAULT 0,
    t_start_ns INTEGER,
    t_end_ns INTEGER,
    lost_events INTEGER NOT NULL DEFAULT 0,
    skipped_lines INTEGER,
    bytes_stored INTEGER NOT NULL DEFAULT 0,
    chunk_count INTEGER NOT NULL DEFAULT 0,
    meta TEXT NOT NULL DEFAULT '{}'
);
-- Blobs last: SQLite only reads overflow pages of the columns a query touches.
CREATE TABLE IF NOT EXISTS chunks (
    recording_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    t_start_ns INTEGER NOT NULL,
    t_end_ns INTEGER NOT NULL,
    first_row INTEGER NOT NULL,
    rows INTEGER NOT NULL,
    raw_bytes INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    keyframe_raw INTEGER NOT NULL,
    placements_raw INTEGER NOT NULL,
    data BLOB NOT NULL,
    keyframe BLOB NOT NULL,
    placements BLOB NOT NULL,
    PRIMARY KEY (recording_id, seq)
);
CREATE INDEX IF NOT EXISTS chunks_time ON chunks (recording_id, t_start_ns);
CREATE TABLE IF NOT EXISTS derived (
    recording_id TEXT NOT NULL,
    name TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (recording_id, name)
);
CREATE TABLE IF NOT EXISTS tasks (
    recording_id TEXT NOT NULL,
    pid INTEGER NOT NULL,
    comm TEXT NOT NULL,
    events INTEGER NOT NULL,
    migrations INTEGER NOT NULL,
    first_ts_ns INTEGER NOT NULL,
    last_ts_ns INTEGER NOT NULL,
    -- its wakeups, those whose waker ran in another LLC than its prev CPU, and those pulled to the
    -- waker's LLC (NULL: stored before they were counted, until a listing counts them, or a stored
    -- chunk could not be read; Store adds the columns, and the index of NULL ones, to older files)
    wakeups INTEGER,
    cross_llc INTEGER,
    pulled INTEGER,
    PRIMARY KEY (recording_id, pid)
);
CREATE TABLE IF NOT EXISTS task_chunks (
    recording_id TEXT NOT NULL,
    pid INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (recording_id, pid, seq)
) WITHOUT ROWID;
-- Ingest tokens of live collectors: only the sha256 of the token is kept.
CREATE TABLE IF NOT EXISTS tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
-- One row per collector session (stable across its reconnects): the dedup key is (session_id, seq).
CREATE TABLE IF NOT EXISTS live_sessions (
    session_id TEXT PRIMARY KEY,
    recording_id TEXT NOT NULL,
    token_id TEXT,
    last_seq INTEGER NOT NULL DEFAULT -1,
    created_at TEXT NOT NULL,
    -- 1 once finalising began: no batch commits after this, so finalising reads every acknowledged batch
    closed INTEGER NOT NULL DEFAULT 0
);
-- Batches of a live recording as committed (Arrow IPC as the collector sent it), until finalised.
CREATE TABLE IF NOT EXISTS live_batches (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    recording_id TEXT NOT NULL,
    rows INTEGER NOT NULL,
    t_start_ns INTEGER,
    t_end_ns INTEGER,
    data BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE INDEX IF NOT EXISTS live_batches_rec ON live_batches (recording_id, seq);
-- A finished simulation sweep (placemap.sim_sweep): its scenario, the sweep asked for and its result,
-- as JSON, so that a link (?sweep=ID) opens the same result however long ago it ran. Small (a few
-- KB) and written once; deleted with nothing else.
CREATE TABLE IF NOT EXISTS sweeps (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    scenario TEXT NOT NULL,
    spec TEXT NOT NULL,
    result TEXT NOT NULL
);
"""

# Tables holding a recording's event data (everything but its row), cleared on failure and delete.
DATA_TABLES = ("chunks", "derived", "tasks", "task_chunks", "live_batches", "live_sessions")
