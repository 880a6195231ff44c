"""Per-LLC utilization over time (placemap.sim.utilization): the sampling changes nothing the run
computes, its bins double as the run grows, and its figures are the run's own busy time."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from placemap.sim.engine import Engine
from placemap.sim.scenario import parse_scenario, summarize
from placemap.sim.state import State
from placemap.sim.topology import preset
from placemap.sim.trace import EventLog
from placemap.sim.utilization import MAX_BINS, START_BIN_NS, LlcSampler
from placemap.sim.workloads import build

HACKBENCH: dict[str, Any] = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "hackbench", "groups": 2, "loops": 40},
    "seed": 2,
    "duration_ms": 2000,
}
SCHBENCH: dict[str, Any] = {
    "topology": "zen3-2s-nps4",
    "workload": {"kind": "schbench", "workers": 24},
    "hints": ["wake_affine"],
    "seed": 1,
    "duration_ms": 400,
}


def _run(scenario: dict[str, Any], *, sampled: bool) -> tuple[dict[str, Any], str]:
    """The run's result and the sha256 of its whole event log (simulate(), step by step);
    unsampled: the first bin boundary put past the run's end, so the event loop never stops
    before it."""
    sc = parse_scenario(scenario)
    log = EventLog()
    eng = Engine(sc.topology, sc.features, sc.seed, log, None)
    if not sampled:
        eng.llc_util.width = sc.duration_ns + 1
    wl = build(sc.workload_spec)
    wl.setup(eng, sc.hints)
    eng.run(sc.duration_ns)
    digest = hashlib.sha256(repr(log.cols).encode()).hexdigest()
    return summarize(eng, wl, 0.0), digest


@pytest.mark.parametrize("scenario", [HACKBENCH, SCHBENCH], ids=["hackbench", "schbench"])
def test_stopping_the_loop_at_every_bin_changes_nothing_the_run_computes(scenario: dict[str, Any]) -> None:
    sampled, log_sampled = _run(scenario, sampled=True)
    plain, log_plain = _run(scenario, sampled=False)
    assert log_sampled == log_plain
    for key in ("metric", "counters", "cpu_time", "latency_us", "wakeup_latency", "sim"):
        assert sampled[key] == plain[key], key
    # and the sampling did take place: the unsampled run has one bin, the whole run
    end = sampled["llc_util"]["end_ns"]
    bins = len(sampled["llc_util"]["series"][0]["util"])
    # a bin per START_BIN_NS up to MAX_BINS of them, then 50-100 wider ones
    assert (
        bins == -(-end // START_BIN_NS)
        if end <= MAX_BINS * START_BIN_NS
        else MAX_BINS // 2 <= bins <= MAX_BINS
    )
    assert len(plain["llc_util"]["series"][0]["util"]) == 1
    means = [s["mean"] for s in sampled["llc_util"]["series"]]
    assert means == [s["mean"] for s in plain["llc_util"]["series"]]


def test_the_llcs_busy_time_adds_up_to_the_run_s_cpu_time_and_stays_within_its_cpus() -> None:
    result, _ = _run(SCHBENCH, sampled=True)
    u = result["llc_util"]
    end = u["end_ns"]
    assert end == round(result["sim"]["simulated_ms"] * 1e6)
    series = u["series"]
    assert [s["llc"] for s in series] == list(range(16))  # 16 LLCs of 8 cores, 16 CPUs each
    assert all(s["cpus"] == 16 for s in series)
    busy_ns = sum(s["mean"] * s["cpus"] * end for s in series)
    assert busy_ns == pytest.approx(result["cpu_time"]["run_ms"] * 1e6, rel=1e-3)
    assert result["counters"]["cpu_utilization"] == pytest.approx(busy_ns / (256 * end), rel=1e-3)
    # every bin is a fraction of its LLC's CPUs, and the bins' time-weighted mean is the run's
    w = u["bin_ns"]
    for s in series:
        assert all(0.0 <= x <= 1.0 for x in s["util"])
        spans = [w] * (len(s["util"]) - 1) + [end - w * (len(s["util"]) - 1)]
        weighted = sum(x * t for x, t in zip(s["util"], spans, strict=True)) / end
        assert weighted == pytest.approx(s["mean"], abs=2e-4)


def test_wake_affine_piles_schbench_onto_the_messenger_s_llc_where_tip_spreads_it() -> None:
    """What the per-LLC figures are for: wake_affine pulls the 24 workers to the messenger's
    LLC (16 CPUs: they overflow it, the collapse of docs/calibration.md's turning point); tip
    leaves each on its idle prev, spread over the machine."""
    shares = {}
    for hints in (["wake_affine"], []):
        result, _ = _run({**SCHBENCH, "hints": hints}, sampled=True)
        means = [s["mean"] for s in result["llc_util"]["series"]]
        shares[bool(hints)] = max(means) / sum(means)
    assert shares[True] > 0.5  # one LLC of 16 does more than half the run's work
    assert shares[False] < 0.15


def test_bins_start_small_and_double_when_full() -> None:
    st = State(preset("bdw-1s-20"))
    s = LlcSampler(st)
    assert s.llcs == [0] and s.ncpus == [20]
    rq = st.rqs[3]
    t = 0
    for k in range(MAX_BINS):
        rq.busy_ns += START_BIN_NS if k % 2 == 0 else 0  # CPU 3 busy every other bin
        t = s.next_boundary()
        s.sample(t)
    # the 100th bin filled them: pairs merged, bins twice as wide, each half a CPU-bin busy
    assert s.width == 2 * START_BIN_NS and len(s.bins) == MAX_BINS // 2 and t == MAX_BINS * START_BIN_NS
    assert s.next_boundary() == t + 2 * START_BIN_NS
    rq.busy_ns += START_BIN_NS // 2
    s.finish(t + START_BIN_NS)  # stopped half-way into the next (wider) bin
    out = s.summary()
    assert out["bin_ns"] == 2 * START_BIN_NS and out["end_ns"] == t + START_BIN_NS
    util = out["series"][0]["util"]
    assert util[:-1] == [round(0.5 / 20, 4)] * (MAX_BINS // 2)
    assert util[-1] == round(0.5 / 20, 4)  # the partial bin, over its own span
    assert out["series"][0]["mean"] == round((50 + 0.5) / (101 * 20), 4)
