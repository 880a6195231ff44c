"""Store side of live ingest: hashed ingest tokens, collector sessions and the batches of live recordings.

A batch is committed with its session's last_seq in one transaction, so (session_id, seq) dedup survives
a server restart: a batch at or below last_seq is a duplicate and nothing is written twice.

Finalising closes the recording's sessions (in a transaction) before it reads their batches, and a commit
checks, in its own transaction, that its session is open and its recording live: a batch is either read by
the finalisation or refused (never acknowledged), so an acknowledged batch can never miss the chunks.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from placemap.store.store import ChunkWrite, Store, _now, new_id

TOKEN_PREFIX = "pmt_"


class SessionEndedError(Exception):
    """The session's recording is being or has been finalised: the batch was not stored."""


@dataclass(frozen=True)
class TokenRow:
    """An ingest token as listed (never the secret itself)."""

    id: str
    name: str
    created_at: str
    revoked_at: str | None


@dataclass(frozen=True)
class BatchCommit:
    """What a committed batch adds to its recording."""

    seq: int
    rows: int
    t_start_ns: int | None
    t_end_ns: int | None
    lost_events: int
    by_kind: dict[str, int]
    data: bytes


LIVE_META = ("host", "kernel_release", "collector", "events")  # a live recording's meta that finishing keeps


class LiveChunkStore(Store):
    """The store as a live recording's chunk writer sees it: chunks do not add to event_count and
    bytes_stored, which count committed batches while the recording is live; finishing sets both from the
    chunks and keeps the hello's meta before the recording turns ready (the chunk worker finishes in
    another process than the finalisation that waits for it)."""

    def append_chunk(self, rid: str, chunk: ChunkWrite, *, count_events: bool = False) -> None:
        super().append_chunk(rid, chunk, count_events=count_events)

    def finish_recording(self, rid: str, *, meta: dict[str, Any], **kw: Any) -> None:
        row = self._conn().execute("SELECT meta FROM recordings WHERE id = ?", (rid,)).fetchone()
        old: dict[str, Any] = json.loads(row[0] or "{}") if row is not None else {}
        LiveStore(self).settle_counts(rid)
        super().finish_recording(rid, meta={**meta, **{k: old[k] for k in LIVE_META if k in old}}, **kw)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class LiveStore:
    """Tokens, sessions and live batches over the Store's SQLite database."""

    def __init__(self, store: Store) -> None:
        self.store = store
        cols = {r[1] for r in store._conn().execute("PRAGMA table_info(live_sessions)")}
        if "closed" not in cols:  # a database created before the column existed
            with store._tx() as c:
                if "closed" not in {r[1] for r in c.execute("PRAGMA table_info(live_sessions)")}:
                    c.execute("ALTER TABLE live_sessions ADD COLUMN closed INTEGER NOT NULL DEFAULT 0")

    # --- tokens -------------------------------------------------------------------------------
    def create_token(self, name: str) -> tuple[str, str]:
        """A new token: (id, secret). Only the secret's sha256 is stored: show the secret once."""
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        tid = secrets.token_hex(6)  # hex: never starts with "-" on a command line
        with self.store._tx() as c:
            c.execute(
                "INSERT INTO tokens (id, name, hash, created_at) VALUES (?, ?, ?, ?)",
                (tid, name, token_hash(secret), _now()),
            )
        return tid, secret

    def list_tokens(self) -> list[TokenRow]:
        rows = self.store._conn().execute(
            "SELECT id, name, created_at, revoked_at FROM tokens ORDER BY created_at, rowid"
        )
        return [TokenRow(*r) for r in rows]

    def revoke_token(self, tid: str) -> bool:
        """Revoke by id; False when there is no such token."""
        with self.store._tx() as c:
            cur = c.execute(
                "UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?", (_now(), tid)
            )
            return cur.rowcount > 0

    def check_token(self, secret: str) -> str | None:
        """The id of a valid (known, not revoked) token, else None."""
        row = (
            self.store._conn()
            .execute("SELECT id FROM tokens WHERE hash = ? AND revoked_at IS NULL", (token_hash(secret),))
            .fetchone()
        )
        return None if row is None else str(row[0])

    # --- sessions -----------------------------------------------------------------------------
    def session(self, session_id: str) -> tuple[str, int, bool] | None:
        """(recording_id, last_seq, closed) of a known session."""
        row = (
            self.store._conn()
            .execute(
                "SELECT recording_id, last_seq, closed FROM live_sessions WHERE session_id = ?", (session_id,)
            )
            .fetchone()
        )
        return None if row is None else (str(row[0]), int(row[1]), bool(row[2]))

    def start_session(
        self, session_id: str, token_id: str, name: str, topology_id: str, meta: dict[str, Any]
    ) -> str:
        """A new live recording (status live, source live) and its session; returns the recording id."""
        rid = new_id()
        with self.store._tx() as c:
            c.execute(
                "INSERT INTO recordings (id, name, source, status, created_at, format, topology_id, meta)"
                " VALUES (?, ?, 'live', 'live', ?, 'live', ?, ?)",
                (rid, name, _now(), topology_id, json.dumps(meta)),
            )
            c.execute(
                "INSERT INTO live_sessions (session_id, recording_id, token_id, created_at)"
                " VALUES (?, ?, ?, ?)",
                (session_id, rid, token_id, _now()),
            )
        return rid

    def commit_batch(self, session_id: str, rid: str, b: BatchCommit) -> bool:
        """Store a batch and raise the session's last_seq; False (nothing written) for a duplicate.

        Raises SessionEndedError (nothing written) once finalising has closed the session."""
        with self.store._tx() as c:
            row = c.execute(
                "SELECT s.last_seq, s.closed, r.status FROM live_sessions s"
                " LEFT JOIN recordings r ON r.id = s.recording_id WHERE s.session_id = ?",
                (session_id,),
            ).fetchone()
            if row is None:
                raise KeyError(session_id)
            if b.seq <= int(row[0]):
                return False  # committed before: the finalisation reads (or has read) it
            if row[1] or row[2] != "live":
                raise SessionEndedError(f"the recording of session {session_id} has ended")
            c.execute(
                "INSERT INTO live_batches (session_id, seq, recording_id, rows, t_start_ns, t_end_ns, data)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, b.seq, rid, b.rows, b.t_start_ns, b.t_end_ns, b.data),
            )
            c.execute("UPDATE live_sessions SET last_seq = ? WHERE session_id = ?", (b.seq, session_id))
            meta_row = c.execute("SELECT meta FROM recordings WHERE id = ?", (rid,)).fetchone()
            meta: dict[str, Any] = json.loads(meta_row[0] or "{}")
            counts: dict[str, int] = meta.setdefault("events_by_kind", {})
            for k, n in b.by_kind.items():
                counts[k] = counts.get(k, 0) + n
            c.execute(
                "UPDATE recordings SET event_count = event_count + ?, bytes_stored = bytes_stored + ?,"
                " lost_events = lost_events + ?, t_start_ns = COALESCE(t_start_ns, ?),"
                " t_end_ns = MAX(COALESCE(t_end_ns, ?), ?), meta = ? WHERE id = ?",
                (
                    b.rows,
                    len(b.data),
                    b.lost_events,
                    b.t_start_ns,
                    b.t_end_ns,
                    b.t_end_ns,
                    json.dumps(meta),
                    rid,
                ),
            )
        return True

    # --- finalising ---------------------------------------------------------------------------
    def close_sessions(self, rid: str) -> None:
        """From now on no batch of rid commits: what is committed is all there is to finalise."""
        with self.store._tx() as c:
            c.execute("UPDATE live_sessions SET closed = 1 WHERE recording_id = ?", (rid,))

    def live_recordings(self) -> list[str]:
        return [
            str(r[0]) for r in self.store._conn().execute("SELECT id FROM recordings WHERE status = 'live'")
        ]

    def batch_ranges(self, rid: str) -> list[tuple[int, int | None, int | None]]:
        """(seq, t_start_ns, t_end_ns) of a recording's batches in commit order."""
        rows = self.store._conn().execute(
            "SELECT seq, t_start_ns, t_end_ns FROM live_batches WHERE recording_id = ? ORDER BY seq", (rid,)
        )
        return [(int(r[0]), r[1], r[2]) for r in rows]

    def iter_batches(self, rid: str, max_seq: int | None = None) -> Iterator[bytes]:
        """The batches' IPC bytes in seq order (up to max_seq), one at a time."""
        for seq, _, _ in self.batch_ranges(rid):
            if max_seq is not None and seq > max_seq:
                return
            row = (
                self.store._conn()
                .execute("SELECT data FROM live_batches WHERE recording_id = ? AND seq = ?", (rid, seq))
                .fetchone()
            )
            if row is not None:
                yield bytes(row[0])

    def batches_after(self, rid: str, after: int, limit: int = -1) -> list[tuple[int, bytes]]:
        """(seq, IPC bytes) of up to limit committed batches with seq > after, in seq order (the chunk
        worker's read; batches commit in seq order, so nothing lands below what it has read)."""
        rows = self.store._conn().execute(
            "SELECT seq, data FROM live_batches WHERE recording_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (rid, after, limit),
        )
        return [(int(r[0]), bytes(r[1])) for r in rows]

    def reset_derived(self, rid: str) -> None:
        """Before (re)building a live recording's chunks: drop any half-built ones, zero the counters
        that the chunk writer adds up again."""
        with self.store._tx() as c:
            for table in ("chunks", "derived", "tasks", "task_chunks"):
                c.execute(f"DELETE FROM {table} WHERE recording_id = ?", (rid,))
            c.execute(
                "UPDATE recordings SET event_count = 0, chunk_count = 0, bytes_stored = 0 WHERE id = ?",
                (rid,),
            )

    def last_seq(self, rid: str) -> int:
        """The highest committed batch seq of rid (-1 before any)."""
        row = (
            self.store._conn()
            .execute("SELECT MAX(seq) FROM live_batches WHERE recording_id = ?", (rid,))
            .fetchone()
        )
        return -1 if row is None or row[0] is None else int(row[0])

    def chunk_plan(self, rid: str) -> list[int]:
        """The row counts of rid's chunks in order: what a rebuild after a restart must cut again."""
        rows = self.store._conn().execute(
            "SELECT rows FROM chunks WHERE recording_id = ? ORDER BY seq", (rid,)
        )
        return [int(r[0]) for r in rows]

    def reset_chunks(self, rid: str) -> None:
        """Drop a live recording's chunks before rebuilding them from its batches (after a restart);
        its event counts (committed batches) stay."""
        with self.store._tx() as c:
            for table in ("chunks", "derived", "tasks", "task_chunks"):
                c.execute(f"DELETE FROM {table} WHERE recording_id = ?", (rid,))
            c.execute("UPDATE recordings SET chunk_count = 0 WHERE id = ?", (rid,))

    def settle_counts(self, rid: str) -> None:
        """After live chunking finished: event_count and bytes_stored as an import has them (from the
        chunks)."""
        with self.store._tx() as c:
            c.execute(
                "UPDATE recordings SET"
                " event_count = (SELECT COALESCE(SUM(rows), 0) FROM chunks WHERE recording_id = ?),"
                " bytes_stored = (SELECT COALESCE(SUM(bytes), 0) FROM chunks WHERE recording_id = ?)"
                " WHERE id = ?",
                (rid, rid, rid),
            )

    def merge_meta(self, rid: str, extra: dict[str, Any]) -> None:
        with self.store._tx() as c:
            row = c.execute("SELECT meta FROM recordings WHERE id = ?", (rid,)).fetchone()
            if row is None:
                return
            meta: dict[str, Any] = json.loads(row[0] or "{}")
            meta.update(extra)
            c.execute("UPDATE recordings SET meta = ? WHERE id = ?", (json.dumps(meta), rid))

    def drop_batches(self, rid: str) -> None:
        """After finalising: the chunks hold the events now."""
        with self.store._tx() as c:
            c.execute("DELETE FROM live_batches WHERE recording_id = ?", (rid,))

    def drop_finished_batches(self) -> int:
        """Batches left behind by a finalisation a server stop interrupted after its commit."""
        with self.store._tx() as c:
            cur = c.execute(
                "DELETE FROM live_batches"
                " WHERE recording_id IN (SELECT id FROM recordings WHERE status != 'live')"
            )
            return cur.rowcount
