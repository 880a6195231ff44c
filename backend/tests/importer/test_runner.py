"""The importer runner with the real Go binary on the real shared traces: formats, progress,
summaries, and failures that leave a readable reason and no data."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from collector import collector_binary
from ftrace_lines import G4, TRACES

from placemap.importer import import_file
from placemap.replay.queries import window_batches
from placemap.store import Store


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return collector_binary(tmp_path_factory.mktemp("bin"))


def _chunks(store: Store, rid: str) -> int:
    with sqlite3.connect(store.path) as db:
        n: int = db.execute("SELECT count(*) FROM chunks WHERE recording_id = ?", (rid,)).fetchone()[0]
        return n


def test_g4_with_progress(store: Store, collector: Path) -> None:
    rid = store.create_recording("g4")
    seen: list[float] = []
    orig = store.set_progress

    def spy(r: str, p: float) -> None:
        seen.append(p)
        orig(r, p)

    store.set_progress = spy  # type: ignore[method-assign]
    import_file(store, collector, rid, G4)
    rec = store.get_recording(rid)
    assert rec is not None and rec.status == "ready", rec
    assert rec.event_count == 72_578 and rec.lost_events == 0 and rec.format == "ftrace"
    assert rec.meta["import_summary"]["events_by_kind"]["migrate"] == 629
    assert seen, "the importer's --progress lines reach the recording"
    assert all(0 <= p < 1 for p in seen) and seen == sorted(seen)
    assert rec.topology_id is not None and store.get_topology(rec.topology_id) is not None


def test_perf_script_trace(store: Store, collector: Path) -> None:
    rid = store.create_recording("perf")
    import_file(store, collector, rid, TRACES / "vm2-hackbench-g2.perf-script.txt.gz")
    rec = store.get_recording(rid)
    assert rec is not None and rec.status == "ready", rec.error
    assert rec.event_count == 9_903, "README: 9,903 events"


def test_perf_data_file(store: Store, collector: Path) -> None:
    # perf record's binary perf.data, read by its own decoder: the events its `perf script` prints
    binary = store.create_recording("perf.data")
    import_file(store, collector, binary, TRACES / "vm2-hackbench-g2.perf.data")
    rec = store.get_recording(binary)
    assert rec is not None and rec.status == "ready", rec.error
    assert rec.format == "perfdata" and rec.event_count == 9_903 and rec.lost_events == 0
    assert rec.meta["import_summary"]["header"]["kernel_release"] == "6.18.44-fc-v657"
    text = store.create_recording("perf script")
    import_file(store, collector, text, TRACES / "vm2-hackbench-g2.perf-script.txt.gz")
    a, b = (pa.Table.from_batches(list(window_batches(store, r, None, None))) for r in (binary, text))
    assert a.drop_columns(["ts_ns"]).equals(b.drop_columns(["ts_ns"]))
    # perf.data holds nanoseconds where perf script prints microseconds
    assert pc.multiply(pc.divide(a.column("ts_ns"), 1000), 1000).equals(b.column("ts_ns"))
    assert not a.column("ts_ns").equals(b.column("ts_ns"))


def test_missing_binary_fails_with_the_build_command(store: Store, tmp_path: Path) -> None:
    rid = store.create_recording("nobin")
    import_file(store, tmp_path / "nope", rid, G4)
    rec = store.get_recording(rid)
    assert rec is not None and rec.status == "failed"
    assert rec.error is not None and "go build" in rec.error


def test_bad_input_fails_cleanly(store: Store, collector: Path, tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("these are my notes\nnot a trace\n")
    rid = store.create_recording("bad")
    import_file(store, collector, rid, bad)
    rec = store.get_recording(rid)
    assert rec is not None and rec.status == "failed" and rec.error
    assert not rec.error.startswith("placemap-collect:"), "a reason for a person, no tool prefix"
    assert _chunks(store, rid) == 0
