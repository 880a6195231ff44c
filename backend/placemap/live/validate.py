"""Validation of one incoming batch: an Arrow IPC stream in exactly the event schema, rows as announced,
known kind codes, CPU ids within the hello's topology, rows ordered by time. A bad batch is rejected with a
reason; it never ends the connection."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from placemap.schema.events import EVENT_SCHEMA, KIND_NAMES
from placemap.schema.models.topology_schema import Topology

K_LLC_UTIL = 8
K_LOST = 9


class BatchRejectedError(Exception):
    """The batch cannot be stored; str(exc) is the reason sent to the collector."""


@dataclass(frozen=True)
class CheckedBatch:
    """A batch that passed: its table and what it adds to the recording."""

    table: pa.Table
    rows: int
    t_start_ns: int | None
    t_end_ns: int | None
    lost_events: int
    by_kind: dict[str, int]


# Decompress a batch's buffers in the calling thread: for a live batch (thousands of rows) handing them to
# Arrow's thread pool costs more in wake-ups than it saves (1.29 CPUs busy for the same work).
_READ = pa.ipc.IpcReadOptions(use_threads=False)


class BatchValidator:
    """Checks batches against one session's topology."""

    def __init__(self, topology: Topology) -> None:
        self.cpus = np.array(sorted(c.cpu for c in topology.cpus), dtype=np.int64)
        # known[c] for 0 <= c < len(known): a lookup per row instead of np.isin's sort per batch
        self.known = np.zeros(int(self.cpus.max()) + 1 if len(self.cpus) else 0, dtype=bool)
        self.known[self.cpus[self.cpus >= 0]] = True
        self.n_llcs = len(topology.llcs)

    def _cpus_ok(self, v: np.ndarray, name: str) -> None:
        """v: the column's non-null values (any integer dtype)."""
        if not len(v):
            return
        lo, hi = int(v.min()), int(v.max())
        if lo >= 0 and hi < len(self.known) and bool(self.known[v].all()):
            return
        v = v.astype(np.int64)
        bad = v[~np.isin(v, self.cpus)]
        raise BatchRejectedError(
            f"{name} {int(bad[0])} is not a CPU of the hello's topology ({len(bad)} rows out of range)"
        )

    @staticmethod
    def _values(col: pa.ChunkedArray) -> np.ndarray:
        """The column's non-null values."""
        if col.null_count == len(col):
            return np.empty(0, dtype=np.int64)
        v: np.ndarray = (col if col.null_count == 0 else col.drop_null()).to_numpy()
        return v

    def check(self, data: bytes, rows: int) -> CheckedBatch:
        try:
            table = pa.ipc.open_stream(pa.py_buffer(data), options=_READ).read_all()
        except (pa.ArrowInvalid, OSError) as exc:
            raise BatchRejectedError(f"not an Arrow IPC stream: {exc}") from exc
        if not table.schema.equals(EVENT_SCHEMA, check_metadata=False):
            raise BatchRejectedError(
                f"schema differs from the event schema (events.json): got {table.schema}"
            )
        if table.num_rows != rows:
            raise BatchRejectedError(f"the header announced {rows} rows, the frame holds {table.num_rows}")
        if rows == 0:
            return CheckedBatch(table, 0, None, None, 0, {})
        for name in ("ts_ns", "cpu", "kind"):
            if table.column(name).null_count:
                raise BatchRejectedError(f"{name} has nulls (the event schema says it has none)")
        kind = table.column("kind").to_numpy()
        if int(kind.max()) >= len(KIND_NAMES):
            raise BatchRejectedError(f"unknown kind code {int(kind.max())}")
        cpu = table.column("cpu").to_numpy()
        self._cpus_ok(cpu[kind != K_LLC_UTIL], "cpu")  # llc_util rows are the host's (cpu -1)
        for name in ("target_cpu", "orig_cpu", "dest_cpu"):
            self._cpus_ok(self._values(table.column(name)), name)
        llc = self._values(table.column("llc"))
        if len(llc) and (int(llc.min()) < 0 or int(llc.max()) >= self.n_llcs):
            raise BatchRejectedError(f"llc index out of range 0..{self.n_llcs - 1}")
        ts = table.column("ts_ns").to_numpy()
        if len(ts) > 1 and bool((ts[1:] < ts[:-1]).any()):
            raise BatchRejectedError("rows are not ordered by ts_ns")
        lost = int(self._values(table.column("lost_events")).sum())
        counts = np.bincount(kind, minlength=len(KIND_NAMES))
        by_kind = {KIND_NAMES[k]: int(n) for k, n in enumerate(counts) if n}
        return CheckedBatch(table, rows, int(ts[0]), int(ts[-1]), lost, by_kind)
