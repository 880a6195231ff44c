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
  - the collector's CPU time per event (getrusage of the collector process),
  - with --cpu-reps N: CPU per event of the collector, the server while streaming (and its fixed cost per
    recording) and the chunk worker, this checkout beside --baseline REV's collector and backend, alternating
    (CPU time from getrusage and /proc/PID/stat: this VM has no instruction counters for perf stat);
    the overhead runs then include REV's collector streaming to REV's server too,
  - where the latency goes, per stage (per event; CLOCK_MONOTONIC everywhere, the instance's trace clock):
    event ts -> the collector cuts its batch -> sends it -> the server receives it -> publishes it to the
    viewers' hub -> has written it to the viewer's websocket -> the viewer receives it (collector
    --timing-out, server $PLACEMAP_LIVE_TIMING), p50/p99 of
    each stage and each stage's mean over the slowest 1% of events; commit and ack follow the publish,
  - with --baseline REV, the same latency runs against a server built from REV's backend/ (git archive),
    run alternately with this checkout's server in each layout, so both see the same load; "thread" is
    this checkout with PLACEMAP_LIVE_CHUNKER=thread (live chunking in the server process, as before),
    "nice0" this checkout with the collector at --nice 0 (the baseline's collector runs at --nice 0 too),
    "loopnice" this checkout with the server's event loop thread at nice -10 (PLACEMAP_LIVE_LOOP_NICE),
    "rt" this checkout's server at `serve --realtime 10` (PLACEMAP_REALTIME: loop and commit threads
    SCHED_FIFO), "rtc" that server and the collector at `--realtime 10` (every thread SCHED_FIFO),
  - with --viewer-rt PRIO the viewer thread (and the websocket client's reader thread it starts) runs
    SCHED_FIFO at PRIO: it stands in for a browser on another machine, which does not wait for CPU behind
    the traced workload; without it the viewer is an ordinary thread of the bench on the loaded host.
Usage: backend/.venv/bin/python bench/live_bench.py [--runs N] [--loops L] [--skip-overhead]
       [--skip-loss] [--skip-latency] [--cpu-reps N] [--cpu-runs R] [--cpu-modes ARGS,...] [--baseline REV]
       [--layouts one,own] [--modes new,thread,nice0,loopnice,rt,rtc] [--reps N] [--viewer-rt PRIO]
"""

from __future__ import annotations

import argparse
import contextlib
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
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parents[1]
VIEWER_RT = 0  # --viewer-rt: the viewer thread's SCHED_FIFO priority (0: an ordinary thread)
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


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's reaped children so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class Collector:
    def __init__(self, bin_: Path, url: str, token: str, tmp: Path, *, own_session: bool = False,
                 extra: tuple[str, ...] = ()) -> None:  # fmt: skip
        self.stats = tmp / f"stats-{time.monotonic_ns()}.json"
        self.timing = tmp / f"timing-{time.monotonic_ns()}.jsonl"
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
                "--timing-out",
                str(self.timing),
                *extra,
            ],
            start_new_session=own_session,
        )
        inst = Path(f"/sys/kernel/tracing/instances/placemap-{self.proc.pid}/tracing_on")
        while not inst.is_file() or inst.read_text().strip() != "1":
            assert self.proc.poll() is None
            time.sleep(0.02)
        time.sleep(0.3)

    def stop(self) -> dict[str, object]:
        c0 = children_cpu()
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=120)
        self.cpu_s = children_cpu() - c0  # the collector is the only child reaped here
        summary: dict[str, object] = json.loads(self.stats.read_text())
        return summary


def pct(v: list[int], q: float) -> float:
    return v[min(len(v) - 1, int(len(v) * q))] / 1e6


@dataclass
class Frame:
    """One binary frame as the viewer got it."""

    recv_ns: int
    ts: list[int]


@dataclass
class Run:
    """One streamed run: what the kernel recorded and lost, what the viewer saw and when."""

    events: int
    span_s: float
    lost: int
    collector_cpu_s: float
    lat: list[int]
    stages: dict[str, list[int]] | None = None  # stage -> per-event ns, in the same event order

    @property
    def rate(self) -> float:
        return self.events / self.span_s


STAGES = ("ts->cut", "cut->sent", "sent->recv", "recv->pub", "pub->ws", "ws->viewer")


def jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def breakdown(frames: list[Frame], collector: Path, server: Path, rid: str) -> dict[str, list[int]] | None:
    """Per event of every frame the viewer got: the time spent in each stage (None without the server's
    timing: a baseline server may predate it)."""
    col = {(b["first_ts"], b["rows"]): b for b in jsonl(collector)}
    lines = [b for b in jsonl(server) if b.get("rid") == rid]
    srv = {b["seq"]: b for b in lines if "recv_ns" in b}
    ws_sent = {b["seq"]: b["view_sent_ns"] for b in lines if "view_sent_ns" in b}
    if not srv:
        return None
    out: dict[str, list[int]] = {k: [] for k in ("total", *STAGES)}
    for f in frames:
        c = col.get((f.ts[0], len(f.ts)))
        s = None if c is None else srv.get(c["seq"])
        w = None if c is None else ws_sent.get(c["seq"])
        if c is None or s is None or w is None or not c["sent_ns"]:
            continue  # a resent batch, or one cut in a way the timing file missed: left out
        for t in f.ts:
            out["total"].append(f.recv_ns - t)
            out["ts->cut"].append(c["cut_ns"] - t)
            out["cut->sent"].append(c["sent_ns"] - c["cut_ns"])
            out["sent->recv"].append(s["recv_ns"] - c["sent_ns"])
            out["recv->pub"].append(s["pub_ns"] - s["recv_ns"])
            out["pub->ws"].append(w - s["pub_ns"])
            out["ws->viewer"].append(f.recv_ns - w)
    return out


def watch(bin_: Path, url: str, token: str, tmp: Path, *, port: int, work: Callable[[], object],
          own_session: bool, server_timing: Path | None = None,
          extra: tuple[str, ...] = ()) -> Run:  # fmt: skip
    """Run work under a streaming collector with one subscribed viewer."""
    col = Collector(bin_, url, token, tmp, own_session=own_session, extra=extra)
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
    frames: list[Frame] = []

    def view() -> None:
        if VIEWER_RT:  # threads started from here (the client's reader) inherit it
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(VIEWER_RT))
        with connect(f"{url}/api/recordings/{rid}/live", max_size=None) as ws:
            for msg in ws:
                now = time.monotonic_ns()  # the collector's instance uses trace_clock=mono
                if isinstance(msg, bytes):
                    # a zlib stream of Arrow IPC (a baseline server before it: the IPC stream itself)
                    ipc = msg if msg[:4] == b"\xff\xff\xff\xff" else zlib.decompress(msg)
                    ts = pa.ipc.open_stream(ipc).read_all().column("ts_ns").to_pylist()
                    frames.append(Frame(now, ts))
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
    lat = sorted(f.recv_ns - t for f in frames for t in f.ts)
    stages = None if server_timing is None else breakdown(frames, col.timing, server_timing, rid)
    return Run(traced, span, lost, col.cpu_s, lat, stages)


def describe(label: str, r: Run) -> None:
    lat = f"p50 {pct(r.lat, 0.5):6.0f} ms, p99 {pct(r.lat, 0.99):6.0f} ms" if r.lat else "no frames"
    per_cpu_s = r.events / max(r.collector_cpu_s, 1e-9) / 1e6
    print(f"  {label:34s} {r.rate / 1e3:5.0f} k ev/s, lost {r.lost:7d}, latency {lat} "
          f"({len(r.lat)} events), collector {per_cpu_s:.2f} M ev/cpu-s")  # fmt: skip


def describe_stages(r: Run) -> None:
    """p50/p99 of each stage over events, and each stage's mean over the slowest 1% (by total)."""
    st = r.stages
    if not st or not st["total"]:
        return
    n = len(st["total"])
    slow = sorted(range(n), key=st["total"].__getitem__)[int(n * 0.99) :]
    parts = []
    for k in ("total", *STAGES):
        v = sorted(st[k])
        tail = statistics.fmean(st[k][i] for i in slow) / 1e6
        parts.append(f"{k} {pct(v, 0.5):.0f}/{pct(v, 0.99):.0f}/{tail:.0f}")
    print(f"    stages ms p50/p99/slowest-1%-mean ({n} events): " + ", ".join(parts))


def start_server(
    db: Path, port: int, own_session: bool, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
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
                              start_new_session=own_session, env={**os.environ, **(env or {})})  # fmt: skip
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


def proc_cpu(pid: int) -> tuple[float, float]:
    """(own, reaped children) CPU seconds of a process, from /proc/PID/stat (utime+stime, cutime+cstime)."""
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()  # f[0] is field 3 (state)
    tck = os.sysconf("SC_CLK_TCK")
    return (int(f[11]) + int(f[12])) / tck, (int(f[13]) + int(f[14])) / tck


def wait_ready(port: int, rid: str, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as c:
        while c.get(f"/api/recordings/{rid}").json()["status"] != "ready":
            assert time.monotonic() < deadline, f"recording {rid} not ready"
            time.sleep(0.2)


def children(pid: int) -> list[int]:
    out: list[int] = []
    for t in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            out += [int(c) for c in (t / "children").read_text().split()]
    return out


def wait_children_gone(pid: int, kids: set[int], timeout_s: float = 120) -> None:
    """Until the server has reaped those of its children (chunk workers): their CPU is then in its children's
    times (a spare worker it starts for the next recording is not waited for)."""
    deadline = time.monotonic() + timeout_s
    while kids & set(children(pid)):
        assert time.monotonic() < deadline, "the chunk worker did not exit"
        time.sleep(0.05)


@dataclass(frozen=True)
class Baseline:
    """REV's collector binary and backend (git archive of REV, built here)."""

    rev: str
    bin: Path
    env: dict[str, str]  # the server's environment: PYTHONPATH to REV's backend


def baseline_tree(rev: str, tmp: Path) -> Baseline:
    base_dir = tmp / "baseline"
    base_dir.mkdir(exist_ok=True)
    archive = subprocess.run(["git", "archive", rev, "backend/placemap", "collectors"], cwd=ROOT,
                             capture_output=True, check=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(base_dir)], input=archive, check=True)
    bin_ = tmp / "placemap-collect-baseline"
    sh(["go", "build", "-o", str(bin_), "./cmd/placemap-collect"], cwd=base_dir / "collectors",
       env={**os.environ, "CGO_ENABLED": "0"})  # fmt: skip
    short = sh(["git", "rev-parse", "--short", rev], cwd=ROOT).stdout.strip()
    return Baseline(short, bin_, {"PYTHONPATH": str(base_dir / "backend")})


@dataclass
class CpuRun:
    """One streamed run of hackbench: events, and the CPU seconds spent by the collector (its whole life, and
    while streaming), by the server process while streaming and around it (the session's hello; finalising
    once the collector ends), and by the chunk worker (its whole life, start-up included); hackbench's
    runtimes."""

    events: int
    collector_s: float
    collector_stream_s: float
    server_stream_s: float
    server_fixed_s: float
    chunker_s: float
    hackbench_s: list[float]

    def ns(self, s: float) -> float:
        return s / self.events * 1e9


@dataclass(frozen=True)
class Target:
    """Where runs go: the bench's temporary directory, database, port and token."""

    tmp: Path
    db: Path
    port: int
    token: str

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"


def cpu_run(t: Target, bin_: Path, env: dict[str, str], extra: tuple[str, ...], *, loops: int,
            runs: int, groups: int = 4) -> CpuRun:  # fmt: skip
    """A server (env) and a collector (bin_, extra) in the bench's session, `runs` hackbench runs under them.
    The server's CPU is read before the collector starts, once it streams, before it is stopped and once its
    recording is ready and the chunk worker has exited (reaped: its CPU shows in the server's children's
    times)."""
    server = start_server(t.db, t.port, own_session=False, env=env)
    try:
        s0 = proc_cpu(server.pid)
        spares = {k: proc_cpu(k)[0] for k in children(server.pid)}  # a spare worker, started and waiting
        col = Collector(bin_, t.url, t.token, t.tmp, extra=extra)
        try:
            s1, c1 = proc_cpu(server.pid), proc_cpu(col.proc.pid)
            workers = set(spares) | set(children(server.pid))
            hb = [hackbench_s(groups, loops) for _ in range(runs)]
            s2, c2 = proc_cpu(server.pid), proc_cpu(col.proc.pid)
        finally:
            summary = col.stop()
        rid = str(summary["recording_id"])
        wait_ready(t.port, rid)
        wait_children_gone(server.pid, workers)
        s3 = proc_cpu(server.pid)
    finally:
        stop_server(server)
    events = int(str(summary["rows"]))
    # the worker's CPU during the run: what it had spent as a spare before is in the reaped total too
    return CpuRun(events, col.cpu_s, c2[0] - c1[0], s2[0] - s1[0], s1[0] - s0[0] + s3[0] - s2[0],
                  s3[1] - s0[1] - sum(spares.values()), hb)  # fmt: skip


def cpu_section(args: argparse.Namespace, t: Target, bin_: Path, base: Baseline | None) -> None:
    """CPU per event of the collector, the server and its chunk worker, this checkout beside the baseline's
    collector and backend, alternating runs so all see the machine's load alike."""
    modes: dict[str, tuple[Path, dict[str, str], tuple[str, ...]]] = {}
    if base is not None:
        modes[f"baseline {base.rev}"] = (base.bin, base.env, ())
    modes["new"] = (bin_, {}, ())
    for m in filter(None, args.cpu_modes.split(",")):
        modes[f"new {m}"] = (bin_, {}, tuple(m.split()))
    print(
        f"CPU per event, hackbench -g 4 -l {args.loops} x{args.cpu_runs} per run, {args.cpu_reps} "
        f"alternating runs per mode (load average now {os.getloadavg()[0]:.1f}); ns/event: collector (whole "
        "run / while streaming), server while streaming + server fixed (hello, finalising), chunk worker "
        "(whole life):"
    )
    got: dict[str, list[CpuRun]] = {k: [] for k in modes}
    for _ in range(args.cpu_reps):
        for name, (b, env, extra) in modes.items():
            r = cpu_run(t, b, env, extra, loops=args.loops, runs=args.cpu_runs)
            got[name].append(r)
            hb = " ".join(f"{x:.3f}" for x in r.hackbench_s)
            print(
                f"  {name:20s} {r.events / 1e6:5.2f} M events: collector {r.ns(r.collector_s):5.0f} / "
                f"{r.ns(r.collector_stream_s):5.0f}, server {r.ns(r.server_stream_s):5.0f} + "
                f"{r.server_fixed_s:.2f} s, chunk worker {r.ns(r.chunker_s):6.0f} ({r.chunker_s:.2f} s); "
                f"hackbench {hb} s (load {os.getloadavg()[0]:.1f})"
            )
    for name, rs in got.items():

        def med(f: Callable[[CpuRun], float], rs: list[CpuRun] = rs) -> float:
            return statistics.median(f(r) for r in rs)

        hb_med = statistics.median(x for r in rs for x in r.hackbench_s)
        print(
            f"  {name:20s} median: collector {med(lambda r: r.ns(r.collector_s)):5.0f} / "
            f"{med(lambda r: r.ns(r.collector_stream_s)):5.0f} ns/event, server "
            f"{med(lambda r: r.ns(r.server_stream_s)):5.0f} ns/event + "
            f"{med(lambda r: r.server_fixed_s):.2f} s, chunk worker {med(lambda r: r.ns(r.chunker_s)):6.0f} "
            f"ns/event; hackbench median {hb_med:.3f} s"
        )


def overhead_section(args: argparse.Namespace, t: Target, bin_: Path, base: Baseline | None) -> None:
    """hackbench runtime with no tracing, `perf record -e` the same events, and placemap streaming to a local
    server (its collector at its default nice, at nice 0 and at --realtime 10; the baseline's beside, with its
    own server), interleaved so drift hits every mode alike. Beside the runtime, where the CPU goes: hackbench's
    own CPU time (its tasks pay the tracepoints' in-kernel cost) and the tracer's (perf; the collector and the
    server while streaming), per run: CPU time varies far less than wall time on a loaded machine."""
    servers = [start_server(t.db, t.port, own_session=False)]
    base_t = None
    try:
        if base is not None:
            base_t = Target(t.tmp, t.tmp / "baseline.db", free_port(), "")
            tok = sh([sys.executable, "-m", "placemap", "token", "--db", str(base_t.db), "create"], env={
                **os.environ, **base.env}).stdout.split("\t")[1].strip()  # fmt: skip
            base_t = Target(base_t.tmp, base_t.db, base_t.port, tok)
            servers.append(start_server(base_t.db, base_t.port, own_session=False, env=base.env))
        cols: dict[str, tuple[Target, Path, tuple[str, ...], subprocess.Popen[bytes]]] = {
            "placemap": (t, bin_, (), servers[0]),
            "placemap --nice 0": (t, bin_, ("--nice", "0"), servers[0]),
            "placemap --realtime 10": (t, bin_, ("--realtime", "10"), servers[0]),
        }
        if base is not None and base_t is not None:
            cols[f"placemap {base.rev}"] = (base_t, base.bin, (), servers[1])
        modes = ["none", "perf", *cols]
        times: dict[str, list[float]] = {k: [] for k in modes}
        wl_cpu: dict[str, list[float]] = {k: [] for k in modes}  # hackbench's own CPU seconds
        tr_cpu: dict[str, list[float]] = {k: [] for k in modes}  # the tracer's: perf, or collector + server

        def timed(key: str) -> None:
            c0 = children_cpu()
            times[key].append(hackbench_s(4, args.loops))
            wl_cpu[key].append(children_cpu() - c0)

        perf_ok = subprocess.run(["perf", "--version"], capture_output=True, check=False).returncode == 0
        for _ in range(args.runs):
            timed("none")
            tr_cpu["none"].append(0.0)
            if perf_ok:
                p = subprocess.Popen(["perf", "record", "-q", "-a", "-o", str(t.tmp / "perf.data"),
                                      *[a for e in EVENTS for a in ("-e", f"sched:{e}")]],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
                time.sleep(1.0)
                timed("perf")
                p.send_signal(signal.SIGINT)
                c0 = children_cpu()
                p.wait(timeout=120)
                tr_cpu["perf"].append(children_cpu() - c0)  # perf's whole life, its start and its exit
            for key, (tt, b, extra, srv) in cols.items():
                col = Collector(b, tt.url, tt.token, t.tmp, extra=extra)
                s0 = proc_cpu(srv.pid)[0]
                timed(key)
                s1 = proc_cpu(srv.pid)[0]
                col.stop()
                tr_cpu[key].append(col.cpu_s + s1 - s0)  # the collector's whole life, the server while streaming
    finally:
        for server in servers:
            stop_server(server)
    base_s = statistics.median(times["none"])
    base_cpu = statistics.median(wl_cpu["none"])
    load = os.getloadavg()[0]
    print(f"hackbench -g 4 -l {args.loops}, median of {args.runs} (load average now {load:.1f}); CPU seconds per "
          "run: hackbench's own (tracepoint cost in the kernel included) + the tracer's:")  # fmt: skip
    for k in modes:
        v = times[k]
        if not v:
            continue
        ratios = [x / n for x, n in zip(v, times["none"], strict=False)]  # paired with the same round's run
        runs = " ".join(f"{x:.3f}" for x in v)
        wl, tr = statistics.median(wl_cpu[k]), statistics.median(tr_cpu[k])
        print(f"  {k:24s} {statistics.median(v):6.3f} s  x{statistics.median(v) / base_s:.2f}  "
              f"(paired median x{statistics.median(ratios):.2f}; runs {runs})")  # fmt: skip
        print(f"  {'':24s} CPU {wl:6.3f} + {tr:6.3f} = {wl + tr:6.3f} s  x{(wl + tr) / base_cpu:.2f}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--loops", type=int, default=200)
    ap.add_argument("--skip-overhead", action="store_true", help="latency and loss only")
    ap.add_argument("--skip-loss", action="store_true", help="no loss steps")
    ap.add_argument("--baseline", metavar="REV", help="also measure latency with REV's backend (git rev)")
    ap.add_argument(
        "--cpu-reps", type=int, default=0, help="CPU per event: runs per mode, alternating (0: none)"
    )
    ap.add_argument("--cpu-runs", type=int, default=3, help="hackbench runs under each collector run")
    ap.add_argument("--cpu-modes", default="", help="extra CPU modes: collector arguments, comma-separated "
                    "(e.g. '--nice 0,--codec zstd'), each run as a mode of its own")  # fmt: skip
    ap.add_argument("--skip-latency", action="store_true", help="no latency runs")
    ap.add_argument("--reps", type=int, default=1, help="latency runs per mode and layout (alternating)")
    ap.add_argument("--layouts", default="one,own", help="latency layouts: one (session), own (sessions)")
    ap.add_argument("--modes", default="new,thread,nice0", help="runs beside the baseline: new (chunk worker "
                    "process), thread (in-process chunker), nice0 (new, collector at --nice 0), loopnice, "
                    "rt (serve --realtime 10), rtc (rt and the collector at --realtime 10)")  # fmt: skip
    ap.add_argument("--viewer-rt", type=int, default=0, metavar="PRIO",
                    help="the viewer thread SCHED_FIFO at PRIO (a browser on another machine); 0: ordinary")  # fmt: skip
    args = ap.parse_args()
    global VIEWER_RT
    VIEWER_RT = args.viewer_rt
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

    base = baseline_tree(args.baseline, tmp) if args.baseline else None
    target = Target(tmp, db, port, token)
    if not args.skip_overhead:
        overhead_section(args, target, bin_, base)
    if args.cpu_reps:
        cpu_section(args, target, bin_, base)

    # latency: idle and under -g 8, in both layouts, this checkout beside the baseline (alternating)
    # mode -> (server environment, collector arguments)
    nice0 = ("--nice", "0")
    servers: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
        "new": ({}, ()),
        "thread": ({"PLACEMAP_LIVE_CHUNKER": "thread"}, ()),
        "nice0": ({}, nice0),
        "loopnice": ({"PLACEMAP_LIVE_LOOP_NICE": "-10"}, ()),
        "rt": ({"PLACEMAP_REALTIME": "10"}, ()),
        "rtc": ({"PLACEMAP_REALTIME": "10"}, ("--realtime", "10")),
    }
    servers = {k: v for k, v in servers.items() if k in args.modes.split(",")}
    if base is not None:
        servers["baseline"] = (base.env, nice0)
        print(f"baseline: backend/placemap of {base.rev}")
    print(f"event ts -> viewer latency (load average now {os.getloadavg()[0]:.1f}; viewer "
          + (f"SCHED_FIFO {VIEWER_RT}" if VIEWER_RT else "an ordinary thread") + "):")  # fmt: skip
    for layout_key in [] if args.skip_latency else args.layouts.split(","):
        own = layout_key == "own"
        layout = "own sessions" if own else "one session"
        p99s: dict[str, list[float]] = {name: [] for name in servers}
        for rep in range(args.reps):  # modes alternate, so each sees the machine's load alike
            for name, (env, extra) in servers.items():
                timing = tmp / f"server-timing-{name}-{layout_key}-{rep}.jsonl"
                server = start_server(db, port, own_session=own,
                                      env={**env, "PLACEMAP_LIVE_TIMING": str(timing)})  # fmt: skip
                try:
                    idle = watch(bin_, url, token, tmp, port=port, work=lambda: time.sleep(3.0),
                                 own_session=own, server_timing=timing, extra=extra)  # fmt: skip
                    describe(f"{name}, {layout}, no workload, 3 s", idle)
                    describe_stages(idle)
                    load0 = os.getloadavg()[0]
                    work = functools.partial(repeat, 3, 8, args.loops, own)
                    g8 = watch(bin_, url, token, tmp, port=port, own_session=own, server_timing=timing,
                               extra=extra, work=work)  # fmt: skip
                    describe(f"{name}, {layout}, hackbench -g 8 -l {args.loops} x3", g8)
                    describe_stages(g8)
                    print(f"    load average before/after: {load0:.1f}/{os.getloadavg()[0]:.1f}")
                    if g8.lat:
                        p99s[name].append(pct(g8.lat, 0.99))
                finally:
                    stop_server(server)
        for name, v in p99s.items():
            if v:
                print(f"  {name}, {layout}, -g 8: p99 median of {len(v)} runs {statistics.median(v):.0f} ms "
                      f"({', '.join(f'{x:.0f}' for x in v)})")  # fmt: skip

    if args.skip_loss:
        return 0
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
