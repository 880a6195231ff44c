"""Rows no shared trace has: llc_util samples (LLC utilization without sched_switch), lost-event
records, and a non-leader exec taking the leader's pid; built here as rows of the event schema."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa
from test_classify import two_cpus
from test_helpers import ingest

from placemap.replay.kernel import STATE_NAMES
from placemap.replay.queries import overview
from placemap.replay.seek import state_at
from placemap.schema.events import EVENT_SCHEMA
from placemap.store import Store


def _row(ts: int, kind: int, pid: int = 0, **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {name: None for name in EVENT_SCHEMA.names}
    row.update(ts_ns=ts, cpu=kw.pop("cpu", 0), kind=kind, cur_pid=0, pid=pid, comm=kw.pop("comm", ""), **kw)
    return row


def test_llc_util_samples_and_lost_events(store: Store) -> None:
    rows = [_row(1_000 * i, 8, cpu=-1, llc=i % 2, util=0.25 if i % 2 == 0 else 0.75) for i in range(100)]
    rows.insert(50, _row(50_000, 9, cpu=1, lost_events=17))
    rid = ingest(store, pa.Table.from_pylist(rows, schema=EVENT_SCHEMA), topology=two_cpus("node"))
    blob = store.derived(rid, "metrics.json")
    assert blob is not None
    m = json.loads(blob)
    assert m["lost_events"] == 17
    util = {s["llc"]: s["util"] for s in m["llc_util"]["series"]}
    # no switch events: utilization is the mean of the samples per bin, per LLC
    assert {round(u, 4) for u in util[0] if u} == {0.25} and {round(u, 4) for u in util[1] if u} == {0.75}
    assert m["per_cpu_busy"] is None
    rec = store.get_recording(rid)
    assert rec is not None and rec.t_start_ns is not None and rec.t_end_ns is not None
    ov = overview(store, rid, rec.t_start_ns, rec.t_end_ns, 10)
    assert ov is not None and sum(ov.lost) == 17 and sum(ov.by_kind["llc_util"]) == 100


def test_exec_by_a_thread_takes_the_leaders_pid(store: Store) -> None:
    rows = [
        _row(1, 4, pid=0, cpu=0, prev_state="R", next_pid=201, next_comm="worker"),  # thread 201 runs on 0
        _row(2, 0, pid=200, comm="leader", target_cpu=1),  # the leader, runnable on 1
        _row(3, 7, pid=200, comm="newprog", cpu=0, old_pid=201, filename="/bin/newprog"),
    ]
    rid = ingest(store, pa.Table.from_pylist(rows, schema=EVENT_SCHEMA))
    st = state_at(store, rid, 3).state
    i200, i201 = (int(st.index(np.array([p], dtype=np.int32))[0]) for p in (200, 201))
    assert (int(st.cpu[i200]), STATE_NAMES[st.state[i200]]) == (0, "running"), "200 took over 201's place"
    assert STATE_NAMES[st.state[i201]] == "dead", "the thread's own pid is gone after exec"
    assert int(st.cpu_run[0]) == 200 and st.comm_of(200) == "newprog"
