"""Backend benchmark: import, store and seek on a ~10M-event recording.

Builds (once, in bench/out/) a ~10M-event ftrace text of time-shifted copies of the real
vm2-hackbench-g4 trace, then prints side by side:
  - the Go importer alone (file -> Arrow on a pipe, drained): the baseline,
  - end-to-end import (file -> stored recording, the code the upload runs),
  - store only (Arrow batches already in memory -> stored recording),
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
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))

from placemap.api import convert  # noqa: E402
from placemap.importer import import_file  # noqa: E402
from placemap.replay.ingest import Ingestor  # noqa: E402
from placemap.replay.seek import state_at  # noqa: E402
from placemap.replay.topo import LevelMap  # noqa: E402
from placemap.store import Store  # noqa: E402

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
            fh.write("".join(f"{a}{(t + shift) // 1_000_000}.{(t + shift) % 1_000_000:06d}{b}\n" for a, t, b in events))
    tmp.rename(path)
    return path


def build_collector() -> None:
    if not COLLECT.is_file():
        subprocess.run(["go", "build", "-o", str(COLLECT), "./cmd/placemap-collect"], cwd=ROOT / "collectors",
                       env={**os.environ, "CGO_ENABLED": "0"}, check=True)  # fmt: skip


def importer_alone(trace: Path) -> tuple[float, int]:
    t = time.perf_counter()
    proc = subprocess.run([str(COLLECT), "import", str(trace), "--out", "-", "--json"], capture_output=True, check=True)
    elapsed = time.perf_counter() - t
    summary = json.loads(proc.stderr.decode().strip().splitlines()[-1])
    return elapsed, int(summary["events_total"])


def fresh_store(name: str) -> Store:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{OUT / name}{suffix}").unlink(missing_ok=True)
    return Store(OUT / name)


def end_to_end(trace: Path) -> tuple[float, Store, str]:
    store = fresh_store("bench-e2e.db")
    rid = store.create_recording(trace.name)
    t = time.perf_counter()
    import_file(store, COLLECT, rid, trace, machine="bench")
    elapsed = time.perf_counter() - t
    rec = store.get_recording(rid)
    assert rec is not None and rec.status == "ready", rec
    return elapsed, store, rid


def store_only(copies: int) -> tuple[float, int]:
    proc = subprocess.run([str(COLLECT), "import", str(G4), "--out", "-"], capture_output=True, check=True)
    g4 = pa.ipc.open_stream(proc.stdout).read_all()
    ts = g4.column("ts_ns")
    span = pc.max(ts).as_py() - pc.min(ts).as_py() + 1_000_000
    store = fresh_store("bench-store.db")
    rid = store.create_recording("store-only")
    ing = Ingestor(store, rid, None)
    busy = 0.0
    for k in range(copies):
        shifted = g4.set_column(0, "ts_ns", pc.add(ts, pa.scalar(k * span, pa.int64())))
        t = time.perf_counter()
        for batch in shifted.to_batches(max_chunksize=65_536):
            ing.add(batch)
        busy += time.perf_counter() - t
    t = time.perf_counter()
    ing.finish(None)
    busy += time.perf_counter() - t
    return busy, copies * g4.num_rows


def seek(store: Store, rid: str, n: int = 200) -> tuple[list[float], list[float]]:
    rec = store.get_recording(rid)
    assert rec is not None and rec.t_start_ns is not None and rec.t_end_ns is not None
    levels = LevelMap(None)
    cpus = list(rec.meta["cpus_seen"])
    rng = random.Random(1)
    core, full = [], []
    for _ in range(n):
        t_ns = rng.randint(rec.t_start_ns, rec.t_end_ns)
        t0 = time.perf_counter()
        at = state_at(store, rid, t_ns)
        t1 = time.perf_counter()
        convert.placement_state(at, levels, cpus).model_dump_json()
        t2 = time.perf_counter()
        core.append((t1 - t0) * 1000)
        full.append((t2 - t0) * 1000)
    return core, full


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
    print(f"== backend bench: {copies} copies of vm2-hackbench-g4, {trace.stat().st_size / 1e9:.2f} GB text, "
          f"{os.cpu_count()} cores")  # fmt: skip
    alone_s, events = importer_alone(trace)
    e2e_s, store, rid = end_to_end(trace)
    st_s, st_events = store_only(copies)
    core, full = seek(store, rid)
    rec = store.get_recording(rid)
    assert rec is not None
    db_bytes = sum(Path(f"{store.path}{s}").stat().st_size for s in ("", "-wal") if Path(f"{store.path}{s}").exists())
    rows = [
        ("Go importer alone (baseline)", f"{events / alone_s / 1e6:.2f} M events/s", f"{alone_s:.1f} s", "1.00x"),
        ("end-to-end import (upload path)", f"{rec.event_count / e2e_s / 1e6:.2f} M events/s", f"{e2e_s:.1f} s",
         f"{alone_s / e2e_s:.2f}x"),
        ("store only (Arrow in memory)", f"{st_events / st_s / 1e6:.2f} M events/s", f"{st_s:.1f} s",
         f"{alone_s / events * st_events / st_s:.2f}x"),
    ]  # fmt: skip
    print(f"{'':34} {'throughput':>20} {'time':>8} {'vs importer':>12}")
    for name, a, b, c in rows:
        print(f"{name:34} {a:>20} {b:>8} {c:>12}")
    print(f"seek state_at (keyframe + chunk + delta): p50 {pct(core, 50):.1f} ms  p95 {pct(core, 95):.1f} ms")
    print(f"seek + PlacementState JSON (API work):    p50 {pct(full, 50):.1f} ms  p95 {pct(full, 95):.1f} ms")
    print(f"on disk: {rec.bytes_stored / rec.event_count:.2f} bytes/event compressed chunks, "
          f"{db_bytes / rec.event_count:.2f} bytes/event whole SQLite file ({rec.event_count:,} events, "
          f"{rec.chunk_count} chunks)")  # fmt: skip


if __name__ == "__main__":
    main()
