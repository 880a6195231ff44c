"""Validation of one incoming batch: an Arrow IPC stream in exactly the event schema, rows as announced,
known kind codes, CPU ids within the hello's topology, rows ordered by time. A bad batch is rejected with a
reason; it never ends the connection."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

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


class BatchValidator:
    """Checks batches against one session's topology."""

    def __init__(self, topology: Topology) -> None:
        self.cpus = np.array(sorted(c.cpu for c in topology.cpus), dtype=np.int64)
        self.n_llcs = len(topology.llcs)

    def _cpus_ok(self, col: pa.ChunkedArray, name: str, allow_host: bool = False) -> None:
        v = col.drop_null().to_numpy(zero_copy_only=False).astype(np.int64)
        if allow_host:
            v = v[v != -1]
        bad = v[~np.isin(v, self.cpus)]
        if len(bad):
            raise BatchRejectedError(
                f"{name} {int(bad[0])} is not a CPU of the hello's topology ({len(bad)} rows out of range)"
            )

    def check(self, data: bytes, rows: int) -> CheckedBatch:
        try:
            table = pa.ipc.open_stream(pa.py_buffer(data)).read_all()
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
        kind = table.column("kind").to_numpy().astype(np.int64)
        if int(kind.max()) >= len(KIND_NAMES):
            raise BatchRejectedError(f"unknown kind code {int(kind.max())}")
        cpu = table.column("cpu")
        host = pc.equal(table.column("kind"), pa.scalar(K_LLC_UTIL, pa.uint8()))
        self._cpus_ok(pc.filter(cpu, pc.invert(host)), "cpu")
        for name in ("target_cpu", "orig_cpu", "dest_cpu"):
            self._cpus_ok(table.column(name), name)
        llc = table.column("llc").drop_null().to_numpy(zero_copy_only=False)
        if len(llc) and (int(llc.min()) < 0 or int(llc.max()) >= self.n_llcs):
            raise BatchRejectedError(f"llc index out of range 0..{self.n_llcs - 1}")
        ts = table.column("ts_ns").to_numpy()
        if len(ts) > 1 and bool(np.any(np.diff(ts) < 0)):
            raise BatchRejectedError("rows are not ordered by ts_ns")
        lost = pc.sum(table.column("lost_events")).as_py() or 0
        counts = np.bincount(kind, minlength=len(KIND_NAMES))
        by_kind = {KIND_NAMES[k]: int(n) for k, n in enumerate(counts) if n}
        return CheckedBatch(table, rows, int(ts[0]), int(ts[-1]), int(lost), by_kind)
