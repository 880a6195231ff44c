"""The parallel runner and parallel calibration: results in input order and identical to a
run in one process, whatever order the workers finish in."""

from __future__ import annotations

import csv
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from placemap.sim.calibration import calibrate, plan
from placemap.sim.errors import ScenarioError
from placemap.sim.runner import run_many, run_one

CSV = Path(__file__).resolve().parents[3].parent / "shared/calibration/userspace-hinting-rfc.csv"

# a long run first and short ones after it, so that workers finish out of input order
SCENARIOS: list[dict[str, Any]] = [
    {"topology": "zen3-2s-nps1", "workload": {"kind": "tbench", "clients": 16}, "seed": 1, "duration_ms": 15},
    {"topology": "icx-2s", "workload": {"kind": "schbench", "messengers": 1, "workers": 4}, "seed": 2,
     "duration_ms": 40},
    {"topology": "zen3-2s-nps1", "workload": {"kind": "hackbench", "groups": 1, "loops": 5}, "seed": 3},
    {"topology": "icx-2s", "workload": {"kind": "stream", "threads": 4}, "seed": 4, "duration_ms": 20},
]  # fmt: skip


def dumps(results: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(r, sort_keys=True) for r in results]


def test_parallel_results_come_back_in_input_order_and_equal_one_process() -> None:
    seen: list[tuple[int, int, int]] = []
    par = run_many(SCENARIOS, jobs=2, cost=[4, 1, 2, 3], progress=lambda d, n, i: seen.append((d, n, i)))
    one = run_many(SCENARIOS, jobs=1)
    assert dumps(par) == dumps(one) == dumps([run_one(sc) for sc in SCENARIOS])
    assert [d for d, _, _ in seen] == [1, 2, 3, 4] and {n for _, n, _ in seen} == {4}
    assert sorted(i for _, _, i in seen) == [0, 1, 2, 3]
    assert [r["metric"]["name"] for r in par] == [
        "throughput_mb_s", "p99_wakeup_latency_us", "runtime_s", "bandwidth_mb_s",
    ]  # fmt: skip


def test_calibration_over_two_processes_equals_one_process() -> None:
    with CSV.open(newline="") as fh:
        rows = [
            r
            for r in csv.DictReader(fh)
            if r["benchmark"] in ("stream-Copy", "hackbench") and "Intel" in r["machine"]
            and r["x"] in ("1", "2")
        ]  # fmt: skip
    assert len(rows) >= 4, "the calibration table lost its Intel stream/hackbench rows"
    seq = calibrate(rows, seeds=(1, 2), jobs=1)
    par = calibrate(rows, seeds=(1, 2), jobs=2)
    assert json.dumps(seq, sort_keys=True) == json.dumps(par, sort_keys=True)
    assert seq["runs"] == 2 * len(plan(rows)) and seq["overall"]["significant"] > 0


def test_a_workers_bad_scenario_reaches_the_caller_naming_its_field() -> None:
    """A ScenarioError raised in a worker process comes back pickled: it must rebuild as itself
    (its field and message), not break the pool (its __init__ takes two arguments)."""
    err = pickle.loads(
        pickle.dumps(ScenarioError("workload.workers", "expected an integer in 1..4096, got 0"))
    )
    assert isinstance(err, ScenarioError) and err.field == "workload.workers"
    assert str(err) == "workload.workers: expected an integer in 1..4096, got 0"
    bad = {**SCENARIOS[1], "workload": {"kind": "schbench", "workers": 0}}
    with pytest.raises(ScenarioError) as got:
        run_many([SCENARIOS[2], bad], jobs=2)
    assert got.value.field == "workload.workers"
