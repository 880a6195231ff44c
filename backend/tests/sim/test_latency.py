"""A latency metric's distribution (placemap.sim.latency) and its place in a run's result: the
percentiles schbench prints beside its p99, the sample count, and the note when the p99 of a
short run is one of its largest wakeups."""

from __future__ import annotations

from fractions import Fraction
from math import floor

import numpy as np
import pytest

from placemap.replay import kernel as kn
from placemap.sim import latency
from placemap.sim.scenario import parse_scenario, run_scenario, simulate, summarize

SCHBENCH = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "schbench", "messengers": 1, "workers": 16},
    "seed": 1,
}


@pytest.mark.parametrize("n", [1, 2, 3, 32, 99, 100, 101, 150, 1000, 1001])
@pytest.mark.parametrize("permille", latency.PERMILLE)
def test_a_percentile_is_the_lower_nearest_rank_and_its_rank_counts_those_above(
    n: int, permille: int
) -> None:
    samples = [7 * i for i in range(n)]  # distinct, sorted
    want = floor(Fraction(permille, 1000) * (n - 1))
    assert latency.percentile(samples, permille) == samples[want]
    above = sum(1 for s in samples if s > latency.percentile(samples, permille))
    assert latency.rank_from_top(n, permille) == above


def test_the_note_says_which_of_the_largest_a_short_runs_p99_is() -> None:
    assert latency.few_samples_note(0) is None  # no samples: the run is incomplete, said elsewhere
    assert "the p99 of 1 wakeups is the largest of them" in (latency.few_samples_note(1) or "")
    assert "the p99 of 32 wakeups is the 2nd largest of them" in (latency.few_samples_note(32) or "")
    assert "the p99 of 99 wakeups is the 2nd largest" in (latency.few_samples_note(99) or "")
    assert latency.few_samples_note(latency.FEW_SAMPLES) is None
    for n in range(1, latency.FEW_SAMPLES):  # the comment's claim: one of the two largest
        assert latency.rank_from_top(n, latency.P99) <= 1


def test_a_schbench_result_carries_the_distribution_its_p99_is_read_from() -> None:
    sc = parse_scenario({**SCHBENCH, "duration_ms": 1500})
    eng, wl = simulate(sc)
    out = summarize(eng, wl, 0.0)
    lat = out["latency_us"]
    samples = sorted(eng.wake_latency[1])  # the workers' group (schbench.WORKER_GROUP)
    assert lat["samples"] == len(samples) >= latency.FEW_SAMPLES
    assert lat["p99"] == out["metric"]["value"]
    assert lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99_9"] <= lat["max"] == samples[-1] / 1000
    assert lat["p50"] == samples[(len(samples) - 1) // 2] / 1000
    assert lat["note"] is None


def test_a_short_run_says_its_p99_is_one_of_its_largest_wakeups() -> None:
    out = run_scenario({**SCHBENCH, "duration_ms": 200}, wall_clock=False)
    lat = out["latency_us"]
    assert 0 < lat["samples"] < latency.FEW_SAMPLES
    assert lat["note"] == latency.few_samples_note(lat["samples"])
    assert lat["note"] is not None and f"the p99 of {lat['samples']} wakeups" in lat["note"]


def test_a_run_within_the_warmup_has_no_samples_and_no_values() -> None:
    out = run_scenario({**SCHBENCH, "duration_ms": 50}, wall_clock=False)
    assert not out["sim"]["complete"]
    assert out["latency_us"] == {
        "samples": 0,
        "p50": None,
        "p90": None,
        "p99": None,
        "p99_9": None,
        "max": None,
        "note": None,
    }


def test_a_workload_without_a_latency_metric_has_none() -> None:
    sc = {"topology": "zen3-2s-nps1", "workload": {"kind": "hackbench", "groups": 1, "loops": 10}, "seed": 1}
    assert run_scenario(sc, wall_clock=False)["latency_us"] is None


def test_the_engines_delay_buckets_are_the_stores() -> None:
    """latency.delay_bucket (the simulator's, compiled with mypyc) and replay.kernel.delay_bucket
    (the store's, a numba kernel) put every delay in the same bucket with the same lower bound."""
    rng = np.random.default_rng(11)
    values = [0, 1, 15, 16, 17, 1000, 2**40, 2**62 + 5, *rng.integers(0, 2**50, 5000).tolist()]
    for v in values:
        b = latency.delay_bucket(v)
        assert b == kn.delay_bucket(v)
        assert latency.delay_bucket_low(b) == kn.delay_bucket_low(b) <= v < latency.delay_bucket_low(b + 1)


def test_a_runs_delay_summary_reads_the_percentiles_off_its_histogram() -> None:
    h = latency.DelayHistogram()
    assert h.summary() is None
    delays = [5, 1000, 1000, 2500, 40_000, 7, 123_456]
    for d in delays:
        h.add(d)
    s = sorted(delays)
    want = {"samples": len(s), "max_ns": max(s)}
    for key, pm in (("p50_ns", 500), ("p90_ns", 900), ("p99_ns", 990)):
        want[key] = latency.delay_bucket_low(latency.delay_bucket(s[(pm * (len(s) - 1)) // 1000]))
    assert h.summary() == want
    assert want["p50_ns"] == 992  # 1000 ns lies in [992, 1024)
