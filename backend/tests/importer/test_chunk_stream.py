"""The importer's chunk output (`--chunks`, what import_file reads) stores exactly what the Arrow-stream
path stores: the same chunks (rows, times, events decoded, dictionary types), keyframes, placement
tables, derived data and tasks, on real traces (text, perf, trace.dat). And a garbled or refused chunk
stream fails with a named error."""

from __future__ import annotations

import io
import json
import sqlite3
import struct
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest
from collector import collector_binary
from ftrace_lines import G4, TRACES

from placemap.importer import import_file
from placemap.importer.runner import ChunkStreamError, read_chunks
from placemap.replay.ingest import IngestError, Ingestor
from placemap.replay.topo import inferred_topology
from placemap.schema.models.import_summary_schema import ImportSummary
from placemap.store import Store
from placemap.store.codec import decode_blob


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return collector_binary(tmp_path_factory.mktemp("bin"))


def _via_arrow_stream(store: Store, collector: Path, path: Path) -> str:
    """The recording as the Arrow-stream path (Ingestor.add, encoding in Python) stores it."""
    proc = subprocess.run(
        [str(collector), "import", str(path), "--out", "-", "--json"],
        capture_output=True,
        check=True,
        timeout=120,
    )
    summary = ImportSummary.model_validate(json.loads(proc.stderr)).model_dump(mode="json", exclude_none=True)
    rid = store.create_recording("arrow")
    ing = Ingestor(store, rid, None)
    for batch in pa.ipc.open_stream(proc.stdout):
        ing.add(batch)
    ing.flush()
    topo = inferred_topology(set(ing.cpus_seen), "trace")
    store.set_topology(rid, store.put_topology(topo.model_dump(mode="json")))
    ing.finish(summary)
    return rid


def _rows(db: sqlite3.Connection, sql: str, rid: str) -> list[tuple[object, ...]]:
    return [tuple(r) for r in db.execute(sql, (rid,))]


@pytest.mark.parametrize(
    "trace",
    [G4, TRACES / "vm2-hackbench-g2.perf-script.txt.gz", TRACES / "vm2-hackbench-mixed.trace.dat"],
    ids=["ftrace", "perf", "trace.dat"],
)
def test_chunk_output_stores_what_the_arrow_stream_stores(store: Store, collector: Path, trace: Path) -> None:
    new = store.create_recording("chunks")
    import_file(store, collector, new, trace)
    rec = store.get_recording(new)
    assert rec is not None and rec.status == "ready", rec.error
    old = _via_arrow_stream(store, collector, trace)
    db = sqlite3.connect(store.path)
    index = (
        "SELECT seq, t_start_ns, t_end_ns, first_row, rows FROM chunks WHERE recording_id = ? ORDER BY seq"
    )
    assert _rows(db, index, new) == _rows(db, index, old)
    assert len(_rows(db, index, new)) >= 1
    blobs = (
        "SELECT data, raw_bytes, keyframe, keyframe_raw, placements, placements_raw FROM chunks"
        " WHERE recording_id = ? ORDER BY seq"
    )
    for a, b in zip(db.execute(blobs, (new,)).fetchall(), db.execute(blobs, (old,)).fetchall(), strict=True):
        ev_new, ev_old = decode_blob(a[0], a[1]), decode_blob(b[0], b[1])
        # same columns, same dictionary index types, same values
        assert ev_new.schema.remove_metadata() == ev_old.schema.remove_metadata()
        assert ev_new.equals(ev_old)
        assert decode_blob(a[2], a[3]).equals(decode_blob(b[2], b[3]))
        assert decode_blob(a[4], a[5]).equals(decode_blob(b[4], b[5]))
    derived = "SELECT name, data FROM derived WHERE recording_id = ? ORDER BY name"
    assert _rows(db, derived, new) == _rows(db, derived, old)
    tasks = (
        "SELECT pid, comm, events, migrations, first_ts_ns, last_ts_ns FROM tasks"
        " WHERE recording_id = ? ORDER BY pid"
    )
    assert _rows(db, tasks, new) == _rows(db, tasks, old)
    task_chunks = "SELECT pid, seq FROM task_chunks WHERE recording_id = ? ORDER BY pid, seq"
    assert _rows(db, task_chunks, new) == _rows(db, task_chunks, old)
    db.close()


def _frames(collector: Path) -> bytes:
    proc = subprocess.run(
        [str(collector), "import", str(G4), "--out", "-", "--chunks"],
        capture_output=True,
        check=True,
        timeout=120,
    )
    return proc.stdout


def test_read_chunks_names_a_cut_or_garbled_stream(collector: Path) -> None:
    data = _frames(collector)
    tables = list(read_chunks(io.BytesIO(data)))
    assert [t.num_rows for t, _ in tables] == [65_536, 72_578 - 65_536]
    with pytest.raises(ChunkStreamError, match="cut short"):
        list(read_chunks(io.BytesIO(data[: len(data) - 100])))
    with pytest.raises(ChunkStreamError, match="cut short"):
        list(read_chunks(io.BytesIO(data[:10])))
    with pytest.raises(ChunkStreamError, match="not a chunk frame"):
        list(read_chunks(io.BytesIO(b"XXXX" + data[4:])))
    size = struct.unpack_from("<Q", data, 8)[0]
    lying = data[:4] + struct.pack("<I", 5) + data[8 : 16 + size]
    with pytest.raises(ChunkStreamError, match="header says 5"):
        list(read_chunks(io.BytesIO(lying)))


def test_add_stored_refuses_short_chunks_before_the_last_and_other_columns(
    store: Store, collector: Path
) -> None:
    (first, ipc1), (last, ipc2) = read_chunks(io.BytesIO(_frames(collector)))
    ing = Ingestor(store, store.create_recording("x"), None)
    ing.add_stored(last.slice(0, 10), ipc2)
    with pytest.raises(IngestError, match="before the last"):
        ing.add_stored(first, ipc1)
    ing.close()
    ing = Ingestor(store, store.create_recording("y"), None)
    with pytest.raises(IngestError, match="not the event schema"):
        ing.add_stored(first.drop_columns(["comm"]), ipc1)
    with pytest.raises(IngestError, match="column cpu is int64"):
        ing.add_stored(first.set_column(1, "cpu", first.column("cpu").cast(pa.int64())), ipc1)
    ing.close()
