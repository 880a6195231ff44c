"""Export benchmark: a stored recording written as ftrace text (GET .../trace.txt, `placemap admin
export`), beside the other ways its events leave or enter the store, on the same recording.

Imports (once, in bench/out/) time-shifted copies of the real vm2-hackbench-g4 trace (~1M events by
default), then prints, best of --repeats each, in events per second:
  - ftrace text: placemap.replay.ftrace_text over the stored chunks (what the download streams);
  - Arrow IPC: the same chunks written as one Arrow stream (events.arrow): the baseline, the cheapest
    way out;
  - the Go importer reading the exported text back (to Arrow on a drained pipe): what the file costs
    the next tool in line.
Run: backend/.venv/bin/python bench/export_bench.py [--events N] [--repeats N]
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))
sys.path.insert(0, str(ROOT / "bench"))

from backend_bench import COLLECT, OUT, build_collector, fresh_store, importer_alone, make_trace

from placemap.importer import import_file
from placemap.replay.ftrace_text import recording_text
from placemap.replay.queries import window_batches
from placemap.schema.events import EVENT_SCHEMA
from placemap.store import RecordingRow, Store


def best(fn: object, repeats: int) -> float:
    assert callable(fn)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def as_text(store: Store, rec: RecordingRow, out: Path) -> None:
    with out.open("wb") as fh:
        for piece in recording_text(store, rec):
            fh.write(piece)


def as_arrow(store: Store, rid: str) -> int:
    buf = io.BytesIO()
    with pa.ipc.new_stream(buf, EVENT_SCHEMA) as w:
        for b in window_batches(store, rid, None, None):
            w.write_batch(b)
    return buf.tell()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    build_collector()
    copies = max(1, round(args.events / 72_578))
    trace = make_trace(copies)
    store = fresh_store("bench-export.db")
    rid = store.create_recording(trace.name)
    import_file(store, COLLECT, rid, trace, machine="bench")
    rec = store.get_recording(rid)
    assert rec is not None and rec.status == "ready", rec
    n = rec.event_count
    print(f"== export bench: {copies} copies of vm2-hackbench-g4, {n:,} events; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    text = OUT / "bench-export.ftrace.txt"
    t_text = best(lambda: as_text(store, rec, text), args.repeats)
    t_arrow = best(lambda: as_arrow(store, rid), args.repeats)
    read_s = min(importer_alone(text)[0] for _ in range(args.repeats))
    print(f"{'way':<34}{'seconds':>9}{'events/s':>14}{'vs Arrow':>10}")
    for what, s in (
        ("ftrace text (trace.txt)", t_text),
        ("Arrow IPC (events.arrow): baseline", t_arrow),
        ("importer reading the text back", read_s),
    ):
        print(f"{what:<34}{s:>9.3f}{n / s:>14,.0f}{t_arrow / s:>9.2f}x")
    print(f"text: {text.stat().st_size / n:.0f} bytes per event ({text.stat().st_size / 1e6:.0f} MB)")
    text.unlink()


if __name__ == "__main__":
    main()
