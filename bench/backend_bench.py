"""Backend benchmark: import, store and seek on a ~10M-event recording.

Builds (once, in bench/out/) a ~10M-event ftrace text of time-shifted copies of the real
vm2-hackbench-g4 trace, then prints side by side:
  - the Go importer alone (file -> Arrow on a pipe, drained): the baseline,
  - end-to-end import (file -> stored recording, the code the upload runs),
  - store only (Arrow batches already in memory -> stored recording), and the share of its CPU
    the run-queue delay kernel takes (the same rows through that kernel alone),
  - the run-queue delays read again from the stored chunks (what a recording stored before they
    were measured costs the first time its metrics are read), against the ingest's figures,
  - seek: state at 200 random times (keyframe + one chunk + delta, and the full API response),
  - bytes per event on disk.
Run: backend/.venv/bin/python bench/backend_bench.py [--events N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))

from placemap.api import convert
from placemap.importer import import_file
from placemap.replay import kernel as kn
from placemap.replay.delays import METRICS, delays_from_store
from placemap.replay.ingest import Ingestor
from placemap.replay.seek import state_at
from placemap.replay.topo import LevelMap
from placemap.replay.warmup import warm_kernels
from placemap.store import Store

G4 = ROOT.parent / "shared" / "traces" / "vm2-hackbench-g4.ftrace.txt.gz"
OUT = ROOT / "bench" / "out"
COLLECT = ROOT / "collectors" / "bin" / "placemap-collect"
_TS = re.compile(r"^(.*?\]\s+\S+\s+)(\d+)\.(\d{6})(:.*)$")


def make_trace(copies: int) -> Path:
    """`copies` time-shifted copies of g4's event lines under one header (written once)."""
    path = OUT / f"backend-g4x{copies}.ftrace.txt"
    if path.is_file():
        return path
    lines = gzip.decompress(G4.read_bytes()).decode().splitlines()
    header = [x for x in lines if x.startswith("#")]
    events = []
    for line in lines:
        m = _TS.match(line)
        if m:
            events.append((m.group(1), int(m.group(2)) * 1_000_000 + int(m.group(3)), m.group(4)))
    span_us = events[-1][1] - events[0][1] + 1000
    tmp = path.with_suffix(".tmp")
    with tmp.open("w") as fh:
        fh.write("\n".join(header) + "\n")
        for k in range(copies):
            shift = k * span_us
            fh.write(
                "".join(
                    f"{a}{(t + shift) // 1_000_000}.{(t + shift) % 1_000_000:06d}{b}\n" for a, t, b in events
                )
            )
    tmp.rename(path)
    return path


def build_collector() -> None:
    if not COLLECT.is_file():
        subprocess.run(
            ["go", "build", "-o", str(COLLECT), "./cmd/placemap-collect"],
            cwd=ROOT / "collectors",
            env={**os.environ, "CGO_ENABLED": "0"},
            check=True,
        )


def cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def cpu_self() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)  # all threads: ingest and chunk writer
    return ru.ru_utime + ru.ru_stime


def importer_alone(trace: Path) -> tuple[float, float, int]:
    """Wall and CPU seconds of the Go importer writing Arrow to a pipe that is drained."""
    t, c = time.perf_counter(), cpu_children()
    proc = subprocess.Popen(
        [str(COLLECT), "import", str(trace), "--out", "-", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    while proc.stdout.read(1 << 20):
        pass
    err = proc.stderr.read().decode()
    assert proc.wait() == 0, err
    elapsed, cpu = time.perf_counter() - t, cpu_children() - c
    summary = json.loads(err.strip().splitlines()[-1])
    return elapsed, cpu, int(summary["events_total"])


def fresh_store(name: str) -> Store:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{OUT / name}{suffix}").unlink(missing_ok=True)
    return Store(OUT / name)


def end_to_end(trace: Path) -> tuple[float, float, Store, str]:
    store = fresh_store("bench-e2e.db")
    rid = store.create_recording(trace.name)
    t, c = time.perf_counter(), cpu_self() + cpu_children()
    import_file(store, COLLECT, rid, trace, machine="bench")
    elapsed, cpu = time.perf_counter() - t, cpu_self() + cpu_children() - c
    rec = store.get_recording(rid)
    assert rec is not None and rec.status == "ready", rec
    return elapsed, cpu, store, rid


def store_only(copies: int) -> tuple[float, float, int]:
    proc = subprocess.run([str(COLLECT), "import", str(G4), "--out", "-"], capture_output=True, check=True)
    g4 = pa.ipc.open_stream(proc.stdout).read_all()
    ts = g4.column("ts_ns")
    span = pc.max(ts).as_py() - pc.min(ts).as_py() + 1_000_000
    store = fresh_store("bench-store.db")
    rid = store.create_recording("store-only")
    ing = Ingestor(store, rid, None)
    busy = cpu = 0.0
    for k in range(copies):
        shifted = g4.set_column(0, "ts_ns", pc.add(ts, pa.scalar(k * span, pa.int64())))
        t, c = time.perf_counter(), cpu_self()
        for batch in shifted.to_batches(max_chunksize=65_536):
            ing.add(batch)
        busy += time.perf_counter() - t
        cpu += cpu_self() - c
    t, c = time.perf_counter(), cpu_self()
    ing.finish(None)
    busy += time.perf_counter() - t
    cpu += cpu_self() - c
    return busy, cpu, copies * g4.num_rows


def delay_kernel(copies: int) -> tuple[float, int]:
    """CPU seconds of the run-queue delay kernel (kernel.wakeup_delays, part of the ingest) over the
    store-only input alone: the same g4 rows `copies` times, each copy's pending wakeups fresh."""
    proc = subprocess.run([str(COLLECT), "import", str(G4), "--out", "-"], capture_output=True, check=True)
    g4 = pa.ipc.open_stream(proc.stdout).read_all()
    kind = g4.column("kind").to_numpy().astype(np.uint8)
    pid = pc.fill_null(g4.column("pid"), 0).to_numpy().astype(np.int32)
    npid = pc.fill_null(g4.column("next_pid"), 0).to_numpy().astype(np.int32)
    ts = g4.column("ts_ns").to_numpy().astype(np.int64)
    slot = np.full(int(max(pid.max(), npid.max())) + 1, -1, dtype=np.int32)
    pids = np.unique(np.concatenate([pid[pid > 0], npid[npid > 0]]))
    slot[pids] = np.arange(len(pids), dtype=np.int32)
    hist, top = np.zeros(kn.DELAY_BUCKETS, dtype=np.int64), np.zeros(1, dtype=np.int64)
    kn.wakeup_delays(kind[:2], pid[:2], npid[:2], ts[:2], slot, np.full(len(pids), -1), hist, top)  # compiled
    c = cpu_self()
    for _ in range(copies):
        kn.wakeup_delays(kind, pid, npid, ts, slot, np.full(len(pids), -1, dtype=np.int64), hist, top)
    return cpu_self() - c, copies * len(kind)


def delays_again(store: Store, rid: str) -> tuple[float, float, bool]:
    """Wall and CPU seconds of replay.delays.delays_from_store over the stored recording, and
    whether it gives the figures the ingest stored."""
    t, c = time.perf_counter(), cpu_self()
    got = delays_from_store(store, rid)
    wall, cpu = time.perf_counter() - t, cpu_self() - c
    stored = json.loads(store.derived(rid, METRICS) or b"{}").get("wakeup_latency")
    return wall, cpu, got == stored and got is not None


def seek(store: Store, rid: str, n: int = 200) -> tuple[list[float], list[float], float]:
    rec = store.get_recording(rid)
    assert rec is not None and rec.t_start_ns is not None and rec.t_end_ns is not None
    levels = LevelMap(None)
    cpus = list(rec.meta["cpus_seen"])
    rng = random.Random(1)
    core, full = [], []
    c = time.process_time()
    for _ in range(n):
        t_ns = rng.randint(rec.t_start_ns, rec.t_end_ns)
        t0 = time.perf_counter()
        at = state_at(store, rid, t_ns)
        t1 = time.perf_counter()
        convert.placement_state(at, levels, cpus).model_dump_json()
        t2 = time.perf_counter()
        core.append((t1 - t0) * 1000)
        full.append((t2 - t0) * 1000)
    return core, full, (time.process_time() - c) / n * 1000


def pct(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100)[int(q) - 1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    build_collector()
    copies = max(1, round(args.events / 72_578))
    trace = make_trace(copies)
    print(
        f"== backend bench: {copies} copies of vm2-hackbench-g4, {trace.stat().st_size / 1e9:.2f} GB text, "
        f"{os.cpu_count()} cores"
    )
    warm_kernels()  # loaded once per process, as the server does at start
    load = os.getloadavg()[0]
    alone_s, alone_cpu, events = importer_alone(trace)
    e2e_s, e2e_cpu, store, rid = end_to_end(trace)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # the ingest: bounded by a few chunks
    st_s, st_cpu, st_events = store_only(copies)
    dk_cpu, dk_rows = delay_kernel(copies)
    again_s, again_cpu, again_same = delays_again(store, rid)
    core, full, seek_cpu = seek(store, rid)
    rec = store.get_recording(rid)
    assert rec is not None
    conn = sqlite3.connect(store.path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    kf_bytes, pl_bytes = conn.execute(
        "SELECT sum(length(keyframe)), sum(length(placements)) FROM chunks WHERE recording_id = ?", (rid,)
    ).fetchone()
    conn.close()
    db_bytes = store.path.stat().st_size
    n = rec.event_count
    print(
        f"load average at start: {load:.1f} (wall figures suffer when other work shares the cores;"
        " events per CPU-second do not)"
    )
    rows = [
        ("Go importer alone (baseline)", events / alone_s, alone_s, events / alone_cpu, 1.0),
        ("end-to-end import (upload path)", n / e2e_s, e2e_s, n / e2e_cpu, alone_s / e2e_s),
        (
            "store only (Arrow in memory)",
            st_events / st_s,
            st_s,
            st_events / st_cpu,
            (st_events / st_s) / (events / alone_s),
        ),
    ]
    print(f"{'':34} {'events/s':>12} {'wall':>8} {'events/CPU-s':>14} {'vs importer':>12}")
    for name, rate, wall, per_cpu, ratio in rows:
        print(f"{name:34} {rate / 1e6:>10.2f} M {wall:>7.1f}s {per_cpu / 1e6:>12.2f} M {ratio:>11.2f}x")
    print(
        f"of the store only CPU, the run-queue delay kernel alone: {dk_cpu:.3f} s"
        f" ({dk_cpu / dk_rows * 1e9:.1f} ns a row, {100 * dk_cpu / st_cpu:.1f}%)"
    )
    print(
        f"the delays read again from the {rec.chunk_count} stored chunks (an older recording's first metrics"
        f" read): {again_s:.2f} s wall, {again_cpu:.2f} CPU-s ({100 * again_cpu / e2e_cpu:.1f}% of the"
        f" end-to-end import's CPU); the ingest's figures: {'the same' if again_same else 'DIFFERENT'}"
    )
    print(f"seek state_at (keyframe + chunk + delta): p50 {pct(core, 50):.1f} ms  p95 {pct(core, 95):.1f} ms")
    print(
        f"seek + PlacementState JSON (API work):    p50 {pct(full, 50):.1f} ms  p95 {pct(full, 95):.1f} ms"
        f"  ({seek_cpu:.1f} ms CPU each)"
    )
    print(
        f"on disk per event: {rec.bytes_stored / n:.2f} B event chunks + {kf_bytes / n:.2f} B keyframes"
        f" + {pl_bytes / n:.2f} B placement tables; whole SQLite file {db_bytes / n:.2f} B"
        f" ({n:,} events, {rec.chunk_count} chunks)"
    )
    print(f"peak RSS of this process through the end-to-end import: {rss_mb:.0f} MB")


if __name__ == "__main__":
    main()
