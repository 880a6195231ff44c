"""The simulator's own speed report (figures are not asserted: tests never judge time)."""

from __future__ import annotations

from placemap.sim.bench import REFERENCE, measure


def test_measure_reports_events_and_a_profile_summary() -> None:
    small = {**REFERENCE, "workload": {"kind": "hackbench", "groups": 1, "loops": 5}}
    r = measure(small, profile=True, top=5)
    assert r["sched_events"] > 0 and r["loop_events"] >= r["sched_events"] // 2
    assert set(r) >= {"cpu_s", "wall_s", "events_per_cpu_s", "page_faults", "profile"}
    assert r["page_faults"] >= 0
    assert len(r["profile"]) == 5 and sum(p["share"] for p in r["profile"]) <= 1.0
    assert measure(small)["sched_events"] == r["sched_events"], "profiling does not change the run"
