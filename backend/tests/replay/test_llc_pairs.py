"""Wakeups by LLC pair (Metrics.wakeups.llc_pairs: the waker's LLC against the LLC the task woke
in), checked against the plain rule of test_by_waker.reference_classes on real kernels' traces:
the Zen3 NPS4 Stream excerpts (tip and the short-task patch, LKML Sep 2022) on the preset the
poster's machine is, and the real g4 hackbench laid on two LLCs, across chunk boundaries; and a
recording stored before they were counted, given them from its stored chunks once."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pytest
from collector import collector_binary
from ftrace_lines import TRACES
from stored import as_stored_before
from test_by_waker import _by_waker, _import, _rows, _three_llcs, _topology, built_rows, reference_classes
from test_classify import two_cpus
from test_helpers import damage_chunk, ingest, never_asked

from placemap.api.models import Metrics
from placemap.replay import kernel as kn
from placemap.replay.delays import METRICS
from placemap.replay.llc_pairs import PairCounts
from placemap.replay.pair_tasks import PairsUncountedError, pair_tasks
from placemap.replay.topo import LevelMap
from placemap.replay.waker_refill import fill_by_waker
from placemap.schema.events import EVENT_SCHEMA
from placemap.schema.models.topology_schema import Topology
from placemap.store import Store

CHOSEN = ("shared_llc", "to_waker_llc", "to_prev_llc", "elsewhere")


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return collector_binary(tmp_path_factory.mktemp("bin"))


def _dense(doc: dict[str, Any]) -> list[list[int]]:
    """Metrics.wakeups.llc_pairs as an LLCs x LLCs matrix (rows the waker's LLC)."""
    out = np.zeros((doc["llcs"], doc["llcs"]), dtype=np.int64)
    for w, t, c in doc["pairs"]:
        assert c > 0, "only pairs with wakeups are listed"
        out[w, t] += c
    dense: list[list[int]] = out.tolist()
    return dense


def _pairs(store: Store, rid: str) -> list[list[int]]:
    doc = json.loads(store.derived(rid, "metrics.json") or b"{}")["wakeups"]["llc_pairs"]
    keys = [(w, t) for w, t, _ in doc["pairs"]]
    assert keys == sorted(set(keys)), "each pair once, by waker's LLC, then wakee's"
    return _dense(doc)


def _expected(rows: list[dict[str, Any]], topology: Topology | None, n: int) -> list[list[int]]:
    """Each wakeup whose waker was seen and whose wakeup was a choice, at (waker's LLC, LLC woken in)."""
    llc = {c.cpu: c.llc for c in topology.cpus} if topology is not None else {}
    out = np.zeros((n, n), dtype=np.int64)
    for r, cls in reference_classes(rows, topology):
        if cls in CHOSEN:
            w, t = (0, 0) if topology is None else (llc[r["waker_cpu"]], llc[r["target_cpu"]])
            out[w, t] += 1
    listed: list[list[int]] = out.tolist()
    return listed


def test_tip_wakes_none_in_its_waker_s_llc_across_llcs(store: Store, collector: Path) -> None:
    """Tip (the baseline excerpt): two wakeups from CPU 182 within the main thread's LLC 6 (the
    diagonal), and eight from other LLCs, each kept on prev's LLC: off the diagonal, five of them
    the main thread's, into LLC 6 from CPUs 45, 8, 130, 160 and 255 (LLCs 5, 1, 0, 4, 15), and three
    workers' (3737 from CPU 50 onto 45, 3745 from 50 onto 113, 3747 from 194 onto 255)."""
    topo = _topology("zen3-2s-nps4")
    rid = _import(store, collector, TRACES / "zen3-2s-nps4-stream-excerpt-baseline.ftrace.txt", topo)
    got = np.array(_pairs(store, rid))
    assert got.shape == (16, 16)
    by_waker = _by_waker(store, rid)
    assert got.sum() == by_waker["shared_llc"] + by_waker["cross_llc"] == 10
    assert np.trace(got) == 2 and got[6, 6] == 2
    assert [int(i) for i in np.flatnonzero(got[:, 6])] == [0, 1, 4, 5, 6, 15]
    assert got[:, 6].sum() - got[6, 6] == 5, "the main thread's five wakeups from other LLCs into LLC 6"
    assert (got[6, 5], got[6, 14], got[8, 15]) == (1, 1, 1), "the workers' (LLCs of 45, 113, 255)"
    assert got.tolist() == _expected(_rows(store, rid), topo, 16)


def test_the_short_task_patch_s_pulls_are_on_the_diagonal(store: Store, collector: Path) -> None:
    """With the short-task patch (the shortrun excerpt, the poster's `*LLC: a -> b` marks): the main
    thread pulled from LLC 9 into its wakers' LLCs 3, 1 and 14 (the diagonal: 3 of 6), and three
    wakeups kept on prev's LLC, two of them from CPU 60 (LLC 7) into LLC 14."""
    topo = _topology("zen3-2s-nps4")
    rid = _import(store, collector, TRACES / "zen3-2s-nps4-stream-excerpt-shortrun.ftrace.txt", topo)
    got = np.array(_pairs(store, rid))
    assert (got[3, 3], got[1, 1], got[14, 14]) == (1, 1, 1) and np.trace(got) == 3
    assert got[7, 14] == 2
    assert got.sum() == 6
    assert got.tolist() == _expected(_rows(store, rid), topo, 16)


@pytest.mark.parametrize("chunk_rows", [65_536, 4_096])
def test_real_g4_on_two_llcs_matches_the_rule(store: Store, g4_table: pa.Table, chunk_rows: int) -> None:
    """The real g4 hackbench with CPU 0 and 1 in two LLCs: both ways across, and both diagonals, as
    the rule counts them, whatever the chunks; the matrix sums to by_waker's chosen wakeups."""
    topo = two_cpus("node")
    rid = ingest(store, g4_table, topology=topo, chunk_rows=chunk_rows)
    got = _pairs(store, rid)
    assert got == _expected(g4_table.to_pylist(), topo, 2)
    assert all(c > 0 for row in got for c in row), "woken in both LLCs from both"
    by_waker = _by_waker(store, rid)
    assert sum(map(sum, got)) == by_waker["shared_llc"] + by_waker["cross_llc"]
    # the diagonal: those that woke in the waker's LLC; on two LLCs of one CPU each, the waker's CPU
    assert got[0][0] + got[1][1] == by_waker["on_waker_cpu"]


def test_a_trace_alone_has_one_llc(store: Store, g4_table: pa.Table) -> None:
    rid = ingest(store, g4_table)
    by_waker = _by_waker(store, rid)
    assert _pairs(store, rid) == [[by_waker["shared_llc"]]]


def test_built_rows_count_only_the_wakeups_that_were_a_choice(store: Store) -> None:
    """test_by_waker's built rows on three LLCs of 4 CPUs: pulled 5 -> 6 (LLC 1 -> 1), kept 5 -> 1
    (1 -> 0), in neither 5 -> 9 (1 -> 2), on the waker's CPU 3 -> 3 (0 -> 0), pid 15's second
    wakeup 7 -> 2 (1 -> 0) and pid 18's 1 -> 1 (0 -> 0); not the wakeups woken while they ran, nor
    those whose waker is unknown (no waking, a loss between, CPU 40 outside the machine)."""
    topo = _three_llcs()
    rid = ingest(store, pa.Table.from_pylist(built_rows(), schema=EVENT_SCHEMA), topology=topo)
    doc = json.loads(store.derived(rid, METRICS) or b"{}")["wakeups"]["llc_pairs"]
    assert doc == {"llcs": 3, "pairs": [[0, 0, 2], [1, 0, 2], [1, 1, 1], [1, 2, 1]]}
    assert _pairs(store, rid) == _expected(built_rows(), topo, 3)


# --- a recording stored before the pairs were counted (waker_refill.fill_by_waker) ---------------


def _without_pairs(store: Store, rid: str) -> tuple[dict[str, Any], list[list[int]]]:
    """Drop wakeups.llc_pairs from the stored metrics (by_waker kept), as the versions between the two
    stored them; returns the document so stored and the pairs the ingest had counted."""
    body = json.loads(store.derived(rid, METRICS) or b"{}")
    counted: list[list[int]] = _dense(body["wakeups"].pop("llc_pairs"))
    assert store.put_derived(rid, METRICS, json.dumps(body).encode())
    return body, counted


def test_an_older_recording_gets_the_pairs_the_ingest_counts_once(store: Store, g4_table: pa.Table) -> None:
    topo = two_cpus("node")
    rid = ingest(store, g4_table, topology=topo, chunk_rows=3_000)
    older, counted = _without_pairs(store, rid)
    assert all(c > 0 for row in counted for c in row)
    asked: list[bool] = []

    def topology() -> Topology:
        asked.append(True)
        return topo

    filled = fill_by_waker(store, rid, older, topology)
    assert _dense(filled["wakeups"]["llc_pairs"]) == counted
    assert filled["wakeups"]["by_waker"] == older["wakeups"]["by_waker"], "by_waker as stored"
    assert {**filled, "wakeups": older["wakeups"]} == older, "nothing else"
    stored = json.loads(store.derived(rid, METRICS) or b"{}")
    assert _dense(stored["wakeups"]["llc_pairs"]) == counted
    # the next read neither scans nor asks the topology; a document read before the refill gets
    # the stored pairs too
    assert fill_by_waker(store, rid, stored, topology) is stored
    assert _dense(fill_by_waker(store, rid, older, topology)["wakeups"]["llc_pairs"]) == counted
    assert asked == [True]
    # through the API's model
    pairs = Metrics.model_validate(stored).wakeups.llc_pairs
    assert pairs is not None and _dense(pairs.model_dump()) == counted


def test_a_damaged_chunk_leaves_the_pairs_null_once(store: Store, g4_table: pa.Table) -> None:
    rid = ingest(store, g4_table, topology=two_cpus("node"), chunk_rows=3_000)
    older, _ = _without_pairs(store, rid)
    damage_chunk(store, rid)
    got = fill_by_waker(store, rid, older, lambda: two_cpus("node"))
    assert got["wakeups"]["llc_pairs"] is None
    assert got["wakeups"]["by_waker"] == older["wakeups"]["by_waker"], "the stored by_waker kept"
    stored = json.loads(store.derived(rid, METRICS) or b"{}")
    assert "llc_pairs" in stored["wakeups"] and stored["wakeups"]["llc_pairs"] is None

    assert fill_by_waker(store, rid, stored, never_asked) is stored


def test_a_document_read_before_by_waker_was_stored_gets_it_with_the_pairs(
    store: Store, g4_table: pa.Table
) -> None:
    """A request holding the document from before by_waker was refilled (both fields missing), while
    the stored one has by_waker and lacks only the pairs: it gets the stored by_waker and the pairs."""
    rid = ingest(store, g4_table, topology=two_cpus("node"), chunk_rows=3_000)
    _, counted = _without_pairs(store, rid)
    stored = json.loads(store.derived(rid, METRICS) or b"{}")
    stale = {**stored, "wakeups": {k: v for k, v in stored["wakeups"].items() if k != "by_waker"}}
    got = fill_by_waker(store, rid, stale, lambda: two_cpus("node"))
    assert got["wakeups"]["by_waker"] == stored["wakeups"]["by_waker"]
    assert _dense(got["wakeups"]["llc_pairs"]) == counted


def i32(xs: list[int]) -> npt.NDArray[np.int32]:
    return np.array(xs, dtype=np.int32)


def test_pairs_added_chunk_by_chunk_are_listed_in_order_and_summed() -> None:
    """A later chunk's pair that sorts first is listed first; a pair seen in two chunks once."""
    pairs = PairCounts(LevelMap(_three_llcs()))
    cross, shared = 1 << kn.WK_CROSS_LLC, 1 << kn.WK_SHARED_LLC
    pairs.add(i32([5, 9]), i32([1, 10]), np.array([cross, shared], dtype=np.int64))
    pairs.add(i32([0, 4]), i32([2, 0]), np.array([shared, cross], dtype=np.int64))
    assert pairs.document() == {"llcs": 3, "pairs": [[0, 0, 1], [1, 0, 2], [2, 2, 1]]}


# --- the tasks behind a cell (pair_tasks) -----------------------------------------------------------


def test_the_short_task_patch_s_cell_7_to_14_is_the_two_threads_cpu_60_woke(
    store: Store, collector: Path
) -> None:
    """The excerpt's lines marked "*LLC: 14" by the poster: stream-4399 on CPU 60 (LLC 7) wakes 4406
    onto 119 and 4392 onto 240, both in LLC 14; read from the file, not from our output."""
    path = TRACES / "zen3-2s-nps4-stream-excerpt-shortrun.ftrace.txt"
    marked = [
        int(m.group(1))
        for line in path.read_text().splitlines()
        if (m := re.search(r"\[060\] .*sched_waking: comm=stream pid=(\d+) .*\*LLC: 14", line))
    ]
    assert sorted(marked) == [4392, 4406]
    topo = _topology("zen3-2s-nps4")
    rid = _import(store, collector, path, topo)
    n, got = pair_tasks(store, rid, LevelMap(topo), 7, 14, limit=10)
    assert n == 2 and [(t.pid, t.comm, t.wakeups) for t in got] == [(p, "stream", 1) for p in sorted(marked)]
    # cut at the limit, the cell's count whole
    assert pair_tasks(store, rid, LevelMap(topo), 7, 14, limit=1) == (2, got[:1])
    # the main thread's three pulls, one per cell on the diagonal; none from LLC 14 into 7
    assert [t.pid for t in pair_tasks(store, rid, LevelMap(topo), 3, 3, limit=10)[1]] == [4392]
    assert pair_tasks(store, rid, LevelMap(topo), 14, 7, limit=10) == (0, [])


def test_each_cell_s_tasks_add_up_to_the_cell(store: Store, g4_table: pa.Table) -> None:
    topo = two_cpus("node")
    rid = ingest(store, g4_table, topology=topo, chunk_rows=3_000)
    cells = _pairs(store, rid)
    for w in (0, 1):
        for t in (0, 1):
            n, got = pair_tasks(store, rid, LevelMap(topo), w, t, limit=100_000)
            assert n == sum(x.wakeups for x in got) == cells[w][t] > 0, (w, t)
            assert [x.wakeups for x in got] == sorted((x.wakeups for x in got), reverse=True)
            assert len({x.pid for x in got}) == len(got)


def test_placements_stored_before_wakers_were_kept_cannot_say(store: Store, g4_table: pa.Table) -> None:
    rid = ingest(store, g4_table, topology=two_cpus("node"))
    as_stored_before(store.path, rid, ["waker_class"])
    with pytest.raises(PairsUncountedError, match="stored before each wakeup's waker was kept"):
        pair_tasks(store, rid, LevelMap(two_cpus("node")), 0, 1, limit=10)


def test_a_damaged_placements_blob_is_named(store: Store, g4_table: pa.Table) -> None:
    rid = ingest(store, g4_table, topology=two_cpus("node"), chunk_rows=3_000)
    seq = store.list_chunks(rid)[4].seq
    conn = sqlite3.connect(store.path)
    with conn:
        sql = "UPDATE chunks SET placements = ? WHERE recording_id = ? AND seq = ?"
        conn.execute(sql, (b"\x00not zstd" * 20, rid, seq))
    conn.close()
    with pytest.raises(PairsUncountedError, match=f"the placements of stored chunk {seq} cannot be read"):
        pair_tasks(store, rid, LevelMap(two_cpus("node")), 0, 1, limit=10)
