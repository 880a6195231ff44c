"""Decisions counted by reason (placemap.sim.decisions): opt-in, they change no decision, they
add up to the run's counters, and each reason shows where its toggle acts."""

from __future__ import annotations

import json
from typing import Any

from placemap.sim.domains import SchedDomains
from placemap.sim.policy.balance import R_STEAL
from placemap.sim.policy.wakeup import R_HINT_AFFINE, R_WA_SYNC
from placemap.sim.scenario import run_scenario
from placemap.sim.topology import preset

HACKBENCH: dict[str, Any] = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "hackbench", "groups": 2, "mode": "thread", "ipc": "pipe", "loops": 20},
    "seed": 1,
}
SCHBENCH: dict[str, Any] = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "schbench", "messengers": 1, "workers": 8},
    "seed": 3,
    "duration_ms": 400,
}


def _without(r: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in r.items() if k != "decisions"}, sort_keys=True)


def test_counting_is_opt_in_and_changes_no_decision() -> None:
    for sc in (
        HACKBENCH,
        {**HACKBENCH, "features": {"STEAL": True}},
        {**SCHBENCH, "hints": ["wake_affine"]},
    ):
        plain = run_scenario(sc, wall_clock=False)
        counted = run_scenario(sc, wall_clock=False, decisions=True)
        assert "decisions" not in plain
        assert set(counted["decisions"]) == {"wakeup", "fork", "balance"}
        assert _without(counted) == _without(plain)


def test_counts_add_up_to_the_runs_counters() -> None:
    r = run_scenario(HACKBENCH, wall_clock=False, decisions=True)
    d = r["decisions"]
    assert sum(x["count"] for x in d["wakeup"]) == r["counters"]["wakeups"]["total"]
    # hackbench forks 20 senders and 20 receivers per group, each through the fork slow path
    assert sum(x["count"] for x in d["fork"]) == 2 * 40
    counts = [x["count"] for k in d for x in d[k]]
    assert all(n > 0 for n in counts)
    for k in d:  # most frequent first
        assert [x["count"] for x in d[k]] == sorted((x["count"] for x in d[k]), reverse=True)


def test_hackbench_wakeups_are_sync_and_their_path_says_so() -> None:
    # pipe writes are sync wakeups of a receiver by a sender alone on its CPU (wake_affine_idle)
    d = run_scenario(HACKBENCH, wall_clock=False, decisions=True)["decisions"]
    assert any(x["path"] == R_WA_SYNC for x in d["wakeup"])


def test_the_wake_affine_hint_shows_as_its_own_path() -> None:
    hinted = run_scenario({**SCHBENCH, "hints": ["wake_affine"]}, wall_clock=False, decisions=True)
    plain = run_scenario(SCHBENCH, wall_clock=False, decisions=True)
    assert sum(x["count"] for x in hinted["decisions"]["wakeup"] if x["path"] == R_HINT_AFFINE) > 0
    assert not [x for x in plain["decisions"]["wakeup"] if x["path"] == R_HINT_AFFINE]


def test_steal_is_counted_only_with_steal_on() -> None:
    on = run_scenario({**HACKBENCH, "features": {"STEAL": True}}, wall_clock=False, decisions=True)
    off = run_scenario(HACKBENCH, wall_clock=False, decisions=True)
    steals = [x for x in on["decisions"]["balance"] if x["kind"] == "steal"]
    assert steals and all(x["outcome"] == R_STEAL and x["domain"] == "MC" for x in steals)
    assert not [x for x in off["decisions"]["balance"] if x["kind"] == "steal"]


def test_balance_outcomes_name_the_topologys_domains() -> None:
    # 400 ms: periodic balances at the ticks, and newly idle ones between the workers' spins
    r = run_scenario(SCHBENCH, wall_clock=False, decisions=True)
    names = {d.name for doms in SchedDomains(preset("zen3-2s-nps1")).per_cpu for d in doms}
    rows = r["decisions"]["balance"]
    assert {x["kind"] for x in rows} >= {"periodic", "newidle"}
    # a newly idle CPU that walked no domain names none
    assert {x["domain"] for x in rows} <= names | {""}
    assert {x["domain"] for x in rows if x["kind"] == "periodic"} >= {"SMT", "MC"}
