"""The tasks behind one cell of the wakeups by LLC pair (Metrics.wakeups.llc_pairs): which tasks were
woken in LLC `llc` by a waker running in LLC `waker_llc`, and how often each, read from the chunks'
placement side tables (each wakeup's waker CPU and class are kept there), with the same selection as
the pairs (llc_pairs.CHOSEN), so the tasks' counts add up to the cell. Placement tables stored before
those were kept are rebuilt first, once, by the caller's `fill` (waker_refill.fill_placements)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from placemap.replay.accumulate import K_WAKEUP
from placemap.replay.llc_pairs import CHOSEN
from placemap.replay.topo import LevelMap
from placemap.replay.waker_refill import fill_placements
from placemap.schema.models.topology_schema import Topology
from placemap.store.codec import decode_blob
from placemap.store.store import Store


class PairsUncountedError(Exception):
    """The recording's placements were stored before each wakeup's waker and class were kept and
    could not be rebuilt, or one chunk's placements cannot be read (its reason)."""


class _UnreadError(Exception):
    """A chunk's placement table lacks each wakeup's waker or class, or cannot be read (why)."""


STORED_BEFORE = "stored before each wakeup's waker was kept: import it again"


def llc_out_of_range(levels: LevelMap, waker_llc: int, llc: int) -> str | None:
    """Why a cell cannot be asked for (an LLC the recording's machine lacks, named), or None."""
    for name, v in (("waker_llc", waker_llc), ("llc", llc)):
        if not 0 <= v < levels.n_llcs:
            return f"{name} {v}: the recording's machine has LLCs 0..{levels.n_llcs - 1}"
    return None


@dataclass
class PairTask:
    pid: int
    comm: str
    wakeups: int


def pair_tasks(
    store: Store,
    rid: str,
    levels: LevelMap,
    waker_llc: int,
    llc: int,
    *,
    limit: int,
    fill: Callable[[], str | None] | None = None,
) -> tuple[int, list[PairTask]]:
    """The wakeups in `llc` from a waker in `waker_llc`, and the `limit` tasks woken there most often
    (then by pid), each named (the others are only counted). Placements stored before each wakeup's
    waker was kept, or that cannot be read, are rebuilt by `fill` (which returns why they cannot
    be, or None), then read."""
    try:
        counts = _pair_counts(store, rid, levels, waker_llc, llc)
    except _UnreadError as exc:
        reason = str(exc) if fill is None else fill()
        if reason is not None:
            raise PairsUncountedError(reason) from exc
        try:
            counts = _pair_counts(store, rid, levels, waker_llc, llc)
        except _UnreadError as again:
            raise PairsUncountedError(str(again)) from again
    out = []
    for pid, c in sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:limit]:
        task = store.task(rid, pid)
        out.append(PairTask(pid, "" if task is None else task.comm, c))
    return sum(counts.values()), out


def _pair_counts(store: Store, rid: str, levels: LevelMap, waker_llc: int, llc: int) -> dict[int, int]:
    """The wakeups in `llc` from a waker in `waker_llc`, by the woken task's pid."""
    counts: dict[int, int] = {}
    for chunk in store.list_chunks(rid):
        blob = store.placements(rid, chunk.seq)
        if blob is None:
            continue
        try:
            table: pa.Table = decode_blob(*blob)
        except (pa.ArrowException, ValueError, OSError) as exc:
            raise _UnreadError(f"the placements of stored chunk {chunk.seq} cannot be read: {exc}") from exc
        if "waker_class" not in table.column_names or "waker_cpu" not in table.column_names:
            raise _UnreadError(STORED_BEFORE)
        kind = table.column("kind").to_numpy()
        classes = table.column("waker_class").to_numpy().astype(np.int64)
        woke = (kind == K_WAKEUP) & ((classes & CHOSEN) != 0)
        wcpu = table.column("waker_cpu").to_numpy()[woke]
        cpu = table.column("cpu").to_numpy()[woke]
        here = (levels.cpu_llc(wcpu) == waker_llc) & (levels.cpu_llc(cpu) == llc)
        pids, n = np.unique(table.column("pid").to_numpy()[woke][here], return_counts=True)
        for pid, c in zip(pids.tolist(), n.tolist(), strict=True):
            counts[pid] = counts.get(pid, 0) + c
    return counts


def cell_tasks(
    store: Store, rid: str, topology: Topology | None, waker_llc: int, llc: int, *, limit: int
) -> tuple[int, list[PairTask]]:
    """pair_tasks on the recording's `topology`, its placements rebuilt first where they need it
    (waker_refill.fill_placements): what the route and `admin pairs` answer."""
    fill = lambda: fill_placements(store, rid, lambda: topology)  # noqa: E731
    return pair_tasks(store, rid, LevelMap(topology), waker_llc, llc, limit=limit, fill=fill)
