"""placemap.sim_pair: a scenario's baseline, the change by the metric's direction, the reasons that
moved most."""

from __future__ import annotations

import pytest

from placemap.sim_pair import baseline_of, change_pct, shifts


def test_baseline_drops_hints_and_features_only() -> None:
    sc = {"topology": "icx-2s", "workload": {"kind": "stream", "threads": 4}, "hints": ["fork_spread"],
          "features": {"STEAL": True}, "seed": 2, "duration_ms": 50}  # fmt: skip
    assert baseline_of(sc) == {"topology": "icx-2s", "workload": {"kind": "stream", "threads": 4}, "seed": 2,
                               "duration_ms": 50}  # fmt: skip
    assert baseline_of({**sc, "hints": [], "features": {}}) is None


def test_change_reads_the_metrics_direction() -> None:
    assert change_pct("lower", 100.0, 80.0) == pytest.approx(20.0)  # 20% less latency: better
    assert change_pct("higher", 100.0, 80.0) == pytest.approx(-20.0)  # 20% less bandwidth: worse
    assert change_pct("lower", 0.0, 1.0) is None


def test_shifts_are_share_changes_largest_first() -> None:
    base = {"wakeup": [{"path": "a", "pick": "x", "count": 90}, {"path": "a", "pick": "y", "count": 10}],
            "fork": [{"path": "f", "pick": "z", "count": 4}]}  # fmt: skip
    run = {"wakeup": [{"path": "a", "pick": "x", "count": 50}, {"path": "h", "pick": "x", "count": 45},
                      {"path": "a", "pick": "y", "count": 5}],
           "fork": [{"path": "f", "pick": "z", "count": 8}]}  # fmt: skip
    got = shifts(base, run)
    assert [(s["kind"], s["reason"]) for s in got] == [
        ("wakeup", "h -> x"),
        ("wakeup", "a -> x"),
        ("wakeup", "a -> y"),
    ]
    assert got[0]["baseline_share"] == 0 and got[0]["share"] == pytest.approx(0.45)
    # the fork's share is 100% in both: it did not move
    assert not [s for s in got if s["kind"] == "fork"]
