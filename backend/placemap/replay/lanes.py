"""CPU lanes: who ran on each CPU over a window of a recording, as spans between its sched_switch
events (the view kernelshark and perfetto draw, one row per CPU). A span before a CPU's first
switch in the window ran the switch's prev task (the kernel's own word for what it switched out);
after a CPU's last switch, its next task ran to the window's end; a CPU without a switch in the
window ran, throughout, what the state at the window's start has on it. Idle (pid 0) and unknown
(-1) make no span. A span during which its CPU's source lost events (a lost record on that CPU, or
on none named, from its start to before its end, the span taken whole where the window cuts it: from
its CPU's switch at or before the window's start, to its switch at or after its end, as far as the
chunks the window touches go) is marked `lost`: who ran around it may be wrong, whatever the zoom. Each
span names the task's comm (the switch's, or the state's) and thread group (where the source
recorded one: tgid per cur_pid), so the page colours it as the grid does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from placemap.replay.delays import StoredChunkError
from placemap.replay.seek import state_at
from placemap.schema.events import Kind
from placemap.store.codec import decode_blob
from placemap.store.store import Store

LANES_SCHEMA = pa.schema(
    [
        pa.field("cpu", pa.int32(), nullable=False),
        pa.field("start_ns", pa.int64(), nullable=False),
        pa.field("end_ns", pa.int64(), nullable=False),
        pa.field("pid", pa.int32(), nullable=False),
        pa.field("comm", pa.dictionary(pa.int32(), pa.string()), nullable=False),
        pa.field("tgid", pa.int32(), nullable=False),  # -1: not recorded
        pa.field("lost", pa.bool_(), nullable=False),  # events lost on its CPU during it
    ]
)

I64 = npt.NDArray[np.int64]


class WindowTooWideError(Exception):
    """The window holds more context switches than were asked for at most."""

    def __init__(self, switches: int, limit: int) -> None:
        super().__init__(
            f"the window holds more than {limit:,} context switches (at least {switches:,}): narrow it to see"
            " the CPU lanes"
        )
        self.switches = switches


@dataclass
class _Switches:
    ts: I64
    cpu: I64
    prev: I64
    nxt: I64
    prev_comm: pa.Array  # (plain strings)
    next_comm: pa.Array
    tgids: dict[int, int]  # cur_pid -> its thread group, where the source recorded one
    lost_ts: I64  # the lost records of the chunks the window touches: when, on which CPU (-1: none)
    lost_cpu: I64
    all_ts: I64  # every switch of those chunks, in time order, and its CPU (a cut span's own ends)
    all_cpu: I64


_COLUMNS = ["ts_ns", "cpu", "kind", "cur_pid", "tgid", "pid", "comm", "next_pid", "next_comm"]


def _switches(store: Store, rid: str, t0: int, t1: int, *, limit: int) -> _Switches:
    """The sched_switch rows of [t0, t1], in time order (refused past `limit`), read from the
    stored chunks as they are (only the switches' strings made plain); the thread groups from
    every row of those chunks (a task's tgid is named by its own events, which may fall outside
    the window). StoredChunkError for a chunk that cannot be read."""
    parts: list[pa.Table] = []
    tgids: dict[int, int] = {}
    lost: list[tuple[npt.NDArray[Any], npt.NDArray[Any]]] = []
    every: list[tuple[npt.NDArray[Any], npt.NDArray[Any]]] = []
    n = 0
    for chunk in store.list_chunks(rid, t0, t1):
        data = store.chunk_data(rid, chunk.seq)
        if data is None:
            continue
        try:
            table = decode_blob(*data).select(_COLUMNS)
        except (pa.ArrowException, ValueError, OSError, KeyError) as exc:
            raise StoredChunkError(chunk.seq, str(exc) or type(exc).__name__) from exc
        known = table.filter(pc.greater(pc.fill_null(table.column("tgid"), -1), 0))
        if known.num_rows:
            cur, tg = known.column("cur_pid").to_numpy(), known.column("tgid").to_numpy()
            tgids.update(zip(cur.tolist(), tg.tolist(), strict=True))
        gone = table.filter(pc.equal(table.column("kind"), int(Kind.LOST)))
        if gone.num_rows:
            lost.append((gone.column("ts_ns").to_numpy(), pc.fill_null(gone.column("cpu"), -1).to_numpy()))
        switch = table.filter(pc.equal(table.column("kind"), int(Kind.SWITCH)))
        every.append((switch.column("ts_ns").to_numpy(), switch.column("cpu").to_numpy()))
        sw = switch.filter(
            pc.and_(pc.greater_equal(switch.column("ts_ns"), t0), pc.less_equal(switch.column("ts_ns"), t1))
        )
        n += sw.num_rows
        if n > limit:
            raise WindowTooWideError(n, limit)
        parts.append(
            pa.table(
                {
                    "ts_ns": sw.column("ts_ns"),
                    "cpu": sw.column("cpu"),
                    "pid": sw.column("pid"),
                    "next_pid": pc.fill_null(sw.column("next_pid"), -1),
                    "comm": pc.cast(sw.column("comm"), pa.string()),
                    "next_comm": pc.fill_null(pc.cast(sw.column("next_comm"), pa.string()), ""),
                }
            )
        )

    def cat(xs: list[npt.NDArray[Any]]) -> I64:
        return np.concatenate(xs).astype(np.int64) if xs else np.zeros(0, dtype=np.int64)

    lost_ts, lost_cpu = cat([t for t, _ in lost]), cat([c for _, c in lost])
    all_ts, all_cpu = cat([t for t, _ in every]), cat([c for _, c in every])
    if sum(p.num_rows for p in parts) == 0:
        none = np.zeros(0, dtype=np.int64)
        empty = pa.array([], pa.string())
        return _Switches(none, none, none, none, empty, empty, tgids, lost_ts, lost_cpu, all_ts, all_cpu)
    sw = pa.concat_tables(parts).combine_chunks()

    def ints(name: str) -> I64:
        return np.asarray(sw.column(name).to_numpy(), dtype=np.int64)

    return _Switches(
        ints("ts_ns"),
        ints("cpu"),
        ints("pid"),
        ints("next_pid"),
        sw.column("comm").chunk(0),
        sw.column("next_comm").chunk(0),
        tgids,
        lost_ts,
        lost_cpu,
        all_ts,
        all_cpu,
    )


def _whole(c: I64, s: I64, e: I64, window: tuple[int, int], sw: _Switches) -> tuple[I64, I64]:
    """Each span's own start and end where the window cuts it (s at t0, e at t1): its CPU's last
    switch at or before t0 and first at or after t1 in the chunks the window touches (none: as far
    as they go). A switch on the edge itself is where the span starts or ends: not cut there."""
    t0, t1 = window
    s, e = s.copy(), e.copy()
    order = np.argsort(sw.all_cpu, kind="stable")  # by CPU, then time (they come in time order)
    cpus, at = sw.all_cpu[order], sw.all_ts[order]
    for i in np.flatnonzero(s == t0).tolist():
        lo = np.searchsorted(cpus, c[i], side="left")
        k = lo + np.searchsorted(at[lo : np.searchsorted(cpus, c[i], side="right")], t0, side="right")
        s[i] = at[k - 1] if k > lo else np.iinfo(np.int64).min
    for i in np.flatnonzero(e == t1).tolist():
        lo, hi = np.searchsorted(cpus, c[i], side="left"), np.searchsorted(cpus, c[i], side="right")
        k = lo + np.searchsorted(at[lo:hi], t1, side="left")
        e[i] = at[k] if k < hi else np.iinfo(np.int64).max
    return s, e


def _lost(c: I64, s: I64, e: I64, lost_ts: I64, lost_cpu: I64) -> npt.NDArray[np.bool_]:
    """Whether each span [s, e) on CPU c holds a lost record on its CPU or on none named (one dated
    at a switch belongs to the span the switch starts: the events were lost after it)."""
    out = np.zeros(len(c), dtype=bool)
    for cpu in np.unique(lost_cpu).tolist():
        at = np.sort(lost_ts[lost_cpu == cpu])
        mine = np.ones(len(c), dtype=bool) if cpu < 0 else c == cpu
        # the first lost record at or after s comes before e
        k = np.searchsorted(at, s[mine], side="left")
        hit = k < len(at)
        hit[hit] = at[k[hit]] < e[mine][hit]
        out[mine] |= hit
    return out


def tgids_of(pids: I64, tgids: dict[int, int]) -> I64:
    """Each pid's thread group in `tgids`, -1 where it names none."""
    if not tgids:
        return np.full(len(pids), -1, dtype=np.int64)
    keys = np.array(sorted(tgids), dtype=np.int64)
    vals = np.array([tgids[k] for k in keys.tolist()], dtype=np.int64)
    at_key = np.minimum(np.searchsorted(keys, pids), len(keys) - 1)
    return np.where(keys[at_key] == pids, vals[at_key], -1)


@dataclass
class LanesRead:
    """A window's spans and what reading them saw: how many context switches, and the thread groups
    the chunks it read name (cur_pid -> tgid, in chunk order: a later chunk's word wins)."""

    spans: pa.Table  # LANES_SCHEMA
    switches: int
    tgids: dict[int, int]
    at_t1: int  # of those switches, how many at exactly t1
    cpus_at_t1: frozenset[int]  # the CPUs that switch at exactly t1


def cpu_lanes(store: Store, rid: str, t0: int, t1: int, *, limit: int) -> pa.Table:
    """The spans of [t0, t1] (LANES_SCHEMA), by CPU then time; WindowTooWideError past `limit`
    context switches."""
    return read_lanes(store, rid, t0, t1, limit=limit).spans


def read_lanes(store: Store, rid: str, t0: int, t1: int, *, limit: int) -> LanesRead:
    """cpu_lanes() with its switch count and the thread groups it read."""
    sw = _switches(store, rid, t0, t1, limit=limit)
    at = state_at(store, rid, t0).state
    # by CPU, each CPU's switches in time order (a stable sort keeps the time order)
    order = np.argsort(sw.cpu, kind="stable")
    cpu, ts, prev, nxt = sw.cpu[order], sw.ts[order], sw.prev[order], sw.nxt[order]
    first = np.ones(len(cpu), dtype=bool)
    first[1:] = cpu[1:] != cpu[:-1]
    last = np.ones(len(cpu), dtype=bool)
    last[:-1] = cpu[1:] != cpu[:-1]
    # before each switch: from the CPU's previous switch (or t0) to it, its prev task
    start_before = np.where(first, t0, np.concatenate([[t0], ts[:-1]]))
    # a CPU without a switch in the window: what the state at t0 runs there, throughout
    quiet = np.setdiff1d(np.flatnonzero(at.cpu_run > 0), cpu)
    runs = at.cpu_run[quiet].astype(np.int64)
    slots = np.asarray(at.slot, dtype=np.int64)
    known = runs < len(slots)
    slot = np.where(known, slots[np.minimum(runs, len(slots) - 1)], -1)
    quiet_comm = [str(at.comm[k]) if k >= 0 else "" for k in slot.tolist()]
    c, s, e, p = (
        np.concatenate(x)
        for x in (
            (cpu, cpu[last], quiet),
            (start_before, ts[last], np.full(len(quiet), t0, dtype=np.int64)),
            (ts, np.full(int(last.sum()), t1, dtype=np.int64), np.full(len(quiet), t1, dtype=np.int64)),
            (prev, nxt[last], runs),
        )
    )
    comms = pa.concat_arrays(
        [
            sw.prev_comm.take(pa.array(order)),
            sw.next_comm.take(pa.array(order[last])),
            pa.array(quiet_comm, pa.string()),
        ]
    )
    keep = np.flatnonzero((p > 0) & (e > s))
    keep = keep[np.lexsort((s[keep], c[keep]))]
    pids = p[keep]
    tgid = tgids_of(pids, sw.tgids)
    table = pa.Table.from_arrays(
        [
            pa.array(c[keep], pa.int32()),
            pa.array(s[keep], pa.int64()),
            pa.array(e[keep], pa.int64()),
            pa.array(pids, pa.int32()),
            comms.take(pa.array(keep)).dictionary_encode(),
            pa.array(tgid, pa.int32()),
            pa.array(
                _lost(c[keep], *_whole(c[keep], s[keep], e[keep], (t0, t1), sw), sw.lost_ts, sw.lost_cpu)
            ),
        ],
        schema=LANES_SCHEMA,
    )
    edge = sw.ts == t1
    return LanesRead(table, len(sw.ts), sw.tgids, int(edge.sum()), frozenset(sw.cpu[edge].tolist()))
