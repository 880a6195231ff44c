"""Live collector benchmark (root, real tracefs): prints side by side, in one run,
  - decoder throughput on the recorded raw pages (Go BenchmarkDecodeRaw, one core),
  - hackbench runtime: no tracing / `perf record -e` the same tracepoints / placemap-collect live
    streaming to a local `placemap serve` (median of N runs each, and the ratio to no tracing),
  - event timestamp -> subscribed websocket viewer latency, p50/p99 over events, with no workload of ours
    and under hackbench -g 8, in two layouts: "one session" (server, collector, viewer and hackbench in
    the bench's session: one autogroup, so 320 hackbench tasks share the CPU with the Python server; the
    layout of the first measurement) and "own sessions" (server, collector and the workload each in
    their own session, as a service, a collector started from its own shell and a workload would be),
  - loss: hackbench -g 4/8/16/24 steps with the collector's default buffer, events/s and lost per step,
    and the highest sustained rate with 0 lost,
  - the collector's CPU time per event (getrusage of the collector process).
Usage: backend/.venv/bin/python bench/live_bench.py [--runs N] [--loops L] [--skip-overhead]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import pyarrow as pa
from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parents[1]
WARMUP_S = 5.0  # the server loads its numba kernels in a thread after start (holding the GIL)
EVENTS = ["sched_wakeup_new", "sched_waking", "sched_wakeup", "sched_migrate_task", "sched_switch",
          "sched_process_fork", "sched_process_exit", "sched_process_exec"]  # fmt: skip


def sh(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=True, **kw)  # type: ignore[call-overload,no-any-return]


def hackbench_s(groups: int, loops: int, own_session: bool = False) -> float:
    out = sh(
        ["hackbench", "-g", str(groups), "-l", str(loops)],
        start_new_session=own_session,
    ).stdout
    m = re.search(r"Time:\s*([\d.]+)", out)
    assert m, out
    return float(m.group(1))


def repeat(times: int, groups: int, loops: int, own_session: bool) -> None:
    for _ in range(times):
        hackbench_s(groups, loops, own_session)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Collector:
    def __init__(self, bin_: Path, url: str, token: str, tmp: Path, own_session: bool = False) -> None:
        self.stats = tmp / f"stats-{time.monotonic_ns()}.json"
        self.cpu_s = 0.0
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
            ],
            start_new_session=own_session,
        )
        inst = Path(f"/sys/kernel/tracing/instances/placemap-{self.proc.pid}/tracing_on")
        while not inst.is_file() or inst.read_text().strip() != "1":
            assert self.proc.poll() is None
            time.sleep(0.02)
        time.sleep(0.3)

    def stop(self) -> dict[str, object]:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=120)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the collector is the only child reaped here
        self.cpu_s = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
        summary: dict[str, object] = json.loads(self.stats.read_text())
        return summary


def pct(v: list[int], q: float) -> float:
    return v[min(len(v) - 1, int(len(v) * q))] / 1e6


@dataclass
class Run:
    """One streamed run: what the kernel recorded and lost, what the viewer saw and when."""

    events: int
    span_s: float
    lost: int
    collector_cpu_s: float
    lat: list[int]

    @property
    def rate(self) -> float:
        return self.events / self.span_s


def watch(bin_: Path, url: str, token: str, tmp: Path, *, port: int, work: Callable[[], object],
          own_session: bool) -> Run:  # fmt: skip
    """Run work under a streaming collector with one subscribed viewer."""
    col = Collector(bin_, url, token, tmp, own_session)
    rid = ""
    deadline = time.monotonic() + 60
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as c:
            while not rid:  # the collector's hello may take a moment on a loaded machine
                assert time.monotonic() < deadline, "no live recording"
                live = [r["id"] for r in c.get("/api/recordings").json() if r["status"] == "live"]
                rid = live[0] if live else ""
                time.sleep(0.1)
    except BaseException:
        col.stop()  # never leave a collector (and its tracefs instance) behind
        raise
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
    work()
    span = time.monotonic() - t0
    summary = col.stop()
    viewer.join(timeout=120)
    cpus = summary["cpus"]
    assert isinstance(cpus, list)
    traced = sum(int(c["events"]) for c in cpus)
    lost = sum(int(c["overrun"]) + int(c["dropped"]) for c in cpus)
    lat.sort()
    return Run(traced, span, lost, col.cpu_s, lat)


def describe(label: str, r: Run) -> None:
    lat = f"p50 {pct(r.lat, 0.5):6.0f} ms, p99 {pct(r.lat, 0.99):6.0f} ms" if r.lat else "no frames"
    per_cpu_s = r.events / max(r.collector_cpu_s, 1e-9) / 1e6
    print(f"  {label:34s} {r.rate / 1e3:5.0f} k ev/s, lost {r.lost:7d}, latency {lat} "
          f"({len(r.lat)} events), collector {per_cpu_s:.2f} M ev/cpu-s")  # fmt: skip


def start_server(db: Path, port: int, own_session: bool) -> subprocess.Popen[bytes]:
    serve = [
        sys.executable,
        "-m",
        "placemap",
        "serve",
        "--db",
        str(db),
        "--port",
        str(port),
    ]
    server = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=own_session)  # fmt: skip
    with httpx.Client(timeout=1) as c:
        while True:
            try:
                if c.get(f"http://127.0.0.1:{port}/api/health").status_code == 200:
                    time.sleep(WARMUP_S)
                    return server
            except httpx.HTTPError:
                time.sleep(0.2)


def stop_server(server: subprocess.Popen[bytes]) -> None:
    server.send_signal(signal.SIGINT)
    server.wait(timeout=60)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--loops", type=int, default=200)
    ap.add_argument("--skip-overhead", action="store_true", help="latency and loss only")
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
    token = sh([sys.executable, "-m", "placemap", "token", "--db", str(db), "create"]).stdout.split("\t")[1]
    token = token.strip()
    url = f"ws://127.0.0.1:{port}"

    if not args.skip_overhead:
        server = start_server(db, port, own_session=False)
        try:
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
        finally:
            stop_server(server)

    # latency: idle and under -g 8, in both layouts, side by side
    print(f"event ts -> viewer latency (load average now {os.getloadavg()[0]:.1f}):")
    for own in (False, True):
        layout = "own sessions" if own else "one session"
        server = start_server(db, port, own_session=own)
        try:
            idle = watch(
                bin_,
                url,
                token,
                tmp,
                port=port,
                work=lambda: time.sleep(3.0),
                own_session=own,
            )
            describe(f"{layout}, no workload, 3 s", idle)
            g8 = watch(bin_, url, token, tmp, port=port, own_session=own,
                       work=functools.partial(repeat, 3, 8, args.loops, own))  # fmt: skip
            describe(f"{layout}, hackbench -g 8 -l {args.loops} x3", g8)
        finally:
            stop_server(server)

    # loss: step the load with the default buffer; the highest rate that lost nothing
    print("loss with the default buffer (own sessions), hackbench -g G -l L x2 per step:")
    server = start_server(db, port, own_session=True)
    best = 0.0
    try:
        for g, loops in (
            (4, args.loops),
            (8, args.loops),
            (16, args.loops),
            (24, args.loops),
            (32, args.loops),
        ):
            r = watch(bin_, url, token, tmp, port=port, own_session=True,
                      work=functools.partial(repeat, 2, g, loops, True))  # fmt: skip
            describe(f"-g {g} -l {loops}", r)
            if r.lost == 0:
                best = max(best, r.rate)
    finally:
        stop_server(server)
    print(f"highest sustained rate with 0 lost: {best / 1e3:.0f} k events/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
