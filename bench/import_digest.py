"""Digest of everything an import stores, to check that a change to the ingest stores the same
bytes: per trace, one JSON line with sha256 prefixes of the recording row (less id and times), the
chunk rows with their blobs as stored and decompressed, keyframes, placements, each derived blob,
tasks and task_chunks. Run it with the code before (a `git worktree add /tmp/base REV` copy) and
after, and diff the outputs.
Run: backend/.venv/bin/python bench/import_digest.py [--root TREE] [--collector BIN] TRACE...
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _h(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:20]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("traces", type=Path, nargs="+")
    ap.add_argument("--root", type=Path, default=ROOT, help="the tree whose backend imports")
    ap.add_argument("--collector", type=Path, default=ROOT / "collectors" / "bin" / "placemap-collect")
    args = ap.parse_args()
    sys.path.insert(0, str(args.root / "backend"))
    import pyarrow as pa  # noqa: PLC0415 - from the tree given

    from placemap.importer import import_file  # noqa: PLC0415
    from placemap.store import Store  # noqa: PLC0415

    zstd = pa.Codec("zstd")
    with tempfile.TemporaryDirectory() as tmp:
        for n, trace in enumerate(args.traces):
            store = Store(Path(tmp) / f"digest{n}.db")
            rid = store.create_recording("digest")
            import_file(store, args.collector, rid, trace, machine="bench")
            c = store._conn()
            rec = c.execute(
                "SELECT name, source, status, format, topology_id IS NOT NULL, error, progress, event_count,"
                " t_start_ns, t_end_ns, lost_events, skipped_lines, bytes_stored, chunk_count, meta"
                " FROM recordings WHERE id = ?",
                (rid,),
            ).fetchone()
            out = {
                "trace": trace.name,
                "status": rec[2],
                "events": rec[7],
                "recording": _h(json.dumps(rec).encode()),
            }
            stored, raw, keyframes, placements = (hashlib.sha256() for _ in range(4))
            for row in c.execute(
                "SELECT seq, t_start_ns, t_end_ns, first_row, rows, raw_bytes, bytes, keyframe_raw,"
                " placements_raw, data, keyframe, placements FROM chunks WHERE recording_id = ? ORDER BY seq",
                (rid,),
            ):
                stored.update(repr(row[:9]).encode())
                stored.update(row[9])
                raw.update(zstd.decompress(row[9], decompressed_size=row[5], asbytes=True))
                keyframes.update(row[10])
                placements.update(row[11])
            out |= {
                "chunks_stored": stored.hexdigest()[:20],
                "chunks_raw": raw.hexdigest()[:20],
                "keyframes": keyframes.hexdigest()[:20],
                "placements": placements.hexdigest()[:20],
            }
            for name, data in c.execute(
                "SELECT name, data FROM derived WHERE recording_id = ? ORDER BY name", (rid,)
            ):
                out[f"derived:{name}"] = _h(data)
            tasks = c.execute(
                "SELECT pid, comm, events, migrations, first_ts_ns, last_ts_ns FROM tasks"
                " WHERE recording_id = ? ORDER BY pid",
                (rid,),
            ).fetchall()
            out["tasks"] = _h(repr(tasks).encode())
            task_chunks = c.execute(
                "SELECT pid, seq FROM task_chunks WHERE recording_id = ? ORDER BY pid, seq", (rid,)
            ).fetchall()
            out["task_chunks"] = _h(repr(task_chunks).encode())
            print(json.dumps(out), flush=True)
            store.close()


if __name__ == "__main__":
    main()
