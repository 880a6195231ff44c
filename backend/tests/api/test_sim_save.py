"""`placemap sim --save`: the run stored as a recording in the real server's SQLite file, read back
through the real API: events per kind equal the simulator's counters, the topology is the preset's,
and the replayed state at several times agrees with the simulator's own event stream."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import Server, wait_done
from ftrace_lines import G4

from placemap.cli import main
from placemap.schema.events import BATCH_ROWS
from placemap.schema.models.topology_schema import Topology
from placemap.sim.scenario import parse_scenario, run_scenario, simulate
from placemap.sim.topology import preset
from placemap.sim.trace import MIGRATE, SWITCH, WAKEUP, WAKEUP_NEW, EventLog

# ~80k events: more than one stored chunk, so a seek past the first crosses a keyframe
SCENARIO: dict[str, Any] = {
    "topology": "icx-2s",
    "workload": {"kind": "hackbench", "groups": 2, "loops": 500},
    "hints": ["wake_affine"],
    "seed": 7,
    "duration_ms": 1000,
}


@pytest.fixture(scope="module")
def saved(server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    f = tmp_path_factory.mktemp("sim") / "scenario.json"
    f.write_text(json.dumps(SCENARIO))
    buf = io.StringIO()  # module scope: capsys is per test
    with contextlib.redirect_stdout(buf):
        code = main(
            ["sim", str(f), "--json", "--deterministic", "--save", "--db", str(server.settings.db_path)]
        )
    assert code == 0
    result: dict[str, Any] = json.loads(buf.getvalue())
    return result


@pytest.fixture(scope="module")
def sim_log() -> EventLog:
    log = EventLog()
    simulate(parse_scenario(SCENARIO), log)
    return log


def test_saved_result_is_the_plain_run_plus_the_recording_id(saved: dict[str, Any]) -> None:
    plain = run_scenario(SCENARIO, wall_clock=False, decisions=True)
    rid = saved.pop("recording_id")
    assert isinstance(rid, str) and rid
    assert saved == plain
    saved["recording_id"] = rid


def test_recording_holds_the_scenario_and_events_matching_the_counters(
    server: Server, saved: dict[str, Any], sim_log: EventLog
) -> None:
    with server.client() as c:
        rec = c.get(f"/api/recordings/{saved['recording_id']}").json()
        listed = {r["id"]: r for r in c.get("/api/recordings").json()}
        metrics = c.get(f"/api/recordings/{saved['recording_id']}/metrics").json()
    assert rec["status"] == "ready" and rec["source"] == "simulated"
    assert rec["scenario"] == SCENARIO
    assert listed[rec["id"]]["scenario"] == SCENARIO and listed[rec["id"]]["source"] == "simulated"
    assert rec["topology_source"] == "preset"
    # the run's metric, as the simulator measured it, for the dashboard's header and comparison
    m = saved["metric"]
    want = {**m, "complete": True, "incomplete": None, "samples": None, "note": None}
    assert rec["sim_metric"] == want and listed[rec["id"]]["sim_metric"] == want
    assert rec["event_count"] == len(sim_log) > BATCH_ROWS
    assert rec["chunk_count"] >= 2
    by_kind = rec["events_by_kind"]
    counters = saved["counters"]
    assert by_kind["migrate"] == counters["migrations"]["total"] > 0
    assert by_kind["waking"] == by_kind["wakeup"] == counters["wakeups"]["total"] > 0
    assert by_kind["switch"] == counters["context_switches"] > 0
    assert by_kind["fork"] == by_kind["wakeup_new"] - 1  # the first task is spawned, not forked
    # the run-queue delays after wakeups: the simulator's own count, and the store's from the saved
    # events (sched_wakeup/_new to the switch-in), give the same figures
    assert metrics["wakeup_latency"] == saved["wakeup_latency"]
    assert saved["wakeup_latency"]["samples"] > by_kind["wakeup"] // 2
    # the store's own classification of the same migrations
    assert metrics["migrations"]["total"] == counters["migrations"]["total"]
    assert metrics["migrations"]["by_cause"]["fork"] == counters["migrations"]["by_cause"]["fork"]
    assert metrics["migrations"]["by_cause"]["wakeup"] == counters["migrations"]["by_cause"]["wakeup"]


def test_topology_is_the_preset(server: Server, saved: dict[str, Any]) -> None:
    with server.client() as c:
        rec = c.get(f"/api/recordings/{saved['recording_id']}").json()
        r = c.get(f"/api/topologies/{rec['topology_id']}")
    assert r.status_code == 200
    assert Topology.model_validate(r.json()) == Topology.model_validate(preset("icx-2s").to_dict())
    assert len(r.json()["cpus"]) == preset("icx-2s").nr_cpus == 128


def _oracle(log: EventLog, t: int) -> tuple[int, dict[int, int], dict[int, int]]:
    """From the simulator's own rows: events at or before t, the task on each CPU that switched,
    and every task's CPU (its last placement, switch-in or switch-out), read as the replay reads
    a trace."""
    cols = log.columns()
    n = 0
    running: dict[int, int] = {}
    where: dict[int, int] = {}
    for i, ts in enumerate(cols["ts_ns"]):
        if ts > t:  # type: ignore[operator]
            break
        n += 1
        k, pid = cols["kind"][i], cols["pid"][i]
        assert isinstance(pid, int)
        if k in (WAKEUP_NEW,):
            where[pid] = cols["target_cpu"][i]  # type: ignore[assignment]
        elif k == MIGRATE:
            where[pid] = cols["dest_cpu"][i]  # type: ignore[assignment]
        elif k == WAKEUP:
            where[pid] = cols["cpu"][i]  # type: ignore[assignment]
        elif k == SWITCH:
            cpu, nxt = cols["cpu"][i], cols["next_pid"][i]
            assert isinstance(cpu, int) and isinstance(nxt, int)
            running[cpu] = nxt
            if pid:
                where[pid] = cpu  # switched out here: a trace says nothing newer about it
            if nxt:
                where[nxt] = cpu
    return n, running, where


@pytest.mark.parametrize("frac", [0.2, 0.5, 0.93])
def test_state_at_t_agrees_with_the_simulated_stream(
    server: Server, saved: dict[str, Any], sim_log: EventLog, frac: float
) -> None:
    with server.client() as c:
        rec = c.get(f"/api/recordings/{saved['recording_id']}").json()
        t = int(rec["t_start_ns"] + frac * (rec["t_end_ns"] - rec["t_start_ns"]))
        # include_dead: the oracle's `where` names exited tasks too (GET state counts them by default)
        st = c.get(f"/api/recordings/{rec['id']}/state", params={"t_ns": t, "include_dead": "true"}).json()
    n, running, where = _oracle(sim_log, t)
    assert st["event_index"] == n
    got_running = {c["cpu"]: c["running_pid"] for c in st["cpus"] if c["cpu"] in running}
    assert got_running == running
    assert any(pid for pid in running.values()), "something runs at t"
    tasks = {x["pid"]: x for x in st["tasks"]}
    for pid, cpu in where.items():
        assert tasks[pid]["cpu"] == cpu, (pid, tasks[pid], cpu)
    # a task placed elsewhere since its switch-in here is left out; every other task a CPU runs
    # is running there
    on_cpu = [(cpu, pid) for cpu, pid in running.items() if pid and where[pid] == cpu]
    assert on_cpu
    for cpu, pid in on_cpu:
        assert tasks[pid]["state"] == "running" and tasks[pid]["cpu"] == cpu


def test_a_saved_pair_prints_the_dashboard_links_that_open_each_run_and_both_side_by_side(
    server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.json"
    small = {**SCENARIO, "workload": {"kind": "schbench", "messengers": 1, "workers": 4}, "duration_ms": 150}
    f.write_text(json.dumps(small))
    db = str(server.settings.db_path)
    code = main(["sim", str(f), "--save", "--baseline", "--db", db, "--dashboard", server.url + "/"])
    out = capsys.readouterr().out
    assert code == 0, out
    links = {
        line.split(": http", 1)[0]: "http" + line.split(": http", 1)[1]
        for line in out.splitlines()
        if ": http" in line
    }
    side = urlsplit(links["side by side"])
    assert f"{side.scheme}://{side.netloc}" == server.url and side.path == "/"
    q = {k: v[0] for k, v in parse_qs(side.query).items()}
    with server.client() as c:
        run, base = c.get(f"/api/recordings/{q['rec']}").json(), c.get(f"/api/recordings/{q['cmp']}").json()
    # the run (with its hints) first, its baseline beside it, each also linked alone
    assert run["scenario"]["hints"] == SCENARIO["hints"] and base["scenario"].get("hints", []) == []
    assert links[f"saved as recording {q['rec']}"] == f"{server.url}/?rec={q['rec']}"
    assert links[f"baseline saved as recording {q['cmp']}"] == f"{server.url}/?rec={q['cmp']}"


def test_bad_scenario_stores_nothing(
    server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with server.client() as c:
        before = len(c.get("/api/recordings").json())
    f = tmp_path / "bad.json"
    f.write_text(json.dumps({**SCENARIO, "features": {"SIS_NOPE": True}}))
    code = main(["sim", str(f), "--json", "--save", "--db", str(server.settings.db_path)])
    err = capsys.readouterr().err
    assert code == 2 and "features" in err and "SIS_NOPE" in err
    with server.client() as c:
        assert len(c.get("/api/recordings").json()) == before


def test_a_saved_run_past_the_event_bound_stops_naming_duration_ms_and_the_list_shows_why(
    server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SCENARIO stores ~80k events; PLACEMAP_SIM_MAX_SAVED_EVENTS=20000 stops it at the bound: the
    command exits 2 naming duration_ms, and the recording is listed as failed, saying why."""
    f = tmp_path / "s.json"
    f.write_text(json.dumps(SCENARIO))
    monkeypatch.setenv("PLACEMAP_SIM_MAX_SAVED_EVENTS", "20000")
    code = main(["sim", str(f), "--save", "--db", str(server.settings.db_path)])
    err = capsys.readouterr().err
    assert (
        code == 2
        and "placemap sim: bad scenario: duration_ms: a saved run stores at most 20,000 events" in err
    )
    with server.client() as c:
        recs = [r for r in c.get("/api/recordings").json() if r["status"] == "failed"]
    assert any("a saved run stores at most 20,000 events" in (r.get("error") or "") for r in recs)


def test_no_task_runs_on_two_cpus_at_once(sim_log: EventLog) -> None:
    cols = sim_log.columns()
    on: dict[int, int] = {}  # pid -> CPU it was switched in on, until switched out there
    for i, k in enumerate(cols["kind"]):
        if k != SWITCH:
            continue
        cpu, prev, nxt = cols["cpu"][i], cols["pid"][i], cols["next_pid"][i]
        assert isinstance(cpu, int) and isinstance(prev, int) and isinstance(nxt, int)
        if prev and on.get(prev) == cpu:
            del on[prev]
        if nxt:
            assert nxt not in on, f"pid {nxt} switched in on CPU {cpu} while running on CPU {on[nxt]}"
            on[nxt] = cpu


def test_decisions_of_a_saved_run_are_served_and_a_capture_has_none(
    server: Server, saved: dict[str, Any]
) -> None:
    with server.client() as c:
        r = c.get(f"/api/recordings/{saved['recording_id']}/decisions")
        assert r.status_code == 200, r.text
        assert r.json() == saved["decisions"]
        assert sum(x["count"] for x in r.json()["wakeup"]) == saved["counters"]["wakeups"]["total"]
        assert c.get("/api/recordings/nope/decisions").status_code == 404
        # an imported capture: the kernel does not say why
        up = c.post("/api/recordings", params={"name": "capture"}, content=G4.read_bytes())
        assert up.status_code == 202, up.text
        rid = wait_done(c, up.json()["id"])["id"]
        r = c.get(f"/api/recordings/{rid}/decisions")
        assert r.status_code == 404 and r.json()["detail"]["code"] == "decisions_missing"
