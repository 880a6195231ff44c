"""The simulated event stream: ordered by time, and consistent the way a real trace is
(per-CPU switch chains, every task switched in on the CPU its last placement chose,
waking/wakeup pairs), and agreeing with the counters."""

from __future__ import annotations

from typing import Any

from placemap.sim.scenario import parse_scenario, simulate
from placemap.sim.trace import FORK, MIGRATE, SWITCH, WAKEUP, WAKEUP_NEW, WAKING, EventLog

SC = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "hackbench", "groups": 2, "loops": 20},
    "seed": 5,
    "duration_ms": 1000,
}


def rows(log: EventLog) -> list[dict[str, Any]]:
    cols = log.columns()
    return [dict(zip(cols, vals, strict=True)) for vals in zip(*cols.values(), strict=True)]


def test_event_stream_is_consistent_with_itself_and_the_counters() -> None:
    log = EventLog()
    eng, _ = simulate(parse_scenario(SC), log)
    rs = rows(log)
    assert rs and [r["ts_ns"] for r in rs] == sorted(r["ts_ns"] for r in rs)
    on_cpu: dict[int, int] = {}  # cpu -> pid running (0 idle)
    where: dict[int, int] = {}  # pid -> cpu of its last placement
    pending_wake: set[int] = set()
    n = {k: 0 for k in (WAKING, MIGRATE, SWITCH, FORK)}
    for r in rs:
        k = r["kind"]
        n[k] = n.get(k, 0) + 1
        if k == FORK:
            where[r["child_pid"]] = r["cpu"]  # sched_fork: the child starts on the parent's CPU
        elif k == WAKEUP_NEW:
            assert where.get(r["pid"], r["target_cpu"]) == r["target_cpu"], "migrate came first"
            where[r["pid"]] = r["target_cpu"]
        elif k == MIGRATE:
            assert where[r["pid"]] == r["orig_cpu"], r
            where[r["pid"]] = r["dest_cpu"]
        elif k == WAKING:
            assert where[r["pid"]] == r["target_cpu"], "waking shows the wakee's previous CPU"
            pending_wake.add(r["pid"])
        elif k == WAKEUP:
            assert r["pid"] in pending_wake and where[r["pid"]] == r["target_cpu"] == r["cpu"]
            pending_wake.discard(r["pid"])
        elif k == SWITCH:
            assert on_cpu.get(r["cpu"], 0) == r["pid"], f"switch chain broken on CPU {r['cpu']}"
            if r["next_pid"]:
                assert where[r["next_pid"]] == r["cpu"], "switched in where it was placed"
            on_cpu[r["cpu"]] = r["next_pid"]
    c = eng.counters(eng.env.now)
    assert n[WAKING] == c["wakeups"]["total"]  # type: ignore[index]
    assert n[MIGRATE] == c["migrations"]["total"]  # type: ignore[index]
    assert n[SWITCH] == c["context_switches"]
    assert n[FORK] == 2 * 40
    assert not log.dropped
