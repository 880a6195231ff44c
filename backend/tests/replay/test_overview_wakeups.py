"""The overview's wakeup rows (Overview.wakeups_by_level, .wakeups_by_waker): every wakeup binned at
its own time, in the classes its metrics count it in, so that the counts up to a playhead are the
whole run's at the end. Checked on the real g4 capture laid across two LLCs (bin by bin: the classes
of each bin add up to that bin's wakeups), on the real Zen3 NPS4 short-task excerpt (the three
pulls land in the bins of the three sched_wakeup lines that the trace itself names), and for
recordings stored before the rows were binned (replay.waker_refill.fill_overview)."""

from __future__ import annotations

import io
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from collector import collector_binary
from ftrace_lines import TRACES
from test_classify import two_cpus
from test_helpers import damage_chunk, ingest, never_asked

from placemap.importer import import_file
from placemap.replay import waker_refill
from placemap.replay.accumulate import overview_rows
from placemap.replay.delays import METRICS, fill_wakeup_latency
from placemap.replay.ingest import npz
from placemap.replay.queries import WAKER_ROWS, OverviewData, overview
from placemap.replay.waker_refill import NO_WAKE_ROWS, OVERVIEW, fill_by_waker, fill_overview
from placemap.schema.events import KIND_NAMES
from placemap.schema.models.topology_schema import Topology
from placemap.sim.topology import preset
from placemap.store import Store

SHORTRUN = TRACES / "zen3-2s-nps4-stream-excerpt-shortrun.ftrace.txt"


def _overview(store: Store, rid: str, bins: int) -> OverviewData:
    rec = store.get_recording(rid)
    assert rec is not None and rec.t_start_ns is not None and rec.t_end_ns is not None
    ov = overview(store, rid, rec.t_start_ns, rec.t_end_ns, bins)
    assert ov is not None
    return ov


def _metrics(store: Store, rid: str) -> dict[str, Any]:
    got: dict[str, Any] = json.loads(store.derived(rid, METRICS) or b"{}")
    return got


def _sums(series: dict[str, list[float]]) -> dict[str, int]:
    return {k: round(sum(v)) for k, v in series.items()}


@pytest.mark.parametrize("bins", [1, 7, 1000, 4096])
def test_every_wakeup_is_binned_in_the_classes_its_metrics_count(
    store: Store, g4_table: pa.Table, bins: int
) -> None:
    rid = ingest(store, g4_table, topology=two_cpus("node"), chunk_rows=3_000)
    ov = _overview(store, rid, bins)
    m = _metrics(store, rid)["wakeups"]
    assert ov.wakeups_by_level is not None and ov.wakeups_by_waker is not None
    # summed over the run: the whole run's counts
    assert _sums(ov.wakeups_by_waker) == m["by_waker"]
    lv = _sums(ov.wakeups_by_level)
    assert {k: lv[k] for k in m["by_level"]} == m["by_level"] and lv["same_cpu"] == m["same_cpu"]
    assert sum(lv.values()) == m["total"] > 20_000
    assert m["by_waker"]["cross_llc"] > 1000, "both CPUs' LLCs take part"
    # bin by bin: each bin's wakeups, by level and by waker, are the wakeups the kind row has there
    wake = np.array(ov.by_kind["wakeup"])
    by_level = np.array(list(ov.wakeups_by_level.values())).sum(axis=0)
    w = {k: np.array(v) for k, v in ov.wakeups_by_waker.items()}
    assert np.array_equal(by_level, wake)
    assert np.array_equal(w["shared_llc"] + w["cross_llc"] + w["still_running"] + w["unknown"], wake)
    assert np.array_equal(w["to_waker_llc"] + w["to_prev_llc"] + w["elsewhere"], w["cross_llc"])
    assert (w["on_waker_cpu"] <= w["shared_llc"] + w["cross_llc"]).all()


def _marked_pulls(path: Path) -> list[int]:
    """The times (ns) of the excerpt's sched_wakeup lines of stream's main thread (pid 4392) onto
    CPUs 152, 136 and the first onto 240: the three wakeups that the docstring of
    test_by_waker's short-task test reads as pulled to the waker's LLC (wakings from CPUs 31, 15
    and 119)."""
    pat = re.compile(r"\s(\d+)\.(\d{6}): sched_wakeup: comm=stream pid=4392 .* target_cpu=(\d+)")
    times = []
    for line in path.read_text().splitlines():
        m = pat.search(line)
        if m and int(m.group(3)) in {152, 136, 240}:
            times.append(int(m.group(1)) * 1_000_000_000 + int(m.group(2)) * 1000)
    return times[:3]


def test_the_short_task_patch_s_pulls_are_binned_at_their_own_wakeups(store: Store, tmp_path: Path) -> None:
    topo = Topology.model_validate(preset("zen3-2s-nps4").to_dict())
    rid = store.create_recording(SHORTRUN.name)
    import_file(store, collector_binary(tmp_path), rid, SHORTRUN, topology=topo)
    rec = store.get_recording(rid)
    assert rec is not None and rec.t_start_ns is not None
    ov = _overview(store, rid, 2000)
    assert ov.wakeups_by_waker is not None
    pulls = _marked_pulls(SHORTRUN)
    assert len(pulls) == 3
    want = sorted({(t - rec.t_start_ns) // ov.bin_ns for t in pulls})
    got = [i for i, v in enumerate(ov.wakeups_by_waker["to_waker_llc"]) if v > 0]
    assert got == want
    assert round(sum(ov.wakeups_by_waker["to_waker_llc"])) == 3
    assert round(sum(ov.wakeups_by_waker["to_prev_llc"])) == 3


# --- overviews stored before the wakeup rows were binned (replay.waker_refill.fill_overview) ----


def _as_older_version_stored(store: Store, rid: str, *, metrics_too: bool = False) -> None:
    """Store the overview as versions before the wakeup rows did (kinds, migration levels, lost);
    with metrics_too, the metrics without wakeups.by_waker and llc_pairs as well."""
    blob = store.derived(rid, OVERVIEW)
    assert blob is not None
    with np.load(io.BytesIO(blob)) as z:
        values, t0, width = z["values"], z["t0"], z["width"]
    lost = overview_rows(len(KIND_NAMES))[0]
    assert store.put_derived(rid, OVERVIEW, npz(values=values[: lost + 1], t0=t0, width=width))
    if metrics_too:
        body = _metrics(store, rid)
        del body["wakeups"]["by_waker"]
        del body["wakeups"]["llc_pairs"]
        assert store.put_derived(rid, METRICS, json.dumps(body).encode())


def _asked(topo: Topology | None) -> tuple[list[bool], Any]:
    asked: list[bool] = []

    def topology() -> Topology | None:
        asked.append(True)
        return topo

    return asked, topology


def test_an_older_overview_gets_the_rows_the_ingest_bins(store: Store, g4_table: pa.Table) -> None:
    topo = two_cpus("node")
    rid = ingest(store, g4_table, topology=topo, chunk_rows=3_000)
    fresh = _overview(store, rid, 1000)
    _as_older_version_stored(store, rid)
    older = _overview(store, rid, 1000)
    assert older.wakeups_by_level is None and older.wakeups_by_waker is None
    assert older.by_kind == fresh.by_kind and older.lost == fresh.lost
    asked, topology = _asked(topo)
    assert fill_overview(store, rid, topology)
    assert _overview(store, rid, 1000) == fresh
    # kept: the next read neither scans again nor asks the topology
    assert not fill_overview(store, rid, topology)
    assert asked == [True]


def test_one_scan_fills_an_older_overview_and_its_metrics(store: Store, g4_table: pa.Table) -> None:
    topo = two_cpus("node")
    rid = ingest(store, g4_table, topology=topo, chunk_rows=3_000)
    fresh, counted = _overview(store, rid, 500), _metrics(store, rid)
    for first in ("overview", "metrics"):
        _as_older_version_stored(store, rid, metrics_too=True)
        asked, topology = _asked(topo)
        if first == "overview":
            assert fill_overview(store, rid, topology)
        else:
            fill_by_waker(store, rid, _metrics(store, rid), topology)
        assert _metrics(store, rid) == counted and _overview(store, rid, 500) == fresh, first
        assert not fill_overview(store, rid, topology)
        assert fill_by_waker(store, rid, _metrics(store, rid), topology)["wakeups"] == counted["wakeups"]
        assert asked == [True], first


def test_a_damaged_chunk_leaves_the_rows_out_once(store: Store, g4_table: pa.Table) -> None:
    rid = ingest(store, g4_table, chunk_rows=3_000)
    fresh = _overview(store, rid, 1000)
    _as_older_version_stored(store, rid)
    damage_chunk(store, rid)
    assert fill_overview(store, rid, lambda: None)
    got = _overview(store, rid, 1000)
    # the rest of the overview as it was, the wakeup rows left out
    assert got.wakeups_by_waker is None and got.by_kind == fresh.by_kind
    blob = store.derived(rid, OVERVIEW)
    assert blob is not None
    with np.load(io.BytesIO(blob)) as z:
        assert NO_WAKE_ROWS in z.files

    assert not fill_overview(store, rid, never_asked)


def test_a_damaged_chunk_found_by_the_overview_leaves_a_missing_by_waker_null_too(
    store: Store, g4_table: pa.Table
) -> None:
    rid = ingest(store, g4_table, chunk_rows=3_000)
    _as_older_version_stored(store, rid, metrics_too=True)
    damage_chunk(store, rid)
    assert fill_overview(store, rid, lambda: None)
    assert _metrics(store, rid)["wakeups"]["by_waker"] is None

    assert fill_by_waker(store, rid, _metrics(store, rid), never_asked)["wakeups"]["by_waker"] is None


def test_requests_at_once_scan_once_and_keep_each_other_s_fields(
    store: Store, g4_table: pa.Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page asks for a recording's metrics and its overview at once: for one stored before the
    run-queue delays, the wakeups by their waker and the overview's rows, the requests' refills
    wait for each other (refill_lock), so the chunks are scanned for the wakeups once, and each
    document ends with every field."""
    topo = two_cpus("node")
    rid = ingest(store, g4_table, topology=topo, chunk_rows=3_000)
    fresh, counted = _overview(store, rid, 500), _metrics(store, rid)
    _as_older_version_stored(store, rid, metrics_too=True)
    body = _metrics(store, rid)
    del body["wakeup_latency"]
    assert store.put_derived(rid, METRICS, json.dumps(body).encode())
    scans: list[int] = []
    real = waker_refill._scan

    def slow_scan(*args: Any, **kwargs: Any) -> Any:
        scans.append(1)
        time.sleep(0.3)  # both requests are inside their refill by now
        return real(*args, **kwargs)

    monkeypatch.setattr(waker_refill, "_scan", slow_scan)
    barrier = threading.Barrier(3)
    got: dict[str, Any] = {}

    def metrics_request() -> None:
        barrier.wait()
        doc = fill_wakeup_latency(store, rid, body)
        got["metrics"] = fill_by_waker(store, rid, doc, lambda: topo)

    def overview_request() -> None:
        barrier.wait()
        got["overview"] = fill_overview(store, rid, lambda: topo)

    def second_overview_request() -> None:
        barrier.wait()
        fill_overview(store, rid, lambda: topo)

    threads = [
        threading.Thread(target=f) for f in (metrics_request, overview_request, second_overview_request)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(scans) == 1
    assert got["metrics"]["wakeups"] == counted["wakeups"]
    assert got["metrics"]["wakeup_latency"] == counted["wakeup_latency"]
    assert _metrics(store, rid) == counted, "every field stored, none written over"
    assert _overview(store, rid, 500) == fresh


def test_a_refill_writes_its_field_into_the_document_as_stored_now(store: Store, g4_table: pa.Table) -> None:
    """A request read the metrics before another's refill stored by_waker: its own refill of the
    run-queue delays keeps by_waker (it writes into the document as stored, not the one it read)."""
    topo = two_cpus("node")
    rid = ingest(store, g4_table, topology=topo, chunk_rows=3_000)
    counted = _metrics(store, rid)
    _as_older_version_stored(store, rid, metrics_too=True)
    stale = _metrics(store, rid)
    del stale["wakeup_latency"]
    assert store.put_derived(rid, METRICS, json.dumps(stale).encode())
    assert fill_overview(store, rid, lambda: topo)  # stores by_waker from its scan
    assert fill_wakeup_latency(store, rid, stale)["wakeup_latency"] == counted["wakeup_latency"]
    assert _metrics(store, rid) == counted


def test_waker_rows_are_named_as_the_metrics_name_them() -> None:
    from placemap.api.models import WakerCounts, WakerSeries  # noqa: PLC0415

    assert set(WAKER_ROWS) == set(WakerCounts.model_fields) == set(WakerSeries.model_fields)
