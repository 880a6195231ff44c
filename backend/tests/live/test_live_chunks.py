"""Chunking while live, driven by a Python wire client against a real server: a full chunk and a
partial head chunk appear while the recording is live, chunk bytes and the state at a time read then are
what the finished recording holds, and a batch older than what was chunked (chunking breaks) still ends
with every event stored, in order."""

from __future__ import annotations

import io
import time
import uuid
from typing import Any

import pyarrow as pa
from conftest import LiveServer
from test_ingest_protocol import open_session, send_batch

from placemap.schema.events import BATCH_ROWS, EVENT_SCHEMA

STEP_NS = 100_000  # 100 us between events: 80,000 events span 8 s of trace time


def switches(t0: int, n: int, cpus: list[int]) -> bytes:
    """n sched_switch events from t0, tasks 100..149 taking turns on the CPUs."""
    pids = [100 + i % 50 for i in range(n)]
    cols: dict[str, Any] = {f.name: [None] * n for f in EVENT_SCHEMA}
    cols.update(
        ts_ns=[t0 + i * STEP_NS for i in range(n)],
        cpu=[cpus[i % len(cpus)] for i in range(n)],
        kind=[4] * n,
        cur_pid=pids,
        pid=pids,
        comm=[f"task-{p}" for p in pids],
        prio=[120] * n,
        prev_state=["R"] * n,
        next_pid=[100 + (i + 1) % 50 for i in range(n)],
        next_comm=[f"task-{100 + (i + 1) % 50}" for i in range(n)],
        next_prio=[120] * n,
    )
    buf = io.BytesIO()
    with pa.ipc.new_stream(buf, EVENT_SCHEMA) as w:
        w.write_table(pa.Table.from_pydict(cols, schema=EVENT_SCHEMA))
    return buf.getvalue()


def wait_chunks(srv: LiveServer, rid: str, n: int, timeout_s: float = 60) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout_s
    with srv.client() as c:
        while True:
            r = c.get(f"/api/recordings/{rid}/chunks")
            assert r.status_code == 200, r.text
            chunks: list[dict[str, Any]] = r.json()
            if len(chunks) >= n:
                return chunks
            assert time.monotonic() < deadline, f"{len(chunks)} chunks while live, waited for {n}"
            time.sleep(0.1)


def test_chunks_and_state_while_live_are_the_final_ones(
    live_server: LiveServer, topology: dict[str, Any]
) -> None:
    _, secret = live_server.token()
    cpus = [c["cpu"] for c in topology["cpus"]]
    t0 = 1_000_000_000
    with open_session(live_server, secret, topology, uuid.uuid4().hex) as (ws, welcome):
        rid = welcome["recording_id"]
        assert send_batch(ws, 0, switches(t0, 80_000, cpus), 80_000)["type"] == "ack"
        # one full chunk at once; the rest (less the reorder hold-back) as a partial head chunk later
        chunks = wait_chunks(live_server, rid, 2)
        assert chunks[0]["rows"] == BATCH_ROWS and chunks[0]["first_row"] == 0
        assert 0 < chunks[1]["rows"] < BATCH_ROWS and chunks[1]["first_row"] == BATCH_ROWS
        with live_server.client() as c:
            rec = c.get(f"/api/recordings/{rid}").json()
            assert rec["status"] == "live"
            live_bytes = [c.get(f"/api/recordings/{rid}/chunks/{k['seq']}").content for k in chunks]
            t_mid = (chunks[1]["t_start_ns"] + chunks[1]["t_end_ns"]) // 2
            live_state = c.get(f"/api/recordings/{rid}/state", params={"t_ns": t_mid}).json()
        assert live_state["event_index"] > BATCH_ROWS
        assert any(cpu["running_pid"] for cpu in live_state["cpus"])
        # the CPU lanes while live: as far as the chunks go (the rest is still held back), and
        # over that window what the finished recording answers
        with live_server.client() as c:
            whole = {"t0_ns": t0, "t1_ns": t0 + 80_000 * STEP_NS}
            lanes = c.get(f"/api/recordings/{rid}/lanes.arrow", params=whole)
            assert lanes.status_code == 200, lanes.text
            assert lanes.headers["x-lanes-t1-ns"] == str(chunks[1]["t_end_ns"])
            live_lanes = pa.ipc.open_stream(lanes.content).read_all()
            assert max(live_lanes.column("end_ns").to_pylist()) == chunks[1]["t_end_ns"]
            assert set(live_lanes.column("cpu").to_pylist()) == set(cpus)
        # the time range grows with the next batch
        t1 = t0 + 80_000 * STEP_NS
        assert send_batch(ws, 1, switches(t1, 30_000, cpus), 30_000)["type"] == "ack"
        grown = wait_chunks(live_server, rid, 3)
        assert grown[:2] == chunks and grown[2]["t_start_ns"] > chunks[1]["t_end_ns"]
        ws.close(code=1000, reason="end")
    rec = live_server.wait_status(rid, "ready")
    assert rec["event_count"] == 110_000 and int(str(rec["chunk_count"])) >= 3
    with live_server.client() as c:
        final = c.get(f"/api/recordings/{rid}/chunks").json()
        assert final[: len(chunks)] == chunks
        assert sum(k["rows"] for k in final) == 110_000
        for k, data in zip(chunks, live_bytes, strict=True):
            assert c.get(f"/api/recordings/{rid}/chunks/{k['seq']}").content == data
        assert c.get(f"/api/recordings/{rid}/state", params={"t_ns": t_mid}).json() == live_state
        stored = {"t0_ns": t0, "t1_ns": chunks[1]["t_end_ns"]}
        final_lanes = c.get(f"/api/recordings/{rid}/lanes.arrow", params=stored).content
        assert pa.ipc.open_stream(final_lanes).read_all().equals(live_lanes)
        assert c.get(f"/api/recordings/{rid}/metrics").status_code == 200


def test_a_batch_older_than_the_chunks_still_ends_complete(
    live_server: LiveServer, topology: dict[str, Any]
) -> None:
    _, secret = live_server.token()
    cpus = [c["cpu"] for c in topology["cpus"]]
    t0 = 5_000_000_000
    with open_session(live_server, secret, topology, uuid.uuid4().hex) as (ws, welcome):
        rid = welcome["recording_id"]
        assert send_batch(ws, 0, switches(t0, 70_000, cpus), 70_000)["type"] == "ack"
        wait_chunks(live_server, rid, 1)
        # valid on its own (sorted, known CPUs) but it lands inside the first chunk's time range
        late = switches(t0 + 50 * STEP_NS + 1, 3, cpus)
        assert send_batch(ws, 1, late, 3)["type"] == "ack"
        ws.close(code=1000, reason="end")
    rec = live_server.wait_status(rid, "ready")
    assert rec["event_count"] == 70_003
    with live_server.client() as c:
        table = pa.ipc.open_stream(c.get(f"/api/recordings/{rid}/events.arrow").content).read_all()
    ts = table.column("ts_ns").to_pylist()
    assert len(ts) == 70_003 and ts == sorted(ts)
    assert ts.count(t0 + 50 * STEP_NS + 1) == 1
