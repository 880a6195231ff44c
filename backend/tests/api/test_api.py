"""The HTTP API against a real uvicorn server and SQLite file: upload the real g4 trace through the
Go importer, then every read route; size limit, failed imports, hostile comms, topologies, delete."""

from __future__ import annotations

import gzip
import io
import itertools
import json
import re
import sqlite3
import time
from typing import Any

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from conftest import UPLOAD_LIMIT, Server, wait_done
from ftrace_lines import G4
from stored import as_stored_before

from placemap.api.routes import data as data_routes
from placemap.replay import lane_busy as lane_busy_module
from placemap.replay import pair_tasks
from placemap.replay.accumulate import overview_rows
from placemap.replay.ingest import npz
from placemap.schema.events import EVENT_SCHEMA, KIND_NAMES
from placemap.store import Store

ARROW = "application/vnd.apache.arrow.stream"


@pytest.fixture(scope="module")
def g4(server: Server) -> dict[str, Any]:
    """vm2-hackbench-g4 uploaded once for the read tests."""
    with server.client() as c:
        r = c.post("/api/recordings", params={"name": "g4"}, content=G4.read_bytes())
        assert r.status_code == 202, r.text
        assert r.json()["status"] == "importing"
        rec = wait_done(c, r.json()["id"])
    assert rec["status"] == "ready", rec
    return rec


def _read_stream(data: bytes, zstd: bool = False) -> pa.Table:
    source: Any = pa.BufferReader(data)
    if zstd:
        source = pa.CompressedInputStream(source, "zstd")
    return pa.ipc.open_stream(source).read_all()


def _plain(table: pa.Table) -> pa.Table:
    return pa.Table.from_arrays(
        [pc.cast(table.column(f.name), f.type) for f in EVENT_SCHEMA], schema=EVENT_SCHEMA
    )


def test_health(client: httpx.Client) -> None:
    r = client.get("/api/health")
    assert r.status_code == 200 and r.json()["ok"] is True


def test_upload_g4_counts(g4: dict[str, Any]) -> None:
    assert g4["event_count"] == 72_578, "README: 72,578 events"
    assert g4["events_by_kind"]["migrate"] == 629, "README: 629 migrations"
    assert g4["lost_events"] == 0, "README: 0 lost"
    assert g4["format"] == "ftrace" and g4["cpus_seen"] == [0, 1]
    assert g4["import_summary"]["events_total"] == 72_578
    assert g4["topology_source"] == "inferred" and g4["progress"] is None
    assert g4["chunk_count"] == 2 and g4["bytes_stored"] > 0


def test_chunks_decode_to_the_same_rows(client: httpx.Client, g4: dict[str, Any], g4_table: pa.Table) -> None:
    rid = g4["id"]
    chunks = client.get(f"/api/recordings/{rid}/chunks").json()
    assert [c["rows"] for c in chunks] == [65_536, 7_042]
    parts = []
    for c in chunks:
        url = f"/api/recordings/{rid}/chunks/{c['seq']}"
        with client.stream("GET", url, headers={"Accept-Encoding": "zstd"}) as r:
            raw = r.read() if r.headers.get("content-encoding") is None else b"".join(r.iter_raw())
            assert r.headers["content-encoding"] == "zstd"
            assert r.headers["content-type"] == ARROW
            assert "immutable" in r.headers["cache-control"]
        assert len(raw) == c["bytes"]
        zstd_table = _read_stream(raw, zstd=True)
        plain = client.get(url, headers={"Accept-Encoding": "identity"})
        assert plain.headers.get("content-encoding") is None
        assert _read_stream(plain.content).equals(zstd_table)
        parts.append(_plain(zstd_table))
    assert pa.concat_tables(parts).equals(g4_table), "the stored rows are the parsed lines of the file"
    window = client.get(f"/api/recordings/{rid}/chunks", params={"t0_ns": chunks[1]["t_start_ns"] + 1})
    assert [c["seq"] for c in window.json()] == [1]


def test_events_window_as_arrow(client: httpx.Client, g4: dict[str, Any], g4_table: pa.Table) -> None:
    t0, t1 = 320_000_000_000, 320_100_000_000
    r = client.get(f"/api/recordings/{g4['id']}/events.arrow", params={"t0_ns": t0, "t1_ns": t1})
    assert r.status_code == 200 and r.headers["content-type"] == ARROW
    got = _read_stream(r.content)
    ts = g4_table.column("ts_ns")
    want = g4_table.filter(pc.and_(pc.greater_equal(ts, t0), pc.less_equal(ts, t1)))
    assert got.num_rows == want.num_rows > 0 and got.equals(want)


def test_cpu_lanes_as_arrow(client: httpx.Client, g4: dict[str, Any], g4_table: pa.Table) -> None:
    """GET lanes.arrow: a window's spans per CPU (replay.lanes, checked against the switch lines in
    tests/replay/test_lanes.py): each CPU's spans in time order, tiling the window between its
    switches; more switches than asked for, a window ending before it starts and an unknown
    recording are refused, named."""
    t0, t1 = 320_000_000_000, 320_100_000_000
    r = client.get(f"/api/recordings/{g4['id']}/lanes.arrow", params={"t0_ns": t0, "t1_ns": t1})
    assert r.status_code == 200 and r.headers["content-type"] == ARROW
    got = pa.ipc.open_stream(r.content).read_all()
    assert got.column_names == ["cpu", "start_ns", "end_ns", "pid", "comm", "tgid", "lost"]
    assert not any(got.column("lost").to_pylist()), "g4 lost nothing"
    rows = list(zip(*(got.column(n).to_pylist() for n in ("cpu", "start_ns", "end_ns", "pid")), strict=True))
    assert {c for c, *_ in rows} == {0, 1}
    assert all(t0 <= s < e <= t1 and p > 0 for _, s, e, p in rows)
    assert rows == sorted(rows)
    # each CPU's spans one after another, none overlapping the next
    assert all(a[2] <= b[1] for a, b in itertools.pairwise(rows) if a[0] == b[0])
    ts, kind = g4_table.column("ts_ns"), g4_table.column("kind")
    inside = pc.and_(
        pc.and_(pc.greater(ts, t0), pc.less_equal(ts, t1)), pc.equal(kind, KIND_NAMES.index("switch"))
    )
    switches = pc.sum(inside.cast(pa.int64())).as_py()
    # one span per switch out of a task and one after each CPU's last, less those of the idle task
    assert 0 < len(rows) <= switches + 2
    # a window past the recording's ends: its spans within the recording (no task runs on after it)
    beyond = {"t0_ns": g4["t_start_ns"] - 10**9, "t1_ns": g4["t_end_ns"] + 10**9}
    answer = client.get(f"/api/recordings/{g4['id']}/lanes.arrow", params=beyond)
    whole = pa.ipc.open_stream(answer.content).read_all()
    assert pc.min(whole.column("start_ns")).as_py() >= g4["t_start_ns"]
    assert pc.max(whole.column("end_ns")).as_py() == g4["t_end_ns"]
    # (the window answered, in its headers)
    assert answer.headers["x-lanes-t0-ns"] == str(g4["t_start_ns"])
    assert answer.headers["x-lanes-t1-ns"] == str(g4["t_end_ns"])
    few = client.get(
        f"/api/recordings/{g4['id']}/lanes.arrow", params={"t0_ns": t0, "t1_ns": t1, "limit": 10}
    )
    assert few.status_code == 422 and few.json()["detail"]["code"] == "window_too_wide"
    assert "more than 10 context switches" in few.json()["detail"]["message"]
    back = client.get(f"/api/recordings/{g4['id']}/lanes.arrow", params={"t0_ns": t1, "t1_ns": t0})
    assert back.status_code == 422 and back.json()["detail"]["code"] == "bad_window"
    assert (
        client.get("/api/recordings/nope/lanes.arrow", params={"t0_ns": t0, "t1_ns": t1}).status_code == 404
    )


def test_cpu_lanes_summed_per_part_as_arrow(client: httpx.Client, g4: dict[str, Any]) -> None:
    """GET lanes_busy.arrow (replay.lane_busy, checked part by part in tests/replay/test_lanes.py):
    zstd when accepted, the same table without; clipped to the recording; in one part each CPU's
    busy share is its spans of lanes.arrow summed; refusals named as the spans' route names them."""
    url = f"/api/recordings/{g4['id']}/lanes_busy.arrow"
    beyond = {"t0_ns": g4["t_start_ns"] - 10**9, "t1_ns": g4["t_end_ns"] + 10**9}
    with client.stream("GET", url, params={**beyond, "parts": 40}, headers={"Accept-Encoding": "zstd"}) as r:
        raw = b"".join(r.iter_raw())
        assert r.status_code == 200 and r.headers["content-encoding"] == "zstd"
    packed = _read_stream(raw, zstd=True)
    plain = client.get(url, params={**beyond, "parts": 40}, headers={"Accept-Encoding": "identity"})
    assert plain.headers.get("content-encoding") is None and len(plain.content) > len(raw)
    got = _read_stream(plain.content)
    assert got.equals(packed)
    assert got.column_names == [
        *("cpu", "start_ns", "end_ns", "pid", "comm", "tgid", "lost", "busy", "share", "spans", "mine")
    ]
    assert pc.min(got.column("start_ns")).as_py() == g4["t_start_ns"]
    assert pc.max(got.column("end_ns")).as_py() == g4["t_end_ns"]
    assert plain.headers["x-lanes-t1-ns"] == str(g4["t_end_ns"])
    assert {c for c in got.column("cpu").to_pylist()} == {0, 1} and got.num_rows <= 80
    one = _read_stream(client.get(url, params={**beyond, "parts": 1}).content)
    spans = _read_stream(client.get(f"/api/recordings/{g4['id']}/lanes.arrow", params=beyond).content)
    span = g4["t_end_ns"] - g4["t_start_ns"]
    for cpu, busy in zip(one.column("cpu").to_pylist(), one.column("busy").to_pylist(), strict=True):
        mine = spans.filter(pc.equal(spans.column("cpu"), cpu))
        ran = pc.sum(pc.subtract(mine.column("end_ns"), mine.column("start_ns"))).as_py()
        assert busy == pytest.approx(ran / span, rel=1e-6) and 0 < busy <= 1
    # asked about one task: each part's share it ran, its spans of lanes.arrow summed
    pid = int(spans.column("pid")[0].as_py())
    asked = _read_stream(client.get(url, params={**beyond, "parts": 1, "pid": pid}).content)
    assert not any(one.column("mine").to_pylist())
    for cpu, share in zip(asked.column("cpu").to_pylist(), asked.column("mine").to_pylist(), strict=True):
        mine = spans.filter(pc.and_(pc.equal(spans.column("cpu"), cpu), pc.equal(spans.column("pid"), pid)))
        ran = pc.sum(pc.subtract(mine.column("end_ns"), mine.column("start_ns"))).as_py() or 0
        assert share == pytest.approx(ran / span, rel=1e-6, abs=1e-9)
    assert max(asked.column("mine").to_pylist()) > 0
    assert client.get(url, params={**beyond, "pid": 0}).status_code == 422
    few = client.get(url, params={**beyond, "limit": 10})
    assert few.status_code == 422 and few.json()["detail"]["code"] == "window_too_wide"
    back = client.get(url, params={"t0_ns": 2, "t1_ns": 1})
    assert back.status_code == 422 and back.json()["detail"]["code"] == "bad_window"
    assert client.get(url, params={**beyond, "parts": 0}).status_code == 422
    assert client.get("/api/recordings/nope/lanes_busy.arrow", params=beyond).status_code == 404


def test_a_long_windows_summed_lanes_read_in_runs_answer_as_one_read(
    client: httpx.Client, g4: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """lanes_busy.arrow of a window whose chunks hold more events than one read takes (GROUP_ROWS,
    set to 1 here: the server runs in this process): read a part at a time, the same table as in one
    read; the limit may be asked up to 100,000,000 switches."""
    url = f"/api/recordings/{g4['id']}/lanes_busy.arrow"
    window = {"t0_ns": g4["t_start_ns"], "t1_ns": g4["t_end_ns"], "parts": 40}
    spans = _read_stream(client.get(f"/api/recordings/{g4['id']}/lanes.arrow", params=window).content)
    window["pid"] = int(spans.column("pid")[0].as_py())
    whole = _read_stream(client.get(url, params=window).content)
    assert max(whole.column("mine").to_pylist()) > 0
    monkeypatch.setattr(lane_busy_module, "GROUP_ROWS", 1)
    runs = client.get(url, params=window)
    assert runs.status_code == 200 and runs.headers["x-lanes-t1-ns"] == str(g4["t_end_ns"])
    got = _read_stream(runs.content)
    plain = [t.set_column(4, "comm", pc.cast(t.column("comm"), pa.string())) for t in (whole, got)]
    assert plain[0].equals(plain[1]) and got.num_rows > 40
    assert client.get(url, params={**window, "limit": 100_000_000}).status_code == 200
    assert client.get(url, params={**window, "limit": 100_000_001}).status_code == 422
    few = client.get(url, params={**window, "limit": 10})
    assert few.status_code == 422 and few.json()["detail"]["code"] == "window_too_wide"
    # a part whose own chunks hold more than one read takes: refused, named
    monkeypatch.setattr(lane_busy_module, "PART_ROWS_MAX", 1)
    wide = client.get(url, params=window)
    assert wide.status_code == 422 and wide.json()["detail"]["code"] == "window_too_wide"
    assert "zoom in (a narrower window), or ask for more parts" in wide.json()["detail"]["message"]


def test_a_recording_deleted_while_its_placements_are_rebuilt_is_404(
    server: Server, client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path or cell of a recording stored before wakers were kept waits for the rebuild; deleted in
    that time (another client's DELETE, made here by the rebuild itself: the one thing stood in, to
    make the order certain), it answers 404, not an empty path or cell."""
    for path, module in (("path", data_routes), ("cell", pair_tasks)):
        rid = wait_done(client, client.post("/api/recordings", content=G4.read_bytes()).json()["id"])["id"]
        pid = client.get(f"/api/recordings/{rid}/tasks").json()[0]["pid"]
        route = f"tasks/{pid}/path" if path == "path" else "llc-pairs/0/0/tasks"
        before = client.get(f"/api/recordings/{rid}/{route}").json()
        assert before[{"path": "placements", "cell": "tasks"}[path]], route
        as_stored_before(server.settings.db_path, rid)

        def deleted_meanwhile(_store: Store, rid: str, _topology: object) -> None:
            assert client.delete(f"/api/recordings/{rid}").status_code == 204

        monkeypatch.setattr(module, "fill_placements", deleted_meanwhile)
        gone = client.get(f"/api/recordings/{rid}/{route}")
        assert gone.status_code == 404 and gone.json()["detail"]["code"] == "recording_not_found", route
        monkeypatch.undo()


def test_events_as_ftrace_text(client: httpx.Client, g4: dict[str, Any], g4_table: pa.Table) -> None:
    r = client.get(f"/api/recordings/{g4['id']}/trace.txt")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    assert r.headers["content-disposition"] == 'attachment; filename="g4.ftrace.txt"'
    lines = [ln for ln in r.text.splitlines() if not ln.startswith("#")]
    assert len(lines) == 72_578
    # read back by the importer, uploaded like any trace (gzipped: the test server's upload limit)
    back = wait_done(
        client,
        client.post("/api/recordings", params={"name": "g4 again"}, content=gzip.compress(r.content)).json()[
            "id"
        ],
    )
    assert back["status"] == "ready", back
    again = _read_stream(client.get(f"/api/recordings/{back['id']}/events.arrow").content)
    assert _plain(again).equals(g4_table)
    # a window: the events in it, line for line
    t0, t1 = 320_000_000_000, 320_100_000_000
    window = client.get(f"/api/recordings/{g4['id']}/trace.txt", params={"t0_ns": t0, "t1_ns": t1}).text
    ts = g4_table.column("ts_ns")
    want = pc.sum(pc.and_(pc.greater_equal(ts, t0), pc.less_equal(ts, t1)).cast(pa.int64())).as_py()
    assert len([ln for ln in window.splitlines() if not ln.startswith("#")]) == want > 0
    assert client.get("/api/recordings/nope/trace.txt").status_code == 404
    # a bound beyond the store's int64 is a named 422, not a 500
    for route in ("trace.txt", "events.arrow", "chunks"):
        r = client.get(f"/api/recordings/{g4['id']}/{route}", params={"t0_ns": 10**30})
        assert r.status_code == 422, (route, r.status_code)


def test_state_at_t(client: httpx.Client, g4: dict[str, Any]) -> None:
    # 319.954263 [001] sched_switch: prev_pid=13093 prev_state=R ==> next_comm=hackbench next_pid=13114
    r = client.get(f"/api/recordings/{g4['id']}/state", params={"t_ns": 319_954_263_000})
    assert r.status_code == 200, r.text
    s = r.json()
    tasks = {t["pid"]: t for t in s["tasks"]}
    assert tasks[13114] == {"pid": 13114, "comm": "hackbench", "cpu": 1, "state": "running"}, (
        "switched in on CPU 1 at 319.954263"
    )
    assert tasks[13093]["state"] == "runnable", "prev_state=R: preempted"
    cpus = {c["cpu"]: c for c in s["cpus"]}
    assert cpus[1]["running_pid"] == 13114 and cpus[1]["running_comm"] == "hackbench"
    assert cpus[1]["runnable"] == sum(
        1 for t in s["tasks"] if t["cpu"] == 1 and t["state"] in ("runnable", "running")
    )
    assert s["event_index"] == 11 and s["dead_tasks"] == 0
    assert [llc["llc"] for llc in s["llcs"]] == [0]


def test_state_leaves_out_dead_tasks(client: httpx.Client, g4: dict[str, Any]) -> None:
    # Late in g4 most hackbench workers of the run have exited (sched_process_exit then a final
    # switch-out with prev_state X/Z): by default they are counted, not listed.
    rid, t = g4["id"], g4["t_end_ns"]
    full = client.get(f"/api/recordings/{rid}/state", params={"t_ns": t, "include_dead": "true"}).json()
    lean = client.get(f"/api/recordings/{rid}/state", params={"t_ns": t}).json()
    dead = [x for x in full["tasks"] if x["state"] == "dead"]
    assert len(dead) >= 160, "hackbench forks and exits 160+ tasks"
    assert full["dead_tasks"] == 0, "include_dead lists them, so none is left out"
    assert lean["dead_tasks"] == len(dead)
    assert all(x["state"] != "dead" for x in lean["tasks"])
    assert lean["tasks"] == [x for x in full["tasks"] if x["state"] != "dead"], "live tasks: same, same order"
    assert lean["cpus"] == full["cpus"] and lean["llcs"] == full["llcs"]
    assert lean["event_index"] == full["event_index"] == g4["event_count"]
    bad = client.get(f"/api/recordings/{rid}/state", params={"t_ns": t, "include_dead": "maybe"})
    assert bad.status_code == 422


def test_overview_and_metrics(client: httpx.Client, g4: dict[str, Any]) -> None:
    rid = g4["id"]
    ov = client.get(f"/api/recordings/{rid}/overview", params={"bins": 100}).json()
    assert ov["bins"] == 100 and len(ov["events"]) == 100
    assert sum(ov["events"]) == 72_578 and sum(ov["by_kind"]["migrate"]) == 629
    assert sum(ov["migrations_by_level"]["llc"]) == 629, "inferred topology: one LLC, each CPU its own core"
    assert ov["bin_ns"] * 100 >= ov["t_end_ns"] - ov["t_start_ns"]
    m = client.get(f"/api/recordings/{rid}/metrics").json()
    assert m["migrations"]["total"] == 629 and m["lost_events"] == 0
    assert m["migrations"]["by_cause"] == {"wakeup": 293, "fork": 0, "balance": 336}
    assert m["skipped_lines"] == 12, "the 12 header comment lines"
    util = m["llc_util"]["series"][0]["util"]
    assert len(util) > 10 and all(0.0 <= u <= 1.0 for u in util)
    assert len(m["per_cpu_busy"]) == 2


def test_metrics_stored_before_the_delays_were_measured_gain_them_when_read(
    server: Server, client: httpx.Client
) -> None:
    """A database an older version wrote: the recording's metrics lack wakeup_latency and the
    wakeups by their waker. The server reads them from the stored chunks the first time the
    metrics are asked for, and keeps them."""
    rec = wait_done(client, client.post("/api/recordings", content=G4.read_bytes()).json()["id"])
    rid = str(rec["id"])
    first = client.get(f"/api/recordings/{rid}/metrics").json()
    measured, by_waker = first["wakeup_latency"], first["wakeups"]["by_waker"]
    assert measured["samples"] > 1000 and measured["max_ns"] > measured["p99_ns"] > 0
    assert by_waker["shared_llc"] > 1000 and by_waker["on_waker_cpu"] > 1000
    db = Store(server.settings.db_path)
    body = json.loads(db.derived(rid, "metrics.json") or b"{}")
    del body["wakeup_latency"]
    del body["wakeups"]["by_waker"]
    assert db.put_derived(rid, "metrics.json", json.dumps(body).encode())
    again = client.get(f"/api/recordings/{rid}/metrics").json()
    assert again["wakeup_latency"] == measured and again["wakeups"]["by_waker"] == by_waker
    stored = json.loads(db.derived(rid, "metrics.json") or b"{}")
    assert stored["wakeup_latency"] == measured and stored["wakeups"]["by_waker"] == by_waker
    db.close()


def test_the_overview_bins_wakeups_as_the_metrics_count_them_and_fills_an_older_one(
    server: Server, client: httpx.Client
) -> None:
    """GET overview's wakeup rows add up to GET metrics' counts; an overview an older version
    stored (no wakeup rows) gets them from the stored chunks at its first read, and keeps them."""
    rec = wait_done(client, client.post("/api/recordings", content=G4.read_bytes()).json()["id"])
    rid = str(rec["id"])
    m = client.get(f"/api/recordings/{rid}/metrics").json()["wakeups"]
    ov = client.get(f"/api/recordings/{rid}/overview", params={"bins": 50}).json()
    assert {k: round(sum(v)) for k, v in ov["wakeups_by_waker"].items()} == m["by_waker"]
    assert round(sum(ov["wakeups_by_level"]["same_cpu"])) == m["same_cpu"] > 20_000
    db = Store(server.settings.db_path)
    blob = db.derived(rid, "overview.npz")
    assert blob is not None
    with np.load(io.BytesIO(blob)) as z:
        values, t0, width = z["values"], z["t0"], z["width"]
    assert db.put_derived(
        rid, "overview.npz", npz(values=values[: overview_rows(len(KIND_NAMES))[1]], t0=t0, width=width)
    )
    assert client.get(f"/api/recordings/{rid}/overview", params={"bins": 50}).json() == ov
    blob = db.derived(rid, "overview.npz")
    assert blob is not None
    with np.load(io.BytesIO(blob)) as z:
        assert np.array_equal(z["values"], values), "stored with its rows again"
    db.close()


def test_the_sched_domains_of_a_recordings_machine(client: httpx.Client, g4: dict[str, Any]) -> None:
    """The g4 trace's machine as its CPUs show it (two CPUs, one LLC, no SMT, as the VM that
    recorded it): one MC domain over both, as the kernel builds for it; per CPU, its own group first."""
    rid = g4["id"]
    d = client.get(f"/api/recordings/{rid}/domains").json()
    assert d["cpu"] == 0 and d["dmesg"].splitlines() == [
        "CPU0 attaching sched-domain(s):",
        " domain-0: span=0-1 level=MC",
        "  groups: 0:{ span=0 }, 1:{ span=1 }",
    ]
    (mc,) = d["domains"]
    assert mc["name"] == "MC" and mc["span"] == [0, 1] and mc["groups"] == [[0], [1]]
    assert (mc["min_interval_ms"], mc["max_interval_ms"], mc["imbalance_pct"]) == (2, 4, 117)
    assert d["params"].startswith("cpu0/domain0 MC: flags SD_BALANCE_NEWIDLE")
    one = client.get(f"/api/recordings/{rid}/domains", params={"cpu": 1}).json()
    assert one["dmesg"].splitlines()[2] == "  groups: 1:{ span=1 }, 0:{ span=0 }"
    r = client.get(f"/api/recordings/{rid}/domains", params={"cpu": 2})
    assert r.status_code == 422 and r.json()["detail"]["code"] == "cpu_not_online"
    assert "cpu 2" in r.json()["detail"]["message"]
    assert client.get(f"/api/recordings/{rid}/domains", params={"cpu": -1}).status_code == 422
    assert client.get("/api/recordings/no-such-id/domains").status_code == 404


def test_task_search_and_path(client: httpx.Client, g4: dict[str, Any]) -> None:
    rid = g4["id"]
    by_pid = client.get(f"/api/recordings/{rid}/tasks", params={"q": "13114"}).json()
    assert [(t["pid"], t["comm"]) for t in by_pid] == [(13114, "hackbench")]
    by_comm = client.get(f"/api/recordings/{rid}/tasks", params={"q": "hackb", "limit": 500}).json()
    assert len(by_comm) >= 160 and all("hackb" in t["comm"] for t in by_comm)
    path = client.get(f"/api/recordings/{rid}/tasks/13114/path").json()
    first = path["placements"][0]
    assert (first["kind"], first["cpu"], first["cause"]) == ("wakeup_new", 1, "fork"), (
        "13114's first placement is its wakeup_new targeting CPU 1"
    )
    migrations = [p for p in path["placements"] if p["kind"] == "migrate"]
    assert len(migrations) == by_pid[0]["migrations"] == 9
    assert all(p["level"] == "llc" for p in migrations)
    # its first wakeup names its waker as the kernel's own line does: the task running on the CPU of
    # the sched_waking before it ("hackbench-13113 [000] ...: sched_waking: ... pid=13114")
    with gzip.open(G4, "rt") as f:
        line = next(x for x in f if "sched_waking: comm=hackbench pid=13114 " in x)
    m = re.match(r"\s*(.+)-(\d+)\s+\[(\d+)\]", line)
    assert m is not None
    woken = next(p for p in path["placements"] if p["kind"] == "wakeup")
    assert (woken["waker_cpu"], woken["waker_pid"], woken["waker_comm"]) == (int(m[3]), int(m[2]), m[1])
    assert first["waker_cpu"] is None and first["waker_comm"] is None


def test_upload_on_the_machine_it_was_recorded_on(server: Server, client: httpx.Client) -> None:
    """A real Zen3 NPS4 excerpt uploaded with its machine's preset: the recording has the preset's
    topology, and its wakeups count by their waker's LLC (the poster's marks: 3 of 6 pulled). On a
    machine without its CPUs the import fails naming them; an unknown preset, or two machines, are
    refused before anything is stored."""
    body = (G4.parent / "zen3-2s-nps4-stream-excerpt-shortrun.ftrace.txt").read_bytes()
    rec = wait_done(
        client, client.post("/api/recordings", params={"preset": "zen3-2s-nps4"}, content=body).json()["id"]
    )
    assert rec["status"] == "ready", rec
    rid = str(rec["id"])
    topo = client.get(f"/api/recordings/{rid}/topology").json()
    assert (topo["machine"], topo["source"], len(topo["llcs"])) == ("zen3-2s-nps4", "preset", 16)
    wakeups = client.get(f"/api/recordings/{rid}/metrics").json()["wakeups"]
    by_waker = wakeups["by_waker"]
    assert (by_waker["cross_llc"], by_waker["to_waker_llc"], by_waker["to_prev_llc"]) == (6, 3, 3)
    # by LLC pair, of 16 LLCs: the 3 pulls each in its waker's LLC, CPU 60's two wakeups from LLC 7
    # into LLC 14, a worker's from 9 into 13
    assert wakeups["llc_pairs"] == {
        "llcs": 16,
        "pairs": [[1, 1, 1], [3, 3, 1], [7, 14, 2], [9, 13, 1], [14, 14, 1]],
    }
    # the tasks behind the cell LLC 7 -> 14: the two threads CPU 60 woke there; an LLC the machine
    # lacks is refused, named
    cell = client.get(f"/api/recordings/{rid}/llc-pairs/7/14/tasks").json()
    assert cell == {
        "waker_llc": 7,
        "llc": 14,
        "wakeups": 2,
        "tasks": [
            {"pid": 4392, "comm": "stream", "wakeups": 1},
            {"pid": 4406, "comm": "stream", "wakeups": 1},
        ],
    }
    one = client.get(f"/api/recordings/{rid}/llc-pairs/7/14/tasks", params={"limit": 1}).json()
    assert one["wakeups"] == 2 and one["tasks"] == cell["tasks"][:1]
    far = client.get(f"/api/recordings/{rid}/llc-pairs/7/16/tasks")
    assert far.status_code == 422 and far.json()["detail"]["code"] == "llc_out_of_range"
    assert "llc 16: the recording's machine has LLCs 0..15" in far.json()["detail"]["message"]
    # the task most often woken from another LLC first: stream's main thread, 4 of them, 3 pulled
    # (the poster's marks), then the two workers woken once each from another LLC
    first = client.get(f"/api/recordings/{rid}/tasks", params={"order": "cross_llc", "limit": 3}).json()
    top = first[0]
    assert (top["pid"], top["wakeups"], top["cross_llc"], top["pulled"]) == (4392, 4, 4, 3)
    assert [t["cross_llc"] for t in first] == [4, 1, 1]
    # stored before the tasks' counts: GET tasks counts them from the stored chunks, to the same list
    with sqlite3.connect(server.settings.db_path) as db:
        db.execute(
            "UPDATE tasks SET wakeups = NULL, cross_llc = NULL, pulled = NULL WHERE recording_id = ?", (rid,)
        )
    db.close()
    again = client.get(f"/api/recordings/{rid}/tasks", params={"order": "cross_llc", "limit": 3}).json()
    assert again == first
    # placements stored before each wakeup's waker and class were kept: the path and the cell's tasks
    # rebuild them from the stored chunks, to the same answers
    path = client.get(f"/api/recordings/{rid}/tasks/4392/path").json()
    assert [p["waker_class"] for p in path["placements"] if p["kind"] == "wakeup"].count("to_waker_llc") == 3
    as_stored_before(server.settings.db_path, rid)
    assert client.get(f"/api/recordings/{rid}/tasks/4392/path").json() == path
    as_stored_before(server.settings.db_path, rid)
    assert client.get(f"/api/recordings/{rid}/llc-pairs/7/14/tasks").json() == cell
    # a placement table that cannot be read is rebuilt from its events; with those damaged too, the
    # path names it
    with sqlite3.connect(server.settings.db_path) as db:
        db.execute("UPDATE chunks SET placements = ? WHERE recording_id = ?", (b"\x00not zstd" * 20, rid))
    db.close()
    assert client.get(f"/api/recordings/{rid}/tasks/4392/path").json() == path
    with sqlite3.connect(server.settings.db_path) as db:
        db.execute(
            "UPDATE chunks SET placements = ?, data = ? WHERE recording_id = ?",
            (b"\x00not zstd" * 20, b"\x00not zstd" * 20, rid),
        )
    db.close()
    unread = client.get(f"/api/recordings/{rid}/tasks/4392/path")
    assert unread.status_code == 409 and unread.json()["detail"]["code"] == "placements_unreadable"
    assert "the placements of stored chunk 0 cannot be read" in unread.json()["detail"]["message"]
    bad = client.get(f"/api/recordings/{rid}/tasks", params={"order": "pulls"})
    assert bad.status_code == 422
    small = wait_done(
        client, client.post("/api/recordings", params={"preset": "bdw-1s-20"}, content=body).json()["id"]
    )
    assert small["status"] == "failed"
    assert "the trace names CPU 23, 31, 38" in str(small["error"]) and "bdw-1s-20" in str(small["error"])
    before = len(client.get("/api/recordings").json())
    r = client.post("/api/recordings", params={"preset": "zen9"}, content=body)
    assert r.status_code == 422 and r.json()["detail"]["code"] == "unknown_preset"
    assert "zen3-2s-nps4" in r.json()["detail"]["message"]
    r = client.post(
        "/api/recordings",
        params={"preset": "zen3-2s-nps4", "topology_id": topo_id(client, rid)},
        content=body,
    )
    assert r.status_code == 422 and r.json()["detail"]["code"] == "two_machines"
    assert len(client.get("/api/recordings").json()) == before, "nothing stored for a refused upload"


def topo_id(client: httpx.Client, rid: str) -> str:
    return str(client.get(f"/api/recordings/{rid}").json()["topology_id"])


def test_oversized_upload_is_413_before_and_during_the_stream(server: Server, client: httpx.Client) -> None:
    before = len(client.get("/api/recordings").json())
    big = b"x" * (UPLOAD_LIMIT + 500_000)
    r = client.post("/api/recordings", content=big)
    assert r.status_code == 413 and r.json()["detail"]["code"] == "upload_too_large"

    def chunked() -> Any:  # no Content-Length: the limit is enforced while streaming
        for i in range(0, len(big), 65_536):
            yield big[i : i + 65_536]

    r = client.post("/api/recordings", content=chunked())
    assert r.status_code == 413 and r.json()["detail"]["code"] == "upload_too_large"
    assert len(client.get("/api/recordings").json()) == before, "no recording for a refused upload"
    # other uploads' spool files go once their import thread ends, just after they become ready
    deadline = time.monotonic() + 10
    while list(server.settings.upload_dir.glob("upload-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(server.settings.upload_dir.glob("upload-*")) == [], "no spool file left behind"


def _chunk_rows(server: Server, rid: str) -> int:
    with sqlite3.connect(server.settings.db_path) as db:
        n: int = db.execute("SELECT count(*) FROM chunks WHERE recording_id = ?", (rid,)).fetchone()[0]
        return n


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"garbage\nnot a trace\n", "unknown text format"),
        (gzip.compress(b"\x00\x01binary junk" * 100), "format"),
    ],
    ids=["text-garbage", "gzipped-binary-junk"],
)
def test_failed_import_leaves_no_chunks_and_a_reason(
    server: Server, client: httpx.Client, body: bytes, reason: str
) -> None:
    r = client.post("/api/recordings", params={"name": "bad"}, content=body)
    assert r.status_code == 202
    rec = wait_done(client, r.json()["id"])
    assert rec["status"] == "failed"
    assert isinstance(rec["error"], str) and reason in rec["error"], rec["error"]
    assert rec["event_count"] == 0 and rec["chunk_count"] == 0
    assert _chunk_rows(server, str(rec["id"])) == 0
    r = client.get(f"/api/recordings/{rec['id']}/chunks")
    assert r.status_code == 409 and r.json()["detail"]["code"] == "recording_failed"


def test_truncated_gzip_keeps_the_lines_before_the_cut(client: httpx.Client) -> None:
    data = G4.read_bytes()[:100_000]
    rec = wait_done(client, client.post("/api/recordings", content=data).json()["id"])
    assert rec["status"] == "ready", "the importer keeps what was good and says so"
    assert 0 < rec["event_count"] < 72_578
    assert any("truncated" in w for w in rec["import_summary"]["warnings"])


HOSTILE = ["<script>", "x pid=1 prio=1", "a\"b'c&d;"]


def test_hostile_comm_round_trips(client: httpx.Client) -> None:
    lines = gzip.decompress(G4.read_bytes()).decode().splitlines()[:400]
    text = "\n".join(lines) + "\n"
    for i, name in enumerate(HOSTILE):  # rename three real tasks everywhere they are named
        pid = 13114 + i
        text = re.sub(
            rf"(comm|prev_comm|next_comm|child_comm)=hackbench (\w*pid)={pid} ", rf"\1={name} \2={pid} ", text
        )
        text = re.sub(rf"^ *hackbench-{pid} ", f"{name:>16}-{pid} ", text, flags=re.MULTILINE)
    rec = wait_done(
        client, client.post("/api/recordings", params={"name": "hostile"}, content=text.encode()).json()["id"]
    )
    assert rec["status"] == "ready", rec
    rid = rec["id"]
    for i, name in enumerate(HOSTILE):
        found = client.get(f"/api/recordings/{rid}/tasks", params={"q": name}).json()
        assert (13114 + i, name) in [(t["pid"], t["comm"]) for t in found], name
    table = _read_stream(client.get(f"/api/recordings/{rid}/events.arrow").content)
    assert set(HOSTILE) <= set(table.column("comm").to_pylist())


def test_topology_upload_classifies_by_it(server: Server, client: httpx.Client) -> None:
    topo = {
        "machine": "two-sockets",
        "source": "manual",
        "cpus": [
            {"cpu": c, "online": True, "core": c, "llc": c, "numa_node": c, "package": c, "smt_siblings": [c]}
            for c in (0, 1)
        ],
        "llcs": [{"id": c, "cpus": [c], "numa_nodes": [c]} for c in (0, 1)],
        "numa_nodes": [{"id": c, "cpus": [c]} for c in (0, 1)],
        "node_distances": [[10, 32], [32, 10]],
        # what placemap-collect topology writes for a machine sysfs had to fill in; shown as text
        "notes": ["CPUs 2-3 were offline when the topology was read", "<b>node 1</b> & <script>x</script>"],
    }
    r = client.post("/api/topologies", json=topo)
    assert r.status_code == 201
    tid = r.json()["id"]
    assert client.get(f"/api/topologies/{tid}").json()["machine"] == "two-sockets"
    r = client.post("/api/recordings", params={"topology_id": tid}, content=G4.read_bytes())
    rec = wait_done(client, r.json()["id"])
    assert rec["topology_id"] == tid and rec["topology_source"] == "manual"
    assert client.get(f"/api/recordings/{rec['id']}/topology").json()["notes"] == topo["notes"]
    m = client.get(f"/api/recordings/{rec['id']}/metrics").json()
    assert m["migrations"]["by_level"] == {"smt": 0, "llc": 0, "node": 0, "cross_node": 629}
    # each CPU its own core, LLC, package and node: every level below NUMA has one CPU and
    # degenerates, as the kernel drops it; one NUMA domain remains
    d = client.get(f"/api/recordings/{rec['id']}/domains", params={"cpu": 1}).json()
    assert d["dmesg"].splitlines() == [
        "CPU1 attaching sched-domain(s):",
        " domain-0: span=0-1 level=NUMA",
        "  groups: 1:{ span=1 }, 0:{ span=0 }",
    ]
    assert d["domains"][0]["numa_distance"] == 32 and "SD_NUMA" in d["domains"][0]["flags"]
    assert len(m["llc_util"]["series"]) == 2
    bad = client.post("/api/topologies", json={"machine": "x"})
    assert bad.status_code == 422 and bad.json()["detail"]["code"] == "invalid_request"
    # a CPU number no kernel has (NR_CPUS is at most 8192): refused, before a recording's
    # CPU-by-CPU level table (its side the largest CPU number) could be built from it
    far = {**topo, "cpus": [*topo["cpus"], {**topo["cpus"][1], "cpu": 8192}]}
    bad = client.post("/api/topologies", json=far)
    assert bad.status_code == 422 and "cpus.2.cpu" in bad.json()["detail"]["message"]
    edge = {**topo, "cpus": [*topo["cpus"], {**topo["cpus"][1], "cpu": 8191, "online": False}]}
    assert client.post("/api/topologies", json=edge).status_code == 201
    # an offline CPU in no LLC (llc null, as placemap-collect writes it) is no numbering problem
    offline = {**topo, "cpus": [*topo["cpus"], {**topo["cpus"][1], "cpu": 2, "online": False, "llc": None}]}
    assert client.post("/api/topologies", json=offline).status_code == 201
    # LLCs numbered as no figure by LLC could index them: the ids not 0..n-1, or a CPU's llc beyond
    # the LLCs listed (its wakeups by LLC pair would vanish unseen); refused, named
    sparse = {**topo, "llcs": [{**topo["llcs"][0]}, {**topo["llcs"][1], "id": 4}]}
    bad = client.post("/api/topologies", json=sparse)
    assert bad.status_code == 422 and bad.json()["detail"]["code"] == "bad_topology"
    assert (
        bad.json()["detail"]["message"]
        == "llcs: their ids must be 0..1 in order (each LLC's index), not 0, 4"
    )
    beyond = {**topo, "cpus": [topo["cpus"][0], {**topo["cpus"][1], "llc": 2}]}
    bad = client.post("/api/topologies", json=beyond)
    assert bad.status_code == 422
    assert bad.json()["detail"]["message"] == "cpus: CPU 1's llc 2 is not one of the 2 LLCs listed (ids 0..1)"
    none = {**topo, "llcs": []}
    bad = client.post("/api/topologies", json=none)
    assert bad.status_code == 422
    assert bad.json()["detail"]["message"] == "cpus: CPU 0's llc 0 is not an LLC: the topology lists none"
    # one stored before that check, named by id at an upload: refused there, nothing imported
    db = Store(server.settings.db_path)
    old_id = db.put_topology(beyond)
    db.close()
    before = len(client.get("/api/recordings").json())
    up = client.post("/api/recordings", params={"topology_id": old_id}, content=G4.read_bytes())
    assert up.status_code == 422 and up.json()["detail"]["code"] == "bad_topology"
    assert old_id in up.json()["detail"]["message"] and "CPU 1's llc 2" in up.json()["detail"]["message"]
    assert len(client.get("/api/recordings").json()) == before


def test_delete_and_unknown_ids(server: Server, client: httpx.Client) -> None:
    rec = wait_done(client, client.post("/api/recordings", content=G4.read_bytes()).json()["id"])
    rid = rec["id"]
    assert client.delete(f"/api/recordings/{rid}").status_code == 204
    r = client.get(f"/api/recordings/{rid}")
    assert r.status_code == 404 and r.json()["detail"]["code"] == "recording_not_found"
    assert client.get(f"/api/recordings/{rid}/chunks/0").status_code == 404
    assert _chunk_rows(server, str(rid)) == 0
    assert rid not in [x["id"] for x in client.get("/api/recordings").json()]


def test_unknown_api_path_is_json_404(client: httpx.Client) -> None:
    r = client.get("/api/nope")
    assert r.status_code == 404 and "message" in r.json()["detail"]


def test_frontend_is_served_with_index_fallback(server: Server, client: httpx.Client) -> None:
    dist = server.settings.frontend_dist
    (dist / "assets").mkdir(parents=True, exist_ok=True)
    (dist / "assets" / "app.js").write_text("console.log('placemap')")
    if not (dist / "index.html").exists():
        (dist / "index.html").write_text("<!doctype html><title>placemap</title>")
    index = (dist / "index.html").read_text()
    assert client.get("/").text == index
    assert client.get("/recordings/abc").text == index, "client-side routes get index.html"
    assert client.get("/assets/app.js").text == "console.log('placemap')"
    assert client.get("/../../etc/passwd").text == index, "no path escapes dist"
    r = client.get("/api/nope/deeper")
    assert r.status_code == 404 and r.headers["content-type"] == "application/json"


def test_json_is_gzipped_and_chunks_are_not_compressed_twice(
    client: httpx.Client, g4: dict[str, Any]
) -> None:
    rid = g4["id"]
    r = client.get(f"/api/recordings/{rid}/metrics", headers={"Accept-Encoding": "gzip"})
    assert r.headers["content-encoding"] == "gzip" and r.json()["migrations"]["total"] == 629
    with client.stream(
        "GET", f"/api/recordings/{rid}/chunks/1", headers={"Accept-Encoding": "gzip, zstd"}
    ) as s:
        assert s.headers["content-encoding"] == "zstd"
    r = client.get(f"/api/recordings/{rid}/chunks/1", headers={"Accept-Encoding": "gzip"})
    assert r.headers.get("content-encoding") is None, "arrow is not gzipped on the fly"
