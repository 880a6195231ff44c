"""Finalising a live recording: its committed batches become chunks, keyframes, metrics and overview
exactly as an import would store them, and the recording turns `ready`.

With a healthy live chunker (see chunker.py) the chunks already written stay and only the head and the
derived data are added. Without one (it broke on a late event, or never ran), every chunk is rebuilt
from the batches. Runs off the event loop. Safe to repeat after a server stop.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from placemap.live.chunker import Chunker, ChunkingBrokenError
from placemap.replay import seek
from placemap.replay.ingest import Ingestor
from placemap.schema.models.topology_schema import Topology
from placemap.store import Store
from placemap.store.live import LIVE_META, LiveStore

log = logging.getLogger("placemap.live")


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


def _forget_decoded(store: Store, rid: str) -> None:
    """A rebuild replaces chunks that seek may hold decoded: drop them."""
    with seek._cache_lock:
        for key in [k for k in seek._cache if k[0] == str(store.path) and k[1] == rid]:
            del seek._cache[key]


def finalize(store: Store, rid: str, chunker: Chunker | None = None) -> None:
    """Finish the recording's chunks from its live batches and mark it ready."""
    live = LiveStore(store)
    rec = store.get_recording(rid)
    if rec is None or rec.status != "live":
        return
    keep: dict[str, Any] = {k: rec.meta[k] for k in LIVE_META if k in rec.meta}
    topology = None
    if rec.topology_id is not None:
        body = store.get_topology(rec.topology_id)
        topology = None if body is None else Topology.model_validate(body)
    live.close_sessions(rid)  # before reading the batches: a later commit is refused, never lost
    if chunker is not None:
        with chunker.lock:
            pass  # a commit that passed the fence has offered its batch by now
        try:
            chunker.finish()
        except ChunkingBrokenError as exc:
            log.warning("live %s: rebuilding its chunks from the batches (%s)", rid, exc)
        else:
            live.settle_counts(rid)
            live.merge_meta(rid, keep)
            live.drop_batches(rid)
            return
    live.reset_derived(rid)
    _forget_decoded(store, rid)
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
