"""Scenarios in, results out: `run_scenario(dict) -> dict` in the result shape of issue 3
section 5, with validation errors (ScenarioError) that name the field at fault.

A scenario: {"topology": preset name or topology object, "workload": {"kind": ..., params},
"hints": [...], "features": {...}, "seed": int, "duration_ms": int}. This module is the only
one that reads the wall clock (for `sim.wall_s`); pass `wall_clock=False` for byte-identical
output across runs.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from placemap.sim.decisions import DecisionCounts
from placemap.sim.engine import Engine
from placemap.sim.errors import ScenarioError
from placemap.sim.features import Features, parse_features, parse_hints
from placemap.sim.topology import Topology, load
from placemap.sim.trace import EventLog
from placemap.sim.workloads import build
from placemap.sim.workloads.params import Workload
from placemap.sim.workloads.schbench import Schbench

SCENARIO_KEYS = ("topology", "workload", "hints", "features", "seed", "duration_ms")
MAX_DURATION_MS = 600_000


@dataclass(frozen=True)
class Scenario:
    """A validated scenario."""

    topology: Topology
    workload_spec: Mapping[str, Any]
    hints: int
    features: Features
    seed: int
    duration_ns: int


def parse_scenario(data: Any) -> Scenario:
    """Validate a scenario dict; ScenarioError names the first bad field."""
    if not isinstance(data, Mapping):
        raise ScenarioError("scenario", "expected an object")
    for k in data:
        if k not in SCENARIO_KEYS:
            raise ScenarioError(str(k), f"unknown scenario field; known: {', '.join(SCENARIO_KEYS)}")
    if "topology" not in data:
        raise ScenarioError("topology", "missing")
    if "workload" not in data:
        raise ScenarioError("workload", "missing")
    topo = load(data["topology"])
    build(data["workload"])  # validates the workload now, before any run
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ScenarioError("seed", f"expected a non-negative integer, got {seed!r}")
    dur = data.get("duration_ms", 1000)
    if isinstance(dur, bool) or not isinstance(dur, int) or not 1 <= dur <= MAX_DURATION_MS:
        raise ScenarioError("duration_ms", f"expected an integer in 1..{MAX_DURATION_MS}, got {dur!r}")
    return Scenario(
        topology=topo,
        workload_spec=data["workload"],
        hints=parse_hints(data.get("hints")),
        features=parse_features(data.get("features")),
        seed=seed,
        duration_ns=dur * 1_000_000,
    )


def simulate(
    sc: Scenario, log: EventLog | None = None, *, decisions: bool = False
) -> tuple[Engine, Workload]:
    """Run a validated scenario; returns the engine (state, counters) and the workload.
    With `log`, every fork, wakeup, migration, switch and exit is recorded into it; with
    `decisions`, every placement decision is counted by its reason (Engine.decisions)."""
    # the cyclic collector paused for the setup too (Engine.run pauses it for the loop): the
    # runqueues, domains' tables and tasks made here are no garbage, and a collection
    # triggered by their allocation would traverse every object of the process
    enabled = gc.isenabled()
    gc.disable()
    try:
        eng = Engine(sc.topology, sc.features, sc.seed, log, DecisionCounts() if decisions else None)
        wl = build(sc.workload_spec)
        wl.setup(eng, sc.hints)
        eng.run(sc.duration_ns)
    finally:
        if enabled:
            gc.enable()
    return eng, wl


def run_scenario(
    scenario: Mapping[str, Any], *, wall_clock: bool = True, decisions: bool = False
) -> dict[str, Any]:
    """Validate, run and summarize one scenario (the result JSON of issue 3 section 5; with
    `decisions`, plus the decisions counted by reason)."""
    sc = parse_scenario(scenario)
    t0 = time.perf_counter()
    eng, wl = simulate(sc, decisions=decisions)
    return summarize(eng, wl, time.perf_counter() - t0 if wall_clock else 0.0)


# What the metric of a run that did not complete (Workload.complete) is, by metric: a runtime is
# the time simulated so far, a lower bound; the other metrics had nothing to measure yet, and
# their value 0 is no result. The CLI, the API and the dashboard show this beside the value and
# compare no such run with another.
INCOMPLETE = {
    "runtime_s": "the workload had not finished when the simulated time (duration_ms) ended: "
    "the runtime is the time simulated since it started, a lower bound",
    "p99_wakeup_latency_us": "no wakeup after schbench's 100 ms warmup within the simulated time "
    "(duration_ms): the p99 has no samples, and 0 is no latency",
}
INCOMPLETE_RATE = (
    "the measured window had not opened when the simulated time (duration_ms) ended (tasks still "
    "starting, or warmup_ms not passed): 0 is no measurement"
)


def incomplete_reason(metric_name: str) -> str:
    """Why an incomplete run's metric is not a result (INCOMPLETE)."""
    return INCOMPLETE.get(metric_name, INCOMPLETE_RATE)


def summarize(eng: Engine, wl: Workload, wall_s: float) -> dict[str, Any]:
    """The result JSON of a finished run: the workload's metric, the counters, the run's size;
    `sim.incomplete` says what the metric is when the run did not complete (else null);
    `latency_us`, for a latency metric (schbench), its distribution (latency.summary), else null;
    `wakeup_latency`, every task's run-queue delay after its wakeups (latency.DelayHistogram), as the
    store's metrics of the saved run give it; `cpu_time`, the tasks' total run and run-queue wait
    time; `llc_util`, each LLC's busy fraction over time and over the run (utilization.LlcSampler).
    The counters are exactly the issue's."""
    end = eng.env.now
    complete = wl.complete()
    out: dict[str, Any] = {
        "metric": {"name": wl.metric_name, "value": wl.metric(eng, end), "better": wl.better},
        "counters": eng.counters(end),
        "latency_us": wl.latency_us() if isinstance(wl, Schbench) else None,
        "wakeup_latency": eng.delays.summary(),
        "cpu_time": eng.cpu_time(),
        "llc_util": eng.llc_util.summary(),
        "sim": {
            "events": eng.sched_events(),
            "wall_s": round(wall_s, 3),
            "simulated_ms": round(end / 1e6, 3),
            "complete": complete,
            "incomplete": None if complete else incomplete_reason(wl.metric_name),
        },
    }
    if eng.decisions is not None:
        out["decisions"] = eng.decisions.to_json()
    return out
