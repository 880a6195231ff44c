"""Test helper: turn real ftrace text lines (../shared/traces) into Arrow batches in the event schema.

Used where a test wants events without the Go importer (store and replay unit tests); it knows only
the sched lines of the shared traces, not every format the importer reads.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import Any

import pyarrow as pa

from placemap.schema.events import EVENT_SCHEMA, KIND_NAMES

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TRACES = SHARED / "traces"
G4 = TRACES / "vm2-hackbench-g4.ftrace.txt.gz"

_LINE = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+)\.(\d+):\s+(\w+):\s+(.*)$")
_KEYS = re.compile(
    r"(?:^|\s)(comm|pid|prio|target_cpu|orig_cpu|dest_cpu|prev_comm|prev_pid|prev_prio|prev_state|next_comm"
    r"|next_pid|next_prio|child_comm|child_pid|filename|old_pid|group_dead)="
)
_KIND = {f"sched_{n}": i for i, n in enumerate(KIND_NAMES)}
_KIND.update(
    {"sched_process_fork": 5, "sched_process_exit": 6, "sched_process_exec": 7, "sched_migrate_task": 3}
)


def _fields(body: str) -> dict[str, str]:
    matches = list(_KEYS.finditer(body))
    out = {}
    for m, nxt in zip(matches, [*matches[1:], None], strict=True):
        end = nxt.start() if nxt else len(body)
        out[m.group(1)] = body[m.end() : end].removesuffix(" ==>").strip()
    return out


def parse_lines(lines: list[str]) -> list[dict[str, Any]]:
    """Rows (dicts of EVENT_SCHEMA columns) of the sched lines; other lines are skipped."""
    rows = []
    for line in lines:
        m = _LINE.match(line)
        if not m or m.group(6) not in _KIND:
            continue
        task, cur, cpu, sec, frac, event, body = m.groups()
        f = _fields(body)
        kind = _KIND[event]
        row: dict[str, Any] = {name: None for name in EVENT_SCHEMA.names}
        row.update(
            ts_ns=int(sec) * 1_000_000_000 + int(frac.ljust(9, "0")[:9]),
            cpu=int(cpu),
            kind=kind,
            cur_pid=int(cur),
            pid=0,
            comm=task,
        )
        if kind == 4:
            row.update(
                pid=int(f["prev_pid"]),
                comm=f["prev_comm"],
                prio=int(f["prev_prio"]),
                prev_state=f["prev_state"],
                next_pid=int(f["next_pid"]),
                next_comm=f["next_comm"],
                next_prio=int(f["next_prio"]),
            )
        elif kind == 7:
            row.update(pid=int(f["pid"]), old_pid=int(f["old_pid"]), filename=f["filename"])
        else:
            row.update(pid=int(f["pid"]), comm=f["comm"])
            if "prio" in f:
                row["prio"] = int(f["prio"])
            for key in ("target_cpu", "orig_cpu", "dest_cpu", "child_pid"):
                if key in f:
                    row[key] = int(f[key])
            if "child_comm" in f:
                row["child_comm"] = f["child_comm"]
        rows.append(row)
    rows.sort(key=lambda r: r["ts_ns"])
    return rows


def rows_to_batches(rows: list[dict[str, Any]], batch_rows: int = 10_000) -> list[pa.RecordBatch]:
    table = pa.Table.from_pylist(rows, schema=EVENT_SCHEMA)
    return table.to_batches(max_chunksize=batch_rows)


def g4_rows() -> list[dict[str, Any]]:
    with gzip.open(G4, "rt", encoding="utf-8", errors="replace") as fh:
        return parse_lines(fh.readlines())
