"""bin/placemap from another working directory: openapi, admin import/list/delete, serve."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from collector import collector_binary
from ftrace_lines import G4, TRACES
from stored import as_stored_before

from placemap.realtime import POOL_THREAD_NAME
from placemap.settings import REPO_ROOT
from placemap.store import Store
from placemap.store.store import new_id

BIN = REPO_ROOT / "bin" / "placemap"


def _run(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PLACEMAP_DB": str(tmp / "cli.db"), "PLACEMAP_COLLECT": str(collector_binary(tmp))}
    return subprocess.run(
        [str(BIN), *args], cwd=tmp, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_openapi_lists_every_route(tmp_path: Path) -> None:
    p = _run(tmp_path, "openapi")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert "/api/recordings/{rid}/state" in doc["paths"]
    assert {"Recording", "Topology", "PlacementState", "Metrics", "Overview"} <= set(
        doc["components"]["schemas"]
    )
    assert not (tmp_path / "cli.db").exists(), "openapi does not touch the database"


def test_admin_import_list_delete(tmp_path: Path) -> None:
    p = _run(tmp_path, "admin", "import", str(G4), "--name", "g4 via cli")
    assert p.returncode == 0, p.stderr
    rid, events = p.stdout.split("\t")[:2]
    assert events == "72578 events"
    listed = _run(tmp_path, "admin", "list").stdout
    assert rid in listed and "g4 via cli" in listed and "ready" in listed
    assert _run(tmp_path, "admin", "delete", rid).returncode == 0
    assert rid not in _run(tmp_path, "admin", "list").stdout
    bad = _run(tmp_path, "admin", "delete", rid)
    assert bad.returncode == 1 and "no recording" in bad.stderr
    # An id from before ids avoided a leading '-' reaches delete after '--'.
    dashed = _run(tmp_path, "admin", "delete", "--", "-nnrZzMRNBLu")
    assert dashed.returncode == 1 and "no recording" in dashed.stderr


def test_admin_export_writes_ftrace_text(tmp_path: Path) -> None:
    rid = _run(tmp_path, "admin", "import", str(G4), "--name", "g4").stdout.split("\t")[0]
    out = _run(tmp_path, "admin", "export", rid)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# tracer: nop\n")
    assert len([ln for ln in out.stdout.splitlines() if not ln.startswith("#")]) == 72_578
    assert (
        "bash-13109   [000]    319.952374000: sched_wakeup_new: comm=bash pid=13113 prio=120 target_cpu=000\n"
        in out.stdout
    )
    to_file = _run(tmp_path, "admin", "export", rid, "--out", "g4.txt")
    assert to_file.returncode == 0 and (tmp_path / "g4.txt").read_text() == out.stdout
    # imported again, it is the same recording
    again = _run(tmp_path, "admin", "import", "g4.txt").stdout.split("\t")[1]
    assert again == "72578 events"
    missing = _run(tmp_path, "admin", "export", "nope")
    assert missing.returncode == 1 and "no recording nope" in missing.stderr
    nowhere = _run(tmp_path, "admin", "export", rid, "--out", "no/such/dir.txt")
    assert nowhere.returncode == 1 and "cannot write no/such/dir.txt" in nowhere.stderr


def test_admin_import_names_a_bad_topology_file_and_stores_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "topo.json"
    bad.write_text('{"cpus": "many"}')
    sparse = tmp_path / "sparse.json"
    cpu = {"online": True, "numa_node": 0, "package": 0}
    cpus = [{**cpu, "cpu": c, "core": c, "llc": 2 * c, "smt_siblings": [c]} for c in (0, 1)]
    llcs = [{"id": 2 * c, "cpus": [c], "numa_nodes": [0]} for c in (0, 1)]
    nodes = [{"id": 0, "cpus": [0, 1]}]
    machine = {"machine": "m", "source": "manual", "cpus": cpus, "llcs": llcs, "numa_nodes": nodes}
    sparse.write_text(json.dumps({**machine, "node_distances": [[10]]}))
    for topo, says in (
        (bad, "validation error"),
        (tmp_path / "none.json", "No such file"),
        (sparse, "llcs: their ids must be 0..1 in order (each LLC's index), not 0, 2"),
    ):
        p = _run(tmp_path, "admin", "import", str(G4), "--topology", str(topo))
        assert p.returncode == 1 and f"topology {topo}" in p.stderr and says in p.stderr, p.stderr
        assert "Traceback" not in p.stderr
    assert _run(tmp_path, "admin", "list").stdout == "", "no recording made"


def test_admin_import_on_a_preset_machine(tmp_path: Path) -> None:
    """A real Zen3 NPS4 excerpt imported on the preset of its machine: its CPUs sit in their LLCs,
    so its wakeups count by their waker's LLC (3 of 6 pulled to the waker's, as the poster marks);
    on a 20-CPU machine it names the CPUs that machine lacks and is not stored."""
    shortrun = TRACES / "zen3-2s-nps4-stream-excerpt-shortrun.ftrace.txt"
    p = _run(tmp_path, "admin", "import", str(shortrun), "--topology", "zen3-2s-nps4")
    assert p.returncode == 0, p.stderr
    rid = p.stdout.split("\t")[0]
    store = Store(tmp_path / "cli.db")
    rec = store.get_recording(rid)
    assert rec is not None and rec.topology_id is not None
    assert (store.get_topology(rec.topology_id) or {})["machine"] == "zen3-2s-nps4"
    by_waker = json.loads(store.derived(rid, "metrics.json") or b"{}")["wakeups"]["by_waker"]
    assert (by_waker["cross_llc"], by_waker["to_waker_llc"], by_waker["to_prev_llc"]) == (6, 3, 3)
    store.close()
    # its tasks most often woken from another LLC: stream's main thread (3 of its 4 pulled)
    shown = _run(tmp_path, "admin", "show", rid).stdout.splitlines()
    assert shown[-1] == (
        "tasks most often woken from another LLC: 4392 stream 4 (3 pulled), 4396 stream 1 (0 pulled), "
        "4406 stream 1 (0 pulled)"
    )
    # by LLC pair: the three pulls woke in their wakers' LLCs; CPU 60 (LLC 7) woke two threads in
    # LLC 14 (119 and 240), where the poster marks them sharing one LLC; a worker woken from CPU 206
    # (LLC 9) on its prev 111 (LLC 13)
    assert shown[5] == (
        "wakeups by LLC pair: in the waker's LLC 3 of 6 (50.0%); across LLCs most: LLC 7 -> 14 2, "
        "LLC 9 -> 13 1"
    )
    # the tasks behind the cell LLC 7 -> 14: the two threads CPU 60 woke there
    assert _run(tmp_path, "admin", "pairs", rid, "7", "14").stdout.splitlines() == [
        "LLC 7 -> 14: 2 wakeups",
        "  4392\tstream\t1",
        "  4406\tstream\t1",
    ]
    cut = _run(tmp_path, "admin", "pairs", rid, "7", "14", "--limit", "1").stdout.splitlines()
    assert cut == ["LLC 7 -> 14: 2 wakeups, the 1 woken most", "  4392\tstream\t1"]
    # placements stored before each wakeup's class was kept: rebuilt from the stored chunks
    as_stored_before(tmp_path / "cli.db", rid, ["waker_class"])
    assert _run(tmp_path, "admin", "pairs", rid, "7", "14", "--limit", "1").stdout.splitlines() == cut
    assert _run(tmp_path, "admin", "pairs", rid, "14", "7").stdout == "LLC 14 -> 7: 0 wakeups\n"
    for args, says in (
        ((rid, "7", "16"), "llc 16: the recording's machine has LLCs 0..15"),
        ((rid, "7", "14", "--limit", "0"), "--limit 0: list at least 1 task"),
        (("nope", "0", "0"), "no recording nope"),
    ):
        refused = _run(tmp_path, "admin", "pairs", *args)
        assert refused.returncode == 1 and says in refused.stderr, refused.stderr
    small = _run(tmp_path, "admin", "import", str(shortrun), "--topology", "bdw-1s-20")
    assert small.returncode == 1
    assert (
        "the trace names CPU 23, 31, 38, 60, 70, 84, 95, 97 and 10 more, which the machine bdw-1s-20"
        in small.stderr
    )
    unknown = _run(tmp_path, "admin", "import", str(shortrun), "--topology", "zen9")
    assert unknown.returncode == 1 and "a topology JSON file, or a preset: zen3-2s-nps1" in unknown.stderr


def test_admin_show_prints_the_whole_run_numbers_the_metrics_hold(tmp_path: Path) -> None:
    """`admin show ID`: the real g4 capture's whole-run numbers, each figure its metrics document's
    (as the dashboard's whole-run panel reads them); --json is that document."""
    rid = _run(tmp_path, "admin", "import", str(G4), "--name", "g4").stdout.split("\t")[0]
    store = Store(tmp_path / "cli.db")
    m = json.loads(store.derived(rid, "metrics.json") or b"{}")
    store.close()
    p = _run(tmp_path, "admin", "show", rid)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == f"g4 ({rid}) · ready · 72,578 events · 787.9 ms · ftrace"
    assert lines[1] == "machine g4 (inferred): 2 CPUs, 1 LLC, 1 node"
    mig, wk, bw = m["migrations"], m["wakeups"], m["wakeups"]["by_waker"]
    assert (
        f"migrations {mig['total']:,}: by level smt 0, llc {mig['by_level']['llc']:,}, node 0, cross_node 0; "
        in lines[2]
    )
    assert (
        f"by cause wakeup {mig['by_cause']['wakeup']:,}, fork 0, balance {mig['by_cause']['balance']:,}"
        in lines[2]
    )
    assert lines[3].startswith(
        f"wakeups {wk['total']:,}: on their last CPU {100 * wk['same_cpu'] / wk['total']:.1f}%"
    )
    known = bw["shared_llc"] + bw["cross_llc"]
    on_waker = f"on the waker's CPU {100 * bw['on_waker_cpu'] / known:.1f}%"
    assert f"{on_waker}; woken while it ran {bw['still_running']:,}" in lines[4]
    lat = m["wakeup_latency"]
    p50 = f"p50 {lat['p50_ns'] / 1000:,.1f}"
    assert lines[5].startswith(f"run-queue delay after a wakeup over {lat['samples']:,} wakeups (us): {p50}")
    assert lines[-1] == f"context switches {m['events_by_kind']['switch']:,}; events lost 0; lines skipped 12"
    as_json = _run(tmp_path, "admin", "show", rid, "--json")
    # as GET metrics serves it: the model's fields, null where the document has none
    assert json.loads(as_json.stdout) == {**m, "wakeup_latency_unread": None}
    # a document an older version stored, without the delays and the wakeups by their waker: show
    # counts them from the stored chunks, as GET metrics does, to the same figures
    store = Store(tmp_path / "cli.db")
    older = {**m, "wakeups": {k: v for k, v in m["wakeups"].items() if k != "by_waker"}}
    del older["wakeup_latency"]
    assert store.put_derived(rid, "metrics.json", json.dumps(older).encode())
    store.close()
    again = _run(tmp_path, "admin", "show", rid)
    assert again.returncode == 0 and again.stdout == p.stdout
    # the same older document over a damaged stored chunk: the delays are not read, and show says
    # which chunk stopped it (kept with the document: the next show says the same without a scan)
    store = Store(tmp_path / "cli.db")
    assert store.put_derived(
        rid, "metrics.json", json.dumps({k: v for k, v in m.items() if k != "wakeup_latency"}).encode()
    )
    seq = store.list_chunks(rid)[-1].seq
    store.close()
    with sqlite3.connect(tmp_path / "cli.db") as conn:
        conn.execute(
            "UPDATE chunks SET data = ? WHERE recording_id = ? AND seq = ?", (b"\x00not zstd" * 50, rid, seq)
        )
    conn.close()
    damaged = _run(tmp_path, "admin", "show", rid)
    assert damaged.returncode == 0, damaged.stderr
    assert damaged.stdout.splitlines()[5].startswith(
        f"run-queue delay after a wakeup: not read (stored chunk {seq}: "
    )
    assert _run(tmp_path, "admin", "show", rid).stdout == damaged.stdout
    missing = _run(tmp_path, "admin", "show", "nope")
    assert missing.returncode == 1 and "no recording nope" in missing.stderr
    (tmp_path / "junk.txt").write_text("no trace here\n")
    failed = _run(tmp_path, "admin", "import", str(tmp_path / "junk.txt")).stderr.split("\t")[0]
    shown = _run(tmp_path, "admin", "show", failed)
    assert shown.returncode == 1 and f"recording {failed} is failed: no counts (" in shown.stderr


def test_new_ids_never_start_with_a_dash() -> None:
    """A CLI argument starting with '-' is an option: 1 token_urlsafe draw in 64 would be unusable there."""
    ids = [new_id() for _ in range(20000)]
    assert not [i for i in ids if i.startswith("-")]
    assert len(set(ids)) == len(ids) and {len(i) for i in ids} == {12}
    assert any("-" in i for i in ids), "the alphabet still has '-' inside an id"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[bytes], int]:
    """bin/placemap serve on a free port, once /api/health answers."""
    port = _free_port()
    env = {**os.environ, "PLACEMAP_DB": str(tmp_path / "serve.db")}
    proc = subprocess.Popen(
        [str(BIN), "serve", "--port", str(port), *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            r = httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=5)
            assert r.json()["ok"] is True
            return proc, port
        except httpx.TransportError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError("bin/placemap serve did not come up") from None
            time.sleep(0.2)


def test_serve(tmp_path: Path) -> None:
    proc, _ = _serve(tmp_path)
    try:
        assert (tmp_path / "serve.db").is_file()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _policy(pid: int, tid: int) -> tuple[int, int]:
    """(rt_priority, policy) of a thread from /proc (stat fields 40 and 41, counted after the comm)."""
    stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # fields from 3 (state) on
    return int(fields[40 - 3]), int(fields[41 - 3])


def test_serve_realtime_makes_the_loop_and_its_executor_fifo_and_nothing_else(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("SCHED_FIFO needs root or CAP_SYS_NICE; this test runs as an unprivileged user")
    proc, port = _serve(tmp_path, "--realtime", "7")
    try:
        # a sync endpoint: served on anyio's request threads, which must stay ordinary
        assert httpx.get(f"http://127.0.0.1:{port}/api/recordings", timeout=10).status_code == 200
        threads = {
            tid: (Path(f"/proc/{proc.pid}/task/{tid}/comm").read_text().strip(), _policy(proc.pid, tid))
            for tid in map(int, os.listdir(f"/proc/{proc.pid}/task"))
        }
        # uvicorn's event loop is the main thread (tid == pid): SCHED_FIFO (1) at priority 7
        assert threads.pop(proc.pid)[1] == (7, 1)
        pool = {tid: pol for tid, (name, pol) in threads.items() if name == POOL_THREAD_NAME}
        others = {name: pol for tid, (name, pol) in threads.items() if tid not in pool}
        # the loop's executor (asyncio.to_thread: live commits; startup already used it) is real-time too
        assert pool and all(pol == (7, 1) for pol in pool.values()), threads
        assert others, "the server runs other threads (request threads, warm-up) that must stay ordinary"
        assert all(pol == (0, 0) for pol in others.values()), others
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_serve_realtime_out_of_range_is_a_clear_error(tmp_path: Path) -> None:
    p = _run(tmp_path, "serve", "--port", str(_free_port()), "--realtime", "0")
    assert p.returncode == 2
    assert "realtime_priority" in p.stderr and "greater than or equal to 1" in p.stderr
