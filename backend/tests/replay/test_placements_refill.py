"""Placement side tables stored before each wakeup's waker and class were kept (placements without
waker_cpu, waker_pid, waker_class), rebuilt from the stored chunks once
(waker_refill.fill_placements), to the tables the ingest writes today: checked against the ingest's
own tables of the real g4 hackbench laid on two LLCs, across chunk boundaries, through the task's
path and a cell's tasks."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pyarrow as pa
import pytest
from stored import as_stored_before
from test_classify import two_cpus
from test_helpers import damage_chunk, ingest, never_asked

from placemap.replay.pair_tasks import PairsUncountedError, pair_tasks
from placemap.replay.queries import PlacementsUnreadError, task_path
from placemap.replay.topo import LevelMap
from placemap.replay.waker_refill import PLACEMENTS_UNREAD, WAKER_COLUMNS, fill_placements, fill_tasks
from placemap.schema.models.topology_schema import Topology
from placemap.store import Store
from placemap.store.codec import decode_blob

TOPO = two_cpus("node")


def _tables(store: Store, rid: str) -> dict[int, pa.Table]:
    out = {}
    for c in store.list_chunks(rid):
        blob = store.placements(rid, c.seq)
        assert blob is not None
        out[c.seq] = decode_blob(*blob)
    return out


def _counting(topology: Topology) -> tuple[Callable[[], Topology], list[int]]:
    asked: list[int] = []

    def topo() -> Topology:
        asked.append(1)
        return topology

    return topo, asked


@pytest.fixture
def g4(store: Store, g4_table: pa.Table) -> tuple[str, dict[int, pa.Table]]:
    """g4 on two LLCs in 3,000-event chunks, and its placement tables as the ingest wrote them."""
    rid = ingest(store, g4_table, topology=TOPO, chunk_rows=3_000)
    tables = _tables(store, rid)
    assert len(tables) > 10 and all(set(WAKER_COLUMNS) <= set(t.column_names) for t in tables.values())
    return rid, tables


def test_older_placements_are_rebuilt_to_the_ingest_s_tables_once(
    store: Store, g4: tuple[str, dict[int, pa.Table]]
) -> None:
    rid, ingested = g4
    as_stored_before(store.path, rid)
    assert all("waker_cpu" not in t.column_names for t in _tables(store, rid).values())
    topo, asked = _counting(TOPO)
    assert fill_placements(store, rid, topo) is None
    assert asked == [1]
    rebuilt = _tables(store, rid)
    assert rebuilt.keys() == ingested.keys()
    for seq, table in ingested.items():
        assert rebuilt[seq].equals(table), seq
    # complete now: never scanned again
    assert fill_placements(store, rid, never_asked) is None


def _damage_placements(store: Store, rid: str, seq: int) -> bytes:
    bad = b"\x00not zstd" * 20
    conn = sqlite3.connect(store.path)
    with conn:
        sql = "UPDATE chunks SET placements = ? WHERE recording_id = ? AND seq = ?"
        conn.execute(sql, (bad, rid, seq))
    conn.close()
    return bad


def test_some_chunks_rebuilt_among_current_ones_are_the_ingest_s(
    store: Store, g4: tuple[str, dict[int, pa.Table]]
) -> None:
    """Every other chunk without its wakers (a version before waker_cpu), chunk 6 without their
    classes only (one before waker_class), chunk 9's placements damaged: all rebuilt as the ingest
    wrote them, among chunks left as they were. A wakeup whose sched_waking sits in the chunk before,
    one that was not rebuilt, still names its waker's pid."""
    rid, ingested = g4
    seqs = sorted(ingested)
    as_stored_before(store.path, rid, seqs=seqs[1::2])
    as_stored_before(store.path, rid, ["waker_class"], seqs=[seqs[6]])
    _damage_placements(store, rid, seqs[9])
    assert fill_placements(store, rid, lambda: TOPO) is None
    for seq in seqs:
        blob = store.placements(rid, seq)
        assert blob is not None
        assert decode_blob(*blob).equals(ingested[seq]), seq
    assert fill_placements(store, rid, never_asked) is None


def test_a_current_recording_never_asks_for_a_rebuild(
    store: Store, g4: tuple[str, dict[int, pa.Table]]
) -> None:
    rid, ingested = g4

    def fill() -> str | None:
        raise AssertionError("a current recording's placements rebuilt")

    levels = LevelMap(TOPO)
    pid = int(ingested[min(ingested)].column("pid")[0].as_py())
    assert task_path(store, rid, pid, levels, fill)
    assert pair_tasks(store, rid, levels, 0, 1, limit=10, fill=fill)[0] > 0


def test_a_damaged_table_whose_events_are_damaged_too_is_named(
    store: Store, g4_table: pa.Table, g4: tuple[str, dict[int, pa.Table]]
) -> None:
    """Chunk 9's placements and chunk 5's events damaged: nothing can be rebuilt (the scan stops at
    chunk 5); the path through chunk 9 and a cell's tasks name why, and nothing is scanned again."""
    rid, ingested = g4
    seqs = sorted(ingested)
    _damage_placements(store, rid, seqs[9])
    events = damage_chunk(store, rid)
    fill = lambda: fill_placements(store, rid, lambda: TOPO)  # noqa: E731
    with pytest.raises(PairsUncountedError, match=f"stored chunk {events}: "):
        pair_tasks(store, rid, LevelMap(TOPO), 0, 1, limit=10, fill=fill)
    again = lambda: fill_placements(store, rid, never_asked)  # noqa: E731
    pid = int(ingested[seqs[9]].column("pid")[0].as_py())
    with pytest.raises(
        PlacementsUnreadError, match=f"the placements of stored chunk {seqs[9]} cannot be read"
    ):
        task_path(store, rid, pid, LevelMap(TOPO), again)
    with pytest.raises(PairsUncountedError, match=f"stored chunk {events}: "):
        pair_tasks(store, rid, LevelMap(TOPO), 0, 1, limit=10, fill=again)


def test_a_cell_s_tasks_and_a_task_s_path_read_the_rebuilt_tables(
    store: Store, g4_table: pa.Table, g4: tuple[str, dict[int, pa.Table]]
) -> None:
    rid, _ = g4
    levels = LevelMap(TOPO)
    cells = {(w, t): pair_tasks(store, rid, levels, w, t, limit=1_000) for w in (0, 1) for t in (0, 1)}
    pids = [t.pid for t in cells[0, 1][1][:3]] + [t.pid for t in cells[1, 0][1][:3]]
    paths = {pid: task_path(store, rid, pid, levels) for pid in pids}
    assert all(any(p.waker_class is not None for p in path) for path in paths.values())
    as_stored_before(store.path, rid)
    # without a fill, as before: not said
    with pytest.raises(PairsUncountedError, match="stored before each wakeup's waker was kept"):
        pair_tasks(store, rid, levels, 0, 1, limit=10)
    assert all(p.waker_class is None and p.waker_cpu is None for p in task_path(store, rid, pids[0], levels))

    # the path's first read rebuilds them (once), then every cell and path reads as the ingest's
    topo, asked = _counting(TOPO)
    assert task_path(store, rid, pids[0], levels, lambda: fill_placements(store, rid, topo)) == paths[pids[0]]
    assert asked == [1]
    fill = lambda: fill_placements(store, rid, never_asked)  # noqa: E731
    for pid in pids:
        assert task_path(store, rid, pid, levels, fill) == paths[pid]
    for (w, t), cell in cells.items():
        assert pair_tasks(store, rid, levels, w, t, limit=1_000, fill=fill) == cell


def test_a_damaged_chunk_is_named_kept_and_never_scanned_again(
    store: Store, g4: tuple[str, dict[int, pa.Table]]
) -> None:
    rid, ingested = g4
    as_stored_before(store.path, rid)
    seq = damage_chunk(store, rid)
    reason = fill_placements(store, rid, lambda: TOPO)
    assert reason is not None and reason.startswith(f"stored chunk {seq}: ")
    assert store.derived(rid, PLACEMENTS_UNREAD) == reason.encode()
    # nothing half-written: every table still as stored before
    assert all("waker_cpu" not in t.column_names for t in _tables(store, rid).values())
    assert fill_placements(store, rid, never_asked) == reason
    fill = lambda: fill_placements(store, rid, never_asked)  # noqa: E731
    with pytest.raises(PairsUncountedError, match=f"stored chunk {seq}: "):
        pair_tasks(store, rid, LevelMap(TOPO), 0, 1, limit=10, fill=fill)
    pid = int(ingested[min(ingested)].column("pid")[0].as_py())
    path = task_path(store, rid, pid, LevelMap(TOPO), fill)
    assert path and all(p.waker_class is None for p in path)


def test_one_scan_fills_the_tasks_counts_and_the_placements(
    store: Store, g4: tuple[str, dict[int, pa.Table]]
) -> None:
    """A recording older than both: the first task listing's scan rebuilds the placements too."""
    rid, ingested = g4
    as_stored_before(store.path, rid)
    conn = sqlite3.connect(store.path)
    with conn:
        conn.execute(
            "UPDATE tasks SET wakeups = NULL, cross_llc = NULL, pulled = NULL WHERE recording_id = ?", (rid,)
        )
    conn.close()
    topo, asked = _counting(TOPO)
    fill_tasks(store, rid, topo)
    assert asked == [1]
    assert not store.tasks_uncounted(rid)
    assert all(_tables(store, rid)[seq].equals(t) for seq, t in ingested.items())
    assert fill_placements(store, rid, never_asked) is None
