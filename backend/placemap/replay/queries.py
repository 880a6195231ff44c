"""Read-side queries over a stored recording: overview rebinned to N bins, a task's placement path,
and the events of a time window as Arrow batches (streamed chunk by chunk)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from placemap.replay import kernel as kn
from placemap.replay.accumulate import N_WAKE, N_WAKER, overview_rows
from placemap.replay.bins import rebin
from placemap.replay.topo import CAUSES, LEVELS, LevelMap
from placemap.schema.events import KIND_NAMES
from placemap.store.codec import decode_blob, decode_chunk
from placemap.store.store import Store


@dataclass
class OverviewData:
    t_start_ns: int
    t_end_ns: int
    bin_ns: int
    bins: int
    events: list[float]
    by_kind: dict[str, list[float]]
    migrations_by_level: dict[str, list[float]]
    lost: list[float]
    # None for an overview stored before the wakeup rows (waker_refill.fill_overview adds them)
    wakeups_by_level: dict[str, list[float]] | None
    wakeups_by_waker: dict[str, list[float]] | None


# the overview's wakeup rows, named as Metrics.wakeups names the same counts
WAKE_ROWS = (*LEVELS, "unknown", "same_cpu")
WAKER_ROWS = ("shared_llc", "cross_llc", "to_waker_llc", "to_prev_llc", "elsewhere", "on_waker_cpu",
              "still_running", "unknown")  # fmt: skip
assert len(WAKE_ROWS) == N_WAKE and len(WAKER_ROWS) == N_WAKER


def overview(store: Store, rid: str, t_start: int, t_end: int, bins: int) -> OverviewData | None:
    blob = store.derived(rid, "overview.npz")
    if blob is None:
        return None
    with np.load(io.BytesIO(blob)) as z:
        values, t0, width = z["values"], int(z["t0"]), int(z["width"])
    bin_ns, out = rebin(values, t0=t0, width=width, t_start=t_start, t_end=t_end, bins=bins)
    nk = len(KIND_NAMES)
    lost, wake, waker, rows = overview_rows(nk)
    has_wake = out.shape[0] >= rows

    def ints(row: np.ndarray) -> list[float]:
        return [float(x) for x in np.rint(row)]

    return OverviewData(
        t_start_ns=t_start,
        t_end_ns=t_end,
        bin_ns=bin_ns,
        bins=bins,
        events=ints(out[:nk].sum(axis=0)),
        by_kind={name: ints(out[k]) for k, name in enumerate(KIND_NAMES)},
        migrations_by_level={name: ints(out[nk + i]) for i, name in enumerate(LEVELS)},
        lost=ints(out[lost]),
        wakeups_by_level={n: ints(out[wake + i]) for i, n in enumerate(WAKE_ROWS)} if has_wake else None,
        wakeups_by_waker={n: ints(out[waker + i]) for i, n in enumerate(WAKER_ROWS)} if has_wake else None,
    )


@dataclass
class Placement:
    ts_ns: int
    cpu: int
    llc: int | None
    numa_node: int | None
    kind: str
    level: str | None
    cause: str | None
    # a wakeup's waker: the CPU its sched_waking ran on and the pid running there (0: an interrupt
    # on an idle CPU); None for other placements, a wakeup without sched_waking, and placements
    # stored before they were kept
    waker_cpu: int | None = None
    waker_pid: int | None = None
    # a wakeup's class by where its waker ran (waker_class_name); None for other placements and
    # placements stored before it was kept
    waker_class: str | None = None


def waker_class_name(mask: int) -> str | None:
    """The one class of a wakeup's mask (kernel.WK_* bits) that says where it woke against its
    waker: "shared_llc", "to_waker_llc", "to_prev_llc", "elsewhere", "still_running" or "unknown"
    (whether it woke on the waker's very CPU is its waker_cpu against its cpu); None for 0 (not a
    wakeup)."""
    for bit in (kn.WK_STILL_RUNNING, kn.WK_UNKNOWN, kn.WK_TO_WAKER_LLC, kn.WK_TO_PREV_LLC, kn.WK_ELSEWHERE,
                kn.WK_SHARED_LLC):  # fmt: skip
        if mask & (1 << bit):
            return WAKER_ROWS[bit]
    return None


class PlacementsUnreadError(Exception):
    """A chunk's placement table cannot be read (and was not rebuilt from its events): why."""


def task_path(
    store: Store, rid: str, pid: int, levels: LevelMap, fill: Callable[[], str | None] | None = None
) -> list[Placement]:
    """Every event that put the task on a CPU, from the placement side tables of its chunks only.
    A table stored before each wakeup's waker and class were kept, or that cannot be read, is
    rebuilt by `fill` first (waker_refill.fill_placements, once: None when it was); where it cannot
    be, the path has neither, and a table that cannot be read is PlacementsUnreadError."""
    out: list[Placement] = []
    for seq in store.task_chunk_seqs(rid, pid):
        blob = store.placements(rid, seq)
        if blob is None:
            continue
        try:
            table = decode_blob(*blob)
            unread = None
        except (pa.ArrowException, ValueError, OSError) as exc:
            table, unread = pa.table({}), f"the placements of stored chunk {seq} cannot be read: {exc}"
        if fill is not None and (unread is not None or "waker_class" not in table.column_names):
            if fill() is None:
                return task_path(store, rid, pid, levels)
            fill = None  # (not rebuilt: read as stored)
        if unread is not None:
            raise PlacementsUnreadError(unread)
        table = table.filter(pc.equal(table.column("pid"), pid))
        n = table.num_rows
        kept = "waker_cpu" in table.column_names
        wcpus = table.column("waker_cpu").to_pylist() if kept else [-1] * n
        wpids = table.column("waker_pid").to_pylist() if kept else [-1] * n
        classes = table.column("waker_class").to_pylist() if "waker_class" in table.column_names else [0] * n
        for ts, cpu, kind, level, cause, wcpu, wpid, wclass in zip(
            table.column("ts_ns").to_pylist(),
            table.column("cpu").to_pylist(),
            table.column("kind").to_pylist(),
            table.column("level").to_pylist(),
            table.column("cause").to_pylist(),
            wcpus,
            wpids,
            classes,
            strict=True,
        ):
            out.append(
                Placement(
                    ts_ns=ts,
                    cpu=cpu,
                    llc=levels.llc_of(cpu),
                    numa_node=levels.node_of(cpu),
                    kind=KIND_NAMES[kind],
                    level=LEVELS[level] if 0 <= level < len(LEVELS) else None,
                    cause=CAUSES[cause] if 0 <= cause < len(CAUSES) else None,
                    waker_cpu=wcpu if wcpu >= 0 else None,
                    waker_pid=wpid if wpid >= 0 and wcpu >= 0 else None,
                    waker_class=waker_class_name(wclass),  # (0, None, for every row but a wakeup)
                )
            )
    return out


def window_batches(store: Store, rid: str, t0: int | None, t1: int | None) -> Iterator[pa.RecordBatch]:
    """The events with t0 <= ts_ns <= t1, one decoded chunk at a time."""
    for chunk in store.list_chunks(rid, t0, t1):
        data = store.chunk_data(rid, chunk.seq)
        if data is None:
            continue
        table = decode_chunk(*data)
        ts = table.column("ts_ns")
        mask = None
        if t0 is not None and chunk.t_start_ns < t0:
            mask = pc.greater_equal(ts, t0)
        if t1 is not None and chunk.t_end_ns > t1:
            upper = pc.less_equal(ts, t1)
            mask = upper if mask is None else pc.and_(mask, upper)
        if mask is not None:
            table = table.filter(mask)
        yield from table.to_batches()
