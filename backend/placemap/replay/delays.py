"""The run-queue delay after a wakeup, over a whole recording: from each sched_wakeup (or
sched_wakeup_new) to the switch that next runs the task (kernel.wakeup_delays), counted chunk by
chunk into a fixed-size histogram (placemap.sim.latency's layout), so memory stays bounded
whatever the recording's length.

Two users: the ingest, while a recording is stored, and `fill_wakeup_latency`, which gives a
recording stored before the delays were measured its `wakeup_latency` from its stored chunks
(the first time its metrics are asked for), so nobody has to import it again. A stored chunk that
cannot be read leaves the field out, as before, and the rest of the metrics are served; the
document keeps why (DELAYS_UNREAD), so later reads do not scan the chunks again."""

from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from placemap.replay import kernel as kn
from placemap.replay.refill_lock import refill_lock
from placemap.replay.seek import STATE_COLUMNS
from placemap.replay.state import ChunkColumns
from placemap.sim import latency
from placemap.store.codec import decode_blob
from placemap.store.store import Store

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

METRICS = "metrics.json"  # the derived blob that holds a recording's Metrics document
# the stored Metrics document's mark: its delays could not be read from the stored chunks (the
# damaged chunk named), so they are not looked for again (Metrics.wakeup_latency_unread)
DELAYS_UNREAD = "wakeup_latency_unread"

log = logging.getLogger(__name__)


class StoredChunkError(Exception):
    """A stored chunk that cannot be decoded (its blob damaged, or not an event chunk)."""

    def __init__(self, seq: int, reason: str) -> None:
        super().__init__(f"stored chunk {seq}: {reason}")
        self.seq = seq


class DelayCounter:
    """The delays closed so far, with each task's pending wakeup carried across chunks."""

    def __init__(self) -> None:
        self.t_woken: I64 = np.zeros(0, dtype=np.int64)  # per task slot; -1: no wakeup pending
        self.hist: I64 = np.zeros(kn.DELAY_BUCKETS, dtype=np.int64)
        self.top: I64 = np.zeros(1, dtype=np.int64)  # the largest delay
        self.count = 0

    def add(self, cols: ChunkColumns, slot: I32, n_tasks: int) -> None:
        """Count the delays this chunk closes; `slot` maps every pid of it to its task slot (fewer
        than n_tasks)."""
        if n_tasks > len(self.t_woken):
            grown = np.full(max(n_tasks, len(self.t_woken) * 3 // 2), -1, dtype=np.int64)
            grown[: len(self.t_woken)] = self.t_woken
            self.t_woken = grown
        self.count += kn.wakeup_delays(cols.kind, cols.pid, cols.npid, cols.ts, slot, self.t_woken,
                                       self.hist, self.top)  # fmt: skip

    def summary(self) -> dict[str, Any] | None:
        """Metrics.wakeup_latency: the percentiles (each its bucket's lower bound, at most 1/16
        below the exact one) and the exact largest; None without a delay."""
        return latency.delay_summary(self.hist.tolist(), self.count, int(self.top[0]))


class _Slots:
    """pid -> task slot, in order of first appearance, by the ingest's own rule (kernel.assign_slots;
    the ingest's State keeps its slots with the rest of its state)."""

    def __init__(self) -> None:
        self.slot: I32 = np.full(1, -1, dtype=np.int32)
        self.n = 0

    def assign(self, cols: ChunkColumns) -> None:
        n = len(cols.kind)
        top = max((int(a.max()) for a in (cols.pid, cols.npid, cols.cpid, cols.opid) if len(a)), default=0)
        if top >= len(self.slot):
            grown = np.full(max(top + 1, len(self.slot) * 3 // 2), -1, dtype=np.int32)
            grown[: len(self.slot)] = self.slot
            self.slot = grown
        out = np.empty(4 * n, dtype=np.int32)
        cnt = kn.assign_slots(n, cols.pid, cols.npid, cols.cpid, cols.opid, self.slot, out)
        self.slot[out[:cnt]] = np.arange(self.n, self.n + cnt, dtype=np.int32)
        self.n += cnt


def delays_from_store(store: Store, rid: str) -> dict[str, Any] | None:
    """The recording's wakeup_latency read again from its stored chunks, in order (one chunk in
    memory at a time)."""
    counter = DelayCounter()
    slots = _Slots()
    seqs = [c.seq for c in store.list_chunks(rid)]
    for seq, data, raw in store.iter_chunk_data(rid, seqs):
        try:
            cols = ChunkColumns.from_table(decode_blob(data, raw).select(list(STATE_COLUMNS)))
        except (pa.ArrowException, ValueError, OSError, KeyError) as exc:
            raise StoredChunkError(seq, str(exc) or type(exc).__name__) from exc
        slots.assign(cols)
        counter.add(cols, slots.slot, slots.n)
    return counter.summary()


def fill_wakeup_latency(store: Store, rid: str, metrics: dict[str, Any]) -> dict[str, Any]:
    """`metrics` (a recording's stored Metrics document) with its wakeup_latency: as stored when
    the document has the field (null included: no wakeup was followed by its switch-in), else
    computed from the stored chunks and stored with the document, once (left out when a chunk
    cannot be read, the other metrics readable, and the document marked DELAYS_UNREAD so that
    later reads do not scan again)."""
    if "wakeup_latency" in metrics or DELAYS_UNREAD in metrics:
        return metrics
    with refill_lock(rid):
        # another request may have stored it, or the mark, meanwhile (refill_lock)
        stored = json.loads(store.derived(rid, METRICS) or b"{}")
        if "wakeup_latency" in stored:
            return {**metrics, "wakeup_latency": stored["wakeup_latency"]}
        if DELAYS_UNREAD in stored:
            return {**metrics, DELAYS_UNREAD: stored[DELAYS_UNREAD]}
        try:
            delays = delays_from_store(store, rid)
        except StoredChunkError as exc:
            log.warning("recording %s: run-queue delays not read again: %s", rid, exc)
            if stored:
                store.put_derived(rid, METRICS, json.dumps({**stored, DELAYS_UNREAD: str(exc)}).encode())
            return {**metrics, DELAYS_UNREAD: str(exc)}
        # into the document as stored now: the other refills' fields kept
        if stored:
            store.put_derived(rid, METRICS, json.dumps({**stored, "wakeup_latency": delays}).encode())
    return {**metrics, "wakeup_latency": delays}
