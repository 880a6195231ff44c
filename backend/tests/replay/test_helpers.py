"""Helpers shared by the replay tests."""

from __future__ import annotations

import sqlite3

import pyarrow as pa

from placemap.replay.ingest import Ingestor
from placemap.schema.models.topology_schema import Topology
from placemap.store import Store


def ingest(store: Store, table: pa.Table, chunk_rows: int = 65_536, topology: Topology | None = None) -> str:
    rid = store.create_recording("test")
    ing = Ingestor(store, rid, topology, chunk_rows=chunk_rows)
    for batch in table.to_batches(max_chunksize=10_000):
        ing.add(batch)
    ing.finish(None)
    return rid


def damage_chunk(store: Store, rid: str, index: int = 5) -> int:
    """Overwrite the recording's stored chunk `index` with bytes that are not one; returns its seq."""
    seq = store.list_chunks(rid)[index].seq
    conn = sqlite3.connect(store.path)
    with conn:
        conn.execute(
            "UPDATE chunks SET data = ? WHERE recording_id = ? AND seq = ?", (b"\x00not zstd" * 50, rid, seq)
        )
    conn.close()
    return seq


def never_asked() -> Topology:
    """A refill's topology() that fails the test if a scan asks for it (nothing left to count)."""
    raise AssertionError("the stored chunks scanned again")
