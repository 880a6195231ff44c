"""A simulator run, optionally saved as a recording (source "simulated"): what `placemap sim --save`
and the API's simulation jobs both call.

Owns the bridge between the pure simulator (placemap.sim, plain Python columns) and the store:
the simulated events are handed to the import path's Ingestor in ~64k-row Arrow batches while
the simulation runs, so memory stays bounded by one batch whatever the run's length. The
recording's topology is the simulated one (the preset's, in the project's topology schema) and
its metadata holds the scenario and the run's result JSON. Progress is simulated time over the
scenario's duration, read off the event stream (the simulator has no other hook and stays
untouched).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from placemap import sim_saved
from placemap.replay.ingest import Ingestor
from placemap.schema.events import BATCH_ROWS, EVENT_SCHEMA
from placemap.schema.models.topology_schema import Topology as TopologyModel
from placemap.settings import SIM_MAX_SAVED_EVENTS
from placemap.sim.errors import ScenarioError
from placemap.sim.scenario import Scenario, parse_scenario, simulate, summarize
from placemap.sim.state import Task
from placemap.sim.trace import COLUMNS, MIGRATE, PRIO, WAKEUP, WAKEUP_NEW, EventLog
from placemap.sim_profile import for_meta
from placemap.sim_reasons import ReasonWriter
from placemap.store import Store
from placemap.store.live import LiveStore

Progress = Callable[[float], None]

# How often (in events) the simulated clock is read for progress: a report goes out only when
# it moved by 1% of the duration, so this only bounds how stale progress can be in a sparse run.
PROGRESS_EVERY = 64
TOPOLOGY_SOURCES = ("sysfs", "inferred", "preset", "manual")


# _row's fixed fields, in the order of the simulator's column copy (a test holds them to it)
FIXED = ("ts_ns", "cpu", "kind", "cur_pid", "pid", "comm", "prio")
Row = tuple[int, int, int, int, int, str, dict[str, object]]


class _StreamingLog(EventLog):
    """An EventLog that reports simulated time and, when saving, hands every full batch of rows
    to `sink` (the Ingestor) instead of keeping them. A row is kept as one tuple and the batch
    transposed at once: a fifth of the cost of appending to 16 column lists per event."""

    def __init__(
        self,
        duration_ns: int,
        on_progress: Progress | None,
        sink: Callable[[pa.RecordBatch], None] | None,
        max_rows: int = SIM_MAX_SAVED_EVENTS,
        *,
        keep_reasons: bool = False,
    ) -> None:
        super().__init__()
        self.duration_ns = duration_ns
        self.max_rows = max_rows
        self.on_progress = on_progress
        self.sink = sink
        self.rows: list[Row] = []
        # when saving (or rerunning a saved run for them, sim_backfill): each placement's reason,
        # kept beside the recording (sim_reasons)
        self.reasons = ReasonWriter() if keep_reasons else None
        self.total = 0
        self._next_report = 0.0

    def _row(
        self, kind: int, ts: int, cpu: int, cur_pid: int, subject: tuple[int, str], **extra: object
    ) -> None:
        self.total += 1
        if self.sink is not None:
            if self.total > self.max_rows:
                raise ScenarioError(
                    "duration_ms",
                    f"a saved run stores at most {self.max_rows:,} events and this one reached them at "
                    f"{ts / 1e6:,.1f} of its {self.duration_ns / 1e6:,.0f} ms simulated: save a shorter "
                    "run, or run it unsaved (its metric needs no recording)",
                )
            self.rows.append((ts, cpu, kind, cur_pid, subject[0], subject[1], extra))
            if len(self.rows) >= BATCH_ROWS:
                self.flush()
        if self.on_progress is not None and self.total % PROGRESS_EVERY == 0:
            frac = min(ts / self.duration_ns, 1.0)
            if frac >= self._next_report:  # at most ~100 reports per run
                self._next_report = frac + 0.01
                self.on_progress(frac)

    def wakeup_new(
        self, ts: int, cpu: int, cur_pid: int, p: Task, *, target: int, why: tuple[str, str] | None = None
    ) -> None:
        super().wakeup_new(ts, cpu, cur_pid, p, target=target, why=why)
        if self.reasons is not None and why is not None:
            self.reasons.add(p.pid, ts, WAKEUP_NEW, why)

    def migrate(
        self,
        ts: int,
        cpu: int,
        cur_pid: int,
        p: Task,
        *,
        orig: int,
        dest: int,
        why: tuple[str, str] | None = None,
    ) -> None:
        super().migrate(ts, cpu, cur_pid, p, orig=orig, dest=dest, why=why)
        if self.reasons is not None and why is not None:
            self.reasons.add(p.pid, ts, MIGRATE, why)

    def wakeup(self, ts: int, cpu: int, cur_pid: int, p: Task, why: tuple[str, str] | None = None) -> None:
        super().wakeup(ts, cpu, cur_pid, p, why)
        if self.reasons is not None and why is not None:
            self.reasons.add(p.pid, ts, WAKEUP, why)

    def flush(self) -> None:
        """Hand the rows collected so far to the sink."""
        if self.sink is not None and self.rows:
            self.sink(rows_batch(self.rows))
        self.rows = []


def rows_batch(rows: list[Row]) -> pa.RecordBatch:
    """_StreamingLog rows as one record batch in EVENT_SCHEMA."""
    ts, cpu, kind, cur_pid, pid, comm, extras = zip(*rows, strict=True)
    cols: dict[str, Sequence[object]] = {
        "ts_ns": ts,
        "cpu": cpu,
        "kind": kind,
        "cur_pid": cur_pid,
        "pid": pid,
        "comm": comm,
        "prio": [PRIO] * len(rows),
    }
    for name in COLUMNS[len(FIXED) :]:
        cols[name] = [e.get(name) for e in extras]
    return events_batch(cols)


def events_batch(cols: Mapping[str, Sequence[object]]) -> pa.RecordBatch:
    """The simulator's columns as one record batch in EVENT_SCHEMA (absent columns all null)."""
    n = len(cols["ts_ns"])
    arrays = [
        pa.array(cols[f.name], type=f.type) if f.name in cols else pa.nulls(n, type=f.type)
        for f in EVENT_SCHEMA
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=EVENT_SCHEMA)


def recording_topology(scenario: Mapping[str, Any], sc: Scenario) -> dict[str, Any]:
    """The simulated topology in the project's schema, validated: the preset's (source "preset"),
    or an inline topology keeping the source it was given."""
    topo = sc.topology.to_dict()
    inline = scenario.get("topology")
    if isinstance(inline, Mapping):
        src = inline.get("source")
        topo["source"] = src if src in TOPOLOGY_SOURCES else "manual"
        if isinstance(inline.get("kernel_release"), str):
            topo["kernel_release"] = inline["kernel_release"]
    return TopologyModel.model_validate(topo).model_dump(mode="json", exclude_none=True)


def recording_name(scenario: Mapping[str, Any], sc: Scenario) -> str:
    """A display name saying what was simulated: topology, workload, hints, seed."""
    parts = ["sim", sc.topology.name, str(sc.workload_spec.get("kind"))]
    prof = sc.workload_spec.get("profile")
    if isinstance(prof, Mapping) and isinstance(prof.get("name"), str) and prof["name"]:
        parts.append(f"of {prof['name'][:80]}")  # a replay: the recording (or file) it replays
    hints = scenario.get("hints") or []
    if isinstance(hints, list) and hints:
        parts.append("+".join(str(h) for h in hints))
    parts.append(f"seed {sc.seed}")
    return " ".join(parts)


def run(
    scenario: Mapping[str, Any],
    *,
    store: Store | None = None,
    wall_clock: bool = True,
    on_progress: Progress | None = None,
    on_recording: Callable[[str], None] | None = None,
    max_events: int = SIM_MAX_SAVED_EVENTS,
    decisions: bool = True,
    events_to: Callable[[pa.RecordBatch], None] | None = None,
) -> dict[str, Any]:
    """Validate and run one scenario; the result JSON of `run_scenario`, plus `recording_id` when
    saved into `store`. ScenarioError (before anything is stored) names a bad field; a saved run
    past `max_events` stops with a ScenarioError on duration_ms, its recording failed with it.
    `on_recording(rid)` is told the new recording's id before its events are stored, so whoever
    may cancel the run can clean the half-stored recording up. Its decisions are counted by reason
    (the result's `decisions`) unless `decisions` is False for an unsaved run. `events_to`, when
    given, is handed the run's events too, a batch at a time (`placemap sim --ftrace` writes them);
    without a store, the bound on a saved run's events does not apply."""
    sc = parse_scenario(scenario)
    rid: str | None = None
    ingestor: Ingestor | None = None
    if store is not None:
        topo = recording_topology(scenario, sc)
        tid = store.put_topology(topo)
        rid = store.create_recording(recording_name(scenario, sc), source="simulated", topology_id=tid)
        if on_recording is not None:
            on_recording(rid)
        ingestor = Ingestor(store, rid, TopologyModel.model_validate(topo))

    def report(frac: float) -> None:
        if store is not None and rid is not None:
            store.set_progress(rid, frac)  # the recordings list shows it like an import's
        if on_progress is not None:
            on_progress(frac)

    wants_progress = store is not None or on_progress is not None
    try:
        sinks = [f for f in (None if ingestor is None else ingestor.add, events_to) if f is not None]

        def sink(batch: pa.RecordBatch) -> None:
            for f in sinks:
                f(batch)

        log = _StreamingLog(
            sc.duration_ns,
            report if wants_progress else None,
            sink if sinks else None,
            max_events if ingestor is not None else sys.maxsize,
            keep_reasons=ingestor is not None,
        )
        t0 = time.perf_counter()
        # a stored or job run keeps its reasons; an unsaved run that shows none (a sweep's) need not
        eng, wl = simulate(sc, log, decisions=decisions or store is not None)
        result = summarize(eng, wl, time.perf_counter() - t0 if wall_clock else 0.0)
        log.flush()
        if ingestor is not None and store is not None and rid is not None:
            ingestor.finish(None)
            # finish() writes the ingest's own metadata; the scenario and result join it after
            LiveStore(store).merge_meta(rid, {"scenario": for_meta(scenario), "sim_result": result})
            # and the whole scenario (a replay's profile in full), for its scenario.json download
            store.put_derived(rid, sim_saved.BLOB, sim_saved.blob(scenario))
            if log.reasons is not None:
                log.reasons.save(store, rid)
            result["recording_id"] = rid
    except BaseException as exc:
        if ingestor is not None and store is not None and rid is not None:
            with contextlib.suppress(Exception):
                ingestor.close()
            with contextlib.suppress(Exception):
                store.fail_recording(rid, f"the simulation could not be stored: {type(exc).__name__}: {exc}")
        raise
    if on_progress is not None:
        on_progress(1.0)
    return result
