"""CPU lanes: who ran on each CPU over a window of a recording, as spans between its sched_switch
events (the view kernelshark and perfetto draw, one row per CPU). A span before a CPU's first
switch in the window ran the switch's prev task (the kernel's own word for what it switched out);
after a CPU's last switch, its next task ran to the window's end; a CPU without a switch in the
window ran, throughout, what the state at the window's start has on it. Idle (pid 0) and unknown
(-1) make no span. Each span names the task's comm (the switch's, or the state's) and thread group
(where the source recorded one: tgid per cur_pid), so the page colours it as the grid does."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from placemap.replay.queries import window_batches
from placemap.replay.seek import state_at
from placemap.schema.events import Kind
from placemap.store.store import Store

LANES_SCHEMA = pa.schema(
    [
        pa.field("cpu", pa.int32(), nullable=False),
        pa.field("start_ns", pa.int64(), nullable=False),
        pa.field("end_ns", pa.int64(), nullable=False),
        pa.field("pid", pa.int32(), nullable=False),
        pa.field("comm", pa.dictionary(pa.int32(), pa.string()), nullable=False),
        pa.field("tgid", pa.int32(), nullable=False),  # -1: not recorded
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
    prev_comm: list[str]
    next_comm: list[str]


def _switches(store: Store, rid: str, t0: int, t1: int, *, limit: int, tgids: dict[int, int]) -> _Switches:
    """The window's sched_switch rows, in time order (refused past `limit`); `tgids` gets each
    cur_pid's thread group where the source recorded one."""
    parts: list[pa.Table] = []
    n = 0
    for batch in window_batches(store, rid, t0, t1):
        table = pa.Table.from_batches([batch])
        if "tgid" in table.column_names:
            known = table.filter(pc.greater(pc.fill_null(table.column("tgid"), -1), 0))
            for pid, tg in zip(
                known.column("cur_pid").to_pylist(), known.column("tgid").to_pylist(), strict=True
            ):
                tgids[pid] = tg
        sw = table.filter(pc.equal(table.column("kind"), int(Kind.SWITCH)))
        n += sw.num_rows
        if n > limit:
            raise WindowTooWideError(n, limit)
        parts.append(sw.select(["ts_ns", "cpu", "pid", "comm", "next_pid", "next_comm"]))
    if not parts:
        none = np.zeros(0, dtype=np.int64)
        return _Switches(none, none, none, none, [], [])
    sw = pa.concat_tables(parts)

    def ints(name: str) -> I64:
        return np.asarray(pc.fill_null(sw.column(name), -1).to_numpy(), dtype=np.int64)

    return _Switches(
        ints("ts_ns"),
        ints("cpu"),
        ints("pid"),
        ints("next_pid"),
        [str(c) for c in pc.fill_null(sw.column("comm"), "").to_pylist()],
        [str(c) for c in pc.fill_null(sw.column("next_comm"), "").to_pylist()],
    )


def cpu_lanes(store: Store, rid: str, t0: int, t1: int, *, limit: int) -> pa.Table:
    """The spans of [t0, t1] (LANES_SCHEMA), by CPU then time; WindowTooWideError past `limit`
    context switches."""
    tgids: dict[int, int] = {}
    sw = _switches(store, rid, t0, t1, limit=limit, tgids=tgids)
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
    out_cpu = [cpu, cpu[last]]
    out_start = [start_before, ts[last]]
    out_end = [ts, np.full(int(last.sum()), t1, dtype=np.int64)]
    out_pid = [prev, nxt[last]]
    comms = [sw.prev_comm[i] for i in order] + [sw.next_comm[i] for i in order[last]]
    # a CPU without a switch in the window: what the state at t0 runs there, throughout
    quiet = np.setdiff1d(np.flatnonzero(at.cpu_run > 0), cpu)
    slot_of = {int(p): i for i, p in enumerate(at.pids.tolist())}
    runs = at.cpu_run[quiet].astype(np.int64)
    out_cpu.append(quiet.astype(np.int64))
    out_start.append(np.full(len(quiet), t0, dtype=np.int64))
    out_end.append(np.full(len(quiet), t1, dtype=np.int64))
    out_pid.append(runs)
    comms += [str(at.comm[slot_of[p]]) if p in slot_of else "" for p in runs.tolist()]
    c, s, e, p = (np.concatenate(x) for x in (out_cpu, out_start, out_end, out_pid))
    keep = (p > 0) & (e > s)
    idx = np.flatnonzero(keep)
    idx = idx[np.lexsort((s[idx], c[idx]))]
    pids = p[idx]
    return pa.Table.from_arrays(
        [
            pa.array(c[idx], pa.int32()),
            pa.array(s[idx], pa.int64()),
            pa.array(e[idx], pa.int64()),
            pa.array(pids, pa.int32()),
            pa.array([comms[i] for i in idx.tolist()], pa.string()).dictionary_encode(),
            pa.array([tgids.get(int(x), -1) for x in pids.tolist()], pa.int32()),
        ],
        schema=LANES_SCHEMA,
    )
