"""placemap.sim_pair: a scenario's baseline, the change by the metric's direction, the reasons that
moved most, and a change over several seeds."""

from __future__ import annotations

import pytest

from placemap.sim_pair import baseline_of, change_pct, seed_summary, shifts, with_seeds


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


def test_with_seeds_counts_on_from_the_scenarios_seed() -> None:
    sc = {"topology": "icx-2s", "workload": {"kind": "stream", "threads": 4}, "seed": 7}
    assert with_seeds(sc, 3) == [{**sc, "seed": 7}, {**sc, "seed": 8}, {**sc, "seed": 9}]
    # no seed: the simulator's default, 0
    assert [s["seed"] for s in with_seeds({"topology": "icx-2s"}, 2)] == [0, 1]
    assert sc["seed"] == 7  # the scenario itself is left as it was


def test_seed_summary_gives_one_sign_or_says_the_seed_decides() -> None:
    s = seed_summary([12.0, 3.0, 5.0])
    assert s["verdict"] == "better on every seed" and s["stable"]
    assert (s["median_pct"], s["min_pct"], s["max_pct"]) == (5.0, 3.0, 12.0) and not s["identical"]
    assert seed_summary([7.5, 7.5, None])["identical"] and not seed_summary([7.5])["identical"]
    assert seed_summary([-1.0, -0.5])["verdict"] == "worse on every seed"
    assert seed_summary([0.0, 0.0])["verdict"] == "the same on every seed"
    mixed = seed_summary([4.0, -1.0, 0.0, -2.0])
    assert mixed["verdict"] == "the seed decides: better on 1, worse on 2, the same on 1"
    assert not mixed["stable"] and (mixed["better"], mixed["worse"], mixed["same"]) == (1, 2, 1)
    assert mixed["median_pct"] == -0.5
    # a seed whose runs did not complete measured nothing: counted as a seed, not as a sign
    part = seed_summary([None, 2.0, 1.0])
    assert part["verdict"] == "better on every seed" and (part["seeds"], part["measured"]) == (3, 2)
    none = seed_summary([None, None])
    assert none["verdict"] == "no seed measured a change" and not none["stable"]
    assert none["median_pct"] is None
