"""Finalising a live recording: its committed batches become chunks, keyframes, metrics and overview
exactly as an import would store them, and the recording turns `ready`.

Runs off the event loop. Safe to repeat after a server stop: it starts by dropping any half-built chunks.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from placemap.replay.ingest import Ingestor
from placemap.schema.models.topology_schema import Topology
from placemap.store import Store
from placemap.store.live import LiveStore


def _ordered(ranges: list[tuple[int, int | None, int | None]]) -> bool:
    """Each batch is sorted (validated); the whole is when no batch starts before the previous ends."""
    end: int | None = None
    for _, t0, t1 in ranges:
        if t0 is None or t1 is None:
            continue
        if end is not None and t0 < end:
            return False
        end = t1
    return True


def finalize(store: Store, rid: str) -> None:
    """Build the recording's chunks from its live batches and mark it ready."""
    live = LiveStore(store)
    rec = store.get_recording(rid)
    if rec is None or rec.status != "live":
        return
    keep: dict[str, Any] = {
        k: rec.meta[k] for k in ("host", "kernel_release", "collector", "events") if k in rec.meta
    }
    topology = None
    if rec.topology_id is not None:
        body = store.get_topology(rec.topology_id)
        topology = None if body is None else Topology.model_validate(body)
    live.close_sessions(rid)  # before reading the batches: a later commit is refused, never lost
    live.reset_derived(rid)
    ingestor = Ingestor(store, rid, topology)
    try:
        ranges = live.batch_ranges(rid)
        tables = (pa.ipc.open_stream(pa.py_buffer(d)).read_all() for d in live.iter_batches(rid))
        if _ordered(ranges):
            for t in tables:
                ingestor.add(t)
        else:
            # A late event crossed a batch boundary: sort once (stable, so ties keep their order).
            whole = pa.concat_tables(list(tables))
            ingestor.add(whole.take(pc.sort_indices(whole, sort_keys=[("ts_ns", "ascending")])))
        ingestor.finish(None)
    except BaseException:
        with contextlib.suppress(Exception):
            ingestor.close()
        raise
    live.merge_meta(rid, keep)
    live.drop_batches(rid)
