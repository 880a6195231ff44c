"""The wakeups by where their waker ran (Metrics.wakeups.by_waker) for a recording stored before they
were counted: its stored chunks, in order, go through the ingest's own state machine
(PlacementState.apply, which counts them as the ingest does: kernel.WK_*), once, the first time its
metrics are read, and the counts are kept with its metrics document, so nobody has to import it
again. A stored chunk that cannot be read leaves the field null, kept so (not scanned for again),
and the rest of the metrics are served. Memory: one chunk and the per-task state."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from placemap.replay import kernel as kn
from placemap.replay.delays import METRICS, StoredChunkError
from placemap.replay.ingest import waker_counts
from placemap.replay.seek import STATE_COLUMNS
from placemap.replay.state import ChunkColumns, PlacementState
from placemap.replay.topo import LevelMap
from placemap.schema.models.topology_schema import Topology
from placemap.store.codec import decode_blob
from placemap.store.store import Store

log = logging.getLogger(__name__)


def by_waker_from_store(store: Store, rid: str, topology: Topology | None) -> dict[str, int]:
    """The recording's wakeups by their waker's CPU, counted again from its stored chunks on
    `topology` (the recording's; None: inferred, one LLC)."""
    levels = LevelMap(topology)
    state = PlacementState()
    counts = np.zeros(kn.WK_COUNTS, dtype=np.int64)
    seqs = [c.seq for c in store.list_chunks(rid)]
    for seq, data, raw in store.iter_chunk_data(rid, seqs):
        try:
            table = decode_blob(data, raw).select(list(STATE_COLUMNS))
            cols = ChunkColumns.from_table(table)
        except (pa.ArrowException, ValueError, OSError, KeyError) as exc:
            raise StoredChunkError(seq, str(exc) or type(exc).__name__) from exc
        state.apply(
            table,
            cols,
            len(cols.kind),
            classify=True,
            matrix=levels.matrix,
            default_level=levels.default_level,
            waker_counts=counts,
        )
    return waker_counts(counts)


def fill_by_waker(
    store: Store, rid: str, metrics: dict[str, Any], topology: Callable[[], Topology | None]
) -> dict[str, Any]:
    """`metrics` (a recording's stored Metrics document) with wakeups.by_waker: as stored when the
    document has it, else counted from the stored chunks on the recording's `topology()` (asked
    only then) and stored with the document, once (null, stored so, when a chunk cannot be
    read)."""
    wakeups = metrics.get("wakeups")
    if not isinstance(wakeups, dict) or "by_waker" in wakeups:
        return metrics
    counts: dict[str, int] | None
    try:
        counts = by_waker_from_store(store, rid, topology())
    except StoredChunkError as exc:
        # kept as null: a damaged chunk stays damaged, and the next read need not scan again
        log.warning("recording %s: wakeups by their waker not counted again: %s", rid, exc)
        counts = None
    filled = {**metrics, "wakeups": {**wakeups, "by_waker": counts}}
    store.put_derived(rid, METRICS, json.dumps(filled).encode())
    return filled
