"""CPU lanes summed per part of a window, for windows with too many context switches to draw one
by one (or spans too thin to see): the window cut into `parts` equal parts, and for each CPU and part
its spans (replay.lanes, the kernel's own sched_switch lines) summed: how much of the part some task
ran (`busy`), the task that ran most of it and how much (`share`), how many spans touched it,
whether one of them is marked lost, and how much of it one task asked about ran (`mine`: where a
selected task ran, though others ran more). The view perfetto and kernelshark draw zoomed out:
where the machine was busy, by which process, over a whole run. Rows come by CPU, then time; a part
no task ran in has no row. A ready recording's spans of the last few windows are kept (its chunks
never change), so the same window asked again, about another task or in other parts, is summed
without reading them again."""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
import pyarrow as pa

from placemap.replay.lanes import cpu_lanes
from placemap.store.store import Store

BUSY_SCHEMA = pa.schema(
    [
        pa.field("cpu", pa.int32(), nullable=False),
        pa.field("start_ns", pa.int64(), nullable=False),  # the part: [start_ns, end_ns)
        pa.field("end_ns", pa.int64(), nullable=False),
        pa.field("pid", pa.int32(), nullable=False),  # the task that ran most of it
        pa.field("comm", pa.dictionary(pa.int32(), pa.string()), nullable=False),
        pa.field("tgid", pa.int32(), nullable=False),  # -1: not recorded
        pa.field("lost", pa.bool_(), nullable=False),  # a span touching it is marked lost
        pa.field("busy", pa.float32(), nullable=False),  # share of the part some task ran (0, 1]
        pa.field("share", pa.float32(), nullable=False),  # share of the part `pid` ran (0, busy]
        pa.field("spans", pa.int32(), nullable=False),  # spans touching it
        pa.field("mine", pa.float32(), nullable=False),  # share of the part the task asked about ran
    ]
)


SPANS_KEPT = 4  # windows: a few tens of MB at the limit
_kept: OrderedDict[tuple[str, str, int, int, int], pa.Table] = OrderedDict()
_kept_lock = threading.Lock()


def _spans(store: Store, rid: str, t0: int, t1: int, limit: int, *, keep: bool) -> pa.Table:
    """cpu_lanes(), kept for the same window asked again when `keep` (a ready recording's)."""
    if not keep:
        return cpu_lanes(store, rid, t0, t1, limit=limit)
    key = (str(store.path), rid, t0, t1, limit)
    with _kept_lock:
        hit = _kept.get(key)
        if hit is not None:
            _kept.move_to_end(key)
            return hit
    spans = cpu_lanes(store, rid, t0, t1, limit=limit)
    with _kept_lock:
        _kept[key] = spans
        while len(_kept) > SPANS_KEPT:
            _kept.popitem(last=False)
    return spans


def part_edges(t0: int, t1: int, parts: int) -> np.ndarray:
    """The parts' edges: `parts` (at most one per ns) equal parts of [t0, t1], whole ns: t0 + k *
    (t1 - t0) // n, in Python's integers (no product leaves int64, whatever the window's length)."""
    n = max(1, min(parts, t1 - t0))
    return np.array([t0 + k * (t1 - t0) // n for k in range(n + 1)], dtype=np.int64)


def lane_busy(
    store: Store,
    rid: str,
    t0: int,
    t1: int,
    *,
    parts: int,
    limit: int,
    pid: int | None = None,
    keep: bool = False,
) -> pa.Table:
    """BUSY_SCHEMA over [t0, t1] cut in `parts` parts (`mine`: the share task `pid` ran, 0 without
    one); WindowTooWideError past `limit` context switches, StoredChunkError for a chunk that cannot
    be read (as cpu_lanes). `keep`: the recording is ready, its window's spans may be kept."""
    spans = _spans(store, rid, t0, t1, limit, keep=keep)
    edges = part_edges(t0, t1, parts)
    n_b = len(edges) - 1
    c = spans.column("cpu").to_numpy().astype(np.int64)
    s = spans.column("start_ns").to_numpy()
    e = spans.column("end_ns").to_numpy()
    pids = spans.column("pid").to_numpy().astype(np.int64)
    if len(c) == 0 or n_b < 1:
        return BUSY_SCHEMA.empty_table()
    # each span's first and last part, and one piece of it per part it touches
    b0 = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, n_b - 1)
    b1 = np.clip(np.searchsorted(edges, e, side="left") - 1, b0, n_b - 1)
    per = b1 - b0 + 1
    span = np.repeat(np.arange(len(c)), per)
    first = np.cumsum(per) - per
    part = b0[span] + (np.arange(len(span)) - first[span])
    length = np.minimum(e[span], edges[part + 1]) - np.maximum(s[span], edges[part])
    cpus, row = np.unique(c, return_inverse=True)
    key = row[span] * n_b + part  # by CPU, then time
    keys, at = np.unique(key, return_inverse=True)
    width = (edges[1:] - edges[:-1])[keys % n_b]
    busy = np.bincount(at, weights=length, minlength=len(keys))
    count = np.bincount(at, minlength=len(keys))
    # (pids are > 0: idle and unknown make no span)
    ran_mine = length * (pids[span] == (-1 if pid is None else pid))
    mine = np.bincount(at, weights=ran_mine, minlength=len(keys))
    lost = np.bincount(
        at, weights=spans.column("lost").to_numpy(zero_copy_only=False)[span], minlength=len(keys)
    )
    # the task that ran most of each part: its pieces summed per (part, pid), the largest kept
    # (a tie to the lower pid)
    pair = at * (int(pids.max()) + 1) + pids[span]
    pairs, first_piece, pair_at = np.unique(pair, return_index=True, return_inverse=True)
    ran = np.bincount(pair_at, weights=length, minlength=len(pairs))
    pair_part = pairs // (int(pids.max()) + 1)
    order = np.lexsort((-ran, pair_part))
    top = order[np.r_[True, pair_part[order][1:] != pair_part[order][:-1]]]
    top_span = span[first_piece[top]]
    return pa.Table.from_arrays(
        [
            pa.array(cpus[keys // n_b], pa.int32()),
            pa.array(edges[keys % n_b], pa.int64()),
            pa.array(edges[keys % n_b + 1], pa.int64()),
            pa.array(pids[top_span], pa.int32()),
            spans.column("comm")
            .take(pa.array(top_span))
            .combine_chunks()
            .cast(BUSY_SCHEMA.field("comm").type),
            spans.column("tgid").take(pa.array(top_span)),
            pa.array(lost > 0),
            pa.array(busy / width, pa.float32()),
            pa.array(ran[top] / width, pa.float32()),
            pa.array(count, pa.int32()),
            pa.array(mine / width, pa.float32()),
        ],
        schema=BUSY_SCHEMA,
    )
