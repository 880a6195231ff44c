"""`placemap-collect live` on this machine's real kernel against a real `placemap serve`: stored counts
agree with the kernel's own per-CPU stats of the collector's instance, killing and restarting the server
mid-run neither loses nor doubles events, and a subscribed viewer receives the events as Arrow frames."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from conftest import LiveServer, hackbench, new_server, tracefs_reason
from websockets.sync.client import connect

from placemap.schema.events import KIND_NAMES

reason = tracefs_reason()
pytestmark = pytest.mark.skipif(reason is not None, reason=reason or "")

TRACED = 8  # kinds 0..7 come from the ring buffer; 8 llc_util and 9 lost from the collector


def start_collector(
    bin_: Path, srv: LiveServer, token: str, tmp: Path, *extra: str
) -> subprocess.Popen[bytes]:
    cmd = [str(bin_), "live", "--server", srv.ws, "--token", token, "--stats-out", str(tmp / "stats.json"),
           "--spill-dir", str(tmp), "--drain-timeout", "60s", *extra]  # fmt: skip
    with (tmp / "collector.log").open("wb") as log:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(cmd, stderr=log)
    deadline = time.monotonic() + 30
    inst = Path("/sys/kernel/tracing/instances") / f"placemap-{proc.pid}"
    while not (inst / "tracing_on").is_file() or (inst / "tracing_on").read_text().strip() != "1":
        assert proc.poll() is None, (tmp / "collector.log").read_text()
        assert time.monotonic() < deadline, "the collector did not start tracing"
        time.sleep(0.05)
    return proc


def run_hackbench(seconds: float) -> int:
    runs = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        subprocess.run([hackbench(), "-g", "4", "-l", "100"], capture_output=True, check=True)
        runs += 1
    return runs


def stop_collector(proc: subprocess.Popen[bytes], tmp: Path) -> dict[str, Any]:
    proc.send_signal(signal.SIGINT)
    rc = proc.wait(timeout=120)
    log = (tmp / "collector.log").read_text()
    assert rc == 0, log
    assert not Path(f"/sys/kernel/tracing/instances/placemap-{proc.pid}").exists(), "instance left behind"
    summary: dict[str, Any] = json.loads((tmp / "stats.json").read_text())
    return summary


def stored(srv: LiveServer, rid: str) -> pa.Table:
    srv.wait_status(rid, "ready", timeout_s=120)
    with srv.client() as c:
        r = c.get(f"/api/recordings/{rid}/events.arrow")
        assert r.status_code == 200, r.text
        return pa.ipc.open_stream(r.content).read_all()


def test_counts_match_the_kernels_stats(live_server: LiveServer, collect_bin: Path, tmp_path: Path) -> None:
    _, token = live_server.token()
    proc = start_collector(collect_bin, live_server, token, tmp_path)
    frames: list[pa.Table] = []
    latencies: list[int] = []

    def view(rid: str) -> None:
        with connect(f"{live_server.ws}/api/recordings/{rid}/live", max_size=None) as ws:
            for msg in ws:
                if isinstance(msg, bytes):
                    t = pa.ipc.open_stream(zlib.decompress(msg)).read_all()  # frames are zlib streams
                    frames.append(t)
                    latencies.append(time.monotonic_ns() - int(t.column("ts_ns").to_numpy().max()))
                elif json.loads(msg).get("status") == "ready":
                    return

    try:
        rid = wait_recording(live_server)
        viewer = threading.Thread(target=view, args=(rid,), daemon=True)
        viewer.start()
        assert run_hackbench(3.0) > 0
    finally:
        summary = stop_collector(proc, tmp_path)
    assert summary["recording_id"] == rid and summary["unacked"] == 0 and summary["rejected"] == 0
    table = stored(live_server, rid)
    kinds = table.column("kind").to_numpy()
    cpus = table.column("cpu").to_numpy()
    by_cpu = Counter(cpus[kinds < TRACED].tolist())
    lost = table.column("lost_events").to_numpy(zero_copy_only=False)
    for c in summary["cpus"]:
        kernel_lost = c["overrun"] + c["dropped"]
        # every record the kernel let the reader consume is stored once; the rest is reported as lost
        assert c["entries"] == 0, c
        assert by_cpu[c["cpu"]] == c["read"], (c, by_cpu)
        lost_here = int(lost[(kinds == 9) & (cpus == c["cpu"])].sum())
        assert lost_here == kernel_lost, (c, lost_here)
    stored_by_kind = {KIND_NAMES[k]: n for k, n in Counter(kinds.tolist()).items()}
    assert stored_by_kind == summary["sent_by_kind"]
    assert {"switch", "wakeup", "waking", "fork", "exit"} <= stored_by_kind.keys()
    assert stored_by_kind.get("llc_util", 0) > 0
    viewer.join(timeout=60)
    assert frames and sum(f.num_rows for f in frames) <= table.num_rows
    print(f"viewer: {len(frames)} frames, latency p50 {sorted(latencies)[len(latencies) // 2] / 1e6:.0f} ms")


def wait_recording(srv: LiveServer) -> str:
    deadline = time.monotonic() + 30
    with srv.client() as c:
        while True:
            live = [r for r in c.get("/api/recordings").json() if r["status"] == "live"]
            if live:
                rid: str = live[0]["id"]
                return rid
            assert time.monotonic() < deadline, "no live recording appeared"
            time.sleep(0.05)


def live_chunks(srv: LiveServer, rid: str, n: int = 1) -> list[dict[str, Any]]:
    """The chunk list of a live recording once it has n chunks (a partial head chunk comes within
    seconds), with each chunk's bytes as served then."""
    deadline = time.monotonic() + 60
    with srv.client() as c:
        while True:
            chunks: list[dict[str, Any]] = c.get(f"/api/recordings/{rid}/chunks").json()
            if len(chunks) >= n:
                for k in chunks:
                    k["data"] = c.get(f"/api/recordings/{rid}/chunks/{k['seq']}").content
                return chunks
            assert c.get(f"/api/recordings/{rid}").json()["status"] == "live"
            assert time.monotonic() < deadline, "no chunk while live"
            time.sleep(0.2)


def same_chunks(srv: LiveServer, rid: str, seen: list[dict[str, Any]]) -> None:
    """The chunks read while live are, byte for byte, the first chunks of the finished recording."""
    with srv.client() as c:
        final = c.get(f"/api/recordings/{rid}/chunks").json()
        assert len(final) >= len(seen)
        for k, f in zip(seen, final, strict=False):
            assert {**k, "data": None} == {**f, "data": None}
            assert c.get(f"/api/recordings/{rid}/chunks/{k['seq']}").content == k["data"]


def test_replayable_while_live(live_server: LiveServer, collect_bin: Path, tmp_path: Path) -> None:
    """During a real run: chunks, the state at a time and the growing range read while live are what
    the finished recording serves."""
    _, token = live_server.token()
    proc = start_collector(collect_bin, live_server, token, tmp_path)
    try:
        rid = wait_recording(live_server)
        run_hackbench(1.0)
        first = live_chunks(live_server, rid)
        run_hackbench(1.0)
        seen = live_chunks(live_server, rid, len(first) + 1)
        assert seen[: len(first)] == first and seen[-1]["t_start_ns"] > first[-1]["t_end_ns"]
        t_mid = (seen[-1]["t_start_ns"] + seen[-1]["t_end_ns"]) // 2
        with live_server.client() as c:
            live_state = c.get(f"/api/recordings/{rid}/state", params={"t_ns": t_mid}).json()
    finally:
        summary = stop_collector(proc, tmp_path)
    assert summary["unacked"] == 0
    table = stored(live_server, rid)
    assert table.num_rows == summary["rows"]
    same_chunks(live_server, rid, seen)
    with live_server.client() as c:
        assert c.get(f"/api/recordings/{rid}/state", params={"t_ns": t_mid}).json() == live_state
    assert live_state["tasks"] and live_state["event_index"] > seen[-1]["first_row"]


def _policies(pid: int) -> dict[int, tuple[int, int]]:
    """tid -> (rt_priority, policy) of every thread of a process (stat fields 40 and 41)."""
    out = {}
    for tid in (int(t.name) for t in Path(f"/proc/{pid}/task").iterdir()):
        stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()  # fields from 3 (state) on
        out[tid] = (int(fields[40 - 3]), int(fields[41 - 3]))
    return out


def test_realtime_collector_runs_every_thread_fifo(
    live_server: LiveServer, collect_bin: Path, tmp_path: Path
) -> None:
    """--realtime 3: every thread of the collector, including those the Go runtime starts under load, is
    SCHED_FIFO (policy 1) at priority 3, and the run still delivers everything it read; its summary
    gives the longest wait in the collector and the Go Ps it ran on (one per 16 CPUs)."""
    _, token = live_server.token()
    proc = start_collector(collect_bin, live_server, token, tmp_path, "--realtime", "3")
    try:
        wait_recording(live_server)
        run_hackbench(1.0)
        threads = _policies(proc.pid)
    finally:
        summary = stop_collector(proc, tmp_path)
    assert len(threads) > 1 and set(threads.values()) == {(3, 1)}, threads
    assert summary["rows"] > 0 and summary["unacked"] == 0
    # the longest an event waited in the collector: at least the 100 ms batch age for a batch cut by age
    assert summary["max_wait_ms"] >= 90, summary["max_wait_ms"]
    # its Go code runs on one P per 16 CPUs (at least one), not the runtime's one per CPU
    assert summary["go_procs"] == max(1, (os.cpu_count() or 1) // 16), summary["go_procs"]


def test_server_killed_and_restarted_mid_run(collect_bin: Path, tmp_path: Path) -> None:
    srv = new_server(tmp_path)
    srv.start()
    try:
        _, token = srv.token()
        proc = start_collector(collect_bin, srv, token, tmp_path)
        try:
            rid = wait_recording(srv)
            run_hackbench(1.5)
            before_kill = live_chunks(srv, rid)
            srv.kill()  # SIGKILL: batches in flight are neither acknowledged nor, maybe, committed
            run_hackbench(1.5)  # the collector keeps reading the kernel meanwhile
            srv.start()
            run_hackbench(1.5)
        finally:
            summary = stop_collector(proc, tmp_path)
        assert summary["reconnects"] >= 1 and summary["unacked"] == 0
        table = stored(srv, rid)
        kinds = table.column("kind").to_numpy()
        stored_by_kind = {KIND_NAMES[k]: n for k, n in Counter(kinds.tolist()).items()}
        assert table.num_rows == summary["rows"]
        assert stored_by_kind == summary["sent_by_kind"]
        # none twice: no two rows are the same event (same time, CPU, kind, subject)
        keys = Counter(zip(table.column("ts_ns").to_pylist(), table.column("cpu").to_pylist(),
                           kinds.tolist(), table.column("pid").to_pylist(), strict=True))  # fmt: skip
        dup = [k for k, n in keys.items() if n > 1 and k[2] < TRACED]
        assert not dup, dup[:5]
        # the restarted server rebuilt its live chunks cut where they were: what a client read stays
        same_chunks(srv, rid, before_kill)
    finally:
        srv.stop()


def test_spill_cap_drops_are_reported_as_lost(collect_bin: Path, tmp_path: Path) -> None:
    """With the backend away the spill file stops at its cap (--spill-mb); the batches beyond it are
    dropped, and once the backend is back their events arrive as lost records: nothing disappears
    unseen."""
    srv = new_server(tmp_path)  # not started yet: the collector spills
    token = srv.token()[1]
    spill_dir = tmp_path / "spill"
    spill_dir.mkdir()
    cmd = [str(collect_bin), "live", "--server", srv.ws, "--token", token, "--stats-out",
           str(tmp_path / "stats.json"), "--spill-dir", str(spill_dir), "--mem-mb", "1", "--spill-mb", "1",
           "--compress=false", "--drain-timeout", "60s"]  # fmt: skip
    with (tmp_path / "collector.log").open("wb") as log:
        proc = subprocess.Popen(cmd, stderr=log)
    try:
        deadline = time.monotonic() + 120
        spilled, before = 0, -1
        # fill the spill file to its cap: a second of hackbench (batches every 100 ms) and the file has not
        # grown, so the batches past the cap were dropped (waiting for it to come within some bytes of the
        # cap depends on the batches' size: uncompressed, hundreds of KB each under hackbench here)
        while spilled == 0 or spilled != before:
            assert proc.poll() is None, (tmp_path / "collector.log").read_text()
            assert time.monotonic() < deadline, f"spill file at {spilled} bytes"
            run_hackbench(1.0)
            before, spilled = (
                spilled,
                max((p.stat().st_size for p in spill_dir.glob("placemap-spill-*")), default=0),
            )
        run_hackbench(2.0)
        assert max(p.stat().st_size for p in spill_dir.glob("placemap-spill-*")) <= 1 << 20
        srv.start()
        rid = wait_recording(srv)
        run_hackbench(1.0)
    finally:
        summary = stop_collector(proc, tmp_path)
    try:
        assert summary["spill_dropped"] > 0 and summary["spill_dropped_events"] > 0
        assert summary["unacked"] == 0
        table = stored(srv, rid)
        kinds = table.column("kind").to_numpy()
        lost = int(table.column("lost_events").to_numpy(zero_copy_only=False)[kinds == 9].sum())
        kernel_lost = sum(c["overrun"] + c["dropped"] for c in summary["cpus"])
        read = sum(c["read"] for c in summary["cpus"])
        assert lost == kernel_lost + summary["spill_dropped_events"]
        # every record the collector read is stored or reported lost
        assert int((kinds < TRACED).sum()) + summary["spill_dropped_events"] == read
        assert table.num_rows == summary["rows"] - summary["spill_dropped_rows"]
    finally:
        srv.stop()
