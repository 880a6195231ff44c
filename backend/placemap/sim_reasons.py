"""Why a saved simulated run put each task where it did: the simulator's reason for every wakeup
and fork placement (the wake_affine step and select_idle_sibling's pick, or find_idlest_group's
path and the CPU picked: DecisionCounts' (path, pick)) and every balancing move (the balance,
periodic, newidle or steal, with its domain, and load_balance()'s outcome, as DecisionCounts
counts the balances), kept with the recording so that a task's
path can say, placement by placement, what the model decided. A captured trace has none: the
kernel does not say why.

Stored as two derived blobs: REASONS, an Arrow IPC stream (zstd) of (pid, ts_ns, kind, path id,
pick id) rows in event order, and NAMES, the JSON lists of the path and pick texts the ids index.
Rows are written in batches while the run goes, so memory holds one batch of them.
"""

from __future__ import annotations

import json
import logging
from array import array
from collections import deque
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from placemap.schema.events import BATCH_ROWS, Kind
from placemap.store import Store

REASONS = "reasons"
NAMES = "reason_names"
SCHEMA = pa.schema(
    [
        ("pid", pa.int32()),
        ("ts_ns", pa.int64()),
        ("kind", pa.uint8()),
        ("path", pa.uint32()),
        ("pick", pa.uint32()),
    ]
)


log = logging.getLogger(__name__)
KIND_CODES = {"wakeup": int(Kind.WAKEUP), "wakeup_new": int(Kind.WAKEUP_NEW), "migrate": int(Kind.MIGRATE)}


class ReasonsError(ValueError):
    """A recording's stored reasons cannot be read (the message says which blob and why)."""


def _columns() -> tuple[array[int], array[int], array[int], array[int], array[int]]:
    """One batch's columns, typed as SCHEMA's (pid, ts_ns, kind, path id, pick id)."""
    return array("i"), array("q"), array("B"), array("I"), array("I")


class ReasonWriter:
    """Collects the reasons of one run's placements and writes them as the two blobs."""

    def __init__(self) -> None:
        self._sink = pa.BufferOutputStream()
        self._writer = pa.ipc.new_stream(
            self._sink, SCHEMA, options=pa.ipc.IpcWriteOptions(compression="zstd")
        )
        self._ids: tuple[dict[str, int], dict[str, int]] = ({}, {})
        self._cols = _columns()

    def _id(self, which: int, text: str) -> int:
        ids = self._ids[which]
        got = ids.get(text)
        if got is None:
            got = ids[text] = len(ids)
        return got

    def add(self, pid: int, ts: int, kind: int, why: tuple[str, str]) -> None:
        """One placement of task `pid` at `ts` (an event of `kind`, wakeup or wakeup_new)."""
        pids, tss, kinds, paths, picks = self._cols
        pids.append(pid)
        tss.append(ts)
        kinds.append(kind)
        paths.append(self._id(0, why[0]))
        picks.append(self._id(1, why[1]))
        if len(pids) >= BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        if len(self._cols[0]):
            arrays = [pa.array(col, type=f.type) for col, f in zip(self._cols, SCHEMA, strict=True)]
            self._writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=SCHEMA))
        self._cols = _columns()

    def save(self, store: Store, rid: str) -> None:
        """Write both blobs for the (ready) recording `rid`."""
        self._flush()
        self._writer.close()
        names = {"path": list(self._ids[0]), "pick": list(self._ids[1])}
        store.put_derived(rid, NAMES, json.dumps(names).encode())
        store.put_derived(rid, REASONS, self._sink.getvalue().to_pybytes())


def task_reasons(store: Store, rid: str, pid: int) -> dict[tuple[int, int], deque[tuple[str, str]]] | None:
    """The reasons of task `pid`'s placements, by (ts_ns, kind), in event order (a queue: two
    placements of one task at one instant are met in order); None when the recording keeps
    none (a captured trace, or a run saved before reasons were kept)."""
    blob, names_blob = store.derived(rid, REASONS), store.derived(rid, NAMES)
    if blob is None or names_blob is None:
        return None
    try:
        names = json.loads(names_blob)
        paths, picks = list(names["path"]), list(names["pick"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ReasonsError(f"{NAMES}: {exc}") from exc
    out: dict[tuple[int, int], deque[tuple[str, str]]] = {}
    for batch in _batches(blob):
        rows = pa.Table.from_batches([batch]).filter(pc.equal(batch.column("pid"), pid))
        for ts, kind, path, pick in zip(
            rows.column("ts_ns").to_pylist(),
            rows.column("kind").to_pylist(),
            rows.column("path").to_pylist(),
            rows.column("pick").to_pylist(),
            strict=True,
        ):
            if not (0 <= path < len(paths) and 0 <= pick < len(picks)):
                raise ReasonsError(f"{REASONS}: a reason id past the {NAMES} lists")
            out.setdefault((ts, kind), deque()).append((paths[path], picks[pick]))
    return out


def _batches(blob: bytes) -> Iterator[pa.RecordBatch]:
    try:
        reader = pa.ipc.open_stream(blob)
        if not reader.schema.equals(SCHEMA):
            raise ReasonsError(f"{REASONS}: unexpected columns {reader.schema.names}")
        yield from reader
    except (pa.ArrowInvalid, OSError) as exc:
        raise ReasonsError(f"{REASONS}: {exc}") from exc


def annotate(store: Store, rid: str, pid: int, placements: list[dict[str, Any]]) -> None:
    """Give each of task `pid`'s placements (dicts with ts_ns and a kind name, in event order) its
    "reason" ({path, pick}) where the recording keeps one (a simulated run's wakeups and forks),
    else None. Stored reasons that cannot be read are logged and left out: the path is still
    served, without them."""
    try:
        reasons = task_reasons(store, rid, pid)
    except ReasonsError as exc:
        log.warning("recording %s: its placement reasons are left out: %s", rid, exc)
        reasons = None
    for p in placements:
        code = KIND_CODES.get(p["kind"])
        queue = None if reasons is None or code is None else reasons.get((p["ts_ns"], code))
        if queue:
            path, pick = queue.popleft()
            p["reason"] = {"path": path, "pick": pick}
        else:
            p["reason"] = None
