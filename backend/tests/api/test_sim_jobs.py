"""Simulation jobs against the real uvicorn server: validation at submit, progress while a worker
process runs, the same result as the CLI, the saved recording, cancellation (running and queued),
and an API that keeps answering while the simulator runs."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from conftest import Server, wait_done
from ftrace_lines import G4
from vm2 import VM2

from placemap.settings import DEFAULT_CALIBRATION_CSV
from placemap.sim.errors import ScenarioError
from placemap.sim.scenario import MAX_DURATION_MS, parse_scenario, run_scenario
from placemap.sim.workloads import WORKLOADS, build
from placemap.sim_reasons import NAMES, REASONS
from placemap.sim_sweep import parse_sweep, summarize
from placemap.sim_sweep import scenarios as sweep_scenarios
from placemap.store import Store

SMALL: dict[str, Any] = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "schbench", "messengers": 1, "workers": 8},
    "hints": ["fork_affine"],
    "features": {"SIS_SHORT": True},
    "seed": 2,
    "duration_ms": 300,
}
# far longer than any test waits: only ever cancelled
ENDLESS: dict[str, Any] = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "schbench", "messengers": 2, "workers": 32},
    "seed": 1,
    "duration_ms": 600_000,
}


def wait_job(
    c: httpx.Client, jid: str, until: tuple[str, ...], timeout_s: float = 300
) -> list[dict[str, Any]]:
    """Poll the job until its status is one of `until`; every snapshot seen, in order."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    while True:
        r = c.get(f"/api/sim/jobs/{jid}")
        assert r.status_code == 200, r.text
        seen.append(r.json())
        if seen[-1]["status"] in until:
            return seen
        assert time.monotonic() < deadline, f"job {jid} stuck in {seen[-1]['status']}"
        time.sleep(0.05)


def test_bad_scenario_is_refused_at_submit_naming_the_field(client: httpx.Client) -> None:
    r = client.post("/api/sim/jobs", json={"scenario": {**SMALL, "hints": ["fork_sideways"]}})
    assert r.status_code == 422
    assert r.json()["detail"]["code"] == "bad_scenario"
    assert (
        r.json()["detail"]["message"].startswith("hints[0]:")
        and "fork_sideways" in r.json()["detail"]["message"]
    )
    r = client.post("/api/sim/jobs", json={"scenario": {**SMALL, "duration_ms": 0}})
    assert r.status_code == 422 and r.json()["detail"]["message"].startswith("duration_ms:")
    r = client.post("/api/sim/jobs", json={"save": True})
    assert r.status_code == 422 and "scenario" in r.json()["detail"]["message"]
    # a 100-byte topology naming CPU 10**15 is refused by its field, not sized by it (the loader
    # allocates its per-CPU tables by the largest CPU number: petabytes in the server process)
    huge = {"cpus": [{"cpu": 10**15, "core": 0, "llc": 0, "numa_node": 0, "package": 0, "smt_siblings": []}],
            "llcs": [{"id": 0, "cpus": [], "numa_nodes": [0]}], "numa_nodes": [{"id": 0, "cpus": []}],
            "node_distances": [[10]]}  # fmt: skip
    r = client.post("/api/sim/jobs", json={"scenario": {**SMALL, "topology": huge}})
    assert r.status_code == 422 and r.json()["detail"]["message"].startswith(
        "topology.cpus[0].cpu: CPU 1000000000000000 is beyond the kernel's largest NR_CPUS (8192)"
    )
    assert client.get("/api/sim/jobs/nope").status_code == 404


def test_saved_job_reports_progress_the_cli_result_and_its_recording(client: httpx.Client) -> None:
    r = client.post("/api/sim/jobs", json={"scenario": SMALL, "save": True})
    assert r.status_code == 202, r.text
    jid = r.json()["job_id"]
    seen = wait_job(client, jid, ("done", "failed", "cancelled"))
    job = seen[-1]
    assert job["status"] == "done", job
    progress = [s["progress"] for s in seen]
    assert progress == sorted(progress) and all(0 <= p <= 1 for p in progress)
    assert job["progress"] == 1.0 and job["error"] is None
    assert {s["status"] for s in seen} <= {"queued", "running", "done"}
    # the same result as `placemap sim --json --save` (wall time aside)
    plain = run_scenario(SMALL, wall_clock=False, decisions=True)
    result = job["result"]
    rid = job["recording_id"]
    assert rid and result["recording_id"] == rid
    assert result["sim"].pop("wall_s") >= 0
    plain["sim"].pop("wall_s")
    assert {k: v for k, v in result.items() if k != "recording_id"} == plain
    assert result["latency_us"]["p99"] == result["metric"]["value"] and result["latency_us"]["samples"] > 0
    rec = client.get(f"/api/recordings/{rid}").json()
    assert rec["status"] == "ready" and rec["source"] == "simulated" and rec["scenario"] == SMALL
    assert rec["events_by_kind"]["switch"] == plain["counters"]["context_switches"]
    assert rec["events_by_kind"]["migrate"] == plain["counters"]["migrations"]["total"]
    listed = client.get("/api/sim/jobs").json()["jobs"]
    assert jid in [j["id"] for j in listed]


def test_unsaved_job_stores_nothing(client: httpx.Client) -> None:
    before = len(client.get("/api/recordings").json())
    r = client.post("/api/sim/jobs", json={"scenario": {**SMALL, "seed": 9}})
    assert r.status_code == 202
    job = wait_job(client, r.json()["job_id"], ("done", "failed", "cancelled"))[-1]
    assert job["status"] == "done" and job["recording_id"] is None
    assert "recording_id" not in job["result"] or job["result"]["recording_id"] is None
    assert job["result"]["counters"] == run_scenario({**SMALL, "seed": 9}, wall_clock=False)["counters"]
    assert len(client.get("/api/recordings").json()) == before


def sweep_job(
    client: httpx.Client, spec: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any], list[Any]]:
    """Submit a sweep job on SMALL and wait for it to end done; the job as polled, its result, and
    its runs made one by one, whose summary the result must be."""
    r = client.post("/api/sim/jobs", json={"scenario": SMALL, "sweep": spec})
    assert r.status_code == 202, r.text
    seen = wait_job(client, r.json()["job_id"], ("done", "failed", "cancelled"))
    assert seen[-1]["status"] == "done" and seen[-1]["kind"] == "sweep", seen[-1]
    # as submitted, its defaults filled in
    assert seen[-1]["sweep"] == {"calibrated": False, "across": None, "hosts": None, **spec}
    sweep = parse_sweep(SMALL, spec)
    direct = [run_scenario(sc, wall_clock=False) for sc in sweep_scenarios(SMALL, sweep)]
    got = seen[-1]["sweep_result"]
    assert got == summarize(SMALL, sweep, direct, DEFAULT_CALIBRATION_CSV)
    return seen, got, direct


def test_a_sweep_job_gives_the_command_line_sweep_with_its_progress(client: httpx.Client) -> None:
    spec = {"param": "workers", "values": [8, 4], "baseline": True, "seeds": 2, "calibrated": False}
    # the eight runs (two points, two seeds, each beside its baseline), one by one
    seen, got, direct = sweep_job(client, spec)
    assert seen[-1]["result"] is None and seen[-1]["recording_id"] is None
    progress = [s["progress"] for s in seen]
    assert progress == sorted(progress) and progress[-1] == 1.0
    assert [r["x"] for r in got["rows"]] == [4, 8] and got["metric"]["name"] == "p99_wakeup_latency_us"
    assert got["rows"][1]["baseline"] == direct[5]["metric"]["value"] and len(got["rows"][1]["changes"]) == 2


def test_a_machine_sweep_job_runs_the_scenario_on_each_preset_in_order(client: httpx.Client) -> None:
    spec = {"param": "topology", "values": ["icx-2s", "zen3-2s-nps4"], "baseline": True, "seeds": 1}
    seen, got, _ = sweep_job(client, spec)
    job = seen[-1]
    assert [r["x"] for r in got["rows"]] == ["icx-2s", "zen3-2s-nps4"] and got["ordered"] is False
    assert [r["llc_spread"]["llcs"] for r in got["rows"]] == [2, 16]  # each row on its own machine
    # stored once done: the link ?sweep=ID opens the same result
    saved = client.get(f"/api/sim/sweeps/{job['sweep_id']}").json()
    assert saved["result"] == got and saved["scenario"] == SMALL and saved["sweep"] == seen[-1]["sweep"]
    r = client.get("/api/sim/sweeps/nosuchsweep")
    assert r.status_code == 404 and r.json()["detail"]["code"] == "sweep_not_found"
    # and listed, newest first, saying what it ran and along what
    listed = client.get("/api/sim/sweeps", params={"limit": 200}).json()["sweeps"]
    mine = next(s for s in listed if s["id"] == job["sweep_id"])
    assert {
        k: mine[k] for k in ("topology", "workload", "hints", "features", "param", "values", "metric")
    } == {
        "topology": "zen3-2s-nps1",
        "workload": "schbench",
        "hints": ["fork_affine"],
        "features": {"SIS_SHORT": True},
        "param": "topology",
        "values": ["icx-2s", "zen3-2s-nps4"],
        "metric": "p99_wakeup_latency_us",
    }
    stamps = [s["created_at"] for s in listed]
    assert stamps == sorted(stamps, reverse=True)
    assert client.get("/api/sim/sweeps", params={"limit": 0}).status_code == 422
    # forgotten on request: its link then finds nothing, and the list no longer has it
    assert client.delete(f"/api/sim/sweeps/{job['sweep_id']}").status_code == 204
    assert client.get(f"/api/sim/sweeps/{job['sweep_id']}").status_code == 404
    assert job["sweep_id"] not in [s["id"] for s in client.get("/api/sim/sweeps").json()["sweeps"]]
    r = client.delete(f"/api/sim/sweeps/{job['sweep_id']}")
    assert r.status_code == 404 and r.json()["detail"]["code"] == "sweep_not_found"


def test_a_toggle_sweep_job_runs_each_toggle_against_one_baseline(client: httpx.Client) -> None:
    # not asked for, the baseline runs anyway: a toggle is read against it
    spec = {
        "param": "toggle",
        "values": ["wake_hold", "NO_SIS_UTIL", "fork_spread+wake_affine"],
        "baseline": False,
        "seeds": 1,
    }
    seen, got, _ = sweep_job(client, spec)
    progress = [s["progress"] for s in seen]
    assert progress == sorted(progress) and progress[-1] == 1.0
    assert got["baseline"] is True and [r["x"] for r in got["rows"]] == spec["values"]
    # each toggle instead of the scenario's own fork_affine and SIS_SHORT, against the one baseline
    assert (
        got["rows"][0]["value"]
        == run_scenario(
            {**{k: v for k, v in SMALL.items() if k != "features"}, "hints": ["wake_hold"]}, wall_clock=False
        )["metric"]["value"]
    )
    assert len({r["baseline"] for r in got["rows"]}) == 1


def test_a_sweep_job_across_machines_gives_each_machine_its_panel(client: httpx.Client) -> None:
    spec = {
        "param": "toggle",
        "values": ["wake_hold", "NO_SIS_UTIL"],
        "baseline": True,
        "seeds": 1,
        "across": ["icx-2s", "zen3-2s-nps4"],
    }
    seen, got, direct = sweep_job(client, spec)
    assert len(direct) == 8 and got["across"] == spec["across"] and got["rows"] == []
    assert [p["topology"] for p in got["panels"]] == spec["across"]
    for p, llcs in zip(got["panels"], (2, 16), strict=True):
        assert [r["x"] for r in p["rows"]] == spec["values"]
        assert {r["llc_spread"]["llcs"] for r in p["rows"]} == {llcs}  # each panel on its own machine
    assert got["events"] == sum(p["events"] for p in got["panels"])
    saved = client.get(f"/api/sim/sweeps/{seen[-1]['sweep_id']}").json()
    assert saved["result"] == got and saved["sweep"]["across"] == spec["across"]
    listed = client.get("/api/sim/sweeps", params={"limit": 200}).json()["sweeps"]
    assert next(s for s in listed if s["id"] == seen[-1]["sweep_id"])["across"] == spec["across"]


def test_a_sweep_job_runs_across_a_recorded_host_beside_a_preset(client: httpx.Client) -> None:
    """A real 2-CPU VM's topology as a host named "vm2" beside icx-2s: its panel is the sweep with
    that topology inline, stored with the sweep so that the link reruns it."""
    spec = {
        "param": "toggle",
        "values": ["wake_hold", "NO_SIS_UTIL"],
        "baseline": True,
        "seeds": 1,
        "across": ["vm2", "icx-2s"],
        "hosts": {"vm2": VM2},
    }
    seen, got, _ = sweep_job(client, spec)
    assert [p["topology"] for p in got["panels"]] == ["vm2", "icx-2s"]
    on_vm2 = {**SMALL, "topology": VM2}
    alone = parse_sweep(on_vm2, {k: spec[k] for k in ("param", "values", "baseline")})
    runs = [run_scenario(sc, wall_clock=False) for sc in sweep_scenarios(on_vm2, alone)]
    assert got["panels"][0] == {**summarize(on_vm2, alone, runs, DEFAULT_CALIBRATION_CSV), "topology": "vm2"}
    assert {r["llc_spread"]["llcs"] for r in got["panels"][0]["rows"]} == {len(VM2["llcs"])}
    saved = client.get(f"/api/sim/sweeps/{seen[-1]['sweep_id']}").json()
    assert saved["sweep"]["hosts"] == {"vm2": VM2} and saved["result"] == got
    # a host named by no machine, or after a preset, or no topology, is refused before any run
    for hosts, field in (
        ({"vm2": VM2, "other": VM2}, "sweep.hosts.other:"),
        ({"vm2": VM2, "icx-2s": VM2}, "sweep.hosts.icx-2s:"),
        ({"vm2": {**VM2, "llcs": "none"}}, "sweep.hosts.vm2"),
        ({}, "sweep.across:"),
    ):
        r = client.post("/api/sim/jobs", json={"scenario": SMALL, "sweep": {**spec, "hosts": hosts}})
        assert r.status_code == 422 and r.json()["detail"]["message"].startswith(field), (hosts, r.text)


def test_a_bad_sweep_is_refused_at_submit_naming_the_field(client: httpx.Client) -> None:
    cases = [
        ({"scenario": SMALL, "sweep": {"values": [4, 8]}, "save": True}, "save:"),
        ({"scenario": SMALL, "sweep": {"values": [4]}}, "sweep.values:"),
        ({"scenario": SMALL, "sweep": {"param": "loops", "values": [4, 8]}}, "sweep.param:"),
        (
            {
                "scenario": {**SMALL, "hints": [], "features": {}},
                "sweep": {"values": [4, 8], "baseline": True},
            },
            "sweep.baseline:",
        ),
        ({"scenario": {**SMALL, "duration_ms": 0}, "sweep": {"values": [4, 8]}}, "duration_ms:"),
        ({"scenario": SMALL, "sweep": {"values": ["4", "8"]}}, "sweep.values:"),
        (
            {"scenario": SMALL, "sweep": {"param": "cputime_us", "values": [1, 2], "calibrated": True}},
            "sweep.calibrated:",
        ),
        ({"scenario": SMALL, "sweep": {"param": "topology", "values": ["icx-2s", "epyc"]}}, "sweep.values:"),
        (
            {"scenario": SMALL, "sweep": {"param": "toggle", "values": ["wake_hold", "SIS_UTIL"]}},
            "sweep.values:",
        ),
        ({"scenario": SMALL, "sweep": {"values": [4, 8], "across": ["icx-2s", "epyc"]}}, "sweep.across:"),
        (
            {
                "scenario": SMALL,
                "sweep": {"param": "topology", "values": ["icx-2s", "bdw-1s-20"], "across": []},
            },
            "sweep.across:",
        ),
    ]
    for body, field in cases:
        r = client.post("/api/sim/jobs", json=body)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["detail"]["code"] == "bad_scenario" and r.json()["detail"]["message"].startswith(
            field
        )


def test_cancel_a_running_saved_job_and_a_queued_one(server: Server, client: httpx.Client) -> None:
    assert server.settings.sim_workers == 1  # the second job has to wait for the first
    first = client.post("/api/sim/jobs", json={"scenario": ENDLESS, "save": True}).json()["job_id"]
    second = client.post("/api/sim/jobs", json={"scenario": SMALL}).json()["job_id"]
    try:
        # running, with simulated time moving and its recording created
        deadline = time.monotonic() + 300
        while True:
            job = client.get(f"/api/sim/jobs/{first}").json()
            if job["status"] == "running" and job["progress"] > 0 and job["recording_id"]:
                break
            assert job["status"] in ("queued", "running"), job
            assert time.monotonic() < deadline, job
            time.sleep(0.1)
        rid = job["recording_id"]
        saving = client.get(f"/api/recordings/{rid}").json()
        assert saving["status"] == "importing" and saving["source"] == "simulated"
        assert saving["progress"] > 0  # stored before the job hears of it
        # the event loop is free while the worker computes
        assert client.get("/api/health").json()["ok"] is True
        assert client.get(f"/api/sim/jobs/{second}").json()["status"] == "queued"
        r = client.delete(f"/api/sim/jobs/{second}")
        assert r.status_code == 200 and r.json()["status"] == "cancelled"
    finally:
        r = client.delete(f"/api/sim/jobs/{first}")
    assert r.status_code == 200
    job = r.json()
    assert job["status"] == "cancelled" and job["result"] is None and job["recording_id"] is None
    assert 0 < job["progress"] < 1
    assert client.get(f"/api/recordings/{rid}").status_code == 404  # the half-stored run is gone
    # a finished job stays as it was; an unknown one is 404
    assert client.delete(f"/api/sim/jobs/{second}").json()["status"] == "cancelled"
    assert client.delete("/api/sim/jobs/nope").status_code == 404
    # the worker is free again
    again = client.post("/api/sim/jobs", json={"scenario": {**SMALL, "seed": 4}}).json()["job_id"]
    assert wait_job(client, again, ("done", "failed", "cancelled"))[-1]["status"] == "done"


@pytest.mark.parametrize("field", ["topology", "workload"])
def test_missing_required_field(client: httpx.Client, field: str) -> None:
    scenario = {k: v for k, v in SMALL.items() if k != field}
    r = client.post("/api/sim/jobs", json={"scenario": scenario})
    assert r.status_code == 422 and r.json()["detail"]["message"] == f"{field}: missing"


def test_a_worker_killed_from_outside_fails_its_job_and_recording(client: httpx.Client) -> None:
    # the server runs in this process (uvicorn on a thread), so its workers are our children
    jid = client.post("/api/sim/jobs", json={"scenario": ENDLESS, "save": True}).json()["job_id"]
    try:
        deadline = time.monotonic() + 300
        while True:
            job = client.get(f"/api/sim/jobs/{jid}").json()
            if job["status"] == "running" and job["recording_id"]:
                break
            assert job["status"] in ("queued", "running"), job
            assert time.monotonic() < deadline, job
            time.sleep(0.1)
        (worker,) = [p for p in multiprocessing.active_children() if p.name == f"sim-job-{jid}"]
        assert worker.pid is not None
        os.kill(worker.pid, signal.SIGKILL)  # as the OOM killer would
        job = wait_job(client, jid, ("done", "failed", "cancelled"))[-1]
    finally:
        client.delete(f"/api/sim/jobs/{jid}")
    assert job["status"] == "failed" and job["result"] is None
    assert job["error"] == {
        "field": None,
        "message": "the simulation worker exited with code -9 before reporting",
    }
    rec = client.get(f"/api/recordings/{job['recording_id']}").json()
    assert rec["status"] == "failed" and "exit code -9" in rec["error"] and rec["event_count"] == 0


def test_a_job_replays_a_stored_recording_on_its_own_topology(client: httpx.Client) -> None:
    # vm2-hackbench-g4 (a real 2-CPU VM's hackbench) uploaded with that VM's topology
    vm2 = {**VM2, "source": "manual"}
    tid = client.post("/api/topologies", json=vm2).json()["id"]
    r = client.post("/api/recordings", params={"name": "g4", "topology_id": tid}, content=G4.read_bytes())
    rec = wait_done(client, r.json()["id"])
    assert rec["status"] == "ready"
    rid = str(rec["id"])
    bad = {"topology": "recorded", "workload": {"kind": "trace", "recording": "nope"}}
    r = client.post("/api/sim/jobs", json={"scenario": bad})
    assert r.status_code == 422 and r.json()["detail"]["message"].startswith("workload.recording:")
    # the server reads no path a client names
    bad = {"topology": "bdw-1s-20", "workload": {"kind": "trace", "file": "/etc/passwd"}}
    r = client.post("/api/sim/jobs", json={"scenario": bad})
    assert r.status_code == 422 and r.json()["detail"]["message"].startswith("workload.file:")
    sc = {
        "topology": "recorded",
        "workload": {"kind": "trace", "recording": rid},
        "seed": 1,
        "duration_ms": 5000,
    }
    r = client.post("/api/sim/jobs", json={"scenario": sc, "save": True})
    assert r.status_code == 202, r.text
    job = wait_job(client, r.json()["job_id"], ("done", "failed", "cancelled"))[-1]
    assert job["status"] == "done", job
    assert job["scenario"] == sc, "the job shows the scenario as submitted, not the profile"
    result = job["result"]
    assert result["sim"]["complete"] and result["metric"]["name"] == "runtime_s"
    recorded_s = (int(str(rec["t_end_ns"])) - int(str(rec["t_start_ns"]))) / 1e9
    assert abs(result["metric"]["value"] / recorded_s - 1) < 0.15
    saved = client.get(f"/api/recordings/{job['recording_id']}").json()
    prof = saved["scenario"]["workload"]["profile"]
    assert prof["source"] == f"recording {rid}" and prof["tasks"] > 160 and "ops" not in str(prof)
    assert prof["name"] == "g4" and saved["name"].endswith(" trace of g4 seed 1")
    # its scenario.json holds the whole profile and the host's topology, and reruns the run
    r = client.get(f"/api/recordings/{job['recording_id']}/scenario")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.headers["content-disposition"] == 'attachment; filename="scenario.json"'
    whole = r.json()
    assert (
        len(whole["workload"]["profile"]["tasks"]) == prof["tasks"] and "recording" not in whole["workload"]
    )
    assert {k: whole["topology"][k] for k in ("cpus", "llcs", "numa_nodes")} == {
        k: vm2[k] for k in ("cpus", "llcs", "numa_nodes")
    }
    rerun = run_scenario(whole, wall_clock=False, decisions=True)
    assert rerun["counters"] == result["counters"] and rerun["metric"] == result["metric"]
    # the recording's feature table: replayed under each toggle, the profile built once, the sweep
    # stored with the scenario as submitted
    spec = {"param": "toggle", "values": ["fork_spread", "UTIL_FITS_CAPACITY"]}
    r = client.post("/api/sim/jobs", json={"scenario": sc, "sweep": spec})
    assert r.status_code == 202, r.text
    done = wait_job(client, r.json()["job_id"], ("done", "failed", "cancelled"))[-1]
    assert done["status"] == "done", done
    rows = done["sweep_result"]["rows"]
    base = run_scenario(whole, wall_clock=False)["metric"]["value"]
    assert base == result["metric"]["value"]
    assert [r["value"] for r in rows] == [
        run_scenario({**whole, "hints": ["fork_spread"]}, wall_clock=False)["metric"]["value"],
        run_scenario({**whole, "features": {"UTIL_FITS_CAPACITY": True}}, wall_clock=False)["metric"][
            "value"
        ],
    ]
    assert {r["baseline"] for r in rows} == {base} and all(r["published"] == [] for r in rows)
    assert client.get(f"/api/sim/sweeps/{done['sweep_id']}").json()["scenario"] == sc
    # the same across the recording's own host and a preset: the recorded panel is that sweep again
    r = client.post(
        "/api/sim/jobs", json={"scenario": sc, "sweep": {**spec, "across": ["recorded", "zen3-2s-nps1"]}}
    )
    assert r.status_code == 202, r.text
    both = wait_job(client, r.json()["job_id"], ("done", "failed", "cancelled"))[-1]
    assert both["status"] == "done", both
    panels = both["sweep_result"]["panels"]
    assert [p["topology"] for p in panels] == ["recorded", "zen3-2s-nps1"]
    assert [(r["value"], r["baseline"]) for r in panels[0]["rows"]] == [
        (r["value"], r["baseline"]) for r in rows
    ]
    on_zen3 = {**whole, "topology": "zen3-2s-nps1"}
    assert panels[1]["rows"][0]["baseline"] == run_scenario(on_zen3, wall_clock=False)["metric"]["value"]
    # and a machine sweep of the recording: its host, then a preset
    r = client.post(
        "/api/sim/jobs",
        json={"scenario": sc, "sweep": {"param": "topology", "values": ["recorded", "bdw-1s-20"]}},
    )
    machines = wait_job(client, r.json()["job_id"], ("done", "failed", "cancelled"))[-1]
    assert [r["value"] for r in machines["sweep_result"]["rows"]] == [
        base,
        run_scenario({**whole, "topology": "bdw-1s-20"}, wall_clock=False)["metric"]["value"],
    ]
    # the recording's host and another host of the same topology, beside it: the same panel
    r = client.post(
        "/api/sim/jobs",
        json={"scenario": sc, "sweep": {**spec, "across": ["recorded", "twin"], "hosts": {"twin": VM2}}},
    )
    assert r.status_code == 202, r.text
    twins = wait_job(client, r.json()["job_id"], ("done", "failed", "cancelled"))[-1]
    assert twins["status"] == "done", twins
    recorded, twin = twins["sweep_result"]["panels"]
    assert twin["topology"] == "twin" and twin["rows"] == recorded["rows"] == panels[0]["rows"]
    for bad, field in [
        ({"param": "clients", "values": [1, 2]}, "sweep.param:"),
        ({**spec, "seeds": 2, "baseline": True}, "sweep.seeds:"),
    ]:
        r = client.post("/api/sim/jobs", json={"scenario": sc, "sweep": bad})
        assert r.status_code == 422 and r.json()["detail"]["message"].startswith(field), r.text
    r = client.get(f"/api/recordings/{rid}/scenario")
    assert r.status_code == 409 and r.json()["detail"]["code"] == "not_simulated"
    assert client.get("/api/recordings/nope/scenario").status_code == 404


def test_options_list_what_a_scenario_can_name(client: httpx.Client) -> None:
    o = client.get("/api/sim/options").json()
    assert "zen3-2s-nps1" in o["presets"] and "icx-2s" in o["presets"]
    assert o["hint_categories"]["fork"] == ["fork_affine", "fork_spread"]
    assert o["features"]["SIS_UTIL"] is True and o["features"]["steal_node_limit"] == 2
    # every name it lists is one the scenario parser takes
    sc = {**SMALL, "hints": [h[0] for h in o["hint_categories"].values()], "topology": o["presets"][-1]}
    sc["features"] = {k: not v if isinstance(v, bool) else v for k, v in o["features"].items()}
    parse_scenario(sc)
    # the toggles a sweep offers: every hint, and every switch turned away from its default
    hints = [h for hs in o["hint_categories"].values() for h in hs]
    switches = [k for k, v in o["features"].items() if isinstance(v, bool)]
    assert o["sweep_toggles"] == hints + [f"NO_{k}" if o["features"][k] else k for k in switches]
    assert parse_sweep(SMALL, {"param": "toggle", "values": o["sweep_toggles"]}).values == tuple(
        o["sweep_toggles"]
    )
    # the sweeps calibrate's runs can be made along: the benchmarks it runs, by the tables' parameter
    for kind, param in o["sweep_calibrated"].items():
        sc = {**SMALL, "workload": {"kind": kind}}
        assert parse_sweep(sc, {"param": param, "values": [1, 2], "calibrated": True}).calibrated
    assert o["sweep_calibrated"]["schbench"] == "workers" and "netperf" not in o["sweep_calibrated"]


def test_options_give_each_workload_parameter_as_the_parser_takes_it(client: httpx.Client) -> None:
    o = client.get("/api/sim/options").json()
    assert set(o["workloads"]) == set(WORKLOADS) - {"trace"}
    assert o["max_duration_ms"] == MAX_DURATION_MS
    hb = {p["name"]: p for p in o["workloads"]["hackbench"]}
    assert {k: hb["groups"][k] for k in ("type", "default", "min", "max", "choices")} == {
        "type": "int",
        "default": 10,
        "min": 1,
        "max": 64,
        "choices": None,
    }
    assert "-g" in hb["groups"]["help"]
    assert hb["ipc"]["choices"] == ["pipe", "socket"] and hb["ipc"]["default"] == "socket"
    for kind, params in o["workloads"].items():
        # the defaults, as a form sends them, are taken; each bound is taken and one past it refused
        build({"kind": kind, **{p["name"]: p["default"] for p in params}})
        for p in params:
            ok = [p["min"], p["max"]] if p["type"] == "int" else p["choices"]
            for v in ok:
                build({"kind": kind, p["name"]: v})
            bad = [p["min"] - 1, p["max"] + 1] if p["type"] == "int" else ["bogus"]
            for v in bad:
                with pytest.raises(ScenarioError) as e:
                    build({"kind": kind, p["name"]: v})
                assert e.value.field == f"workload.{p['name']}"


def test_an_oversized_scenario_is_refused_before_it_is_parsed(client: httpx.Client) -> None:
    # a trace workload's inline profile of 17 MB: over the JSON body limit, stated or streamed
    big = {"tasks": [{"pid": 1, "comm": "x", "cpu": 0, "start": "running", "ops": [0, 1] * 1_000_000}]}
    body = json.dumps({"scenario": {"topology": "bdw-1s-20", "workload": {"kind": "trace", "profile": big}}})
    body = body.replace('"x"', '"' + "x" * (17 * 1024 * 1024 - len(body)) + '"')
    r = client.post("/api/sim/jobs", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and r.json()["detail"]["code"] == "body_too_large"

    def chunks() -> Iterator[bytes]:
        data = body.encode()
        for i in range(0, len(data), 1 << 20):
            yield data[i : i + (1 << 20)]

    r = client.post("/api/sim/jobs", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and r.json()["detail"]["code"] == "body_too_large"
    # a profile under the limit is taken (and run)
    small = {"tasks": [{"pid": 1, "comm": "x", "cpu": 0, "start": "running", "ops": [0, 1000]}]}
    r = client.post(
        "/api/sim/jobs",
        json={"scenario": {"topology": "bdw-1s-20", "workload": {"kind": "trace", "profile": small}}},
    )
    assert r.status_code == 202, r.text
    job = wait_job(client, r.json()["job_id"], ("done", "failed", "cancelled"))[-1]
    assert job["status"] == "done" and job["result"]["sim"]["complete"]


def test_a_run_saved_without_reasons_gets_them_from_a_reasons_job(
    client: httpx.Client, server: Server
) -> None:
    """POST /api/recordings/{id}/reasons on a saved run whose reasons are gone (as one saved before
    session 26): a job of kind reasons reruns it and its task paths say why again."""
    r = client.post("/api/sim/jobs", json={"scenario": {**SMALL, "seed": 11}, "save": True})
    job = wait_job(client, r.json()["job_id"], ("done", "failed", "cancelled"))[-1]
    rid = job["recording_id"]
    assert job["status"] == "done" and rid
    # kept reasons: nothing to work out
    again = client.post(f"/api/recordings/{rid}/reasons")
    assert again.status_code == 409 and again.json()["detail"]["code"] == "already_kept"
    db = Store(server.settings.db_path)
    try:
        with db._tx() as c:  # the blobs a run saved before session 26 lacks
            c.execute("DELETE FROM derived WHERE recording_id = ? AND name IN (?, ?)", (rid, REASONS, NAMES))
    finally:
        db.close()
    pid = client.get(f"/api/recordings/{rid}/tasks", params={"q": "schbench-worker"}).json()[0]["pid"]
    path = client.get(f"/api/recordings/{rid}/tasks/{pid}/path").json()
    assert path["placements"] and all(p["reason"] is None for p in path["placements"])
    r = client.post(f"/api/recordings/{rid}/reasons")
    assert r.status_code == 202, r.text
    done = wait_job(client, r.json()["job_id"], ("done", "failed", "cancelled"))[-1]
    assert done["status"] == "done" and done["kind"] == "reasons" and done["recording_id"] == rid
    assert done["save"] is False and done["result"]["counters"] == job["result"]["counters"]
    path = client.get(f"/api/recordings/{rid}/tasks/{pid}/path").json()
    woken = [p for p in path["placements"] if p["kind"] == "wakeup"]
    assert woken and all(p["reason"] is not None for p in woken)
    # an unknown id is not found
    assert client.post("/api/recordings/nosuchid/reasons").status_code == 404
