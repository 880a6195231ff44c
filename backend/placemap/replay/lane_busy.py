"""CPU lanes summed per part of a window, for windows with too many context switches to draw one
by one (or spans too thin to see): the window cut into `parts` equal parts, and for each CPU and part
its spans (replay.lanes, the kernel's own sched_switch lines) summed: how much of the part some task
ran (`busy`), the task that ran most of it and how much (`share`), how many spans touched it,
whether one of them is marked lost, and how much of it one task asked about ran (`mine`: where a
selected task ran, though others ran more). The view perfetto and kernelshark draw zoomed out:
where the machine was busy, by which process, over a whole run. Rows come by CPU, then time; a part
no task ran in has no row. A ready recording's spans of the last few windows are kept (its chunks
never change), so the same window asked again, about another task or in other parts, is summed
without reading them again.

A window whose chunks hold more than GROUP_ROWS events (a few seconds of a busy many-CPU host) is
summed in runs of whole parts, one read at a time, each touching at most GROUP_ROWS events whatever
the window's length (but a part is read alone whatever its chunks hold, up to PART_ROWS_MAX events:
past that it is refused). What is kept across runs grows with the parts, not the window: each
part's row, and each task's time in it. Each run's spans end at its edges; a span cut so (on a CPU
that does not switch on the edge) is one span again for its lost mark (the pieces' marks or'ed and
given to every part they touched), and each task's thread group is the one the whole window's
chunks name. The sums are then a single read's: busy, each task's share, spans, lost. One
difference remains where the trace
disagrees with itself across a cut span: each run names its piece as it reads it (by the switch
that starts it, or by the state at the run's start), where a single read names the whole span by
the switch that ends it; they differ only for a task renamed during the span, or where events were
lost so that its two switches name different tasks (its parts are then marked lost wherever the loss
was recorded in the window). A ready recording's long window is kept summed (the last ANSWERS_KEPT,
each with at most KEEP_PAIRS_MAX (part, task) times), so the same view opened again, or asked about
any task, answers without reading the chunks; one asked while it is being summed (a task selected
before the page's first answer came) waits for that sum instead of summing it again."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from placemap.replay.lanes import WindowTooWideError, cpu_lanes, read_lanes, tgids_of
from placemap.store.store import ChunkRow, Store

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


class PartTooWideError(WindowTooWideError):
    """One part of the window alone touches chunks of more events than one read may hold."""

    def __init__(self, rows: int, parts: int) -> None:
        Exception.__init__(
            self,
            f"one part of the window (of {parts:,}) touches chunks of more than {rows:,} events: zoom in (a"
            " narrower window), or ask for more parts",
        )
        self.switches = 0


@dataclass
class _Summed:
    """A long window summed (BUSY_SCHEMA, `mine` 0) and how long each task ran in each of its rows:
    per (row, pid) its time, sorted by pid, so any task's `mine` is a lookup."""

    table: pa.Table
    row: np.ndarray  # int32: the table's row
    pid: np.ndarray  # int32, in order
    ran: np.ndarray  # float64: ns

    def asked(self, pid: int | None) -> pa.Table:
        """The table with `mine` the share task `pid` ran (0 without one)."""
        if pid is None or self.table.num_rows == 0:
            return self.table
        lo, hi = np.searchsorted(self.pid, pid, side="left"), np.searchsorted(self.pid, pid, side="right")
        at = self.row[lo:hi]
        width = self.table.column("end_ns").to_numpy() - self.table.column("start_ns").to_numpy()
        mine = np.zeros(self.table.num_rows)
        mine[at] = self.ran[lo:hi] / width[at]
        index = self.table.schema.get_field_index("mine")
        return self.table.set_column(index, BUSY_SCHEMA.field("mine"), pa.array(mine, pa.float32()))


SPANS_KEPT = 4  # windows: a few tens of MB at the limit
_kept: OrderedDict[tuple[str, str, int, int, int], pa.Table] = OrderedDict()
_kept_lock = threading.Lock()
GROUP_ROWS = 2_000_000  # events: the most one read of a long window touches (its memory: ~450k switches)
PART_ROWS_MAX = 10_000_000  # events: the most one part alone may touch (its read: ~600 MB; else refused)
ANSWERS_KEPT = 4  # summed long windows, each with every task's time per part
KEEP_PAIRS_MAX = 4_000_000  # (row, task) times a kept window may hold: 16 bytes each (64 MB)
_answers: OrderedDict[tuple[str, str, int, int, int, int], _Summed] = OrderedDict()
_summing: dict[tuple[str, str, int, int, int, int], threading.Lock] = {}  # long windows being summed


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
    be read (as cpu_lanes), PartTooWideError (one) for a part alone past PART_ROWS_MAX events of
    a long window. `keep`: the recording is ready, its window's spans (a long window: its sums) may be
    kept."""
    edges = part_edges(t0, t1, parts)
    chunks = store.list_chunks(rid, t0, t1)
    if sum(c.rows for c in chunks) <= GROUP_ROWS:
        return _sum(_spans(store, rid, t0, t1, limit, keep=keep), edges, pid)
    runs = part_runs(chunks, edges, GROUP_ROWS, part_max=PART_ROWS_MAX)
    if not keep:
        return _summed_in_runs(store, rid, edges, runs, limit=limit).asked(pid)
    key = (str(store.path), rid, t0, t1, parts, limit)
    with _kept_lock:
        hit = _kept_answer(key)
        # (one sum of a window at a time: an ask that comes while it runs, about any task, waits for it)
        summing = _summing.setdefault(key, threading.Lock()) if hit is None else None
    if summing is not None:
        with summing:
            with _kept_lock:
                hit = _kept_answer(key)
            if hit is None:
                try:
                    hit = _summed_in_runs(store, rid, edges, runs, limit=limit)
                    with _kept_lock:
                        if len(hit.pid) <= KEEP_PAIRS_MAX:
                            _answers[key] = hit
                            while len(_answers) > ANSWERS_KEPT:
                                _answers.popitem(last=False)
                finally:
                    with _kept_lock:
                        _summing.pop(key, None)
    assert hit is not None  # (summed above, or kept)
    return hit.asked(pid)


def _kept_answer(key: tuple[str, str, int, int, int, int]) -> _Summed | None:
    """A kept long window's sums, now the latest used (call under _kept_lock)."""
    hit = _answers.get(key)
    if hit is not None:
        _answers.move_to_end(key)
    return hit


def part_runs(
    chunks: list[ChunkRow], edges: np.ndarray, cap: int, *, part_max: int | None = None
) -> list[tuple[int, int]]:
    """The parts cut in runs [a, b) to read one at a time, in order: each run's window [edges[a],
    edges[b]] touches chunks of at most `cap` events (a part alone, whatever its chunks hold, but
    PartTooWideError past `part_max`)."""
    n = len(edges) - 1
    if part_max is not None and n <= 1 and sum(c.rows for c in chunks) > part_max:
        raise PartTooWideError(part_max, max(n, 1))
    if not chunks or n <= 1:
        return [(0, max(n, 1))]
    starts = np.array([c.t_start_ns for c in chunks], dtype=np.int64)
    ends = np.maximum.accumulate(np.array([c.t_end_ns for c in chunks], dtype=np.int64))
    rows = np.concatenate([[0], np.cumsum([c.rows for c in chunks])])
    # the chunks [x, y] touches: from the first ending at or after x to the last starting at or before y
    first = np.searchsorted(ends, edges, side="left")
    after = np.searchsorted(starts, edges, side="right")
    out: list[tuple[int, int]] = []
    a = 0
    while a < n:
        b = a + 1
        while b < n and rows[after[b + 1]] - rows[first[a]] <= cap:
            b += 1
        if part_max is not None and b == a + 1 and rows[after[b]] - rows[first[a]] > part_max:
            raise PartTooWideError(part_max, n)
        out.append((a, b))
        a = b
    return out


Piece = tuple[int, bool, int, int]  # a span an edge cuts, on its CPU: pid, lost, start, end
# per run: the spans its edges cut, at its start and at its end, per CPU; the CPUs switching on its end
Cuts = tuple[dict[int, Piece], dict[int, Piece], frozenset[int]]


def _summed_in_runs(
    store: Store, rid: str, edges: np.ndarray, runs: list[tuple[int, int]], *, limit: int
) -> _Summed:
    """lane_busy() of a long window, one run of parts read at a time (the module's docstring)."""
    tables: list[pa.Table] = []
    ran: list[tuple[np.ndarray, ...]] = []  # per run: each (row, task)'s CPU, start, pid, time
    tgids: dict[int, int] = {}
    cuts: list[Cuts] = []
    total = 0
    again = 0  # the last run's switches at its end, read again as the next one's at its start
    for a, b in runs:
        lo, hi = int(edges[a]), int(edges[b])
        try:
            read = read_lanes(store, rid, lo, hi, limit=limit - total + again)
        except WindowTooWideError as exc:
            raise WindowTooWideError(total - again + exc.switches, limit) from exc
        total += read.switches - again
        again = read.at_t1
        tgids.update(read.tgids)
        tables.append(_sum(read.spans, edges[a : b + 1], None, ran))
        cuts.append((*_cut(read.spans, lo, hi), read.cpus_at_t1))
    lost = _rejoined_lost(tables, cuts)
    out = pa.concat_tables(
        [
            t.set_column(t.schema.get_field_index("lost"), BUSY_SCHEMA.field("lost"), pa.array(x))
            for t, x in zip(tables, lost, strict=True)
        ]
    )
    out = out.unify_dictionaries().combine_chunks().sort_by([("cpu", "ascending"), ("start_ns", "ascending")])
    # each task's thread group as the whole window's chunks name it (a run knows its own chunks')
    tgid = pa.array(tgids_of(out.column("pid").to_numpy().astype(np.int64), tgids), pa.int32())
    out = out.set_column(out.schema.get_field_index("tgid"), BUSY_SCHEMA.field("tgid"), tgid)
    none = np.zeros(0, dtype=np.int64)
    cpu, start, pid, time = (np.concatenate([none] + [r[k] for r in ran]) for k in range(4))
    # each (row, task) time's row of the table (by CPU, then part: one row per key)
    n_b = len(edges) - 1

    def keys(c: np.ndarray, at: np.ndarray) -> np.ndarray:
        return c.astype(np.int64) * n_b + (np.searchsorted(edges, at, side="right") - 1)

    row = np.searchsorted(
        keys(out.column("cpu").to_numpy(), out.column("start_ns").to_numpy()), keys(cpu, start)
    )
    order = np.argsort(pid, kind="stable")
    return _Summed(out, row[order].astype(np.int32), pid[order].astype(np.int32), time[order])


def _cut(spans: pa.Table, lo: int, hi: int) -> tuple[dict[int, Piece], dict[int, Piece]]:
    """The spans (by CPU, then time) that [lo, hi]'s edges cut, per CPU: starting at lo, ending at hi."""
    c = spans.column("cpu").to_numpy().astype(np.int64)
    s, e = spans.column("start_ns").to_numpy(), spans.column("end_ns").to_numpy()
    p = spans.column("pid").to_numpy()
    lost = spans.column("lost").to_numpy(zero_copy_only=False)
    first = np.unique(c, return_index=True)[1]  # each CPU's first span
    last = len(c) - 1 - np.unique(c[::-1], return_index=True)[1]

    def pieces(rows: np.ndarray) -> dict[int, Piece]:
        return {int(c[i]): (int(p[i]), bool(lost[i]), int(s[i]), int(e[i])) for i in rows.tolist()}

    return pieces(first[s[first] == lo]), pieces(last[e[last] == hi])


def _rejoined_lost(tables: list[pa.Table], cuts: list[Cuts]) -> list[np.ndarray]:
    """Each run's lost column, with a span its edges cut taken as one again: its pieces, run by run
    (on a CPU that does not switch on the edge between them, whatever task each run names), lost on
    every part they touch if one is."""
    lost = [t.column("lost").to_numpy(zero_copy_only=False).copy() for t in tables]
    rows = [tuple(t.column(k).to_numpy() for k in ("cpu", "start_ns", "end_ns")) for t in tables]

    def mark(cpu: int, pieces: list[tuple[int, int, int]]) -> None:
        for g, ps, pe in pieces:
            col, start, end = rows[g]
            lo_row, hi_row = np.searchsorted(col, cpu, side="left"), np.searchsorted(col, cpu, side="right")
            starts, ends = start[lo_row:hi_row], end[lo_row:hi_row]
            # (the rows of the parts the piece touches)
            i0 = lo_row + int(np.searchsorted(ends, ps, side="right"))
            i1 = lo_row + int(np.searchsorted(starts, pe, side="left"))
            lost[g][i0:i1] = True

    # per CPU, the span whose last piece ends at the last run's end: lost, its pieces (run, start, end)
    open_: dict[int, tuple[bool, list[tuple[int, int, int]]]] = {}

    def close(cpu: int) -> None:
        was_lost, pieces = open_.pop(cpu)
        if was_lost and len(pieces) > 1:
            mark(cpu, pieces)

    for g, (heads, tails, _) in enumerate(cuts):
        switched = cuts[g - 1][2] if g else frozenset()
        for cpu in list(open_):
            head = heads.get(cpu)
            if head is None or cpu in switched:
                close(cpu)  # (it ended on the edge)
                continue
            was_lost, pieces = open_[cpu]
            pieces.append((g, head[2], head[3]))
            open_[cpu] = (was_lost or head[1], pieces)
            tail = tails.get(cpu)
            if tail is None or tail[2] != head[2]:
                close(cpu)  # (it ends within this run)
        for cpu, (_, was_lost, ps, pe) in tails.items():
            if cpu not in open_:
                open_[cpu] = (was_lost, [(g, ps, pe)])
    for cpu in list(open_):
        close(cpu)
    return lost


def _sum(
    spans: pa.Table, edges: np.ndarray, pid: int | None, ran_out: list[tuple[np.ndarray, ...]] | None = None
) -> pa.Table:
    """The spans (LANES_SCHEMA, by CPU then time) summed per part between `edges`; into `ran_out`,
    how long each task ran in each row (its CPU, its start, the pid, the time)."""
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
    if ran_out is not None:
        ran_out.append(
            (cpus[keys // n_b][pair_part], edges[keys % n_b][pair_part], pairs % (int(pids.max()) + 1), ran)
        )
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
