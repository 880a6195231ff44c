"""placemap.sim_record without a server: the rows it streams are exactly the simulator's own
EventLog rows in the event schema, the result is run_scenario's (with the decisions by reason: a
stored or job run keeps them), progress only moves forward."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from placemap.replay.delays import METRICS
from placemap.schema.events import BATCH_ROWS, EVENT_SCHEMA
from placemap.sim.scenario import parse_scenario, run_scenario, simulate
from placemap.sim.trace import COLUMNS, EventLog
from placemap.sim_record import FIXED, _StreamingLog, events_batch, run
from placemap.store import Store

# ~88k rows (64k-131k needed): the stream is cut into a full batch and a partial one
SCENARIO: dict[str, Any] = {
    "topology": "icx-2s",
    "workload": {"kind": "hackbench", "groups": 2, "loops": 500},
    "seed": 7,
    "duration_ms": 1000,
}


def test_fixed_fields_are_the_simulators_first_columns() -> None:
    assert COLUMNS[: len(FIXED)] == FIXED


def test_streamed_batches_equal_the_event_log() -> None:
    sc = parse_scenario(SCENARIO)
    ref = EventLog()
    simulate(sc, ref)
    batches: list[pa.RecordBatch] = []
    log = _StreamingLog(sc.duration_ns, None, batches.append)
    simulate(parse_scenario(SCENARIO), log)
    log.flush()
    assert BATCH_ROWS < len(ref) < 2 * BATCH_ROWS, (
        "the scenario no longer makes one full batch and a partial one"
    )
    assert [b.num_rows for b in batches] == [BATCH_ROWS, len(ref) - BATCH_ROWS]
    got = pa.Table.from_batches(batches)
    assert got.schema == EVENT_SCHEMA
    assert got.equals(pa.Table.from_batches([events_batch(ref.columns())]))
    assert log.total == len(ref) and not log.rows


def test_unsaved_run_is_run_scenario_and_reports_progress_forward() -> None:
    seen: list[float] = []
    sc = {**SCENARIO, "workload": {"kind": "schbench", "messengers": 1, "workers": 8}, "duration_ms": 400}
    assert run(sc, wall_clock=False, on_progress=seen.append) == run_scenario(
        sc, wall_clock=False, decisions=True
    )
    assert len(seen) > 2 and seen == sorted(seen) and seen[-1] == 1.0 and 0 < seen[0] < 1


def test_a_saved_run_s_llc_utilization_is_the_one_its_switch_events_give(store: Store) -> None:
    """Two roads to the same figure: the simulator's own busy time per LLC (result llc_util) and
    the store's, which the import derives from the saved sched_switch rows alone. A hackbench
    that ends (every task exited, so nothing runs past the last event). The trace shows a CPU
    busy a little longer: a newly idle balance that pulls a task runs, as in the kernel, before
    the switch from the task that slept, while the simulator counts task time only."""
    sc = {"topology": "zen3-2s-nps1", "workload": {"kind": "hackbench", "groups": 4, "loops": 30}, "seed": 1}
    result = run(sc, store=store, wall_clock=False)
    assert result["sim"]["complete"]
    sim = result["llc_util"]
    rec = store.get_recording(result["recording_id"])
    blob = store.derived(result["recording_id"], METRICS)
    assert rec is not None and blob is not None
    assert rec.t_end_ns == sim["end_ns"]
    stored = json.loads(blob)["llc_util"]
    assert [s["llc"] for s in stored["series"]] == [s["llc"] for s in sim["series"]]
    w = stored["bin_ns"]
    busy = 0
    for got, want in zip(stored["series"], sim["series"], strict=True):
        # the store's bins run from the first event to the last: busy CPU-ns per LLC over them
        n = len(got["util"])
        spans = [w] * n
        spans[-1] = rec.t_end_ns + 1 - (stored["t_start_ns"] + (n - 1) * w)
        stored_busy = sum(u * t for u, t in zip(got["util"], spans, strict=True)) * want["cpus"]
        sim_busy = want["mean"] * want["cpus"] * sim["end_ns"]
        assert sim_busy * 0.999 - 1e4 <= stored_busy <= sim_busy * 1.01 + 1e4, want["llc"]
        busy += want["mean"] > 0.1
    assert busy >= 4  # hackbench's 160 tasks on several LLCs: not a comparison of idle machines
