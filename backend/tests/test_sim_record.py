"""placemap.sim_record without a server: the rows it streams are exactly the simulator's own
EventLog rows in the event schema, the result is run_scenario's (with the decisions by reason: a
stored or job run keeps them), progress only moves forward."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from placemap.schema.events import BATCH_ROWS, EVENT_SCHEMA
from placemap.sim.scenario import parse_scenario, run_scenario, simulate
from placemap.sim.trace import COLUMNS, EventLog
from placemap.sim_record import FIXED, _StreamingLog, events_batch, run

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
