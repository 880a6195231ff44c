"""Store and chunk codec on the real vm2-hackbench-g4 events: chunks, time index, failure, delete."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pyarrow as pa
import pytest

from placemap.replay.ingest import Ingestor
from placemap.schema.events import EVENT_SCHEMA
from placemap.sim.topology import preset
from placemap.store import Store, decode_chunk, encode_chunk
from placemap.store.codec import decode_blob

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _ingest(store: Store, table: pa.Table, chunk_rows: int = 10_000, name: str = "g4") -> str:
    rid = store.create_recording(name)
    ing = Ingestor(store, rid, None, chunk_rows=chunk_rows)
    for batch in table.to_batches(max_chunksize=7_777):  # batch size unrelated to chunk size
        ing.add(batch)
    ing.finish(None)
    return rid


def test_codec_round_trips_rows_and_is_one_zstd_frame(g4_table: pa.Table) -> None:
    part = g4_table.slice(0, 5000)
    enc = encode_chunk(part)
    assert enc.data[:4] == ZSTD_MAGIC, "served verbatim as Content-Encoding: zstd, so it must be a zstd frame"
    raw = decode_blob(enc.data, enc.raw_bytes)
    comm_type = raw.schema.field("comm").type
    assert pa.types.is_dictionary(comm_type), "comm repeats, so it is dictionary-encoded"
    assert comm_type.index_type == pa.int8(), "a handful of names: one-byte indices"
    assert decode_chunk(enc.data, enc.raw_bytes).equals(part)
    assert len(enc.data) < part.nbytes / 5


def test_hostile_comm_round_trips(g4_table: pa.Table) -> None:
    rows = g4_table.slice(0, 3).to_pylist()
    rows[0]["comm"] = "<script>"
    rows[1]["comm"] = "x pid=1 prio=1"
    rows[2]["comm"] = "\\xff\"'&;\u00e9"
    table = pa.Table.from_pylist(rows, schema=EVENT_SCHEMA)
    enc = encode_chunk(table)
    assert decode_chunk(enc.data, enc.raw_bytes).column("comm").to_pylist() == [r["comm"] for r in rows]


def test_ingest_rechunks_and_indexes_time(store: Store, g4_table: pa.Table) -> None:
    rid = _ingest(store, g4_table)
    rec = store.get_recording(rid)
    assert rec is not None
    assert (rec.status, rec.event_count, rec.chunk_count) == ("ready", 72_578, 8)
    chunks = store.list_chunks(rid)
    assert [c.rows for c in chunks] == [10_000] * 7 + [2_578]
    assert [c.first_row for c in chunks] == [i * 10_000 for i in range(8)]
    assert rec.bytes_stored == sum(c.bytes for c in chunks)
    decoded = []
    for c in chunks:
        data = store.chunk_data(rid, c.seq)
        assert data is not None
        t = decode_chunk(*data)
        assert (t.column("ts_ns")[0].as_py(), t.column("ts_ns")[-1].as_py()) == (c.t_start_ns, c.t_end_ns)
        decoded.append(t)
    assert pa.concat_tables(decoded).equals(g4_table)
    # window query: chunks overlapping a time range
    mid = chunks[3]
    got = store.list_chunks(rid, mid.t_start_ns + 1, mid.t_end_ns - 1)
    assert [c.seq for c in got] == [3]


def test_failed_import_leaves_no_data_and_a_reason(store: Store, g4_table: pa.Table) -> None:
    rid = store.create_recording("half")
    ing = Ingestor(store, rid, None, chunk_rows=10_000)
    ing.add(g4_table.slice(0, 30_000))
    ing.flush()
    assert len(store.list_chunks(rid)) == 3
    ing.close()  # the import stopped here: its writer is done before the chunks are dropped
    store.fail_recording(rid, "importer exited with status 1: truncated gzip")
    rec = store.get_recording(rid)
    assert rec is not None
    assert (rec.status, rec.error, rec.event_count, rec.chunk_count) == (
        "failed",
        "importer exited with status 1: truncated gzip",
        0,
        0,
    )
    with sqlite3.connect(store.path) as db:
        for table in ("chunks", "task_chunks", "tasks", "derived"):
            assert db.execute(f"SELECT count(*) FROM {table} WHERE recording_id = ?", (rid,)).fetchone() == (
                0,
            )


def test_delete_removes_everything(store: Store, g4_table: pa.Table) -> None:
    keep = _ingest(store, g4_table.slice(0, 20_000), name="keep")
    gone = _ingest(store, g4_table.slice(0, 20_000), name="gone")
    assert [r.name for r in store.list_recordings()] == ["gone", "keep"], "newest first"
    assert store.delete_recording(gone)
    assert not store.delete_recording(gone)
    assert store.get_recording(gone) is None
    with sqlite3.connect(store.path) as db:
        for table in ("chunks", "task_chunks", "tasks", "derived"):
            assert db.execute(f"SELECT count(*) FROM {table} WHERE recording_id = ?", (gone,)).fetchone() == (
                0,
            )
    assert len(store.list_chunks(keep)) == 2


def test_task_search_matches_pid_or_literal_comm(store: Store, g4_table: pa.Table) -> None:
    rid = _ingest(store, g4_table)
    by_pid = store.tasks(rid, "13114", 10)
    assert [(t.pid, t.comm) for t in by_pid] == [(13114, "hackbench")]
    assert by_pid[0].migrations == 9
    assert {t.comm for t in store.tasks(rid, "json2t", 10)} == {"npm exec json2t"}
    assert store.tasks(rid, "%", 10) == [], "% is a literal, not a wildcard"


def test_interrupted_imports_fail_on_restart(store: Store) -> None:
    rid = store.create_recording("was importing")
    assert store.fail_interrupted() == 1
    rec = store.get_recording(rid)
    assert rec is not None and rec.status == "failed" and rec.error is not None


@pytest.mark.parametrize("chunk_rows", [65_536])
def test_default_chunk_size_holds_the_whole_small_trace(
    store: Store, g4_table: pa.Table, chunk_rows: int
) -> None:
    rid = _ingest(store, g4_table, chunk_rows=chunk_rows)
    assert [c.rows for c in store.list_chunks(rid)] == [65_536, 72_578 - 65_536]


def test_importer_output_matches_the_lines(g4_table: pa.Table, g4_parsed_rows: list[dict[str, Any]]) -> None:
    """The Go importer's rows are the file's sched lines, field for field, in order."""
    assert g4_table.equals(pa.Table.from_pylist(g4_parsed_rows, schema=EVENT_SCHEMA))


def test_new_database_has_64k_pages_and_an_old_one_keeps_its_own(tmp_path: Any, g4_table: pa.Table) -> None:
    """A new store file gets 64 KB pages (chunk blobs are ~0.5 MB per commit); a file made before
    keeps its 4 KB pages (SQLite cannot change a WAL file's page size) and still takes chunks."""
    new = Store(tmp_path / "new.db")
    assert new._conn().execute("PRAGMA page_size").fetchone()[0] == 65536
    new.close()
    old_path = tmp_path / "old.db"
    conn = sqlite3.connect(old_path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    old = Store(old_path)
    assert old._conn().execute("PRAGMA page_size").fetchone()[0] == 4096
    rid = _ingest(old, g4_table)
    rec = old.get_recording(rid)
    assert rec is not None and rec.status == "ready" and rec.event_count == g4_table.num_rows
    old.close()


def test_a_topology_is_stored_once_however_often_it_is_put(tmp_path: Any) -> None:
    """Content-addressed: every simulated run of a preset and every import from one host put the
    same machine; the second put gives the first id, whatever the key order, and a reopened store
    still knows it. Another machine, or the same one with a CPU more, is another topology."""
    zen = preset("zen3-2s-nps1").to_dict()
    s = Store(tmp_path / "t.db")
    tid = s.put_topology(zen)
    assert s.put_topology(dict(reversed(list(zen.items())))) == tid
    bdw = s.put_topology(preset("bdw-1s-20").to_dict())
    assert bdw != tid
    grown = {**zen, "cpus": [*zen["cpus"], {**zen["cpus"][-1], "cpu": 256}]}
    assert s.put_topology(grown) not in (tid, bdw)
    s.close()
    s = Store(tmp_path / "t.db")
    assert s.put_topology(zen) == tid and s.get_topology(tid) == zen
    rows = s._conn().execute("SELECT COUNT(*) FROM topologies").fetchone()[0]
    assert rows == 3
    s.close()


def test_topologies_stored_before_addressing_are_addressed_once_and_their_machine_lists_once(
    tmp_path: Any,
) -> None:
    """A store written before session 27 holds a machine once per run, with no digests: opening it
    points every recording of a machine at one row (the oldest unless a later put addressed the
    machine), later puts find that row, and every row handed out still reads."""
    zen, bdw = preset("zen3-2s-nps1").to_dict(), preset("bdw-1s-20").to_dict()
    path = tmp_path / "old.db"
    s = Store(path)
    s._conn().execute("DELETE FROM meta WHERE key = 'topologies_addressed'")  # as before session 27
    ids = ["zen-a", "zen-b", "bdw-a", "zen-c"]
    for i, (tid, body) in enumerate(zip(ids, [zen, zen, bdw, zen], strict=True)):
        s._conn().execute(
            "INSERT INTO topologies (id, body, created_at) VALUES (?, ?, ?)",
            (tid, json.dumps(body), f"2026-11-0{i + 1}T00:00:00.000+00:00"),
        )
    recs = {tid: s.create_recording(tid, source="simulated", topology_id=tid) for tid in ids}
    addressed = s.put_topology(bdw)  # session 27 put the machine again, with its digest
    s.close()
    s = Store(path)
    assert {tid: s.get_recording(r).topology_id for tid, r in recs.items()} == {  # type: ignore[union-attr]
        "zen-a": "zen-a", "zen-b": "zen-a", "bdw-a": addressed, "zen-c": "zen-a"
    }  # fmt: skip
    assert s.put_topology(zen) == "zen-a" and s.put_topology(bdw) == addressed
    assert all(s.get_topology(t) is not None for t in ids)
    assert s._conn().execute("SELECT COUNT(*) FROM topologies").fetchone()[0] == 5
    # once: a recording pointed at a duplicate afterwards (a client holding its id) stays so
    late = s.create_recording("late", source="imported", topology_id="zen-b")
    s.close()
    s = Store(path)
    assert s.get_recording(late).topology_id == "zen-b"  # type: ignore[union-attr]
    s.close()
