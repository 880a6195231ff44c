"""The wakeups by where their waker ran (Metrics.wakeups.by_waker), by LLC pair (wakeups.llc_pairs),
the overview's wakeup rows (by level and by waker, bin by bin), each task's wakeup counts (the
tasks table's wakeups, cross_llc, pulled) and each wakeup's waker and class in the chunks' placement
side tables (waker_cpu, waker_pid, waker_class), for a recording stored before they were kept: its
stored chunks, in order, go through the ingest's own state machine (PlacementState.apply, which
classifies them as the ingest does: kernel.WK_*; wake_counts.WakeCounts), once, the first time its
metrics, overview, tasks, a task's path or a cell's tasks are read, and everything it lacks is kept
with its metrics document, its overview, its tasks and its placements (all from the one scan, under
the recording's refill_lock), so nobody has to import it again; a placement table that cannot be
read is rebuilt the same way. A stored chunk that cannot be read leaves them out (the metrics'
fields null, the overview, the tasks and the placements marked), kept so (not scanned for again),
and the rest is served. Memory: one chunk, the per-task state, the overview's rows and the rebuilt
placement tables (compressed)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from placemap.replay import kernel as kn
from placemap.replay.accumulate import K_WAKEUP, N_WAKE, N_WAKER, overview_rows
from placemap.replay.delays import METRICS, StoredChunkError
from placemap.replay.ingest import npz, placements_table, waker_counts
from placemap.replay.refill_lock import refill_lock
from placemap.replay.seek import STATE_COLUMNS
from placemap.replay.state import ChunkColumns, PlacementState
from placemap.replay.topo import LevelMap
from placemap.replay.wake_counts import WakeCounts
from placemap.schema.events import KIND_NAMES
from placemap.schema.models.topology_schema import Topology
from placemap.store.codec import decode_blob, encode_table
from placemap.store.store import Store

log = logging.getLogger(__name__)


OVERVIEW = "overview.npz"
# the overview has its wakeup rows (written with them by the ingest and by a refill): a key of the
# archive, read without decompressing its values
WAKE_ROWS = "wake_rows"
# an overview whose wakeup rows could not be counted (a damaged chunk): not scanned for again
NO_WAKE_ROWS = "no_wake_rows"


@dataclass
class _Grid:
    """A stored overview's bins: the rows to count wakeups into."""

    t0: int
    width: int
    bins: int


@dataclass
class _Scanned:
    """What one scan of the stored chunks counts."""

    by_waker: npt.NDArray[np.int64]  # kernel.WK_* counts
    wakes: WakeCounts  # per task (by index) and by LLC pair
    pids: list[int]  # the tasks' pids, by index
    rows: npt.NDArray[np.float64] | None  # the overview's wakeup rows, when asked for
    placements: list[tuple[int, bytes, int]]  # the rebuilt placement tables asked for: seq, blob, raw


def _scan(
    store: Store,
    rid: str,
    topology: Topology | None,
    grid: _Grid | None,
    rebuild: frozenset[int] = frozenset(),
) -> _Scanned:
    """The recording's wakeups by their waker's CPU, per task and by LLC pair, counted again from
    its stored chunks on `topology` (the recording's; None: inferred, one LLC), with `grid` the
    overview's wakeup rows on its bins (by level, then by waker class: accumulate.overview_rows'
    order), and the placement side tables of the chunks `rebuild` names, as the ingest writes them."""
    levels = LevelMap(topology)
    state = PlacementState()
    counts = np.zeros(kn.WK_COUNTS, dtype=np.int64)
    wakes = WakeCounts(levels)
    rows = None if grid is None else np.zeros((N_WAKE + N_WAKER, grid.bins), dtype=np.float64)
    placements: list[tuple[int, bytes, int]] = []
    seqs = [c.seq for c in store.list_chunks(rid)]
    for seq, data, raw in store.iter_chunk_data(rid, seqs):
        try:
            table = decode_blob(data, raw)
            # the wakers' pids, for the placements (the counts do not need them): read in every chunk
            # when any is rebuilt, since a wakeup's waker is its sched_waking's, which may sit in
            # the chunk before
            waker = ("cur_pid",) if rebuild and "cur_pid" in table.column_names else ()
            table = table.select([*STATE_COLUMNS, *waker])
            cols = ChunkColumns.from_table(table)
        except (pa.ArrowException, ValueError, OSError, KeyError) as exc:
            raise StoredChunkError(seq, str(exc) or type(exc).__name__) from exc
        pl = state.apply(
            table,
            cols,
            len(cols.kind),
            classify=True,
            matrix=levels.matrix,
            default_level=levels.default_level,
            waker_counts=counts,
        )
        if pl is not None:
            wakes.add(len(state.pids), cols, pl)
        if pl is not None and seq in rebuild:
            enc = encode_table(placements_table(cols, pl, state.pids))
            placements.append((seq, enc.data, enc.raw_bytes))
        if rows is not None and grid is not None and pl is not None:
            wake = cols.kind == K_WAKEUP
            b = np.clip((cols.ts[wake] - grid.t0) // grid.width, 0, grid.bins - 1)
            np.add.at(rows, (np.clip(pl.ev_level[wake].astype(np.int64), 0, N_WAKE - 1), b), 1.0)
            mask = pl.ev_waker[wake].astype(np.int64)
            for j in range(N_WAKER):
                has = (mask >> j) & 1 == 1
                np.add.at(rows[N_WAKE + j], b[has], 1.0)
    return _Scanned(counts, wakes, [int(p) for p in state.pids.tolist()], rows, placements)


def by_waker_from_store(store: Store, rid: str, topology: Topology | None) -> dict[str, int]:
    """The recording's wakeups by their waker's CPU, counted again from its stored chunks on
    `topology` (the recording's; None: inferred, one LLC)."""
    return waker_counts(_scan(store, rid, topology, None).by_waker)


# the Metrics document's wakeups fields this module fills: by where the waker ran, by LLC pair
FIELDS = ("by_waker", "llc_pairs")


def _overview_lacking(store: Store, rid: str) -> tuple[npt.NDArray[np.float64], _Grid] | None:
    """The stored overview's values and bins when it lacks the wakeup rows (and was not marked as
    uncountable); None otherwise, or without an overview."""
    blob = store.derived(rid, OVERVIEW)
    if blob is None:
        return None
    with np.load(io.BytesIO(blob)) as z:
        if WAKE_ROWS in z.files or NO_WAKE_ROWS in z.files:
            return None
        values, t0, width = z["values"], int(z["t0"]), int(z["width"])
    if values.shape[0] >= overview_rows(len(KIND_NAMES))[3]:
        return None
    return values, _Grid(t0, width, values.shape[1])


def _store_overview(
    store: Store, rid: str, values: npt.NDArray[np.float64], grid: _Grid, rows: npt.NDArray[np.float64] | None
) -> None:
    """The overview with its wakeup rows appended after the lost row; without rows, as it was,
    marked so that it is not scanned again."""
    lost = overview_rows(len(KIND_NAMES))[0]
    extra: dict[str, npt.NDArray[Any]] = {"t0": np.array(grid.t0), "width": np.array(grid.width)}
    if rows is None:
        store.put_derived(rid, OVERVIEW, npz(values=values, **extra, **{NO_WAKE_ROWS: np.array(1)}))
    else:
        store.put_derived(
            rid,
            OVERVIEW,
            npz(values=np.vstack([values[: lost + 1], rows]), **extra, **{WAKE_ROWS: np.array(1)}),
        )


def _stored_fields(store: Store, rid: str) -> dict[str, Any] | None:
    """The stored metrics document's wakeups fields of FIELDS it has (None values included); None
    when there is no document with wakeups to give them to."""
    blob = store.derived(rid, METRICS)
    doc = None if blob is None else json.loads(blob)
    wakeups = doc.get("wakeups") if isinstance(doc, dict) else None
    if not isinstance(wakeups, dict):
        return None
    return {k: wakeups[k] for k in FIELDS if k in wakeups}


def _put_fields(store: Store, rid: str, fields: dict[str, Any]) -> None:
    """`fields` (of FIELDS) into the metrics document's wakeups as stored now (under refill_lock:
    the other refills' fields kept)."""
    blob = store.derived(rid, METRICS)
    doc = None if blob is None else json.loads(blob)
    wakeups = doc.get("wakeups") if isinstance(doc, dict) else None
    if doc is None or not isinstance(wakeups, dict) or not fields:
        return
    store.put_derived(rid, METRICS, json.dumps({**doc, "wakeups": {**wakeups, **fields}}).encode())


def _counted(scanned: _Scanned) -> dict[str, Any]:
    """The scan's counts as the metrics document's fields."""
    return {"by_waker": waker_counts(scanned.by_waker), "llc_pairs": scanned.wakes.pairs.document()}


def _missing(stored: dict[str, Any] | None) -> list[str]:
    """The fields the stored document lacks (none without a document to give them to)."""
    return [] if stored is None else [k for k in FIELDS if k not in stored]


# a recording whose tasks' wakeup counts could not be counted again (a damaged chunk, named): not
# scanned for again
TASKS_UNREAD = "task_wakes_unread"


def _tasks_lacking(store: Store, rid: str) -> bool:
    """Whether the recording's tasks lack their wakeup counts and were not marked uncountable."""
    return store.tasks_uncounted(rid) and store.derived(rid, TASKS_UNREAD) is None


# the placement side tables' columns for each wakeup's waker and class (ingest.PLACEMENT_SCHEMA)
WAKER_COLUMNS = ("waker_cpu", "waker_pid", "waker_class")
# a recording whose placements could not be rebuilt (a damaged chunk, named): not scanned for again
PLACEMENTS_UNREAD = "placements_unread"


def _placements_lacking(store: Store, rid: str) -> frozenset[int]:
    """The chunks whose stored placement tables lack WAKER_COLUMNS, or cannot be read (a table is
    derived from its events: rebuilt from them, it is whole again); none once the recording is
    marked PLACEMENTS_UNREAD."""
    if store.derived(rid, PLACEMENTS_UNREAD) is not None:
        return frozenset()
    seqs = set()
    for chunk in store.list_chunks(rid):
        blob = store.placements(rid, chunk.seq)
        if blob is None:
            continue
        try:
            names = decode_blob(*blob).column_names
        except (pa.ArrowException, ValueError, OSError):
            names = []
        if not all(c in names for c in WAKER_COLUMNS):
            seqs.add(chunk.seq)
    return frozenset(seqs)


@dataclass
class _Lacking:
    """What a recording lacks that a scan gives."""

    overview: tuple[npt.NDArray[np.float64], _Grid] | None  # the stored overview, without its rows
    fields: list[str]  # the metrics document's wakeups fields (FIELDS)
    tasks: bool  # the tasks' wakeup counts
    placements: frozenset[int]  # the chunks whose placement tables lack WAKER_COLUMNS


def _lacking(store: Store, rid: str) -> _Lacking | None:
    """What the recording lacks, as stored now; None when nothing."""
    got = _Lacking(
        _overview_lacking(store, rid),
        _missing(_stored_fields(store, rid)),
        _tasks_lacking(store, rid),
        _placements_lacking(store, rid),
    )
    return got if got.overview is not None or got.fields or got.tasks or got.placements else None


def _fill(store: Store, rid: str, topology: Callable[[], Topology | None]) -> _Lacking | None:
    """Everything the recording lacks, from one scan of its stored chunks on `topology()` (asked
    only then), stored, once; under the recording's refill_lock, and looked at again there (another
    request may have filled it). Returns what was lacking (None: nothing). A chunk that cannot be
    read: the overview marked, the metrics' fields null, the tasks and the placements marked
    (TASKS_UNREAD, PLACEMENTS_UNREAD)."""
    with refill_lock(rid):
        lacking = _lacking(store, rid)
        if lacking is None:
            return None
        grid = None if lacking.overview is None else lacking.overview[1]
        try:
            scanned = _scan(store, rid, topology(), grid, lacking.placements)
        except StoredChunkError as exc:
            log.warning("recording %s: wakeup counts not counted again: %s", rid, exc)
            if lacking.overview is not None:
                _store_overview(store, rid, *lacking.overview, None)
            _put_fields(store, rid, dict.fromkeys(lacking.fields))
            if lacking.tasks:
                store.put_derived(rid, TASKS_UNREAD, str(exc).encode())
            if lacking.placements:
                store.put_derived(rid, PLACEMENTS_UNREAD, str(exc).encode())
            return lacking
        if lacking.overview is not None:
            _store_overview(store, rid, *lacking.overview, scanned.rows)
        counted = _counted(scanned)
        _put_fields(store, rid, {k: counted[k] for k in lacking.fields})
        if lacking.tasks:
            store.put_task_wakes(rid, [(pid, *scanned.wakes.task(i)) for i, pid in enumerate(scanned.pids)])
        if lacking.placements:
            store.put_placements(rid, scanned.placements)
        return lacking


def fill_overview(store: Store, rid: str, topology: Callable[[], Topology | None]) -> bool:
    """The stored overview given its wakeup rows when it lacks them, counted from the stored chunks
    on the recording's `topology()` (asked only then), once, with whatever else the recording lacks
    (_fill). True when the overview was rewritten (with the rows, or marked: a chunk could not be
    read)."""
    if _overview_lacking(store, rid) is None:
        return False
    lacking = _fill(store, rid, topology)
    return lacking is not None and lacking.overview is not None


def fill_by_waker(
    store: Store, rid: str, metrics: dict[str, Any], topology: Callable[[], Topology | None]
) -> dict[str, Any]:
    """`metrics` (a recording's stored Metrics document) with wakeups.by_waker and llc_pairs: as
    stored when the document has them, else counted from the stored chunks on the recording's
    `topology()` (asked only then) with whatever else the recording lacks (_fill) and stored with
    the document, once (null, stored so, when a chunk cannot be read); read from the document as
    stored then (a request holding an older one gets them too)."""
    wakeups = metrics.get("wakeups")
    if not isinstance(wakeups, dict) or all(k in wakeups for k in FIELDS):
        return metrics
    _fill(store, rid, topology)
    stored = _stored_fields(store, rid) or {}
    return {**metrics, "wakeups": {**wakeups, **stored}}


def fill_tasks(store: Store, rid: str, topology: Callable[[], Topology | None]) -> None:
    """The recording's tasks given their wakeup counts when they lack them (stored before them),
    counted from the stored chunks on its `topology()` with whatever else it lacks (_fill), once."""
    if _tasks_lacking(store, rid):
        _fill(store, rid, topology)


def fill_placements(store: Store, rid: str, topology: Callable[[], Topology | None]) -> str | None:
    """The recording's placement side tables given each wakeup's waker and class when they lack
    them (stored before them), rebuilt from the stored chunks on its `topology()` with whatever else
    it lacks (_fill), once. Returns why they could not be (a stored chunk that cannot be read, named;
    kept, so not scanned for again), or None. (Its callers ask only on a table they found lacking:
    _fill looks at what the recording lacks once, under the lock.)"""
    _fill(store, rid, topology)
    unread = store.derived(rid, PLACEMENTS_UNREAD)
    return None if unread is None else unread.decode(errors="replace")
