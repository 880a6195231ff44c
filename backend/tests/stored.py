"""Test helper: a stored recording's chunk placement tables as a version before some of their
columns were kept wrote them (those columns dropped), written into its SQLite file directly."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from placemap.replay.waker_refill import WAKER_COLUMNS
from placemap.store.codec import decode_blob, encode_table


def as_stored_before(
    db: Path, rid: str, columns: Iterable[str] = WAKER_COLUMNS, seqs: Iterable[int] | None = None
) -> None:
    """The recording's placement tables (of the chunks `seqs`; None: all) without `columns`."""
    wanted = None if seqs is None else set(seqs)
    conn = sqlite3.connect(db)
    with conn:
        sql = "SELECT seq, placements, placements_raw FROM chunks WHERE recording_id = ?"
        for seq, data, raw in conn.execute(sql, (rid,)).fetchall():
            if wanted is not None and seq not in wanted:
                continue
            older = encode_table(decode_blob(bytes(data), int(raw)).drop_columns(list(columns)))
            conn.execute(
                "UPDATE chunks SET placements = ?, placements_raw = ? WHERE recording_id = ? AND seq = ?",
                (older.data, older.raw_bytes, rid, seq),
            )
    conn.close()
