"""Wakeups by where their waker ran (Metrics.wakeups.by_waker): sched_waking's CPU is the one
select_task_rq_fair() runs on, its target_cpu the wakee's prev CPU, and sched_wakeup's target_cpu
where the wakee woke. Checked on real kernels' traces: a Zen3 in NPS4 mode running Stream on tip and
with the short-task patch (LKML, Sep 2022; the poster marked each CPU's LLC by hand), the same
thread's wake_affine_idle example, and the real g4 hackbench laid on topologies built here against
the plain-Python oracle; on rows built here for the cases real traces lack; and on a simulated run
against the simulator's own reason for every wakeup."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from collector import collector_binary
from ftrace_lines import TRACES
from reference import RefState
from stored import as_stored_before
from test_classify import two_cpus
from test_helpers import damage_chunk, ingest, never_asked

from placemap.importer import import_file
from placemap.replay.delays import METRICS, StoredChunkError
from placemap.replay.queries import task_path, window_batches
from placemap.replay.topo import LevelMap
from placemap.replay.waker_refill import TASKS_UNREAD, by_waker_from_store, fill_by_waker, fill_tasks
from placemap.schema.events import EVENT_SCHEMA, Kind
from placemap.schema.models.topology_schema import Topology
from placemap.sim.policy.wakeup import (
    R_HINT_AFFINE,
    R_WA_SHORT,
    R_WA_SYNC,
    R_WA_THIS_IDLE,
    R_WA_WEIGHT_THIS,
    R_WIDE_PARENT,
)
from placemap.sim.topology import preset
from placemap.sim_reasons import task_reasons
from placemap.sim_record import run
from placemap.store import Store

LKML = TRACES / "external" / "lkml-snippets"
CLASSES = ("shared_llc", "to_waker_llc", "to_prev_llc", "elsewhere", "still_running", "unknown")


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return collector_binary(tmp_path_factory.mktemp("bin"))


def _topology(name: str) -> Topology:
    return Topology.model_validate(preset(name).to_dict())


def _by_waker(store: Store, rid: str) -> dict[str, int]:
    blob = store.derived(rid, "metrics.json")
    assert blob is not None
    wakeups = json.loads(blob)["wakeups"]
    got: dict[str, int] = wakeups["by_waker"]
    # every wakeup is counted once: by its LLCs, or as still running, or as unknown
    assert got["shared_llc"] + got["cross_llc"] + got["still_running"] + got["unknown"] == wakeups["total"]
    assert got["to_waker_llc"] + got["to_prev_llc"] + got["elsewhere"] == got["cross_llc"]
    return got


def _import(store: Store, collector: Path, path: Path, topology: Topology | None) -> str:
    rid = store.create_recording(path.name)
    import_file(store, collector, rid, path, topology=topology)
    rec = store.get_recording(rid)
    assert rec is not None and rec.status == "ready", rec
    return rid


def _llc(topology: Topology | None) -> dict[int, int]:
    return {} if topology is None else {c.cpu: c.llc for c in topology.cpus if c.llc is not None}


def _class(
    seen: tuple[int, int, bool] | None, woke: int, topology: Topology | None, llc: dict[int, int]
) -> str:
    """One wakeup's class: `seen` is its sched_waking's (waker's CPU, prev CPU, whether it still ran)."""
    if seen is None:
        return "unknown"
    w, prev, still = seen
    if still and woke == prev:
        return "still_running"
    if topology is not None and not {w, prev, woke} <= llc.keys():
        return "unknown"

    def share(a: int, b: int) -> bool:
        return topology is None or a == b or llc[a] == llc[b]

    if share(w, prev):
        return "shared_llc"
    if share(w, woke):
        return "to_waker_llc"
    return "to_prev_llc" if share(prev, woke) else "elsewhere"


def reference_classes(
    rows: list[dict[str, Any]], topology: Topology | None
) -> list[tuple[dict[str, Any], str]]:
    """Each sched_wakeup row with its class, event by event (RefState for whether the wakee ran):
    the rule of Metrics.wakeups.by_waker stated plainly."""
    llc = _llc(topology)
    ref = RefState()
    waking: dict[int, tuple[int, int, bool]] = {}  # pid -> (waker's CPU, prev, still on its CPU or queued)
    preempted: dict[int, bool] = {}  # pid -> whether the last switch that took it off was a preemption
    out = []

    for r in rows:
        k, pid = r["kind"], r["pid"]
        if k == Kind.SWITCH:
            if pid:
                ps = r["prev_state"] or ""
                preempted[pid] = ps.startswith("R") or ps == "0"
            preempted[r["next_pid"]] = False
        if k == Kind.LOST:
            waking.clear()  # a wakeup after a loss may have lost its waking
            preempted.clear()  # and a task preempted before it may have run and slept since
        elif k == Kind.WAKING and pid:
            state = ref.state.get(pid)
            queued = state == "running" or (state == "runnable" and preempted.get(pid, False))
            waking[pid] = (r["cpu"], r["target_cpu"], queued)
        elif k == Kind.FORK:
            waking.pop(r["child_pid"], None)
        elif k == Kind.WAKEUP and pid:
            woke, seen = r["target_cpu"], waking.pop(pid, None)
            out.append(
                ({**r, "waker_cpu": None if seen is None else seen[0]}, _class(seen, woke, topology, llc))
            )
        ref.apply(r)
    return out


def _expected(rows: list[dict[str, Any]], topology: Topology | None) -> dict[str, int]:
    classes = reference_classes(rows, topology)
    counts = {c: sum(1 for _, k in classes if k == c) for c in CLASSES}
    cross = counts["to_waker_llc"] + counts["to_prev_llc"] + counts["elsewhere"]
    on_waker = sum(
        1 for r, k in classes if k not in ("still_running", "unknown") and r["waker_cpu"] == r["target_cpu"]
    )
    return {**counts, "cross_llc": cross, "on_waker_cpu": on_waker}


def _rows(store: Store, rid: str) -> list[dict[str, Any]]:
    table = pa.Table.from_batches(list(window_batches(store, rid, None, None)), schema=EVENT_SCHEMA)
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def test_zen3_nps4_stream_tip_keeps_every_cross_llc_wakeup_on_prev_s_llc(
    store: Store, collector: Path
) -> None:
    """Tip (the baseline excerpt): stream's main thread (prev CPU 50, LLC 6) is woken seven times;
    twice from CPU 182, which shares LLC 6 (cores 48-55, CPU 182 being core 54's second thread),
    and five times from CPUs of other LLCs (45, 8, 130, 160, 255), waking each time on CPU 50; three
    workers (prev 45, 113 and 255) are woken from CPUs 50, 50 and 194, other LLCs, and wake on their
    prev. So 10 wakeups: 2 shared, 8 across LLCs, all 8 kept on prev's LLC, none on the waker's CPU.
    The five wakings at the end have no sched_wakeup in the excerpt and count nowhere."""
    topo = _topology("zen3-2s-nps4")
    rid = _import(store, collector, TRACES / "zen3-2s-nps4-stream-excerpt-baseline.ftrace.txt", topo)
    got = _by_waker(store, rid)
    assert got == {
        "shared_llc": 2,
        "cross_llc": 8,
        "to_waker_llc": 0,
        "to_prev_llc": 8,
        "elsewhere": 0,
        "on_waker_cpu": 0,
        "still_running": 0,
        "unknown": 0,
    }
    assert got == _expected(_rows(store, rid), topo)


def test_zen3_nps4_stream_short_task_patch_pulls_the_main_thread_to_its_wakers_llcs(
    store: Store, collector: Path
) -> None:
    """With the short-task patch (the shortrun excerpt; the poster's own `*LLC: a -> b` marks):
    stream's main thread is woken from CPU 31 (LLC 3) while its prev is CPU 206 (LLC 9) and wakes on
    152 (LLC 3), then from CPU 15 (LLC 1) onto 136 (LLC 1), then from 119 (LLC 14) onto 240 (LLC 14):
    three wakeups pulled to the waker's LLC. Three others stay on prev (a worker from 206 onto
    its prev 111, and at the end two wakeups from CPU 60, LLC 7, onto 119 and 240, LLC 14, where the
    poster marks the two threads sharing one LLC). 6 wakeups, all across LLCs, 3 pulled, 3 kept."""
    topo = _topology("zen3-2s-nps4")
    rid = _import(store, collector, TRACES / "zen3-2s-nps4-stream-excerpt-shortrun.ftrace.txt", topo)
    got = _by_waker(store, rid)
    assert got["cross_llc"] == 6 and got["shared_llc"] == 0
    assert (got["to_waker_llc"], got["to_prev_llc"], got["elsewhere"]) == (3, 3, 0)
    assert got["on_waker_cpu"] == 0
    assert got == _expected(_rows(store, rid), topo)


def test_the_kernel_s_own_wake_affine_idle_example_is_a_pull_to_the_waker_s_llc(
    store: Store, collector: Path
) -> None:
    """The thread's wake_affine_idle example on a 2-socket Zen3 (NPS1): the waker on CPU 29 (LLC 3)
    wakes a task whose prev is CPU 82 (socket 1, LLC 10); the kernel's own select_task_rq_fair line
    says "Select this_cpu", and the task wakes on CPU 30, LLC 3: pulled, not on the waker's CPU."""
    topo = _topology("zen3-2s-nps1")
    rid = _import(
        store, collector, LKML / "zen3-2s-256cpu_wake_affine_idle_example_kprateek-2022-09-26.txt", topo
    )
    got = _by_waker(store, rid)
    assert (got["cross_llc"], got["to_waker_llc"], got["on_waker_cpu"], got["unknown"]) == (1, 1, 0, 0)


@pytest.mark.parametrize("relation", ["llc", "node"])
def test_real_g4_matches_the_oracle(store: Store, g4_table: pa.Table, relation: str) -> None:
    """The real g4 hackbench (2 CPUs) with its CPUs in one LLC or in two: across two LLCs, every
    wakeup whose waker ran on the other CPU is a cross-LLC one, and the oracle's count of each
    class is the ingest's."""
    topo = two_cpus(relation)
    rid = ingest(store, g4_table, topology=topo, chunk_rows=4096)  # classes carried across chunks
    got = _by_waker(store, rid)
    assert got == _expected(g4_table.to_pylist(), topo)
    if relation == "llc":
        assert got["cross_llc"] == 0 and got["shared_llc"] > 0
    else:
        # both ways show in a real run: woken onto the waker's CPU and kept on prev
        assert got["to_waker_llc"] > 0 and got["to_prev_llc"] > 0 and got["elsewhere"] == 0
    # hackbench's sync wakeups: some land on the waker's own CPU; some tasks are woken while they
    # still run (the wait loop's race), which the trace shows before their switch-out
    assert got["on_waker_cpu"] > 0
    assert got["still_running"] > 0


def test_g4_without_a_topology_counts_every_wakeup_in_one_llc(store: Store, g4_table: pa.Table) -> None:
    """A trace alone (inferred topology: one LLC) has no cross-LLC wakeup to classify."""
    rid = ingest(store, g4_table)
    got = _by_waker(store, rid)
    assert got["cross_llc"] == 0
    assert got == _expected(g4_table.to_pylist(), None)


def _row(ts: int, cpu: int, kind: Kind, pid: int, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(EVENT_SCHEMA.names)
    row.update(ts_ns=ts, cpu=cpu, kind=int(kind), cur_pid=0, pid=pid, comm=f"t{pid}", **fields)
    return row


def _three_llcs() -> Topology:
    """12 CPUs, one core each, in three LLCs of 4 (0-3, 4-7, 8-11) on one node."""
    return Topology.model_validate(
        {
            "machine": "three-llcs",
            "source": "manual",
            "cpus": [
                {
                    "cpu": c,
                    "online": True,
                    "core": c,
                    "llc": c // 4,
                    "numa_node": 0,
                    "package": 0,
                    "smt_siblings": [c],
                }
                for c in range(12)
            ],
            "llcs": [{"id": i, "cpus": list(range(4 * i, 4 * i + 4)), "numa_nodes": [0]} for i in range(3)],
            "numa_nodes": [{"id": 0, "cpus": list(range(12))}],
            "node_distances": [[10]],
        }
    )


def built_rows() -> list[dict[str, Any]]:
    """One wakeup of each kind on _three_llcs(), as test_built_rows_name_each_class tells them."""
    return [
        _row(1, 5, Kind.WAKING, 11, target_cpu=0),
        _row(2, 6, Kind.WAKEUP, 11, target_cpu=6),
        _row(3, 5, Kind.WAKING, 12, target_cpu=0),
        _row(4, 1, Kind.WAKEUP, 12, target_cpu=1),
        _row(5, 5, Kind.WAKING, 13, target_cpu=0),
        _row(6, 9, Kind.WAKEUP, 13, target_cpu=9),
        _row(7, 3, Kind.WAKING, 14, target_cpu=2),
        _row(8, 3, Kind.WAKEUP, 14, target_cpu=3),
        _row(9, 2, Kind.SWITCH, 0, prev_state="R", next_pid=15, next_comm="t15", next_prio=120),
        _row(10, 7, Kind.WAKING, 15, target_cpu=2),
        _row(11, 2, Kind.WAKEUP, 15, target_cpu=2),
        _row(12, 2, Kind.SWITCH, 15, prev_state="S", next_pid=0, next_comm="swapper/2", next_prio=120),
        _row(13, 7, Kind.WAKING, 15, target_cpu=2),
        _row(14, 2, Kind.WAKEUP, 15, target_cpu=2),
        _row(15, 1, Kind.WAKEUP, 16, target_cpu=1),
        _row(15, 8, Kind.SWITCH, 0, prev_state="R", next_pid=18, next_comm="t18", next_prio=120),
        _row(15, 1, Kind.WAKING, 18, target_cpu=8),
        _row(15, 1, Kind.WAKEUP, 18, target_cpu=1),
        _row(15, 8, Kind.SWITCH, 18, prev_state="S", next_pid=0, next_comm="swapper/8", next_prio=120),
        _row(16, 40, Kind.WAKING, 17, target_cpu=0),
        _row(17, 0, Kind.WAKEUP, 17, target_cpu=0),
        _row(18, 4, Kind.SWITCH, 0, prev_state="R", next_pid=19, next_comm="t19", next_prio=120),
        _row(19, 9, Kind.WAKING, 19, target_cpu=4),
        _row(20, 4, Kind.SWITCH, 19, prev_state="S", next_pid=0, next_comm="swapper/4", next_prio=120),
        _row(21, 4, Kind.WAKEUP, 19, target_cpu=4),
        _row(22, 10, Kind.SWITCH, 0, prev_state="R", next_pid=20, next_comm="t20", next_prio=120),
        _row(23, 10, Kind.SWITCH, 20, prev_state="R+", next_pid=30, next_comm="t30", next_prio=120),
        _row(24, 1, Kind.WAKING, 20, target_cpu=10),
        _row(25, 10, Kind.WAKEUP, 20, target_cpu=10),
        _row(26, 5, Kind.WAKING, 22, target_cpu=0),
        {**_row(27, 3, Kind.LOST, 0), "comm": "", "lost_events": 5},
        _row(28, 1, Kind.WAKEUP, 22, target_cpu=1),
    ]


def test_built_rows_name_each_class(store: Store) -> None:
    """One wakeup of each kind, on three LLCs of 4 CPUs:
    - pid 11, last on CPU 0, woken from CPU 5 onto CPU 6: pulled to the waker's LLC;
    - pid 12, last on CPU 0, woken from CPU 5 onto CPU 1: kept on prev's LLC;
    - pid 13, last on CPU 0, woken from CPU 5 onto CPU 9: in neither;
    - pid 14, last on CPU 2, woken from CPU 3 onto CPU 3: one LLC, on the waker's CPU;
    - pid 15, switched in on CPU 2 and woken from CPU 7 before it switched out, waking on CPU 2:
      still running, no choice shows; woken again after its switch-out, the same way: kept;
    - pid 18, switched in on CPU 8 and woken from CPU 1 before it switched out, waking on CPU 1:
      a task still on its CPU but off its runqueue (p->on_cpu) is placed like any other, so the
      wakeup counts by its LLCs: pulled to the waker's LLC, onto the waker's own CPU;
    - pid 16, a sched_wakeup with no sched_waking before it: unknown;
    - pid 17, woken from CPU 40, which the topology does not describe: unknown;
    - pid 19, woken from CPU 9 while it ran on CPU 4, switched out asleep, then woken on CPU 4:
      the wakeup the kernel queues on a task still leaving its CPU (the wakelist): no choice shows;
    - pid 20, preempted off CPU 10 (prev_state R+), then woken from CPU 1 onto CPU 10: still on its
      runqueue (ttwu_runnable()), no choice;
    - pid 22, woken from CPU 5, then a ring-buffer loss, then its sched_wakeup: the loss may hold a
      later waking, so the waker is unknown."""
    rows = built_rows()
    table = pa.Table.from_pylist(rows, schema=EVENT_SCHEMA)
    topo = _three_llcs()
    got = _by_waker(store, ingest(store, table, topology=topo))
    assert got == {
        "shared_llc": 1,
        "cross_llc": 5,
        "to_waker_llc": 2,
        "to_prev_llc": 2,
        "elsewhere": 1,
        "on_waker_cpu": 2,
        "still_running": 3,
        "unknown": 3,
    }
    assert got == _expected(rows, topo)


# the wake_affine steps (and the hint) that send a wakeup to the waker's CPU: select_idle_sibling()
# then searches the waker's LLC, so a cross-LLC wakeup they decide wakes there
TO_WAKER = {R_WA_SYNC, R_WA_SHORT, R_WA_WEIGHT_THIS, R_WA_THIS_IDLE, R_HINT_AFFINE}


@pytest.mark.parametrize("hint", ["wake_affine", "wake_hold", "wake_wide"])
def test_a_simulated_run_s_classes_are_the_simulator_s_own_choices(store: Store, hint: str) -> None:
    """A simulated hackbench on zen3-2s-nps1 (16 LLCs), saved: each cross-LLC wakeup the ingest
    counts as pulled is one the simulator's wake_affine step (or the wake_affine hint) sent to the
    waker's CPU, and each it counts as kept on prev's LLC is one it left on prev, read from the
    reason the simulator stored for that very wakeup; and the simulator's own counts agree. The
    model never wakes a running task."""
    scenario = {"topology": "zen3-2s-nps1", "workload": {"kind": "hackbench", "groups": 2, "loops": 20},
                "hints": [hint], "seed": 2, "duration_ms": 2000}  # fmt: skip
    result = run(scenario, store=store, wall_clock=False)
    rid = result["recording_id"]
    got = _by_waker(store, rid)
    # the simulator's own count, made as it decides, is the one the ingest makes of its events
    assert result["counters"]["wakeups"]["by_waker"] == got
    topo = _topology("zen3-2s-nps1")
    classes = reference_classes(_rows(store, rid), topo)
    assert got == _expected(_rows(store, rid), topo)
    assert got["still_running"] == got["unknown"] == 0
    assert got["to_waker_llc"] > 0 and got["to_prev_llc"] > 0
    reasons: dict[int, Any] = {}
    checked = 0
    for r, cls in classes:
        if cls not in ("to_waker_llc", "to_prev_llc", "elsewhere"):
            continue
        pid = r["pid"]
        if pid not in reasons:
            reasons[pid] = task_reasons(store, rid, pid)
        via, pick = reasons[pid][(r["ts_ns"], int(Kind.WAKEUP))].popleft()
        chosen = "to_waker_llc" if via in TO_WAKER else "to_prev_llc"
        if pick == R_WIDE_PARENT:
            # the wake_wide hint's search beyond the chosen LLC, none of whose CPUs was idle
            assert cls != chosen, (r, via, pick)
        else:
            assert cls == chosen, (r, via, pick)
        checked += 1
    assert checked == got["cross_llc"]


# --- recordings stored before the wakeups were counted by their waker (replay.waker_refill) -----


def _as_older_version_stored(store: Store, rid: str) -> tuple[dict[str, Any], dict[str, int]]:
    """Drop wakeups.by_waker from the stored metrics, as versions before it stored them; returns the
    document so stored and what the ingest had counted."""
    body = json.loads(store.derived(rid, METRICS) or b"{}")
    counted: dict[str, int] = body["wakeups"].pop("by_waker")
    assert store.put_derived(rid, METRICS, json.dumps(body).encode())
    return body, counted


def test_an_older_recording_gets_the_counts_the_ingest_makes_from_its_chunks(
    store: Store, g4_table: pa.Table
) -> None:
    topo = two_cpus("node")
    rid = ingest(store, g4_table, topology=topo, chunk_rows=3_000)  # tasks' wakings across chunks
    older, counted = _as_older_version_stored(store, rid)
    assert counted["cross_llc"] > 1000
    asked: list[bool] = []

    def topology() -> Topology:
        asked.append(True)
        return topo

    filled = fill_by_waker(store, rid, older, topology)
    assert filled["wakeups"]["by_waker"] == counted
    assert {**filled, "wakeups": older["wakeups"]} == older and "by_waker" not in older["wakeups"], (
        "nothing else"
    )
    # kept with the document: the next read finds it and neither counts again nor asks the topology
    stored = json.loads(store.derived(rid, METRICS) or b"{}")
    assert stored["wakeups"]["by_waker"] == counted
    assert fill_by_waker(store, rid, stored, topology) is stored
    assert asked == [True]


def test_a_damaged_chunk_leaves_the_counts_out_and_the_other_metrics_readable(
    store: Store, g4_table: pa.Table
) -> None:
    rid = ingest(store, g4_table, chunk_rows=3_000)
    older, _ = _as_older_version_stored(store, rid)
    seq = damage_chunk(store, rid)
    with pytest.raises(StoredChunkError, match=f"stored chunk {seq}: "):
        by_waker_from_store(store, rid, None)
    got = fill_by_waker(store, rid, older, lambda: None)
    assert got["wakeups"]["by_waker"] is None and {**got, "wakeups": older["wakeups"]} == older
    # kept as null: the damaged chunk is not scanned for again at the next read
    stored = json.loads(store.derived(rid, METRICS) or b"{}")
    assert "by_waker" in stored["wakeups"] and stored["wakeups"]["by_waker"] is None

    assert fill_by_waker(store, rid, stored, never_asked) is stored


# --- each wakeup's waker in the task's path (PathPlacement.waker_cpu / waker_pid) ---------------


def _wakers(
    store: Store, rid: str, pid: int, topology: Topology | None
) -> list[tuple[int, str, int | None, int | None]]:
    """(ts, kind, waker_cpu, waker_pid) of each of the task's placements, as the path gives them."""
    return [
        (p.ts_ns, p.kind, p.waker_cpu, p.waker_pid) for p in task_path(store, rid, pid, LevelMap(topology))
    ]


def test_the_kernel_s_wakeup_names_its_waker_in_the_path(store: Store, collector: Path) -> None:
    """The wake_affine_idle example: `stream-4135 [029] ... sched_waking: ... pid=4129`: the task's
    move at its wakeup (sched_migrate_task to CPU 30) and its sched_wakeup both name CPU 29 and pid
    4135, the task running there."""
    topo = _topology("zen3-2s-nps1")
    rid = _import(
        store, collector, LKML / "zen3-2s-256cpu_wake_affine_idle_example_kprateek-2022-09-26.txt", topo
    )
    got = _wakers(store, rid, 4129, topo)
    assert [(k, c, p) for _, k, c, p in got] == [("migrate", 29, 4135), ("wakeup", 29, 4135)]


def test_real_g4_paths_name_each_wakeup_s_waking(store: Store, g4_table: pa.Table) -> None:
    """Every task of the real g4 capture: each wakeup in its path names the CPU and the running pid
    of the task's sched_waking before it, as the trace's rows say; its other placements none."""
    rid = ingest(store, g4_table, chunk_rows=4096)  # wakings and their wakeups across chunks
    last: dict[int, tuple[int, int]] = {}
    want: dict[int, list[tuple[int, int | None, int | None]]] = {}
    for r in g4_table.to_pylist():
        if r["kind"] == Kind.WAKING and r["pid"]:
            last[r["pid"]] = (r["cpu"], r["cur_pid"])
        elif r["kind"] == Kind.WAKEUP and r["pid"]:
            w = last.pop(r["pid"], None)
            want.setdefault(r["pid"], []).append((r["ts_ns"], *(w if w else (None, None))))
    assert sum(len(v) for v in want.values()) == 21_441
    named = 0
    for pid, wakeups in want.items():
        got = _wakers(store, rid, pid, None)
        assert [(ts, c, p) for ts, k, c, p in got if k == "wakeup"] == wakeups
        assert all(c is None and p is None for _, k, c, p in got if k in ("wakeup_new", "switch"))
        named += sum(1 for _, c, p in wakeups if c is not None and p)
    assert named > 10_000  # most of hackbench's wakeups come from a running task


def test_placements_stored_before_wakers_were_kept_read_as_none(store: Store, g4_table: pa.Table) -> None:
    rid = ingest(store, g4_table)
    pid = int(g4_table.filter(pc.equal(g4_table.column("kind"), int(Kind.WAKEUP))).column("pid")[0].as_py())
    assert any(c is not None for _, _, c, _ in _wakers(store, rid, pid, None))
    as_stored_before(store.path, rid)
    got = _wakers(store, rid, pid, None)
    assert got and all(c is None and p is None for _, _, c, p in got)
    assert all(p.waker_class is None for p in task_path(store, rid, pid, LevelMap(None)))


def _path_classes(store: Store, rid: str, topology: Topology | None) -> dict[str, int]:
    """Every task's wakeups in its path counted by waker_class, and on the waker's CPU."""
    got: dict[str, int] = {}
    for t in store.tasks(rid, None, 100_000):
        for p in task_path(store, rid, t.pid, LevelMap(topology)):
            if p.kind != "wakeup":
                assert p.waker_class is None
                continue
            assert p.waker_class is not None
            got[p.waker_class] = got.get(p.waker_class, 0) + 1
            if p.waker_class not in ("still_running", "unknown") and p.waker_cpu == p.cpu:
                got["on_waker_cpu"] = got.get("on_waker_cpu", 0) + 1
    return got


def test_every_wakeup_in_the_paths_has_the_class_its_metrics_count_it_in(
    store: Store, g4_table: pa.Table
) -> None:
    """The real g4 capture across two LLCs: summed over every task's path, the wakeups' classes
    (and those on the waker's very CPU) are the recording's wakeups by their waker."""
    topo = two_cpus("node")
    rid = ingest(store, g4_table, topology=topo, chunk_rows=3_000)
    want = _by_waker(store, rid)
    got = _path_classes(store, rid, topo)
    assert {k: got.get(k, 0) for k in (*CLASSES, "on_waker_cpu")} == {
        k: want[k] for k in (*CLASSES, "on_waker_cpu")
    }
    assert got["to_waker_llc"] > 100 and got["to_prev_llc"] > 100 and got["still_running"] > 0


def test_each_task_keeps_its_own_wakeups_from_another_llc(store: Store, g4_table: pa.Table) -> None:
    """The tasks table counts each task's wakeups, those from another LLC and the pulls among them:
    per task, what its path's wakeups say; summed, the recording's metrics. Ordered by them, the
    task most often woken from another LLC comes first."""
    topo = two_cpus("node")
    rid = ingest(store, g4_table, topology=topo, chunk_rows=3_000)
    metrics = json.loads(store.derived(rid, "metrics.json") or b"{}")["wakeups"]
    tasks = store.tasks(rid, None, 100_000)
    assert sum(t.wakeups or 0 for t in tasks) == metrics["total"]
    assert sum(t.cross_llc or 0 for t in tasks) == metrics["by_waker"]["cross_llc"] > 1000
    assert sum(t.pulled or 0 for t in tasks) == metrics["by_waker"]["to_waker_llc"] > 100
    for t in tasks[:40]:
        woken = [p for p in task_path(store, rid, t.pid, LevelMap(topo)) if p.kind == "wakeup"]
        crossed = [p for p in woken if p.waker_class in ("to_waker_llc", "to_prev_llc", "elsewhere")]
        pulled = [p for p in woken if p.waker_class == "to_waker_llc"]
        assert (t.wakeups, t.cross_llc, t.pulled) == (len(woken), len(crossed), len(pulled)), t.pid
    by_cross = store.tasks(rid, None, 100_000, "cross_llc")
    assert [t.cross_llc for t in by_cross] == sorted((t.cross_llc or 0 for t in tasks), reverse=True)


def test_a_file_from_before_the_task_counts_gets_their_columns_empty(
    tmp_path: Path, g4_table: pa.Table
) -> None:
    """A database written before the tasks' wakeup counts (no such columns): opened, it gets them,
    NULL for the tasks it has, which read as unknown and sort after the counted ones."""
    path = tmp_path / "old.db"
    old = Store(path)
    rid = ingest(old, g4_table)
    old.close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DROP INDEX tasks_uncounted")  # (that file had neither the columns nor their index)
        for col in ("wakeups", "cross_llc", "pulled"):
            conn.execute(f"ALTER TABLE tasks DROP COLUMN {col}")
    conn.close()
    db = Store(path)
    indexed = sqlite3.connect(path).execute("SELECT 1 FROM sqlite_master WHERE name = 'tasks_uncounted'")
    assert indexed.fetchone() is not None, "the index of uncounted tasks added with the columns"
    tasks = db.tasks(rid, None, 10)
    assert tasks and all(t.wakeups is None and t.cross_llc is None and t.pulled is None for t in tasks)
    assert [t.pid for t in db.tasks(rid, None, 10, "cross_llc")] == [t.pid for t in tasks]
    newer = ingest(db, g4_table, topology=two_cpus("node"))
    assert db.tasks(newer, None, 1, "cross_llc")[0].cross_llc
    db.close()


def _tasks_as_older_version_stored(
    store: Store, rid: str
) -> list[tuple[int, int | None, int | None, int | None]]:
    """Empty the tasks' wakeup counts, as versions before them left them; returns what was counted."""
    counted = [(t.pid, t.wakeups, t.cross_llc, t.pulled) for t in store.tasks(rid, None, 100_000)]
    conn = sqlite3.connect(store.path)
    with conn:
        conn.execute(
            "UPDATE tasks SET wakeups = NULL, cross_llc = NULL, pulled = NULL WHERE recording_id = ?", (rid,)
        )
    conn.close()
    assert store.tasks_uncounted(rid)
    return counted


def test_an_older_recording_s_tasks_get_the_counts_the_ingest_makes_once(
    store: Store, g4_table: pa.Table
) -> None:
    """A recording stored before the tasks' counts (its metrics and overview complete): its tasks get
    from its stored chunks the counts the ingest makes, every task's, and once."""
    topo = two_cpus("node")
    rid = ingest(store, g4_table, topology=topo, chunk_rows=3_000)  # tasks' wakings across chunks
    counted = _tasks_as_older_version_stored(store, rid)
    assert sum(1 for _, _, cross, _ in counted if cross) > 1
    metrics = store.derived(rid, METRICS)
    asked: list[bool] = []

    def topology() -> Topology:
        asked.append(True)
        return topo

    fill_tasks(store, rid, topology)
    assert [(t.pid, t.wakeups, t.cross_llc, t.pulled) for t in store.tasks(rid, None, 100_000)] == counted
    assert not store.tasks_uncounted(rid)
    # a task the counts do not name (no wakeup placement) is counted 0, not left to be counted again
    _tasks_as_older_version_stored(store, rid)
    first = next((p, w, x, q) for p, w, x, q in counted if w is not None)
    store.put_task_wakes(rid, [(first[0], first[1] or 0, first[2] or 0, first[3] or 0)])
    rest = [(t.wakeups, t.cross_llc, t.pulled) for t in store.tasks(rid, None, 100_000) if t.pid != first[0]]
    assert rest and set(rest) == {(0, 0, 0)} and not store.tasks_uncounted(rid)
    assert store.derived(rid, METRICS) == metrics, "the metrics as they were"
    fill_tasks(store, rid, topology)
    assert asked == [True], "counted once"


def test_one_scan_fills_an_older_recording_s_metrics_and_tasks(store: Store, g4_table: pa.Table) -> None:
    """Stored before both: whichever is read first, its metrics or its tasks, one scan fills both."""
    topo = two_cpus("node")
    rid = ingest(store, g4_table, topology=topo, chunk_rows=3_000)
    asked: list[bool] = []

    def topology() -> Topology:
        asked.append(True)
        return topo

    for first in ("metrics", "tasks"):
        older, by_waker = _as_older_version_stored(store, rid)
        counted = _tasks_as_older_version_stored(store, rid)
        asked.clear()
        if first == "metrics":
            assert fill_by_waker(store, rid, older, topology)["wakeups"]["by_waker"] == by_waker
        else:
            fill_tasks(store, rid, topology)
        assert [(t.pid, t.wakeups, t.cross_llc, t.pulled) for t in store.tasks(rid, None, 100_000)] == counted
        assert json.loads(store.derived(rid, METRICS) or b"{}")["wakeups"]["by_waker"] == by_waker
        fill_tasks(store, rid, topology)
        fill_by_waker(store, rid, older, topology)
        assert asked == [True], first


def test_a_damaged_chunk_leaves_the_tasks_uncounted_once(store: Store, g4_table: pa.Table) -> None:
    rid = ingest(store, g4_table, chunk_rows=3_000)
    _tasks_as_older_version_stored(store, rid)
    seq = damage_chunk(store, rid)
    fill_tasks(store, rid, lambda: None)
    assert all(t.wakeups is None for t in store.tasks(rid, None, 100_000)), "nothing made up"
    assert (store.derived(rid, TASKS_UNREAD) or b"").decode().startswith(f"stored chunk {seq}: ")

    fill_tasks(store, rid, never_asked)


def test_the_short_task_patch_s_pulls_are_named_in_the_main_thread_s_path(
    store: Store, collector: Path
) -> None:
    """The shortrun excerpt's stream main thread (pid 4392): its wakeups onto CPUs 152, 136 and
    240 (the first) are the three pulls to the waker's LLC (test above); its last, from CPU 60 onto
    240 where it already ran, is kept in its own LLC."""
    topo = _topology("zen3-2s-nps4")
    rid = _import(store, collector, TRACES / "zen3-2s-nps4-stream-excerpt-shortrun.ftrace.txt", topo)
    wakeups = [p for p in task_path(store, rid, 4392, LevelMap(topo)) if p.kind == "wakeup"]
    assert [(p.cpu, p.waker_cpu, p.waker_class) for p in wakeups] == [
        (152, 31, "to_waker_llc"),
        (136, 15, "to_waker_llc"),
        (240, 119, "to_waker_llc"),
        (240, 60, "to_prev_llc"),
    ]


def test_a_wakeup_without_its_own_waking_names_no_waker(store: Store) -> None:
    """Task 21 is woken from CPU 5 while pid 99 runs there, then woken again with no sched_waking
    before it (a capture that lost it): the second wakeup names no waker, not the first's; the
    wakeup from an idle CPU (pid 0 running: an interrupt) names CPU 6 and pid 0."""
    rows = [
        {**_row(1, 5, Kind.WAKING, 21, target_cpu=0), "cur_pid": 99},
        _row(2, 0, Kind.WAKEUP, 21, target_cpu=0),
        _row(3, 0, Kind.WAKEUP, 21, target_cpu=0),
        _row(4, 6, Kind.WAKING, 21, target_cpu=0),
        _row(5, 0, Kind.WAKEUP, 21, target_cpu=0),
    ]
    rid = ingest(store, pa.Table.from_pylist(rows, schema=EVENT_SCHEMA), topology=_three_llcs())
    assert _wakers(store, rid, 21, _three_llcs()) == [
        (2, "wakeup", 5, 99),
        (3, "wakeup", None, None),
        (5, "wakeup", 6, 0),
    ]
    # and its class says so (CPUs 5 and 6 share no LLC with CPU 0: pulled nowhere, kept on prev)
    classes = [p.waker_class for p in task_path(store, rid, 21, LevelMap(_three_llcs()))]
    assert classes == ["to_prev_llc", "unknown", "to_prev_llc"]


def test_a_loss_forgets_that_a_task_was_preempted(store: Store) -> None:
    """Task 24 is preempted off CPU 10 (R+), then a ring-buffer loss, then it is woken from CPU 1
    onto CPU 10: the loss may hold its run and its sleep, so the wakeup counts by its LLCs (kept in
    prev's), not as a task still queued."""
    rows = [
        _row(1, 10, Kind.SWITCH, 0, prev_state="R", next_pid=24, next_comm="t24", next_prio=120),
        _row(2, 10, Kind.SWITCH, 24, prev_state="R+", next_pid=31, next_comm="t31", next_prio=120),
        {**_row(3, 3, Kind.LOST, 0), "comm": "", "lost_events": 40},
        _row(4, 1, Kind.WAKING, 24, target_cpu=10),
        _row(5, 10, Kind.WAKEUP, 24, target_cpu=10),
    ]
    got = _by_waker(
        store, ingest(store, pa.Table.from_pylist(rows, schema=EVENT_SCHEMA), topology=_three_llcs())
    )
    assert (got["cross_llc"], got["to_prev_llc"], got["still_running"]) == (1, 1, 0)
    assert got == _expected(rows, _three_llcs())
