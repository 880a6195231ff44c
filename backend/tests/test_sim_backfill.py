"""Placement reasons worked out for a simulated run saved without them (placemap.sim_backfill): the
rerun gives the very reasons a save keeps, and a rerun that is not the saved run stores nothing."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from placemap.replay.ingest import Ingestor
from placemap.sim_backfill import ReasonsUnavailableError, backfill
from placemap.sim_reasons import NAMES, REASONS
from placemap.sim_record import run
from placemap.store import Store
from placemap.store.live import LiveStore

SCENARIO: dict[str, Any] = {
    "topology": "zen3-2s-nps2",
    "workload": {"kind": "hackbench", "groups": 2, "loops": 20},
    "hints": ["wake_hold"],
    "seed": 5,
    "duration_ms": 2000,
}


def _as_saved_before_reasons(store: Store, rid: str) -> tuple[bytes, bytes]:
    """Drop the run's reason blobs, as a run saved before session 26 is stored; the blobs dropped."""
    kept = store.derived(rid, REASONS), store.derived(rid, NAMES)
    assert kept[0] is not None and kept[1] is not None
    with store._tx() as c:
        c.execute("DELETE FROM derived WHERE recording_id = ? AND name IN (?, ?)", (rid, REASONS, NAMES))
    assert store.derived(rid, REASONS) is None
    return kept[0], kept[1]


def test_the_rerun_stores_the_very_reasons_the_save_kept(store: Store) -> None:
    saved = run(SCENARIO, store=store, wall_clock=False)
    rid = saved["recording_id"]
    reasons, names = _as_saved_before_reasons(store, rid)
    seen: list[float] = []
    again = backfill(store, rid, on_progress=seen.append)
    assert store.derived(rid, REASONS) == reasons and store.derived(rid, NAMES) == names
    assert again == saved  # the same run: metric, counters, decisions, llc_util
    assert seen == sorted(seen) and seen[-1] == 1.0
    # once kept, a second rerun is refused and changes nothing
    with pytest.raises(ReasonsUnavailableError) as err:
        backfill(store, rid)
    assert err.value.code == "already_kept"


def test_a_rerun_that_is_not_the_saved_run_stores_nothing_and_says_what_differs(store: Store) -> None:
    """A simulator changed since the save gives another run: here the saved counts are moved by
    one switch, as a changed mechanism would."""
    saved = run(SCENARIO, store=store, wall_clock=False)
    rid = saved["recording_id"]
    _as_saved_before_reasons(store, rid)
    rec = store.get_recording(rid)
    assert rec is not None
    switches = rec.meta["events_by_kind"]["switch"]
    LiveStore(store).merge_meta(
        rid, {"events_by_kind": {**rec.meta["events_by_kind"], "switch": switches + 1}}
    )
    with pytest.raises(ReasonsUnavailableError) as err:
        backfill(store, rid)
    assert err.value.code == "rerun_differs"
    assert f"switch events {switches + 1:,} saved, {switches:,} now" in str(err.value)
    assert store.derived(rid, REASONS) is None and store.derived(rid, NAMES) is None


def test_a_captured_trace_has_no_reasons_to_work_out(store: Store, g4_table: pa.Table) -> None:
    rid = store.create_recording("g4")
    ing = Ingestor(store, rid, None)
    for batch in g4_table.to_batches(max_chunksize=10_000):
        ing.add(batch)
    ing.finish(None)
    with pytest.raises(ReasonsUnavailableError) as err:
        backfill(store, rid)
    assert err.value.code == "not_simulated" and "the kernel does not say why" in str(err.value)
    with pytest.raises(ReasonsUnavailableError) as err:
        backfill(store, "nosuchid")
    assert err.value.code == "not_found"
