"""Placement state (per task: cpu, state, comm; per CPU: running pid) as numpy arrays, the chunk
columns the kernel reads, applying a chunk (or its first rows), and keyframes (state <-> Arrow blob)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from placemap.replay import kernel as kn
from placemap.store.codec import Encoded, decode_blob, encode_table

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
I8 = npt.NDArray[np.int8]

_KEYFRAME_SCHEMA = pa.schema(
    [
        pa.field("pid", pa.int32(), nullable=False),
        pa.field("cpu", pa.int32(), nullable=False),
        pa.field("state", pa.uint8(), nullable=False),
        pa.field("comm", pa.string(), nullable=False),
    ]
)
_EMPTY_MATRIX = np.zeros((0, 0), dtype=np.int8)


def _ints(column: pa.ChunkedArray | pa.Array, null: int) -> I32:
    arr = column.fill_null(null) if column.null_count else column
    out: I32 = np.ascontiguousarray(arr.to_numpy(), dtype=np.int32)
    return out


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
    idx = _ints(enc.indices, len(enc.dictionary))
    out: U8 = codes[idx]
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

    @classmethod
    def from_table(cls, table: pa.Table) -> ChunkColumns:
        kind = np.ascontiguousarray(table.column("kind").to_numpy(), dtype=np.uint8)
        pid = _ints(table.column("pid"), 0)
        # llc_util and lost rows name no task
        pid = np.where(kind >= 8, 0, pid).astype(np.int32)
        opid = _ints(table.column("old_pid"), 0)
        opid = np.where((kind == kn.K_EXEC) & (opid != pid), opid, 0).astype(np.int32)
        return cls(
            ts=np.ascontiguousarray(table.column("ts_ns").to_numpy(), dtype=np.int64),
            kind=kind,
            cpu=_ints(table.column("cpu"), -1),
            pid=pid,
            target=_ints(table.column("target_cpu"), -1),
            orig=_ints(table.column("orig_cpu"), -1),
            dest=_ints(table.column("dest_cpu"), -1),
            pstate=prev_state_codes(table.column("prev_state")),
            npid=np.where(kind == kn.K_SWITCH, _ints(table.column("next_pid"), 0), 0).astype(np.int32),
            cpid=np.where(kind == kn.K_FORK, _ints(table.column("child_pid"), 0), 0).astype(np.int32),
            opid=opid,
        )

    def pids(self, n: int | None = None) -> I32:
        """Every task pid the first n rows (all by default) name (pid 0 is idle, not a task)."""
        u = np.unique(np.concatenate([self.pid[:n], self.npid[:n], self.cpid[:n], self.opid[:n]]))
        out: I32 = u[u > 0].astype(np.int32)
        return out

    def max_cpu(self) -> int:
        return int(
            max(
                self.cpu.max(initial=-1),
                self.target.max(initial=-1),
                self.dest.max(initial=-1),
                self.orig.max(initial=-1),
            )
        )


@dataclass
class Placements:
    """What the kernel tagged in a chunk: per row migration/wakeup level and migration cause, and
    the placement list (row, task index, cpu, level, cause) for task paths."""

    ev_level: I8
    ev_cause: I8
    row: I32
    task: I32
    cpu: I32
    level: I8
    cause: I8


@dataclass
class PlacementState:
    """The state after some prefix of a recording. Task arrays are aligned with the sorted `pids`."""

    pids: I32 = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    cpu: I32 = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    state: U8 = field(default_factory=lambda: np.zeros(0, dtype=np.uint8))
    comm: npt.NDArray[np.object_] = field(default_factory=lambda: np.zeros(0, dtype=object))
    cpu_run: I32 = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    # ingest-only bookkeeping for classification (not in keyframes)
    extra: dict[str, npt.NDArray[np.generic]] = field(default_factory=dict)

    def ensure_tasks(self, pids: I32) -> None:
        """Add unseen pids (state sleeping, cpu unknown) keeping arrays sorted by pid."""
        new = np.setdiff1d(pids, self.pids, assume_unique=True)
        if len(new) == 0:
            return
        merged = np.union1d(self.pids, new).astype(np.int32)
        pos = np.searchsorted(merged, self.pids)

        def grow(old: npt.NDArray[np.generic], fill: object) -> npt.NDArray[np.generic]:
            out = np.full(len(merged), fill, dtype=old.dtype)
            out[pos] = old
            return out

        self.cpu = grow(self.cpu, -1)  # type: ignore[assignment]
        self.state = grow(self.state, kn.S_SLEEPING)  # type: ignore[assignment]
        self.comm = grow(self.comm, "")  # type: ignore[assignment]
        self.extra = {k: grow(v, -1 if k in ("wprev", "first_ts") else 0) for k, v in self.extra.items()}
        self.pids = merged

    def ensure_cpus(self, max_cpu: int) -> None:
        if max_cpu >= len(self.cpu_run):
            grown = np.full(max_cpu + 1, kn.RUN_UNKNOWN, dtype=np.int32)
            grown[: len(self.cpu_run)] = self.cpu_run
            self.cpu_run = grown

    def index(self, pids: I32) -> I32:
        """Task index of each pid (-1 for 0 / absent)."""
        if len(self.pids) == 0:
            return np.full(len(pids), -1, dtype=np.int32)
        pos = np.searchsorted(self.pids, pids).clip(0, len(self.pids) - 1)
        out: I32 = np.where((pids > 0) & (self.pids[pos] == pids), pos, -1).astype(np.int32)
        return out

    def apply(
        self,
        table: pa.Table,
        cols: ChunkColumns,
        n_apply: int,
        *,
        classify: bool = False,
        matrix: npt.NDArray[np.int8] = _EMPTY_MATRIX,
        default_level: int = kn.UNKNOWN_LEVEL,
    ) -> Placements | None:
        """Apply the first n_apply rows of a chunk; with classify, tag migrations and wakeups."""
        # only tasks the applied rows name: a task appears in the state once an event has named it
        self.ensure_tasks(cols.pids(n_apply))
        self.ensure_cpus(cols.max_cpu())
        n = len(cols.kind) if classify else 0
        ev_level = np.full(n, -1, dtype=np.int8)
        ev_cause = np.full(n, -1, dtype=np.int8)
        pl_row, pl_task, pl_cpu = (np.zeros(n, dtype=np.int32) for _ in range(3))
        pl_level, pl_cause = (np.zeros(n, dtype=np.int8) for _ in range(2))
        if classify:
            for key in ("waking", "forkp"):
                self.extra.setdefault(key, np.zeros(len(self.pids), dtype=np.uint8))
            self.extra.setdefault("wprev", np.full(len(self.pids), -1, dtype=np.int32))
        waking = self.extra.get("waking", np.zeros(0, dtype=np.uint8))
        wprev = self.extra.get("wprev", np.zeros(0, dtype=np.int32))
        forkp = self.extra.get("forkp", np.zeros(0, dtype=np.uint8))
        n_pl = kn.apply_events(
            n_apply,
            cols.kind,
            cols.cpu,
            cols.pid,
            self.index(cols.pid),
            cols.target,
            cols.orig,
            cols.dest,
            cols.pstate,
            cols.npid,
            self.index(cols.npid),
            self.index(cols.cpid),
            self.index(cols.opid),
            cols.opid,
            self.cpu,
            self.state,
            self.cpu_run,
            classify,
            waking,
            wprev,
            forkp,
            matrix,
            default_level,
            ev_level,
            ev_cause,
            pl_row,
            pl_task,
            pl_cpu,
            pl_level,
            pl_cause,
        )
        self._update_comms(table, cols, n_apply)
        if not classify:
            return None
        return Placements(
            ev_level,
            ev_cause,
            pl_row[:n_pl],
            pl_task[:n_pl],
            pl_cpu[:n_pl],
            pl_level[:n_pl],
            pl_cause[:n_pl],
        )

    def _update_comms(self, table: pa.Table, cols: ChunkColumns, n_apply: int) -> None:
        """Each task's comm = the last name an applied row gave it (subject, next of switch, fork child)."""
        rows = np.arange(n_apply, dtype=np.int64)
        sources = [
            ("comm", cols.pid[:n_apply]),
            ("next_comm", cols.npid[:n_apply]),
            ("child_comm", cols.cpid[:n_apply]),
        ]
        all_pid = np.concatenate([p for _, p in sources])
        all_row = np.concatenate([rows] * 3)
        all_src = np.repeat(np.arange(3), n_apply)
        keep = all_pid > 0
        all_pid, all_row, all_src = all_pid[keep], all_row[keep], all_src[keep]
        if len(all_pid) == 0:
            return
        order = np.lexsort((all_src, all_row))
        rev = all_pid[order][::-1]
        uniq, first = np.unique(rev, return_index=True)
        last = order[len(rev) - 1 - first]
        idx = self.index(uniq.astype(np.int32))
        for s, (name, _) in enumerate(sources):
            sel = all_src[last] == s
            if not sel.any():
                continue
            names = table.column(name).take(pa.array(all_row[last][sel])).to_pylist()
            self.comm[idx[sel]] = np.array(names, dtype=object)

    # --- keyframes --------------------------------------------------------------------------
    def keyframe(self) -> Encoded:
        """The state (without ingest bookkeeping) as a compressed Arrow blob."""
        table = pa.Table.from_arrays(
            [
                pa.array(self.pids, pa.int32()),
                pa.array(self.cpu, pa.int32()),
                pa.array(self.state, pa.uint8()),
                pa.array(self.comm.tolist(), pa.string()),
            ],
            schema=_KEYFRAME_SCHEMA.with_metadata({"cpu_run": json.dumps(self.cpu_run.tolist())}),
        )
        return encode_table(table)

    @classmethod
    def from_keyframe(cls, data: bytes, raw_bytes: int) -> PlacementState:
        table = decode_blob(data, raw_bytes)
        meta = table.schema.metadata or {}
        return cls(
            pids=np.array(table.column("pid").to_numpy(), dtype=np.int32),
            cpu=np.array(table.column("cpu").to_numpy(), dtype=np.int32),
            state=np.array(table.column("state").to_numpy(), dtype=np.uint8),
            comm=np.array(table.column("comm").to_pylist(), dtype=object),
            cpu_run=np.array(json.loads(meta.get(b"cpu_run", b"[]")), dtype=np.int32),
        )

    def copy(self) -> PlacementState:
        return PlacementState(
            self.pids.copy(), self.cpu.copy(), self.state.copy(), self.comm.copy(), self.cpu_run.copy()
        )

    def comm_of(self, pid: int) -> str | None:
        i = int(self.index(np.array([pid], dtype=np.int32))[0])
        return None if i < 0 else str(self.comm[i])
