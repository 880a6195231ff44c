"""Placement state (per task: cpu, state, comm; per CPU: running pid) as numpy arrays, the chunk
columns the kernel reads, applying a chunk (or its first rows), and keyframes (state <-> Arrow blob)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from placemap.replay import kernel as kn
from placemap.replay.accumulate import decode_ints, fill_ints, state_codes
from placemap.store.codec import Encoded, decode_blob, encode_table

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
I8 = npt.NDArray[np.int8]
I16 = npt.NDArray[np.int16]

_KEYFRAME_SCHEMA = pa.schema(
    [
        pa.field("pid", pa.int32(), nullable=False),
        pa.field("cpu", pa.int32(), nullable=False),
        pa.field("state", pa.uint8(), nullable=False),
        pa.field("comm", pa.string(), nullable=False),
    ]
)
_EMPTY_MATRIX = np.zeros((0, 0), dtype=np.int8)
_NONE_U8 = np.zeros(0, dtype=np.uint8)
_NONE_I32 = np.zeros(0, dtype=np.int32)
_NONE_I64 = np.zeros(0, dtype=np.int64)
_NO_WAKER_COUNTS = np.zeros(kn.WK_COUNTS, dtype=np.int64)


def _one_array(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column


def _valid_at(arr: pa.Array, rows: I32) -> npt.NDArray[np.bool_]:
    """Whether each of `rows` of arr is valid (arr has nulls): its bits only, not the whole bitmap."""
    bitmap = np.frombuffer(arr.buffers()[0], dtype=np.uint8)
    j = rows.astype(np.int64) + arr.offset
    out: npt.NDArray[np.bool_] = ((bitmap[j >> 3] >> (j & 7).astype(np.uint8)) & 1).astype(np.bool_)
    return out


def _values(arr: pa.Array) -> npt.NDArray[Any]:
    """A fixed-width integer array's values buffer as numpy, whatever sits under its nulls."""
    dtype = np.dtype(arr.type.to_pandas_dtype())
    out: npt.NDArray[Any] = np.frombuffer(arr.buffers()[1], dtype=dtype, count=arr.offset + len(arr))
    return out[arr.offset :]


def _ro(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """a as a read-only view: numba compiles one signature per writability, and Arrow buffers are
    read-only, so every input of fill_ints is made so (one signature, compiled once)."""
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


_NO_KIND = _ro(np.zeros(0, dtype=np.uint8))
_NO_BITMAP = _ro(np.zeros(0, dtype=np.uint8))
_NO_VALUES = _ro(np.zeros(0, dtype=np.int32))
# decode_ints' rows: column, rows of the kinds [lo, hi) that use it (others: null), null value; the
# first 4 are the CPU columns, the last two pid and old_pid (the kernel relies on both orders)
_DECODE: tuple[tuple[str, int, int, int], ...] = (
    ("cpu", 0, 256, -1),
    ("target_cpu", 0, 256, -1),
    ("orig_cpu", 0, 256, -1),
    ("dest_cpu", 0, 256, -1),
    ("next_pid", kn.K_SWITCH, kn.K_SWITCH + 1, 0),
    ("child_pid", kn.K_FORK, kn.K_FORK + 1, 0),
    ("pid", 0, 8, 0),
    ("old_pid", kn.K_EXEC, kn.K_EXEC + 1, 0),
)
_DECODED = tuple(d[0] for d in _DECODE)
_DEC_LO = np.array([d[1] for d in _DECODE], dtype=np.int64)
_DEC_HI = np.array([d[2] for d in _DECODE], dtype=np.int64)
_DEC_NULL = np.array([d[3] for d in _DECODE], dtype=np.int32)


def _fill(arr: pa.Array, kind: U8, k_lo: int, k_hi: int, null: int) -> I32:
    out = np.empty(len(arr), dtype=np.int32)
    bitmap = np.frombuffer(arr.buffers()[0], dtype=np.uint8) if arr.null_count else _NO_BITMAP
    values = _values(arr)
    if values.dtype != np.int32:
        values = values.astype(np.int32)  # dictionary indices (int8/int16): one kernel signature
    fill_ints(_ro(values), _ro(bitmap), arr.offset, _ro(kind), k_lo, k_hi, null, out)
    return out


def _ints(column: pa.ChunkedArray | pa.Array, null: int) -> I32:
    """An integer column as int32 with nulls as `null`. Read from the buffers in one numba pass:
    pyarrow's fill_null cost ~0.6 ms per 65,536-row column (~7 per chunk)."""
    arr = _one_array(column)
    if arr.null_count == 0:
        out: I32 = np.ascontiguousarray(arr.to_numpy(), dtype=np.int32)
        return out
    if arr.null_count == len(arr):
        return np.full(len(arr), null, dtype=np.int32)
    return _fill(arr, _NO_KIND, 0, 0, null)


def _ints_where(column: pa.ChunkedArray | pa.Array, kind: U8, k_lo: int, k_hi: int) -> I32:
    """An integer column as int32 on rows with k_lo <= kind < k_hi, 0 elsewhere and for nulls."""
    arr = _one_array(column)
    if arr.null_count == len(arr):
        return np.zeros(len(arr), dtype=np.int32)
    return _fill(arr, kind, k_lo, k_hi, 0)


def prev_state_codes(column: pa.ChunkedArray | pa.Array) -> U8:
    """switch prev_state -> P_* code: R/R+ (and old numeric 0) preempted, X/Z dead, other sleeping."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    enc = column if pa.types.is_dictionary(column.type) else column.dictionary_encode()
    codes = np.zeros(len(enc.dictionary) + 1, dtype=np.uint8)
    for j, value in enumerate(enc.dictionary.to_pylist()):
        s = str(value)
        if s.startswith("R") or s == "0":
            codes[j] = kn.P_PREEMPTED
        elif s[:1] in ("X", "Z"):
            codes[j] = kn.P_DEAD
        else:
            codes[j] = kn.P_SLEEP
    indices = enc.indices
    if indices.null_count == len(indices):
        return np.zeros(len(indices), dtype=np.uint8)
    values = _values(indices)
    if values.dtype != np.int8:
        values = values.astype(np.int32)  # two kernel signatures (int8, int32), both warmed
    bitmap = np.frombuffer(indices.buffers()[0], dtype=np.uint8) if indices.null_count else _NO_BITMAP
    out = np.empty(len(indices), dtype=np.uint8)
    state_codes(_ro(values), _ro(bitmap), indices.offset, codes, out)
    return out


def _strings_at(column: pa.ChunkedArray, rows: I32) -> npt.NDArray[np.object_]:
    """column[rows] as Python str (None for nulls). A dictionary column converts each distinct value
    once instead of once per row."""
    arr = _one_array(column)
    if not pa.types.is_dictionary(arr.type):
        taken: list[str | None] = arr.take(pa.array(rows)).to_pylist()
        return np.array(taken, dtype=object)
    if arr.null_count == len(arr):
        return np.full(len(rows), None, dtype=object)
    idx = _values(arr.indices)[rows]
    valid = _valid_at(arr.indices, rows) if arr.null_count else None
    if valid is not None:
        idx = np.where(valid, idx, 0)  # whatever sits under a null is no index
    used, inv = np.unique(idx, return_inverse=True)
    values = np.empty(len(used), dtype=object)
    values[:] = arr.dictionary.take(pa.array(used)).to_pylist()
    out: npt.NDArray[np.object_] = values[inv]
    if valid is not None:
        out[~valid] = None
    return out


@dataclass
class ChunkColumns:
    """The columns of a chunk the state machine reads, as numpy (nulls filled)."""

    ts: I64
    kind: U8
    cpu: I32
    pid: I32
    target: I32
    orig: I32
    dest: I32
    pstate: U8
    npid: I32
    cpid: I32
    opid: I32

    # the 4 CPU columns as rows of one (4, n) array (the per-chunk counts walk them together), and
    # each integer column's max(-1, ...) over the whole chunk; None when built otherwise
    cpus: I32 | None = None
    maxima: I64 | None = None

    @classmethod
    def from_table(cls, table: pa.Table) -> ChunkColumns:
        """The columns read from the Arrow buffers by one kernel call (decode_ints): nulls filled, pid
        0 off the rows of the kinds that name one (llc_util and lost rows name no task)."""
        kind = _ro(np.ascontiguousarray(table.column("kind").to_numpy(), dtype=np.uint8))
        n = len(kind)
        values, bitmaps = [], []
        modes = np.empty(len(_DECODED), dtype=np.int64)
        offsets = np.zeros(len(_DECODED), dtype=np.int64)
        for c, name in enumerate(_DECODED):
            arr = _one_array(table.column(name))
            if len(arr) == 0 or arr.null_count == len(arr):
                modes[c] = 0
                values.append(_NO_VALUES)
                bitmaps.append(_NO_BITMAP)
                continue
            v = _values(arr)
            values.append(_ro(v if v.dtype == np.int32 else v.astype(np.int32)))
            if arr.null_count:
                modes[c] = 2
                offsets[c] = arr.offset
                bitmaps.append(_ro(np.frombuffer(arr.buffers()[0], dtype=np.uint8)))
            else:
                modes[c] = 1
                bitmaps.append(_NO_BITMAP)
        out = np.empty((len(_DECODED), n), dtype=np.int32)
        maxima = np.empty(len(_DECODED), dtype=np.int64)
        decode_ints(
            kind, tuple(values), tuple(bitmaps), modes, offsets, _DEC_LO, _DEC_HI, _DEC_NULL, out, maxima
        )
        return cls(
            ts=np.ascontiguousarray(table.column("ts_ns").to_numpy(), dtype=np.int64),
            kind=kind,
            cpu=out[0],
            target=out[1],
            orig=out[2],
            dest=out[3],
            npid=out[4],
            cpid=out[5],
            pid=out[6],
            opid=out[7],
            pstate=prev_state_codes(table.column("prev_state")),
            cpus=out[:4],
            maxima=maxima,
        )

    def pids(self, n: int | None = None) -> I32:
        """Every task pid the first n rows (all by default) name (pid 0 is idle, not a task)."""
        u = np.unique(np.concatenate([self.pid[:n], self.npid[:n], self.cpid[:n], self.opid[:n]]))
        out: I32 = u[u > 0].astype(np.int32)
        return out

    def max_cpu(self, n: int | None = None) -> int:
        if n == 0:
            return -1
        if self.maxima is not None and (n is None or n == len(self.kind)):
            return int(self.maxima[:4].max())
        return int(
            max(
                self.cpu.max(initial=-1),
                self.target.max(initial=-1),
                self.dest.max(initial=-1),
                self.orig[:n].max(initial=-1),
            )
        )


@dataclass
class Placements:
    """What the kernel tagged in a chunk: per row migration/wakeup level, migration cause and a
    wakeup's classes by where its waker ran (bit kernel.WK_* set; 0 for other rows), and the
    placement list (row, task index, cpu, level, cause, and a wakeup's waker: its CPU and pid,
    -1 for none) for task paths."""

    ev_level: I8
    ev_cause: I8
    ev_waker: I16
    row: I32
    task: I32
    cpu: I32
    level: I8
    cause: I8
    waker_cpu: I32
    waker_pid: I32


def _empty(dtype: type[np.generic]) -> npt.NDArray[Any]:
    return np.zeros(0, dtype=dtype)


# per-task ingest bookkeeping: name -> (dtype, value for a new task)
EXTRA_FIELDS: dict[str, tuple[type[np.generic], int]] = {
    "waking": (np.uint8, 0),
    "wprev": (np.int32, -1),
    "wcpu": (np.int32, -1),  # the CPU of the task's last sched_waking: its waker's
    "wrun": (np.uint8, 0),  # whether it was on its CPU, or preempted on its runqueue, then
    "wpid": (np.int32, -1),  # the pid that ran on the waker's CPU then (0: an interrupt on an idle CPU)
    "qpre": (np.uint8, 0),  # whether the last switch that took it off was a preemption (R/R+)
    "forkp": (np.uint8, 0),
    "events": (np.int64, 0),
    "migs": (np.int64, 0),
    "first_ts": (np.int64, -1),
    "last_ts": (np.int64, -1),
}


@dataclass
class PlacementState:
    """The state after some prefix of a recording. Task arrays are in order of first appearance;
    `slot` maps a pid to its index (-1 for none)."""

    pids: I32 = field(default_factory=lambda: _empty(np.int32))
    cpu: I32 = field(default_factory=lambda: _empty(np.int32))
    state: U8 = field(default_factory=lambda: _empty(np.uint8))
    comm: npt.NDArray[np.object_] = field(default_factory=lambda: _empty(np.object_))
    cpu_run: I32 = field(default_factory=lambda: _empty(np.int32))
    slot: I32 = field(default_factory=lambda: np.full(1, -1, dtype=np.int32))
    # ingest-only bookkeeping for classification and task aggregates (not in keyframes)
    extra: dict[str, npt.NDArray[Any]] = field(default_factory=dict)

    def _add_tasks(self, cols: ChunkColumns, n: int) -> None:
        """Give every pid the first n rows name a task (state sleeping, cpu unknown) if it has none."""
        if n == 0:
            return
        if cols.maxima is not None and n == len(cols.kind):
            top = int(cols.maxima[4:].max())
        else:
            top = int(max(cols.pid[:n].max(), cols.npid[:n].max(), cols.cpid[:n].max(), cols.opid[:n].max()))
        if top >= len(self.slot):
            grown = np.full(max(top + 1, len(self.slot) * 3 // 2), -1, dtype=np.int32)
            grown[: len(self.slot)] = self.slot
            self.slot = grown
        out = np.empty(4 * n, dtype=np.int32)
        cnt = kn.assign_slots(n, cols.pid, cols.npid, cols.cpid, cols.opid, self.slot, out)
        if cnt == 0:
            return
        new = out[:cnt]
        base = len(self.pids)
        self.slot[new] = np.arange(base, base + cnt, dtype=np.int32)
        self.pids = np.concatenate([self.pids, new])
        self.cpu = np.concatenate([self.cpu, np.full(cnt, -1, dtype=np.int32)])
        self.state = np.concatenate([self.state, np.full(cnt, kn.S_SLEEPING, dtype=np.uint8)])
        self.comm = np.concatenate([self.comm, np.full(cnt, "", dtype=object)])
        for name, arr in self.extra.items():
            dtype, fill = EXTRA_FIELDS[name]
            self.extra[name] = np.concatenate([arr, np.full(cnt, fill, dtype=dtype)])

    def ensure_cpus(self, max_cpu: int) -> None:
        if max_cpu >= len(self.cpu_run):
            grown = np.full(max_cpu + 1, kn.RUN_UNKNOWN, dtype=np.int32)
            grown[: len(self.cpu_run)] = self.cpu_run
            self.cpu_run = grown

    def index(self, pids: I32) -> I32:
        """Task index of each pid (-1 for 0 / absent)."""
        inside = (pids > 0) & (pids < len(self.slot))
        out: I32 = np.where(inside, self.slot[np.where(inside, pids, 0)], -1).astype(np.int32)
        return out

    def start_classifying(self) -> None:
        """Keep the per-task bookkeeping the ingest needs (classification, task aggregates)."""
        for name, (dtype, fill) in EXTRA_FIELDS.items():
            self.extra.setdefault(name, np.full(len(self.pids), fill, dtype=dtype))

    def apply(
        self,
        table: pa.Table,
        cols: ChunkColumns,
        n_apply: int,
        *,
        classify: bool = False,
        matrix: npt.NDArray[np.int8] = _EMPTY_MATRIX,
        default_level: int = kn.UNKNOWN_LEVEL,
        waker_counts: I64 | None = None,
    ) -> Placements | None:
        """Apply the first n_apply rows of a chunk; with classify, tag migrations and wakeups, name
        each wakeup's waker in its placements (from the table's cur_pid, when it has the column),
        and add each wakeup to `waker_counts` (kernel.WK_*: where it woke against its waker's
        CPU)."""
        # only tasks the applied rows name: a task appears in the state once an event has named it
        if classify:
            self.start_classifying()
        self._add_tasks(cols, n_apply)
        self.ensure_cpus(cols.max_cpu(n_apply))
        n = len(cols.kind) if classify else 0
        ev_level = np.full(n, -1, dtype=np.int8)
        ev_cause = np.full(n, -1, dtype=np.int8)
        ev_waker = np.zeros(n, dtype=np.int16)
        pl_row, pl_task, pl_cpu, pl_wcpu, pl_wpid = (np.zeros(n, dtype=np.int32) for _ in range(5))
        # writable either way: one kernel signature
        cur = (
            np.array(_ints(table.column("cur_pid"), -1), dtype=np.int32)  # null: not known
            if classify and "cur_pid" in table.column_names
            else np.full(n, -1, dtype=np.int32)
        )
        pl_level, pl_cause = (np.zeros(n, dtype=np.int8) for _ in range(2))
        t_crow = np.full(len(self.pids), -1, dtype=np.int32)
        t_csrc = np.zeros(len(self.pids), dtype=np.uint8)
        ex = self.extra
        n_pl = kn.apply_events(
            n_apply, cols.kind, cols.cpu, cols.ts, cols.pid, cols.target, cols.orig, cols.dest, cols.pstate,
            cols.npid, cols.cpid, cols.opid, self.slot, self.cpu, self.state, self.cpu_run, t_crow, t_csrc,
            classify, ex.get("waking", _NONE_U8), ex.get("wprev", _NONE_I32), ex.get("wcpu", _NONE_I32),
            ex.get("wrun", _NONE_U8), _NO_WAKER_COUNTS.copy() if waker_counts is None else waker_counts,
            cur, ex.get("wpid", _NONE_I32), ex.get("qpre", _NONE_U8), ex.get("forkp", _NONE_U8),
            ex.get("events", _NONE_I64), ex.get("migs", _NONE_I64), ex.get("first_ts", _NONE_I64),
            ex.get("last_ts", _NONE_I64), matrix, default_level, ev_level, ev_cause, ev_waker, pl_row,
            pl_task, pl_cpu, pl_level, pl_cause, pl_wcpu, pl_wpid,
        )  # fmt: skip
        self._update_comms(table, t_crow, t_csrc)
        if not classify:
            return None
        return Placements(
            ev_level,
            ev_cause,
            ev_waker,
            pl_row[:n_pl],
            pl_task[:n_pl],
            pl_cpu[:n_pl],
            pl_level[:n_pl],
            pl_cause[:n_pl],
            pl_wcpu[:n_pl],
            pl_wpid[:n_pl],
        )

    def _update_comms(self, table: pa.Table, t_crow: I32, t_csrc: U8) -> None:
        """Each task's comm = the last name an applied row gave it (subject, next of switch, fork child)."""
        touched = np.flatnonzero(t_crow >= 0)
        for s, name in enumerate(("comm", "next_comm", "child_comm")):
            sel = touched[t_csrc[touched] == s]
            if len(sel):
                self.comm[sel] = _strings_at(table.column(name), t_crow[sel])

    # --- keyframes --------------------------------------------------------------------------
    def keyframe_table(self) -> pa.Table:
        """A snapshot of the state (without ingest bookkeeping) as an Arrow table (copies, so applying
        more events does not change it)."""
        return pa.Table.from_arrays(
            [
                pa.array(self.pids.copy(), pa.int32()),
                pa.array(self.cpu.copy(), pa.int32()),
                pa.array(self.state.copy(), pa.uint8()),
                pa.array(self.comm.tolist(), pa.string()),
            ],
            schema=_KEYFRAME_SCHEMA.with_metadata({"cpu_run": json.dumps(self.cpu_run.tolist())}),
        )

    def keyframe(self) -> Encoded:
        """The state (without ingest bookkeeping) as a compressed Arrow blob."""
        return encode_table(self.keyframe_table())

    @classmethod
    def from_keyframe(cls, data: bytes, raw_bytes: int) -> PlacementState:
        table = decode_blob(data, raw_bytes)
        meta = table.schema.metadata or {}
        pids = np.array(table.column("pid").to_numpy(), dtype=np.int32)
        slot = np.full(int(pids.max(initial=0)) + 1, -1, dtype=np.int32)
        slot[pids] = np.arange(len(pids), dtype=np.int32)
        return cls(
            pids=pids,
            cpu=np.array(table.column("cpu").to_numpy(), dtype=np.int32),
            state=np.array(table.column("state").to_numpy(), dtype=np.uint8),
            comm=np.array(table.column("comm").to_pylist(), dtype=object),
            cpu_run=np.array(json.loads(meta.get(b"cpu_run", b"[]")), dtype=np.int32),
            slot=slot,
        )

    def copy(self) -> PlacementState:
        """An independent copy of the state (without ingest bookkeeping)."""
        return PlacementState(
            pids=self.pids.copy(),
            cpu=self.cpu.copy(),
            state=self.state.copy(),
            comm=self.comm.copy(),
            cpu_run=self.cpu_run.copy(),
            slot=self.slot.copy(),
        )

    def comm_of(self, pid: int) -> str | None:
        i = int(self.index(np.array([pid], dtype=np.int32))[0])
        return None if i < 0 else str(self.comm[i])
