"""A simulated recording's metric as the API shows it (convert.sim_metric), read from the result
JSON stored in its metadata: a latency metric with its sample count and note, an incomplete run
said as such, and what the metadata of a captured trace, an older run or a damaged row gives."""

from __future__ import annotations

from placemap.api.convert import sim_metric
from placemap.sim.scenario import run_scenario

SCHBENCH = {"topology": "zen3-2s-nps1", "workload": {"kind": "schbench", "workers": 4}, "seed": 1}


def test_a_short_schbench_run_gives_its_p99_its_wakeups_and_the_few_samples_note() -> None:
    result = run_scenario({**SCHBENCH, "duration_ms": 200}, wall_clock=False)
    m = sim_metric(result)
    assert m is not None
    assert (m["name"], m["value"], m["better"]) == (
        "p99_wakeup_latency_us",
        result["metric"]["value"],
        "lower",
    )
    assert m["complete"] and m["incomplete"] is None
    assert m["samples"] == result["latency_us"]["samples"] > 0
    assert m["note"] == result["latency_us"]["note"] and m["note"]


def test_an_incomplete_run_says_what_its_value_is() -> None:
    result = run_scenario({**SCHBENCH, "duration_ms": 50}, wall_clock=False)
    m = sim_metric(result)
    assert m is not None and not m["complete"]
    assert m["incomplete"] == result["sim"]["incomplete"] and m["samples"] == 0


def test_no_metric_for_a_trace_an_older_run_or_a_damaged_row() -> None:
    assert sim_metric(None) is None  # a captured trace: no sim_result in its metadata
    metric = {"name": "runtime_s", "value": 0.5, "better": "lower"}
    # saved before sim.complete was kept: its value may have measured nothing, and nothing says so
    assert sim_metric({"metric": metric, "sim": {"events": 10}}) is None
    assert sim_metric({"metric": {**metric, "better": "sideways"}, "sim": {"complete": True}}) is None
    assert sim_metric({"metric": "runtime_s", "sim": {"complete": True}}) is None
    ok = sim_metric({"metric": metric, "sim": {"complete": True, "incomplete": None}})
    assert ok == {**metric, "complete": True, "incomplete": None, "samples": None, "note": None}
