"""Live collector benchmark (root, real tracefs): prints side by side, in one run,
  - decoder throughput on the recorded raw pages (Go BenchmarkDecodeRaw, one core),
  - hackbench runtime: no tracing / `perf record -e` the same tracepoints / placemap-collect live
    streaming to a local `placemap serve` (median of N runs each, and the ratio to no tracing),
  - loss at hackbench -g 8 with the default buffer, and the sustained event rate it ran at,
  - event timestamp -> subscribed websocket viewer latency, p50/p99 (over events).
Usage: backend/.venv/bin/python bench/live_bench.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pyarrow as pa
from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parents[1]
EVENTS = ["sched_wakeup_new", "sched_waking", "sched_wakeup", "sched_migrate_task", "sched_switch",
          "sched_process_fork", "sched_process_exit", "sched_process_exec"]  # fmt: skip


def sh(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=True, **kw)  # type: ignore[call-overload]


def hackbench_s(groups: int, loops: int) -> float:
    out = sh(["hackbench", "-g", str(groups), "-l", str(loops)]).stdout
    m = re.search(r"Time:\s*([\d.]+)", out)
    assert m, out
    return float(m.group(1))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Collector:
    def __init__(self, bin_: Path, url: str, token: str, tmp: Path) -> None:
        self.stats = tmp / f"stats-{time.monotonic_ns()}.json"
        self.proc = subprocess.Popen(
            [
                str(bin_),
                "live",
                "--server",
                url,
                "--token",
                token,
                "--quiet",
                "--stats-out",
                str(self.stats),
                "--spill-dir",
                str(tmp),
            ]
        )
        inst = Path(f"/sys/kernel/tracing/instances/placemap-{self.proc.pid}/tracing_on")
        while not inst.is_file() or inst.read_text().strip() != "1":
            assert self.proc.poll() is None
            time.sleep(0.02)
        time.sleep(0.3)

    def stop(self) -> dict[str, object]:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=120)
        summary: dict[str, object] = json.loads(self.stats.read_text())
        return summary


def watch(bin_: Path, url: str, token: str, tmp: Path, *, port: int, label: str, work: object) -> None:
    """Run work under a streaming collector with one subscribed viewer; print events, loss, latency."""
    col = Collector(bin_, url, token, tmp)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as c:
        rid = next(r["id"] for r in c.get("/api/recordings").json() if r["status"] == "live")
    lat: list[int] = []

    def view() -> None:
        with connect(f"{url}/api/recordings/{rid}/live", max_size=None) as ws:
            for msg in ws:
                now = time.monotonic_ns()  # the collector's instance uses trace_clock=mono
                if isinstance(msg, bytes):
                    ts = pa.ipc.open_stream(msg).read_all().column("ts_ns").to_numpy()
                    lat.extend((now - ts).tolist())
                elif json.loads(msg).get("status") != "live":
                    return

    viewer = threading.Thread(target=view, daemon=True)
    viewer.start()
    t0 = time.monotonic()
    assert callable(work)
    work()
    span = time.monotonic() - t0
    summary = col.stop()
    viewer.join(timeout=120)
    cpus = summary["cpus"]
    assert isinstance(cpus, list)
    traced = sum(int(c["events"]) for c in cpus)
    lost = sum(int(c["overrun"]) + int(c["dropped"]) for c in cpus)
    print(f"{label}: {traced} events, {traced / span / 1e3:.0f} k events/s over {span:.1f} s, lost {lost}")
    if lat:
        lat.sort()
        print(f"  latency event ts -> viewer: p50 {lat[len(lat) // 2] / 1e6:.1f} ms, "
              f"p99 {lat[int(len(lat) * 0.99)] / 1e6:.1f} ms over {len(lat)} events")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--loops", type=int, default=200)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("live bench: needs root (tracefs instances)", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="live-bench-"))
    bin_ = tmp / "placemap-collect"
    sh(["go", "build", "-o", str(bin_), "./cmd/placemap-collect"], cwd=ROOT / "collectors",
       env={**os.environ, "CGO_ENABLED": "0"})  # fmt: skip
    print(f"== live benchmark ({os.cpu_count()} cores, {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())})")

    bench = sh(["go", "test", "-run", "^$", "-bench", "BenchmarkDecodeRaw$", "-benchtime", "20x",
                "./internal/tracefs/"], cwd=ROOT / "collectors").stdout  # fmt: skip
    m = re.search(r"([\d.e+]+) events/cpu-s", bench)
    print(
        f"decoder (recorded raw pages, one core): {float(m.group(1)) / 1e6:.1f} M events/cpu-s"
        if m
        else bench
    )

    port = free_port()
    db = tmp / "bench.db"
    serve = [sys.executable, "-m", "placemap", "serve", "--db", str(db), "--port", str(port)]
    server = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with httpx.Client(timeout=1) as c:
            while True:
                try:
                    if c.get(f"http://127.0.0.1:{port}/api/health").status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.2)
        token = (
            sh([sys.executable, "-m", "placemap", "token", "--db", str(db), "create"])
            .stdout.split("\t")[1]
            .strip()
        )
        url = f"ws://127.0.0.1:{port}"

        # overhead: interleaved runs so drift hits every mode alike
        times: dict[str, list[float]] = {"none": [], "perf": [], "placemap": []}
        perf_ok = subprocess.run(["perf", "--version"], capture_output=True, check=False).returncode == 0
        for _ in range(args.runs):
            times["none"].append(hackbench_s(4, args.loops))
            if perf_ok:
                p = subprocess.Popen(["perf", "record", "-q", "-a", "-o", str(tmp / "perf.data"),
                                      *[a for e in EVENTS for a in ("-e", f"sched:{e}")]],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
                time.sleep(1.0)
                times["perf"].append(hackbench_s(4, args.loops))
                p.send_signal(signal.SIGINT)
                p.wait(timeout=120)
            col = Collector(bin_, url, token, tmp)
            times["placemap"].append(hackbench_s(4, args.loops))
            col.stop()
        base = statistics.median(times["none"])
        print(f"hackbench -g 4 -l {args.loops}, median of {args.runs}:")
        for k, v in times.items():
            if v:
                print(f"  {k:9s} {statistics.median(v):6.3f} s  x{statistics.median(v) / base:.2f}")

        # loss and latency at -g 8, then latency again with no workload of ours (the server not starved)
        for label, work in (
            (f"hackbench -g 8 -l {args.loops} x3", lambda: [hackbench_s(8, args.loops) for _ in range(3)]),
            ("no workload, 3 s", lambda: [time.sleep(3.0)]),
        ):
            watch(bin_, url, token, tmp, port=port, label=label, work=work)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
