"""The ingest websocket against a real server, driven by a Python client speaking wire.schema.json:
tokens (bad, revoked), a rejected batch that does not cost the connection its next good batch,
duplicates acknowledged and not stored twice, the explicit end turning the recording ready, no ack for a
batch once finalising has closed the session, a viewer shown each valid batch once (not a rejected one,
not a resend after a reconnect)."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import time
import uuid
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from conftest import LiveServer
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from placemap.schema.events import EVENT_SCHEMA
from placemap.store import Store
from placemap.store.live import LiveStore


def hello(token: str, topology: dict[str, Any], session: str) -> str:
    return json.dumps(
        {
            "type": "hello",
            "token": token,
            "session_id": session,
            "host": "test-host",
            "kernel_release": "6.0-test",
            "topology": topology,
            "events": ["sched_switch"],
        }
    )


def batch(ts: list[int], cpus: list[int]) -> bytes:
    n = len(ts)
    cols: dict[str, Any] = {f.name: [None] * n for f in EVENT_SCHEMA}
    cols.update(
        ts_ns=ts,
        cpu=cpus,
        kind=[4] * n,
        cur_pid=[1] * n,
        pid=[1] * n,
        comm=["<script>"] * n,
        prev_state=["S"] * n,
        next_pid=[0] * n,
        next_comm=["swapper/0"] * n,
        next_prio=[120] * n,
    )
    table = pa.Table.from_pydict(cols, schema=EVENT_SCHEMA)
    buf = io.BytesIO()
    with pa.ipc.new_stream(buf, EVENT_SCHEMA) as w:
        w.write_table(table)
    return buf.getvalue()


def send_batch(ws: ClientConnection, seq: int, data: bytes, rows: int) -> dict[str, Any]:
    ws.send(json.dumps({"type": "batch", "seq": seq, "rows": rows, "bytes": len(data)}))
    ws.send(data)
    answer: dict[str, Any] = json.loads(ws.recv(timeout=30))
    return answer


@contextmanager
def open_session(
    srv: LiveServer, token: str, topology: dict[str, Any], session: str
) -> Iterator[tuple[ClientConnection, dict[str, Any]]]:
    ws = connect(f"{srv.ws}/api/ingest")
    try:
        with ws:
            ws.send(hello(token, topology, session))
            welcome: dict[str, Any] = json.loads(ws.recv(timeout=30))
            yield ws, welcome
    finally:
        # the sync client can leave its socket to the garbage collector after a close the server
        # started (an unauthorized hello, an ended session), whose ResourceWarning then fails
        # whichever later test the collection happens in: closed here (idempotent)
        ws.socket.close()


def test_bad_and_revoked_tokens_are_refused(live_server: LiveServer, topology: dict[str, Any]) -> None:
    with open_session(live_server, "pmt_not-a-token", topology, uuid.uuid4().hex) as (ws, answer):
        assert answer["type"] == "error" and answer["code"] == "unauthorized"
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)
    tid, secret = live_server.token()
    with open_session(live_server, secret, topology, uuid.uuid4().hex) as (ws, answer):
        assert answer["type"] == "welcome" and answer["last_seq"] == -1
    revoke = subprocess.run(
        [sys.executable, "-m", "placemap", "token", "--db", str(live_server.db), "revoke", tid], check=False
    )
    assert revoke.returncode == 0
    with open_session(live_server, secret, topology, uuid.uuid4().hex) as (ws, answer):
        assert answer == {"type": "error", "code": "unauthorized", "message": answer["message"]}


def test_a_hello_whose_llcs_are_not_indices_is_refused(
    live_server: LiveServer, topology: dict[str, Any]
) -> None:
    """The hello's topology numbers its LLCs as no figure by LLC could index (a CPU's llc beyond
    the LLCs listed): refused, naming the CPU, and no session starts."""
    assert topology["llcs"], "the fixture's host has LLCs"
    cpu = next(c for c in topology["cpus"] if c.get("llc") is not None)
    n = len(topology["llcs"])
    bad = {**topology, "cpus": [{**c, "llc": n + 3} if c is cpu else c for c in topology["cpus"]]}
    _, secret = live_server.token()
    store = Store(live_server.db)
    before = len(store.list_recordings())
    with open_session(live_server, secret, bad, uuid.uuid4().hex) as (ws, answer):
        assert answer["type"] == "error" and answer["code"] == "bad_hello"
        assert f"CPU {cpu['cpu']}'s llc {n + 3} is not one of the {n} LLCs listed" in answer["message"]
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)
    assert len(store.list_recordings()) == before, "no session recorded"
    store.close()


def test_token_cli_lists_hashes_only(live_server: LiveServer) -> None:
    run = [sys.executable, "-m", "placemap", "token"]
    created = subprocess.run([*run, "create", "--name", "web-01"],
                             capture_output=True, text=True, check=True)  # fmt: skip
    tid, secret = created.stdout.strip().split("\t")
    listed = subprocess.run([*run, "list"], capture_output=True, text=True, check=True)
    assert f"{tid}\tweb-01\t" in listed.stdout and "active" in listed.stdout
    assert secret not in listed.stdout
    assert secret not in live_server.db.read_bytes().decode("latin-1")  # only its sha256 is stored
    missing = subprocess.run([*run, "revoke", "nope"], capture_output=True, check=False)
    assert missing.returncode == 1


def test_bad_batch_rejected_good_data_kept(live_server: LiveServer, topology: dict[str, Any]) -> None:
    _, secret = live_server.token()
    session = uuid.uuid4().hex
    cpus = [c["cpu"] for c in topology["cpus"]]
    bad_cpu = max(cpus) + 7
    with open_session(live_server, secret, topology, session) as (ws, welcome):
        rid = welcome["recording_id"]
        with live_server.client() as c:
            assert c.get(f"/api/recordings/{rid}").json()["status"] == "live"
        good0 = batch([100, 200, 300], [cpus[0]] * 3)
        assert send_batch(ws, 0, good0, 3) == {"type": "ack", "seq": 0}
        out_of_range = batch([400, 500], [cpus[0], bad_cpu])
        rej = send_batch(ws, 1, out_of_range, 2)
        assert rej["type"] == "reject" and rej["seq"] == 1 and f"cpu {bad_cpu}" in rej["reason"]
        unsorted = batch([900, 800], [cpus[0]] * 2)
        rej = send_batch(ws, 2, unsorted, 2)
        assert rej["type"] == "reject" and "ordered" in rej["reason"]
        wrong_rows = send_batch(ws, 3, good0, 5)
        assert wrong_rows["type"] == "reject" and "5 rows" in wrong_rows["reason"]
        # the same connection goes on: its next good batch is stored
        good4 = batch([600, 700], [cpus[-1]] * 2)
        assert send_batch(ws, 4, good4, 2) == {"type": "ack", "seq": 4}
        # a seq that does not increase on this connection is refused
        assert send_batch(ws, 4, good4, 2)["type"] == "reject"
    # a reconnect of the same session learns what was committed; a resend is a duplicate, not stored twice
    with open_session(live_server, secret, topology, session) as (ws, welcome):
        assert welcome == {"type": "welcome", "recording_id": rid, "last_seq": 4}
        assert send_batch(ws, 4, good4, 2) == {"type": "ack", "seq": 4, "duplicate": True}
        ws.close(code=1000, reason="end")
    rec = live_server.wait_status(rid, "ready")
    assert rec["event_count"] == 5 and rec["source"] == "live" and rec["host"] == "test-host"
    with live_server.client() as c:  # closed: an unclosed client's socket fails a later GC
        table = pa.ipc.open_stream(c.get(f"/api/recordings/{rid}/events.arrow").content).read_all()
    assert table.column("ts_ns").to_pylist() == [100, 200, 300, 600, 700]
    assert set(table.column("comm").to_pylist()) == {"<script>"}
    # an ended session cannot come back
    with open_session(live_server, secret, topology, session) as (ws, answer):
        assert answer["type"] == "error" and answer["code"] == "session_ended"


# The websockets sync client leaves its socket to the garbage collector after a client-initiated 1001
# close; the server side is what this test checks.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_vanished_collector_ends_after_timeout(live_server: LiveServer, topology: dict[str, Any]) -> None:
    _, secret = live_server.token()
    cpu = topology["cpus"][0]["cpu"]
    with open_session(live_server, secret, topology, uuid.uuid4().hex) as (ws, welcome):
        assert send_batch(ws, 0, batch([10, 20], [cpu, cpu]), 2)["type"] == "ack"
        ws.close(code=1001)  # going away, not an end: the recording waits for it, then ends
    rec = live_server.wait_status(welcome["recording_id"], "ready", timeout_s=30)
    assert rec["event_count"] == 2


def test_no_ack_once_finalising_closed_the_session(live_server: LiveServer, topology: dict[str, Any]) -> None:
    """The race behind lost-but-acknowledged batches: a (re)connected collector committing while the
    recording is finalised. Finalising closes the sessions in the store before it reads their batches; a
    batch after that is refused (no ack: the collector keeps it), never stored where no chunk will see it."""
    _, secret = live_server.token()
    session = uuid.uuid4().hex
    cpu = topology["cpus"][0]["cpu"]
    with open_session(live_server, secret, topology, session) as (ws, welcome):
        rid = welcome["recording_id"]
        assert send_batch(ws, 0, batch([10, 20], [cpu, cpu]), 2) == {"type": "ack", "seq": 0}
        store = Store(live_server.db)
        try:
            LiveStore(store).close_sessions(rid)  # what finalize does first, from another process here
        finally:
            store.close()
        answer = send_batch(ws, 1, batch([30, 40], [cpu, cpu]), 2)
        assert answer["type"] == "error" and answer["code"] == "session_ended"
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)
    with open_session(live_server, secret, topology, session) as (ws, answer):
        assert answer["type"] == "error" and answer["code"] == "session_ended"
    rec = live_server.wait_status(rid, "ready", timeout_s=30)
    assert rec["event_count"] == 2


def test_viewer_sees_each_valid_batch_once(live_server: LiveServer, topology: dict[str, Any]) -> None:
    """The feed shows a batch as soon as it is validated (before its commit); a rejected batch never, and
    a batch resent on a new connection of the same session (a duplicate) not a second time."""
    _, secret = live_server.token()
    session = uuid.uuid4().hex
    cpus = [c["cpu"] for c in topology["cpus"]]
    bad_cpu = max(cpus) + 7
    b0 = batch([10, 20], [cpus[0]] * 2)
    with open_session(live_server, secret, topology, session) as (ws, welcome):
        rid = welcome["recording_id"]
        with connect(f"{live_server.ws}/api/recordings/{rid}/live") as view:
            assert json.loads(view.recv(timeout=30))["type"] == "status"
            # frames come compressed once by the hub (zlib), not again per connection
            assert view.protocol.extensions == []
            assert send_batch(ws, 0, b0, 2) == {"type": "ack", "seq": 0}
            assert send_batch(ws, 1, batch([30, 40], [cpus[0], bad_cpu]), 2)["type"] == "reject"
            # the session reconnects (the old connection still open) and resends what it sent
            with open_session(live_server, secret, topology, session) as (ws2, again):
                assert again["last_seq"] == 0
                assert send_batch(ws2, 0, b0, 2) == {"type": "ack", "seq": 0, "duplicate": True}
                assert send_batch(ws2, 2, batch([50, 60], [cpus[-1]] * 2), 2) == {"type": "ack", "seq": 2}
                shown: list[list[int]] = []
                while not shown or shown[-1] != [50, 60]:
                    msg = view.recv(timeout=30)
                    if isinstance(msg, bytes):
                        shown.append(
                            pa.ipc.open_stream(zlib.decompress(msg)).read_all().column("ts_ns").to_pylist()
                        )
                assert shown == [[10, 20], [50, 60]]
                ws2.close(code=1000, reason="end")
    rec = live_server.wait_status(rid, "ready")
    assert rec["event_count"] == 4


def chunk_workers(srv: LiveServer) -> dict[int, list[str]]:
    """The server's chunk worker processes: pid -> command line."""
    assert srv.proc is not None
    out: dict[int, list[str]] = {}
    for task in Path(f"/proc/{srv.proc.pid}/task").iterdir():
        for pid in (task / "children").read_text().split():
            with contextlib.suppress(OSError):
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
                if "placemap.live.chunkproc" in cmd:
                    out[int(pid)] = cmd
    return out


SPARE_SETTLE_S = 1.0


def idle_spare(srv: LiveServer, not_pid: int = 0) -> int:
    """The pid of the server's spare chunk worker: once no recording is live, the one worker left (a spare
    has no --rid, but neither has a spare that took a recording); not `not_pid`. The same lone worker for
    SPARE_SETTLE_S: a worker marks its recording ready before it exits, and the server starts the next
    spare only once it has, so right after the last recording turned ready the lone worker can still be
    the previous one (a CI run took it for the spare, and the next session then got a worker of its own)."""
    deadline = time.monotonic() + 60
    seen, since = 0, 0.0
    with srv.client() as c:
        while True:
            live = [r for r in c.get("/api/recordings").json() if r["status"] == "live"]
            workers = chunk_workers(srv)
            if not live and len(workers) == 1 and not_pid not in workers:
                pid, cmd = next(iter(workers.items()))
                assert "--rid" not in cmd, cmd
                if pid != seen:
                    seen, since = pid, time.monotonic()
                elif time.monotonic() - since >= SPARE_SETTLE_S:
                    return pid
            else:
                seen = 0
            assert time.monotonic() < deadline, f"no lone spare: {workers}, live {live}"
            time.sleep(0.05)


def test_a_session_takes_the_spare_chunk_worker(live_server: LiveServer, topology: dict[str, Any]) -> None:
    """The spare worker, started while nothing was live, chunks the next live recording (no worker is
    started for it), and the server starts the next spare once that recording is finished."""
    first = idle_spare(live_server)
    _, secret = live_server.token()
    cpu = topology["cpus"][0]["cpu"]
    with open_session(live_server, secret, topology, uuid.uuid4().hex) as (ws, welcome):
        rid = welcome["recording_id"]
        assert send_batch(ws, 0, batch([10, 20], [cpu, cpu]), 2)["type"] == "ack"
        assert list(chunk_workers(live_server)) == [first]  # serving, and no other started
        ws.close(code=1000, reason="end")
    rec = live_server.wait_status(rid, "ready")
    assert rec["event_count"] == 2
    assert idle_spare(live_server, not_pid=first) != first
