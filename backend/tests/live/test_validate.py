"""BatchValidator on crafted batches: what it accepts and counts, what it rejects and why (the per-row CPU
lookup must refuse exactly what the topology does not hold, host rows aside)."""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
import pytest

from placemap.live.validate import BatchRejectedError, BatchValidator
from placemap.schema.events import EVENT_SCHEMA
from placemap.schema.models.topology_schema import Topology

# CPUs 0, 1 and 3 (2 offline): a hole the lookup table must not accept
TOPOLOGY = Topology.model_validate(
    {
        "machine": "t",
        "source": "manual",
        "cpus": [
            {"cpu": c, "online": True, "core": i, "llc": 0, "numa_node": 0, "package": 0, "smt_siblings": [c]}
            for i, c in enumerate((0, 1, 3))
        ],
        "llcs": [{"id": 0, "cpus": [0, 1, 3], "numa_nodes": [0]}],
        "numa_nodes": [{"id": 0, "cpus": [0, 1, 3]}],
        "node_distances": [[10]],
    }
)


def stream(rows: list[dict[str, Any]], compression: str | None = None) -> bytes:
    cols: dict[str, Any] = {f.name: [r.get(f.name) for r in rows] for f in EVENT_SCHEMA}
    table = pa.Table.from_pydict(cols, schema=EVENT_SCHEMA)
    buf = io.BytesIO()
    opts = pa.ipc.IpcWriteOptions(compression=compression)
    with pa.ipc.new_stream(buf, EVENT_SCHEMA, options=opts) as w:
        w.write_table(table)
    return buf.getvalue()


def ev(ts: int, cpu: int, kind: int = 2, **kw: Any) -> dict[str, Any]:
    return {"ts_ns": ts, "cpu": cpu, "kind": kind, "cur_pid": 1, "pid": 2, "comm": "x", **kw}


@pytest.mark.parametrize("compression", [None, "lz4", "zstd"])
def test_accepts_and_counts(compression: str | None) -> None:
    rows = [
        ev(10, 0, 2, target_cpu=3),
        ev(11, -1, 8, llc=0, util=0.5),
        ev(12, 1, 3, orig_cpu=1, dest_cpu=3),
        ev(13, 3, 9, lost_events=7),
        ev(13, 3, 9, lost_events=None),
        ev(14, 0, 1, target_cpu=1),
    ]
    got = BatchValidator(TOPOLOGY).check(stream(rows, compression), len(rows))
    assert (got.rows, got.t_start_ns, got.t_end_ns, got.lost_events) == (6, 10, 14, 7)
    assert got.by_kind == {"wakeup": 1, "llc_util": 1, "migrate": 1, "lost": 2, "waking": 1}
    assert got.table.num_rows == 6


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        (ev(20, 2), "cpu 2 is not a CPU"),  # the hole
        (ev(20, 4), "cpu 4 is not a CPU"),  # past the last CPU
        (ev(20, -1), "cpu -1 is not a CPU"),  # -1 only for llc_util rows
        (ev(20, 0, target_cpu=2), "target_cpu 2"),
        (ev(20, 0, 3, orig_cpu=0, dest_cpu=7), "dest_cpu 7"),
        (ev(20, 0, 3, orig_cpu=-5, dest_cpu=0), "orig_cpu -5"),
        (ev(20, -1, 8, llc=1, util=0.1), "llc index out of range"),
        (ev(20, 0, 10), "unknown kind code 10"),
        (ev(5, 0), "ordered by ts_ns"),
        (ev(20, None), "cpu has nulls"),
    ],
)
def test_rejects_with_a_reason(row: dict[str, Any], reason: str) -> None:
    data = stream([ev(10, 0), row])
    with pytest.raises(BatchRejectedError, match=reason):
        BatchValidator(TOPOLOGY).check(data, 2)


def test_rejects_bad_frames() -> None:
    v = BatchValidator(TOPOLOGY)
    with pytest.raises(BatchRejectedError, match="not an Arrow IPC stream"):
        v.check(b"\x00" * 64, 1)
    with pytest.raises(BatchRejectedError, match="announced 3 rows"):
        v.check(stream([ev(1, 0)]), 3)
