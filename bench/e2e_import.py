"""End-to-end import of one trace file into a fresh store (the upload path: import_file runs the Go
importer with --chunks and stores every chunk), timed around import_file only (not Python's start).
With --via arrow, the baseline path it replaced: the importer writes one Arrow stream and the backend
cuts, dictionary-encodes and writes the chunk IPC itself (Ingestor.add, still the live path's).
Prints one JSON object: events, wall_s, cpu_s (this process's threads + the importer), cpu_python_s,
cpu_importer_s. Called by bench/import_bench.sh (cmd/bench-import -e2e).
Run: backend/.venv/bin/python bench/e2e_import.py [--via chunks|arrow] [--db PATH] [--collector BIN] TRACE
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))

import pyarrow as pa  # noqa: E402
from placemap.importer import import_file  # noqa: E402
from placemap.replay.ingest import Ingestor  # noqa: E402
from placemap.replay.topo import inferred_topology  # noqa: E402
from placemap.replay.warmup import warm_kernels  # noqa: E402
from placemap.store import Store  # noqa: E402


def via_arrow(store: Store, collector: Path, rid: str, trace: Path) -> None:
    """The upload path before --chunks: an Arrow stream, chunks cut and encoded in Python."""
    proc = subprocess.Popen(
        [str(collector), "import", str(trace), "--out", "-", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    ing = Ingestor(store, rid, None)
    for batch in pa.ipc.open_stream(proc.stdout):
        ing.add(batch)
    summary = json.loads(proc.stderr.read())
    if proc.wait() != 0:
        sys.exit("the importer failed")
    ing.flush()
    topo = inferred_topology(set(ing.cpus_seen), "bench")
    store.set_topology(rid, store.put_topology(topo.model_dump(mode="json")))
    ing.finish(summary)


def _cpu(who: int) -> float:
    ru = resource.getrusage(who)
    return ru.ru_utime + ru.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trace", type=Path)
    ap.add_argument("--via", choices=("chunks", "arrow"), default="chunks")
    ap.add_argument("--db", type=Path, default=ROOT / "bench" / "out" / "bench-e2e-import.db")
    ap.add_argument("--collector", type=Path, default=ROOT / "collectors" / "bin" / "placemap-collect")
    args = ap.parse_args()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{args.db}{suffix}").unlink(missing_ok=True)
    warm_kernels()  # loaded once per process, as the server does at start
    store = Store(args.db)
    rid = store.create_recording(args.trace.name)
    t, cs, cc = time.perf_counter(), _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    if args.via == "arrow":
        via_arrow(store, args.collector, rid, args.trace)
    else:
        import_file(store, args.collector, rid, args.trace, machine="bench")
    wall = time.perf_counter() - t
    py, go = _cpu(resource.RUSAGE_SELF) - cs, _cpu(resource.RUSAGE_CHILDREN) - cc
    rec = store.get_recording(rid)
    if rec is None or rec.status != "ready":
        sys.exit(f"e2e import failed: {rec.error if rec else 'no recording'}")
    print(json.dumps({"events": rec.event_count, "wall_s": wall, "cpu_s": py + go, "cpu_python_s": py,
                      "cpu_importer_s": go}))  # fmt: skip
    store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{args.db}{suffix}").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
