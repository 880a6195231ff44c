"""The Store: every read and write of recordings, chunks, keyframes, derived data and topologies.

One interface over SQLite (WAL, one connection per thread) so a server database could replace it.
Writers commit per chunk; readers never see a half-written chunk.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from dataclasses import astuple, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from placemap.store.schema import DATA_TABLES, DDL, SCHEMA_VERSION


class StoreError(Exception):
    """A store operation that cannot be done (unknown id, wrong status)."""


@dataclass(frozen=True)
class RecordingRow:
    """A recordings row; `meta` holds the JSON extras (cpus_seen, events_by_kind, import_summary...)."""

    id: str
    name: str
    source: str
    status: str
    created_at: str
    format: str | None
    topology_id: str | None
    error: str | None
    progress: float | None
    event_count: int
    t_start_ns: int | None
    t_end_ns: int | None
    lost_events: int
    skipped_lines: int | None
    bytes_stored: int
    chunk_count: int
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChunkRow:
    """The time index entry of one chunk."""

    seq: int
    t_start_ns: int
    t_end_ns: int
    first_row: int
    rows: int
    bytes: int
    raw_bytes: int


@dataclass(frozen=True)
class ChunkWrite:
    """One chunk as the ingest writes it: events, the keyframe before it, its placement side table."""

    seq: int
    t_start_ns: int
    t_end_ns: int
    first_row: int
    rows: int
    data: bytes
    raw_bytes: int
    keyframe: bytes
    keyframe_raw: int
    placements: bytes
    placements_raw: int
    pids: Sequence[int]


@dataclass(frozen=True)
class TaskRow:
    """Per-task aggregates of a recording."""

    pid: int
    comm: str
    events: int
    migrations: int
    first_ts_ns: int
    last_ts_ns: int
    # its wakeups, those whose waker ran in another LLC than its prev CPU, and of those the ones
    # pulled to the waker's LLC (kernel.WK_*); None for a recording stored before they were counted,
    # until its first listing counts them (waker_refill), and where a stored chunk could not be read
    wakeups: int | None = None
    cross_llc: int | None = None
    pulled: int | None = None


_TASK_COLS = "pid, comm, events, migrations, first_ts_ns, last_ts_ns, wakeups, cross_llc, pulled"
# the orders GET tasks offers: busiest first, or most often woken from another LLC first
TASK_ORDERS = {"events": "events DESC, pid", "cross_llc": "COALESCE(cross_llc, -1) DESC, events DESC, pid"}

_REC_COLS = (
    "id, name, source, status, created_at, format, topology_id, error, progress, event_count, "
    "t_start_ns, t_end_ns, lost_events, skipped_lines, bytes_stored, chunk_count, meta"
)
_CHUNK_COLS = "seq, t_start_ns, t_end_ns, first_row, rows, bytes, raw_bytes"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_id() -> str:
    """An opaque, unguessable id (72 random bits, URL-safe base64).

    Never starts with "-": an id is typed on command lines (``placemap admin
    delete ID``), where a leading dash reads as an option. One draw in 64 is
    redrawn, which leaves the id uniform over the remaining alphabet.
    """
    while True:
        rid = secrets.token_urlsafe(9)
        if not rid.startswith("-"):
            return rid


class Store:
    """SQLite-backed store. Thread-safe: each thread uses its own connection."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        conn = self._conn()
        conn.executescript(DDL)
        with conn:
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        self._add_task_wakeup_columns()
        self._address_old_topologies()

    def _add_task_wakeup_columns(self) -> None:
        """A file written before the tasks' wakeup counts: their columns, NULL for its tasks; and
        the partial index of the uncounted ones, which every task listing asks about
        (tasks_uncounted: without it, a read of every task row of the recording, ~19 ms at 225k
        tasks). Read first: every open after the first takes no write lock."""
        cols = ("wakeups", "cross_llc", "pulled")
        index = "tasks_uncounted"

        def done(c: sqlite3.Connection) -> bool:
            have = {r[1] for r in c.execute("PRAGMA table_info(tasks)")}
            indexed = c.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (index,))
            return set(cols) <= have and indexed.fetchone() is not None

        if done(self._conn()):
            return
        with self._tx() as c:
            present = {r[1] for r in c.execute("PRAGMA table_info(tasks)")}  # again, under the lock
            for col in cols:
                if col not in present:
                    c.execute(f"ALTER TABLE tasks ADD COLUMN {col} INTEGER")
            c.execute(f"CREATE INDEX IF NOT EXISTS {index} ON tasks (recording_id) WHERE wakeups IS NULL")

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            # a new file only (a no-op once written): chunk blobs are ~0.5 MB per commit, and with
            # 4 KB pages SQLite spent twice the CPU on per-page WAL frames, syscalls and checkpoints
            conn.execute("PRAGMA page_size=65536")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    def _tx(self) -> _Tx:
        return _Tx(self._conn())

    def close(self) -> None:
        """Close this thread's connection."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # --- topologies -------------------------------------------------------------------------
    def put_topology(self, body: dict[str, Any]) -> str:
        """Store a topology (validated by the caller) and return its id: the id it already has when
        the same topology (the same canonical JSON: keys sorted) was stored before, so a machine is
        kept once however many runs and imports name it (topology rows never change)."""
        text = json.dumps(body)
        digest = _digest(body)
        with self._tx() as c:
            row = c.execute("SELECT topology_id FROM topology_digests WHERE digest = ?", (digest,)).fetchone()
            if row is not None:
                return str(row[0])
            tid = new_id()
            c.execute("INSERT INTO topologies (id, body, created_at) VALUES (?, ?, ?)", (tid, text, _now()))
            c.execute("INSERT INTO topology_digests (digest, topology_id) VALUES (?, ?)", (digest, tid))
        return tid

    def put_sweep(self, scenario: dict[str, Any], spec: dict[str, Any], result: dict[str, Any]) -> str:
        """Store a finished sweep (its scenario, the sweep asked for, its result) and return its id."""
        sid = new_id()
        with self._tx() as c:
            c.execute(
                "INSERT INTO sweeps (id, created_at, scenario, spec, result) VALUES (?, ?, ?, ?, ?)",
                (sid, _now(), json.dumps(scenario), json.dumps(spec), json.dumps(result)),
            )
        return sid

    def get_sweep(self, sid: str) -> dict[str, Any] | None:
        """A stored sweep: {id, created_at, scenario, sweep, result}; None when there is none."""
        row = (
            self._conn()
            .execute("SELECT created_at, scenario, spec, result FROM sweeps WHERE id = ?", (sid,))
            .fetchone()
        )
        if row is None:
            return None
        return {
            "id": sid,
            "created_at": row[0],
            "scenario": json.loads(row[1]),
            "sweep": json.loads(row[2]),
            "result": json.loads(row[3]),
        }

    def delete_sweep(self, sid: str) -> bool:
        """Forget a stored sweep (its link then finds nothing); whether there was one."""
        with self._tx() as c:
            return c.execute("DELETE FROM sweeps WHERE id = ?", (sid,)).rowcount > 0

    def list_sweeps(self, limit: int) -> list[dict[str, Any]]:
        """The newest stored sweeps first, at most `limit`: {id, created_at, scenario, sweep, result}."""
        rows = (
            self._conn()
            .execute(
                "SELECT id, created_at, scenario, spec, result FROM sweeps "
                "ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (limit,),
            )
            .fetchall()
        )
        return [
            {
                "id": r[0],
                "created_at": r[1],
                "scenario": json.loads(r[2]),
                "sweep": json.loads(r[3]),
                "result": json.loads(r[4]),
            }
            for r in rows
        ]

    def _address_old_topologies(self) -> None:
        """Topologies stored before they were content-addressed (session 27) have no digest, and a
        machine stored many times then (every simulated run of a preset) has many rows. Once per
        store: give each machine's oldest such row its digest unless a later put gave the machine
        one, so later puts find it, and point the recordings of its other rows at the addressed
        one, so a machine lists once (the dashboard's recorded hosts go by topology id). No
        topology row is changed or deleted: an id handed out stays valid."""
        done = "SELECT 1 FROM meta WHERE key = 'topologies_addressed'"
        if self._conn().execute(done).fetchone():  # every open after the first: no write lock taken
            return
        with self._tx() as c:
            if c.execute(done).fetchone():  # another process did it meanwhile
                return
            rows = c.execute(
                "SELECT id, body FROM topologies WHERE id NOT IN (SELECT topology_id FROM topology_digests) "
                "ORDER BY created_at, rowid"
            ).fetchall()
            for tid, body in rows:
                digest = _digest(json.loads(body))
                known = c.execute(
                    "SELECT topology_id FROM topology_digests WHERE digest = ?", (digest,)
                ).fetchone()
                if known is None:
                    c.execute(
                        "INSERT INTO topology_digests (digest, topology_id) VALUES (?, ?)", (digest, tid)
                    )
                else:
                    c.execute("UPDATE recordings SET topology_id = ? WHERE topology_id = ?", (known[0], tid))
            c.execute("INSERT INTO meta (key, value) VALUES ('topologies_addressed', ?)", (str(len(rows)),))

    def get_topology(self, tid: str) -> dict[str, Any] | None:
        row = self._conn().execute("SELECT body FROM topologies WHERE id = ?", (tid,)).fetchone()
        if row is None:
            return None
        body: dict[str, Any] = json.loads(row[0])
        return body

    # --- recordings -------------------------------------------------------------------------
    def create_recording(
        self, name: str, *, source: str = "imported", fmt: str | None = None, topology_id: str | None = None
    ) -> str:
        """A new recording row with status importing and no data."""
        rid = new_id()
        with self._tx() as c:
            c.execute(
                "INSERT INTO recordings (id, name, source, status, created_at, format, topology_id, progress)"
                " VALUES (?, ?, ?, 'importing', ?, ?, ?, 0.0)",
                (rid, name, source, _now(), fmt, topology_id),
            )
        return rid

    def get_recording(self, rid: str) -> RecordingRow | None:
        row = self._conn().execute(f"SELECT {_REC_COLS} FROM recordings WHERE id = ?", (rid,)).fetchone()
        return None if row is None else _recording(row)

    def list_recordings(self) -> list[RecordingRow]:
        """All recordings, newest first."""
        rows = self._conn().execute(
            f"SELECT {_REC_COLS} FROM recordings ORDER BY created_at DESC, rowid DESC"
        )
        return [_recording(r) for r in rows]

    def set_progress(self, rid: str, progress: float) -> None:
        with self._tx() as c:
            c.execute(
                "UPDATE recordings SET progress = ? WHERE id = ? AND status = 'importing'",
                (min(max(progress, 0.0), 1.0), rid),
            )

    def set_topology(self, rid: str, topology_id: str) -> None:
        with self._tx() as c:
            c.execute("UPDATE recordings SET topology_id = ? WHERE id = ?", (topology_id, rid))

    def append_chunk(self, rid: str, chunk: ChunkWrite, *, count_events: bool = True) -> None:
        """Write one chunk, its keyframe and its task index rows in one transaction.

        count_events=False leaves event_count and bytes_stored alone (a live recording counts its events
        as batches commit, and settles both from its chunks when it ends)."""
        with self._tx() as c:
            c.execute(
                "INSERT INTO chunks (recording_id, seq, t_start_ns, t_end_ns, first_row, rows, raw_bytes,"
                " bytes, keyframe_raw, placements_raw, data, keyframe, placements)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    rid,
                    chunk.seq,
                    chunk.t_start_ns,
                    chunk.t_end_ns,
                    chunk.first_row,
                    chunk.rows,
                    chunk.raw_bytes,
                    len(chunk.data),
                    chunk.keyframe_raw,
                    chunk.placements_raw,
                    chunk.data,
                    chunk.keyframe,
                    chunk.placements,
                ),
            )
            c.executemany(
                "INSERT OR IGNORE INTO task_chunks (recording_id, pid, seq) VALUES (?, ?, ?)",
                ((rid, int(p), chunk.seq) for p in chunk.pids),
            )
            c.execute(
                "UPDATE recordings SET chunk_count = chunk_count + 1, bytes_stored = bytes_stored + ?,"
                " event_count = event_count + ? WHERE id = ?",
                (len(chunk.data) if count_events else 0, chunk.rows if count_events else 0, rid),
            )

    def finish_recording(
        self,
        rid: str,
        *,
        t_start_ns: int | None,
        t_end_ns: int | None,
        lost_events: int,
        skipped_lines: int | None,
        fmt: str | None,
        meta: dict[str, Any],
        derived: dict[str, bytes],
        tasks: Sequence[TaskRow],
    ) -> None:
        """Store the derived data and mark the recording ready."""
        with self._tx() as c:
            c.executemany(
                "INSERT OR REPLACE INTO derived (recording_id, name, data) VALUES (?, ?, ?)",
                ((rid, name, data) for name, data in derived.items()),
            )
            # (TaskRow's fields are _TASK_COLS, in order)
            c.executemany(
                f"INSERT OR REPLACE INTO tasks (recording_id, {_TASK_COLS}) VALUES ({', '.join('?' * 10)})",
                ((rid, *astuple(t)) for t in tasks),
            )
            c.execute(
                "UPDATE recordings SET status = 'ready', progress = NULL, t_start_ns = ?, t_end_ns = ?,"
                " lost_events = ?, skipped_lines = ?, format = COALESCE(?, format), meta = ? WHERE id = ?",
                (t_start_ns, t_end_ns, lost_events, skipped_lines, fmt, json.dumps(meta), rid),
            )

    def fail_recording(self, rid: str, error: str) -> None:
        """Drop every piece of the recording's data and keep the row as failed with the reason."""
        with self._tx() as c:
            for table in DATA_TABLES:
                c.execute(f"DELETE FROM {table} WHERE recording_id = ?", (rid,))
            c.execute(
                "UPDATE recordings SET status = 'failed', error = ?, progress = NULL, event_count = 0,"
                " chunk_count = 0, bytes_stored = 0 WHERE id = ?",
                (error, rid),
            )

    def delete_recording(self, rid: str) -> bool:
        """Remove the recording and all its data; False when it did not exist."""
        with self._tx() as c:
            for table in DATA_TABLES:
                c.execute(f"DELETE FROM {table} WHERE recording_id = ?", (rid,))
            cur = c.execute("DELETE FROM recordings WHERE id = ?", (rid,))
            return cur.rowcount > 0

    def fail_interrupted(self) -> int:
        """Imports that were running when the server stopped can never finish: fail them."""
        ids = [r[0] for r in self._conn().execute("SELECT id FROM recordings WHERE status = 'importing'")]
        for rid in ids:
            self.fail_recording(rid, "the server stopped during the import; upload the file again")
        return len(ids)

    # --- chunks -----------------------------------------------------------------------------
    def list_chunks(self, rid: str, t0_ns: int | None = None, t1_ns: int | None = None) -> list[ChunkRow]:
        """Chunks overlapping [t0_ns, t1_ns] (either bound may be open), in order."""
        sql = f"SELECT {_CHUNK_COLS} FROM chunks WHERE recording_id = ?"
        args: list[object] = [rid]
        if t1_ns is not None:
            sql += " AND t_start_ns <= ?"
            args.append(t1_ns)
        if t0_ns is not None:
            sql += " AND t_end_ns >= ?"
            args.append(t0_ns)
        sql += " ORDER BY seq"
        return [ChunkRow(*r) for r in self._conn().execute(sql, args)]

    def chunk_data(self, rid: str, seq: int) -> tuple[bytes, int] | None:
        """The compressed IPC blob of a chunk and its uncompressed size."""
        row = (
            self._conn()
            .execute("SELECT data, raw_bytes FROM chunks WHERE recording_id = ? AND seq = ?", (rid, seq))
            .fetchone()
        )
        return None if row is None else (bytes(row[0]), int(row[1]))

    def chunk_at(self, rid: str, t_ns: int) -> ChunkRow | None:
        """The last chunk starting at or before t_ns: its keyframe + its events give the state at t_ns."""
        row = (
            self._conn()
            .execute(
                f"SELECT {_CHUNK_COLS} FROM chunks WHERE recording_id = ? AND t_start_ns <= ?"
                " ORDER BY t_start_ns DESC, seq DESC LIMIT 1",
                (rid, t_ns),
            )
            .fetchone()
        )
        return None if row is None else ChunkRow(*row)

    def keyframe(self, rid: str, seq: int) -> tuple[bytes, int] | None:
        row = (
            self._conn()
            .execute(
                "SELECT keyframe, keyframe_raw FROM chunks WHERE recording_id = ? AND seq = ?", (rid, seq)
            )
            .fetchone()
        )
        return None if row is None else (bytes(row[0]), int(row[1]))

    def placements(self, rid: str, seq: int) -> tuple[bytes, int] | None:
        row = (
            self._conn()
            .execute(
                "SELECT placements, placements_raw FROM chunks WHERE recording_id = ? AND seq = ?", (rid, seq)
            )
            .fetchone()
        )
        return None if row is None else (bytes(row[0]), int(row[1]))

    def put_placements(self, rid: str, blobs: Sequence[tuple[int, bytes, int]]) -> None:
        """Chunks' placement side tables, (seq, blob, raw_bytes) each, rebuilt for a recording stored
        before their columns were kept: all in one transaction (a reader sees all or none)."""
        with self._tx() as c:
            c.executemany(
                "UPDATE chunks SET placements = ?, placements_raw = ? WHERE recording_id = ? AND seq = ?",
                ((data, raw, rid, seq) for seq, data, raw in blobs),
            )

    def iter_chunk_data(self, rid: str, seqs: Sequence[int]) -> Iterator[tuple[int, bytes, int]]:
        """(seq, blob, raw_bytes) for the given chunks, one at a time (never all in memory)."""
        for seq in seqs:
            got = self.chunk_data(rid, seq)
            if got is not None:
                yield seq, got[0], got[1]

    # --- derived and tasks ------------------------------------------------------------------
    def derived(self, rid: str, name: str) -> bytes | None:
        row = (
            self._conn()
            .execute("SELECT data FROM derived WHERE recording_id = ? AND name = ?", (rid, name))
            .fetchone()
        )
        return None if row is None else bytes(row[0])

    def put_derived(self, rid: str, name: str, data: bytes) -> bool:
        """Replace one derived blob of a ready recording (a document completed after its import);
        False when the recording is gone or not ready, and nothing is written."""
        with self._tx() as c:
            ready = c.execute("SELECT 1 FROM recordings WHERE id = ? AND status = 'ready'", (rid,)).fetchone()
            if ready is None:
                return False
            c.execute(
                "INSERT OR REPLACE INTO derived (recording_id, name, data) VALUES (?, ?, ?)",
                (rid, name, data),
            )
        return True

    def tasks(self, rid: str, q: str | None, limit: int, order: str = "events") -> list[TaskRow]:
        """Tasks whose pid equals q or whose comm contains q (all when q is empty), in `order`
        (TASK_ORDERS: busiest first, or most often woken from another LLC first)."""
        sql = f"SELECT {_TASK_COLS} FROM tasks WHERE recording_id = ?"
        args: list[object] = [rid]
        if q:
            # instr, not LIKE: comm may hold % and _ and must match literally.
            sql += " AND (instr(comm, ?) > 0"
            args.append(q)
            if q.strip().lstrip("-").isdigit():
                sql += " OR pid = ?"
                args.append(int(q))
            sql += ")"
        sql += f" ORDER BY {TASK_ORDERS[order]} LIMIT ?"
        args.append(limit)
        return [TaskRow(*r) for r in self._conn().execute(sql, args)]

    def tasks_uncounted(self, rid: str) -> bool:
        """Whether the recording's tasks lack their wakeup counts (stored before they were counted)."""
        row = (
            self._conn()
            .execute("SELECT 1 FROM tasks WHERE recording_id = ? AND wakeups IS NULL LIMIT 1", (rid,))
            .fetchone()
        )
        return row is not None

    def put_task_wakes(self, rid: str, counts: Sequence[tuple[int, int, int, int]]) -> None:
        """Each task's (pid, wakeups, cross_llc, pulled), counted again for a recording stored before
        them; only into rows that lack them. A task the counts do not name had no wakeup: 0, so that
        no row stays uncounted (which would scan the recording again at every listing)."""
        with self._tx() as c:
            c.executemany(
                "UPDATE tasks SET wakeups = ?, cross_llc = ?, pulled = ?"
                " WHERE recording_id = ? AND pid = ? AND wakeups IS NULL",
                ((w, x, p, rid, pid) for pid, w, x, p in counts),
            )
            c.execute(
                "UPDATE tasks SET wakeups = 0, cross_llc = 0, pulled = 0"
                " WHERE recording_id = ? AND wakeups IS NULL",
                (rid,),
            )

    def task(self, rid: str, pid: int) -> TaskRow | None:
        row = (
            self._conn()
            .execute(
                f"SELECT {_TASK_COLS} FROM tasks WHERE recording_id = ? AND pid = ?",
                (rid, pid),
            )
            .fetchone()
        )
        return None if row is None else TaskRow(*row)

    def task_chunk_seqs(self, rid: str, pid: int) -> list[int]:
        rows = self._conn().execute(
            "SELECT seq FROM task_chunks WHERE recording_id = ? AND pid = ? ORDER BY seq", (rid, pid)
        )
        return [int(r[0]) for r in rows]


class _Tx:
    """BEGIN IMMEDIATE ... COMMIT (or ROLLBACK on error) on a connection in autocommit mode."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")


def _digest(body: dict[str, Any]) -> str:
    """A topology's content address: sha256 of its canonical JSON (keys sorted, no spaces)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _recording(row: Sequence[Any]) -> RecordingRow:
    values = list(row)
    values[-1] = json.loads(values[-1] or "{}")
    return RecordingRow(*values)
