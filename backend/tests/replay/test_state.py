"""The placement state machine on real vm2-hackbench-g4 events: named facts with their reasons,
the numba kernel against the plain-Python rules, and keyframe seek against a full replay."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from reference import RefState
from test_helpers import ingest

from placemap.replay.kernel import STATE_NAMES
from placemap.replay.seek import state_at
from placemap.replay.state import ChunkColumns, PlacementState
from placemap.store import Store


def _task(st: PlacementState, pid: int) -> tuple[int | None, str]:
    i = int(st.index(np.array([pid], dtype=np.int32))[0])
    assert i >= 0, f"pid {pid} unknown"
    cpu = int(st.cpu[i])
    return (None if cpu < 0 else cpu), STATE_NAMES[int(st.state[i])]


@pytest.fixture(scope="module")
def g4_store(tmp_path_factory: pytest.TempPathFactory, g4_table: pa.Table) -> tuple[Store, str]:
    store = Store(tmp_path_factory.mktemp("state") / "p.db")
    return store, ingest(store, g4_table, chunk_rows=4_096)


def test_wakeup_new_places_the_child(g4_store: tuple[Store, str]) -> None:
    store, rid = g4_store
    # 319.954103: hackbench-13113 [000] sched_wakeup_new: comm=hackbench pid=13114 target_cpu=001
    st = state_at(store, rid, 319_954_103_000).state
    assert _task(st, 13114) == (1, "runnable"), "pid 13114 is on CPU 1 because its wakeup_new targeted CPU 1"
    # 319.954094: sched_process_fork ... child_pid=13114 -- one event earlier it was new, not yet placed
    st = state_at(store, rid, 319_954_102_999).state
    assert _task(st, 13114) == (None, "new"), "forked at 319.954094, no wakeup_new yet: new, CPU unknown"


def test_switch_runs_next_and_preempts_prev(g4_store: tuple[Store, str]) -> None:
    store, rid = g4_store
    # 319.954263 [001] sched_switch: prev_comm=npm exec json2t prev_pid=13093 prev_state=R ==> next_pid=13114
    st = state_at(store, rid, 319_954_263_000).state
    assert _task(st, 13114) == (1, "running"), "switched in on CPU 1 at 319.954263"
    assert _task(st, 13093) == (1, "runnable"), (
        "switched out with prev_state=R: preempted, still runnable on 1"
    )
    assert int(st.cpu_run[1]) == 13114
    assert st.comm_of(13093) == "npm exec json2t", "a comm with spaces comes through whole"
    # 319.954331 [001] prev_pid=13114 prev_state=S ==> next_pid=13115
    st = state_at(store, rid, 319_954_331_000).state
    assert _task(st, 13114) == (1, "sleeping"), "switched out with prev_state=S: sleeping, last on CPU 1"
    assert _task(st, 13115) == (1, "running")


def test_exit_makes_the_task_dead(g4_store: tuple[Store, str]) -> None:
    store, rid = g4_store
    # 320.124492 hackbench-13220 [001] sched_process_exit: comm=hackbench pid=13220
    assert _task(state_at(store, rid, 320_124_491_999).state, 13220)[1] != "dead"
    assert _task(state_at(store, rid, 320_124_492_000).state, 13220)[1] == "dead"


def _full_replay(table: pa.Table, t_ns: int) -> PlacementState:
    st = PlacementState()
    cols = ChunkColumns.from_table(table)
    st.apply(table, cols, int(np.searchsorted(cols.ts, t_ns, side="right")))
    return st


def _as_dict(st: PlacementState) -> dict[str, Any]:
    tasks = {
        int(p): (int(c) if c >= 0 else None, STATE_NAMES[int(s)], str(m))
        for p, c, s, m in zip(st.pids, st.cpu, st.state, st.comm, strict=True)
    }
    run = {c: (int(p) if p >= 0 else None) for c, p in enumerate(st.cpu_run.tolist())}
    return {"tasks": tasks, "running": {c: p for c, p in run.items() if p is not None}}


def _ref_dict(ref: RefState) -> dict[str, Any]:
    tasks = {p: (ref.cpu[p], ref.state[p], ref.comm.get(p, "")) for p in ref.state}
    return {"tasks": tasks, "running": {c: p for c, p in ref.running.items() if p is not None}}


def test_kernel_matches_the_plain_rules_and_seek_matches_full_replay(
    g4_store: tuple[Store, str], g4_table: pa.Table
) -> None:
    store, rid = g4_store
    rows = g4_table.to_pylist()
    ts = np.array([r["ts_ns"] for r in rows])
    rng = random.Random(7)
    times = sorted(
        [rng.randint(int(ts[0]) - 10, int(ts[-1]) + 10) for _ in range(40)]
        + [int(t) for t in rng.sample(list(ts), 20)]
        + [c.t_start_ns for c in store.list_chunks(rid)][:5]
    )
    ref = RefState()
    applied = 0
    for t in times:
        while applied < len(rows) and rows[applied]["ts_ns"] <= t:
            ref.apply(rows[applied])
            applied += 1
        full = _as_dict(_full_replay(g4_table, t))
        assert full == _ref_dict(ref), f"kernel differs from the rules at t={t}"
        seek = state_at(store, rid, t)
        assert seek.event_index == applied
        assert _as_dict(seek.state) == full, f"keyframe seek differs from full replay at t={t}"


def test_a_task_whose_switch_out_is_missing_stops_running(g4_store: tuple[Store, str]) -> None:
    store, rid = g4_store
    # CPU 0: 319.980218 sched_switch ==> tokio-rt-worker 68; the next switch on CPU 0 (319.983310)
    # has prev_pid=13137, not 68: the kernel's capture holds no switch-out of 68.
    assert _task(state_at(store, rid, 319_983_309_999).state, 68) == (0, "running")
    st = state_at(store, rid, 319_983_310_000).state
    assert _task(st, 68) == (0, "sleeping"), "68 left CPU 0 unseen: it runs no more"
    running = sum(1 for x in st.state if STATE_NAMES[int(x)] == "running")
    assert running == 2, "a 2-CPU machine runs at most 2 tasks (13260 on 1, 1808 on 0)"
