"""A saved simulated run keeps the simulator's reason for every wakeup and fork placement
(placemap.sim_reasons), given with each task's path: they add up to the run's own decision
counts, agree with where the events put the task, and a captured trace has none."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest

from placemap.replay.ingest import Ingestor
from placemap.replay.queries import task_path
from placemap.replay.topo import LevelMap
from placemap.schema.events import Kind
from placemap.schema.models.topology_schema import Topology
from placemap.sim.engine import SPAWN_WHY
from placemap.sim_reasons import NAMES, REASONS, ReasonWriter, annotate
from placemap.sim_record import run
from placemap.store import Store

SCENARIO: dict[str, Any] = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "hackbench", "groups": 2, "loops": 20},
    "hints": ["wake_affine"],
    "seed": 3,
    "duration_ms": 2000,
}


def _paths(store: Store, rid: str) -> dict[int, list[dict[str, Any]]]:
    rec = store.get_recording(rid)
    assert rec is not None and rec.topology_id is not None
    topo = store.get_topology(rec.topology_id)
    levels = LevelMap(Topology.model_validate(topo))
    out = {}
    for t in store.tasks(rid, None, 10_000):
        rows = [dict(p.__dict__) for p in task_path(store, rid, t.pid, levels)]
        annotate(store, rid, t.pid, rows)
        out[t.pid] = rows
    return out


@pytest.fixture
def saved(store: Store) -> tuple[dict[str, Any], dict[int, list[dict[str, Any]]]]:
    result = run(SCENARIO, store=store, wall_clock=False)
    return result, _paths(store, result["recording_id"])


def test_every_placement_has_its_reason_and_they_add_up_to_the_run_s_counts(
    saved: tuple[dict[str, Any], dict[int, list[dict[str, Any]]]],
) -> None:
    result, paths = saved
    got: dict[str, Counter[tuple[str, str]]] = {"wakeup": Counter(), "fork": Counter()}
    balanced: Counter[tuple[str, str, str]] = Counter()
    spawned = 0
    for rows in paths.values():
        for p in rows:
            r = p["reason"]
            if p["kind"] in ("wakeup", "wakeup_new"):
                assert r is not None, p
                why = (r["path"], r["pick"])
                if why == SPAWN_WHY:
                    spawned += 1
                else:
                    got["wakeup" if p["kind"] == "wakeup" else "fork"][why] += 1
            elif p["cause"] == "balance":
                assert r is not None, p
                kind, _, domain = r["path"].partition(" balance at ")
                balanced[(kind, domain, r["pick"])] += 1
            else:
                assert r is None, p  # a wakeup's or fork's move: its reason is on the wakeup
    assert spawned == 1  # hackbench's main process
    # every balancing move is one of the balances the run counted, and each has its reason
    counted = {(d["kind"], d["domain"], d["outcome"]) for d in result["decisions"]["balance"]}
    assert set(balanced) <= counted
    assert sum(balanced.values()) == result["counters"]["migrations"]["by_cause"]["balance"] > 0
    for kind in ("wakeup", "fork"):
        want = Counter({(d["path"], d["pick"]): d["count"] for d in result["decisions"][kind]})
        assert got[kind] == want and sum(want.values()) > 0
    assert sum(got["fork"].values()) == 2 * 40  # 2 groups of 20 senders and 20 receivers


def test_a_wakeup_s_reason_says_where_it_landed(
    saved: tuple[dict[str, Any], dict[int, list[dict[str, Any]]]],
) -> None:
    """ "prev idle -> target idle": wake_affine_idle() returned the idle prev, and
    select_idle_sibling() kept it: the task wakes on the CPU it last ran on, no move."""
    _, paths = saved
    kept = moved = 0
    for rows in paths.values():
        for p in rows:
            r = p["reason"]
            if p["kind"] != "wakeup" or r is None:
                continue
            if r["path"] == "wake_affine_idle: prev idle" and r["pick"] == "target idle":
                assert p["level"] is None, p
                kept += 1
            if r["pick"].startswith("idle core found"):
                moved += p["level"] is not None
    assert kept > 0 and moved > 0


def test_a_captured_trace_has_no_reasons_and_unreadable_ones_are_left_out(
    store: Store, g4_table: pa.Table, caplog: pytest.LogCaptureFixture
) -> None:
    rid = store.create_recording("g4")
    ing = Ingestor(store, rid, None)
    for batch in g4_table.to_batches(max_chunksize=10_000):
        ing.add(batch)
    ing.finish(None)
    rows = [{"ts_ns": 1, "kind": "wakeup"}, {"ts_ns": 2, "kind": "wakeup_new"}]
    annotate(store, rid, 13093, rows)
    assert [r["reason"] for r in rows] == [None, None]
    # a simulated run whose stored reasons are garbage: its path is still given, without them
    result = run(SCENARIO, store=store, wall_clock=False)
    sim = result["recording_id"]
    assert store.derived(sim, NAMES) is not None
    assert store.put_derived(sim, REASONS, b"not an arrow stream")
    paths = _paths(store, sim)
    assert paths and all(p["reason"] is None for rows in paths.values() for p in rows)
    assert any("placement reasons are left out" in m for m in caplog.messages)
    assert caplog.records[-1].levelno == logging.WARNING


def test_two_placements_of_a_task_at_one_instant_keep_their_own_reasons_in_order(
    store: Store, g4_table: pa.Table
) -> None:
    rid = store.create_recording("x")
    ing = Ingestor(store, rid, None)
    ing.add(g4_table.to_batches(max_chunksize=1000)[0])
    ing.finish(None)
    w = ReasonWriter()
    w.add(7, 100, int(Kind.WAKEUP), ("first", "a"))
    w.add(8, 100, int(Kind.WAKEUP), ("other task", "b"))
    w.add(7, 100, int(Kind.WAKEUP), ("second", "c"))
    w.save(store, rid)
    rows = [
        {"ts_ns": 100, "kind": "wakeup"},
        {"ts_ns": 100, "kind": "wakeup"},
        {"ts_ns": 100, "kind": "migrate"},
    ]
    annotate(store, rid, 7, rows)
    assert [r["reason"] for r in rows] == [
        {"path": "first", "pick": "a"},
        {"path": "second", "pick": "c"},
        None,
    ]
