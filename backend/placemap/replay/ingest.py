"""Ingest: re-chunk incoming Arrow batches into ~65,536-row chunks and, per chunk, store the events,
the keyframe before them, and the placement side table; accumulate metrics (with the run-queue
delays after wakeups, as a fixed-size histogram), overview histograms, LLC busy time and per-task
aggregates, written when the recording is finished.

Memory is bounded by one chunk plus per-task / per-CPU state, whatever the recording's length.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from placemap.replay import kernel as kn
from placemap.replay.accumulate import NO_B, busy_series, chunk_counts, interval_bins, overview_rows
from placemap.replay.bins import AdaptiveBins
from placemap.replay.delays import METRICS, DelayCounter
from placemap.replay.state import ChunkColumns, Placements, PlacementState
from placemap.replay.topo import CAUSES, LEVELS, LevelMap
from placemap.replay.wake_counts import WakeCounts
from placemap.replay.writer import ChunkWriter, PendingChunk
from placemap.schema.events import BATCH_ROWS, EVENT_SCHEMA, KIND_NAMES
from placemap.schema.models.topology_schema import Topology
from placemap.store.codec import dictionary_encode, to_event_schema
from placemap.store.store import Store, TaskRow

I64 = npt.NDArray[np.int64]

PLACEMENT_SCHEMA = pa.schema(
    [
        pa.field("row", pa.int32(), nullable=False),
        pa.field("ts_ns", pa.int64(), nullable=False),
        pa.field("pid", pa.int32(), nullable=False),
        pa.field("cpu", pa.int32(), nullable=False),
        pa.field("kind", pa.uint8(), nullable=False),
        pa.field("level", pa.int8(), nullable=False),
        pa.field("cause", pa.int8(), nullable=False),
        # a wakeup's waker (its sched_waking's CPU and cur_pid; -1: none); absent in placements
        # stored before they were kept
        pa.field("waker_cpu", pa.int32(), nullable=False),
        pa.field("waker_pid", pa.int32(), nullable=False),
        # a wakeup's classes by where its waker ran (bit kernel.WK_* set; 0 for the other rows);
        # absent in placements stored before they were kept
        pa.field("waker_class", pa.int16(), nullable=False),
    ]
)


def placements_table(cols: ChunkColumns, pl: Placements, pids: npt.NDArray[np.int32]) -> pa.Table:
    """A chunk's placement side table (PLACEMENT_SCHEMA) from its applied placements, the tasks
    named by `pids` (the state's, by task index)."""
    return pa.Table.from_arrays(
        [
            pa.array(pl.row),
            pa.array(cols.ts[pl.row]),
            pa.array(pids[pl.task]),
            pa.array(pl.cpu),
            pa.array(cols.kind[pl.row]),
            pa.array(pl.level),
            pa.array(pl.cause),
            pa.array(pl.waker_cpu),
            pa.array(pl.waker_pid),
            pa.array(pl.ev_waker[pl.row]),
        ],
        schema=PLACEMENT_SCHEMA,
    )


class IngestError(Exception):
    """The event stream cannot be stored as given (e.g. not ordered by time)."""


def npz(**arrays: npt.NDArray[Any]) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


class Ingestor:
    """Feeds one recording's events, in time order, into the store."""

    def __init__(
        self, store: Store, rid: str, topology: Topology | None, chunk_rows: int = BATCH_ROWS
    ) -> None:
        self.store = store
        self.rid = rid
        self.topology = topology
        self.levels = LevelMap(topology)
        self.chunk_rows = chunk_rows
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self._short_stored = False  # a stored chunk shorter than chunk_rows came (only the last may)
        self.state = PlacementState()
        self.state.start_classifying()
        self.writer = ChunkWriter(store, rid)
        self.seq = 0
        self.rows = 0
        self.t_start: int | None = None
        self.t_end: int | None = None
        self.kind_counts = np.zeros(len(KIND_NAMES), dtype=np.int64)
        self.mig = np.zeros((5, 3), dtype=np.int64)  # level (incl. unknown) x cause
        self.wake = np.zeros(6, dtype=np.int64)  # level (incl. unknown), same_cpu
        self.by_waker = np.zeros(kn.WK_COUNTS, dtype=np.int64)  # wakeups by their waker's CPU (WK_*)
        # per task (by index): wakeups, wakeups from another LLC, pulls to the waker's LLC; and the
        # wakeups by the waker's LLC and the LLC the task woke in (Metrics.wakeups.llc_pairs)
        self.wakes = WakeCounts(self.levels)
        self.lost = 0
        self.cpus_seen: set[int] = set()
        self._cpu_present = np.zeros(0, dtype=np.bool_)  # cpus_seen as flags, filled by the kernel
        self.overview: AdaptiveBins | None = None  # rows: accumulate.overview_rows
        self.busy: AdaptiveBins | None = None  # rows: LLCs (switch run intervals)
        self.samples: AdaptiveBins | None = None  # rows: LLC util sums then counts (llc_util events)
        self.cpu_busy_ns = np.zeros(0, dtype=np.float64)
        self.sw_ts = np.zeros(0, dtype=np.int64)  # per CPU: last switch time, -1 before any
        self.sw_busy = np.zeros(0, dtype=np.bool_)
        # run-queue delay after a wakeup (kernel.wakeup_delays): per task its pending wakeup time,
        # the delays' histogram, their count and the largest
        self.delays = DelayCounter()

    # --- input ------------------------------------------------------------------------------
    def add(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Take a batch (any size) in EVENT_SCHEMA column names; store every full chunk."""
        batches = batch.to_batches() if isinstance(batch, pa.Table) else [batch]
        for b in batches:
            if b.num_rows:
                self._pending.append(b)
                self._pending_rows += b.num_rows
        while self._pending_rows >= self.chunk_rows:
            table = pa.Table.from_batches(self._pending)
            self._chunk(table.slice(0, self.chunk_rows))
            rest = table.slice(self.chunk_rows)
            self._pending = rest.to_batches()
            self._pending_rows = rest.num_rows

    def add_all(self, batches: Iterable[pa.RecordBatch]) -> None:
        for b in batches:
            self.add(b)

    def add_stored(self, table: pa.Table, ipc: bytes) -> None:
        """Take one chunk already in its stored form before compression (the importer's --chunks
        output): `table` is the IPC stream `ipc` read (EVENT_SCHEMA columns, strings possibly
        dictionary-encoded), chunk_rows rows (fewer only for the last). `ipc` is compressed and stored
        as it is; nothing is re-encoded."""
        if self._pending_rows:
            raise IngestError("a stored chunk came after batches that do not fill a chunk")
        if self._short_stored:
            raise IngestError(f"a stored chunk of fewer than {self.chunk_rows} rows came before the last")
        if table.num_rows > self.chunk_rows:
            raise IngestError(f"a stored chunk has {table.num_rows} rows, more than {self.chunk_rows}")
        _check_stored_schema(table.schema)
        if table.num_rows == 0:
            return
        self._short_stored = table.num_rows < self.chunk_rows
        self._chunk(table, ipc)

    # --- per chunk --------------------------------------------------------------------------
    def _chunk(self, table: pa.Table, ipc: bytes | None = None) -> None:
        if ipc is None:
            # dictionary-encoded once: the stored form, and what the state machine reads
            table = dictionary_encode(to_event_schema(table).combine_chunks())
        cols = ChunkColumns.from_table(table)
        self.set_chunk_extras(table)
        n = len(cols.ts)
        if bool((cols.ts[1:] < cols.ts[:-1]).any()) or (self.t_end is not None and cols.ts[0] < self.t_end):
            raise IngestError("events are not ordered by ts_ns; the importer must sort them")
        if self.t_start is None:
            self.t_start = int(cols.ts[0])
            self._init_bins(self.t_start)
        self.t_end = int(cols.ts[-1])
        keyframe = self.state.keyframe_table()
        pl = self.state.apply(
            table,
            cols,
            n,
            classify=True,
            matrix=self.levels.matrix,
            default_level=self.levels.default_level,
            waker_counts=self.by_waker,
        )
        assert pl is not None
        self._accumulate(cols, pl)
        self.wakes.add(len(self.state.pids), cols, pl)
        self._accumulate_delays(cols)
        self.writer.submit(
            PendingChunk(
                seq=self.seq,
                t_start_ns=int(cols.ts[0]),
                t_end_ns=int(cols.ts[-1]),
                first_row=self.rows,
                events=table,
                events_ipc=ipc,
                keyframe=keyframe,
                placements=placements_table(cols, pl, self.state.pids),
                pids=self._chunk_pids(int(cols.ts[0])),
            )
        )
        self.seq += 1
        self.rows += n

    def _chunk_pids(self, t_first: int) -> list[int]:
        """The tasks this chunk names: those last named at or after its first event."""
        last: I64 = self.state.extra["last_ts"]
        pids: list[int] = self.state.pids[last >= t_first].tolist()
        return pids

    def _init_bins(self, t0: int) -> None:
        self.overview = AdaptiveBins(overview_rows(len(KIND_NAMES))[3], t0)
        self.busy = AdaptiveBins(self.levels.n_llcs, t0)
        self.samples = AdaptiveBins(2 * self.levels.n_llcs, t0)

    def _accumulate(self, cols: ChunkColumns, pl: Placements) -> None:
        assert self.overview is not None and self.busy is not None and self.samples is not None
        kind, ts = cols.kind, cols.ts
        n = len(kind)
        cpus = cols.cpus
        if cpus is None:
            cpus = np.empty((4, n), dtype=np.int32)  # one array: the kernel walks them together
            for r, arr in enumerate((cols.cpu, cols.target, cols.orig, cols.dest)):
                cpus[r] = arr
        top = cols.max_cpu()
        if top >= len(self._cpu_present):
            grown = np.zeros(top + 1, dtype=np.bool_)
            grown[: len(self._cpu_present)] = self._cpu_present
            self._cpu_present = grown
        ov = self.overview
        if n:
            ov._fit(int(ts[-1]))  # ts is sorted (checked in _chunk); the kernel needs the bins to cover it
        # events by kind, migrations by level x cause, wakeups by level, overview kind + level rows
        before = self.kind_counts.copy()
        chunk_counts(kind, ts, pl.ev_level, pl.ev_cause, pl.ev_waker, cpus, ov.t0, ov.width, ov.values,
                     self.kind_counts, self.mig, self.wake, self._cpu_present)  # fmt: skip
        self._chunk_kinds = self.kind_counts - before
        self.cpus_seen.update(np.flatnonzero(self._cpu_present).tolist())
        if self._chunk_kinds[9]:
            is_lost = kind == 9
            assert self._extras is not None
            lost_counts = _filled(self._extras.column("lost_events"), 0, np.float64)[is_lost]
            self.lost += int(lost_counts.sum())
            lost_row = overview_rows(len(KIND_NAMES))[0]
            ov.add_points(np.full(int(is_lost.sum()), lost_row), ts[is_lost], lost_counts)
        self._accumulate_busy(cols)

    _chunk_kinds: I64 = np.zeros(len(KIND_NAMES), dtype=np.int64)  # this chunk's events by kind

    def _accumulate_delays(self, cols: ChunkColumns) -> None:
        """The run-queue delays this chunk closes (every pid of it has its task slot by now)."""
        self.delays.add(cols, self.state.slot, len(self.state.pids))

    def _accumulate_busy(self, cols: ChunkColumns) -> None:
        """Busy time per CPU from run intervals: switch to a task until the next switch on that CPU."""
        assert self.busy is not None and self.samples is not None
        ncpu = (int(cols.maxima[0]) if cols.maxima is not None else int(cols.cpu.max(initial=-1))) + 1
        if ncpu > len(self.sw_ts):
            self.sw_ts = np.concatenate([self.sw_ts, np.full(ncpu - len(self.sw_ts), -1, dtype=np.int64)])
            self.sw_busy = np.concatenate([self.sw_busy, np.zeros(ncpu - len(self.sw_busy), dtype=np.bool_)])
            self.cpu_busy_ns = np.concatenate([self.cpu_busy_ns, np.zeros(ncpu - len(self.cpu_busy_ns))])
        n = len(cols.kind)
        out_cpu = np.empty(n, dtype=np.int64)
        out_a = np.empty(n, dtype=np.int64)
        out_b = np.empty(n, dtype=np.int64)
        cnt = kn.switch_intervals(cols.kind, cols.cpu, cols.ts, cols.npid, self.sw_ts, self.sw_busy, out_cpu,
                                  out_a, out_b)  # fmt: skip
        if cnt:
            self._add_busy(out_cpu[:cnt], out_a[:cnt], out_b[:cnt])
        if self._chunk_kinds[8]:
            is_util = cols.kind == 8
            assert self._extras is not None
            llc = _filled(self._extras.column("llc"), -1, np.int64)[is_util].astype(np.int64)
            util = _filled(self._extras.column("util"), 0, np.float64)[is_util]
            ok = (llc >= 0) & (llc < self.levels.n_llcs)
            ts = cols.ts[is_util][ok]
            self.samples.add_points(llc[ok], ts, util[ok])
            self.samples.add_points(llc[ok] + self.levels.n_llcs, ts)

    def _add_busy(self, cpus: I64, a: I64, b: I64) -> None:
        assert self.busy is not None
        series = np.empty(len(cpus), dtype=np.int64)
        b_max = busy_series(cpus, a, b, self.levels.llc, self.levels.inferred, self.cpu_busy_ns, series)
        if b_max != NO_B:
            busy = self.busy
            busy._fit(b_max - 1)
            interval_bins(series, a, b, busy.t0, busy.width, busy.values)

    # --- end --------------------------------------------------------------------------------
    def flush(self) -> None:
        """Store the last partial chunk and wait until every chunk is written."""
        if self._pending_rows:
            self._chunk(pa.Table.from_batches(self._pending))
            self._pending, self._pending_rows = [], 0
        self.writer.drain()

    def close(self) -> None:
        """Stop the writer thread (after finish, or when abandoning a failed import)."""
        self.writer.close()

    def finish(self, summary: dict[str, Any] | None = None) -> None:
        """Store the last partial chunk and the derived data; the recording becomes ready."""
        self.flush()
        if self.t_end is not None:
            open_cpus = np.flatnonzero((self.sw_ts >= 0) & self.sw_busy)
            self._add_busy(
                open_cpus.astype(np.int64),
                self.sw_ts[open_cpus],
                np.full(len(open_cpus), self.t_end + 1, dtype=np.int64),
            )
        metrics = self.metrics(summary)
        derived = {METRICS: json.dumps(metrics).encode()}
        if self.overview is not None:
            derived["overview.npz"] = npz(
                values=self.overview.values[:, : self.overview.used_bins(self.t_end or 0)],
                t0=np.array(self.overview.t0),
                width=np.array(self.overview.width),
                wake_rows=np.array(1),  # with the wakeup rows (waker_refill.WAKE_ROWS)
            )
        ex = self.state.extra
        tasks = [
            TaskRow(
                int(p),
                str(self.state.comm[i]),
                int(ex["events"][i]),
                int(ex["migs"][i]),
                int(ex["first_ts"][i]),
                int(ex["last_ts"][i]),
                *self.wakes.task(i),
            )
            for i, p in enumerate(self.state.pids.tolist())
        ]
        skipped = None if summary is None else summary.get("skipped_total")
        meta = {
            "cpus_seen": sorted(self.cpus_seen),
            "events_by_kind": {KIND_NAMES[k]: int(n) for k, n in enumerate(self.kind_counts) if n},
            "import_summary": summary,
        }
        lost = self.lost if summary is None else max(self.lost, int(summary.get("lost_events", 0)))
        self.writer.close()
        self.store.finish_recording(
            self.rid,
            t_start_ns=self.t_start,
            t_end_ns=self.t_end,
            lost_events=lost,
            skipped_lines=skipped,
            fmt=None if summary is None else summary.get("format"),
            meta=meta,
            derived=derived,
            tasks=tasks,
        )

    def metrics(self, summary: dict[str, Any] | None) -> dict[str, Any]:
        """The Metrics document (see api/models.py) from the accumulated counts."""
        mig = self.mig
        by_level = {name: int(mig[i].sum()) for i, name in enumerate(LEVELS)}
        by_cause = {name: int(mig[:, j].sum()) for j, name in enumerate(CAUSES)}
        by_level_cause = {
            name: {c: int(mig[i, j]) for j, c in enumerate(CAUSES)} for i, name in enumerate(LEVELS)
        }
        return {
            "events_by_kind": {KIND_NAMES[k]: int(n) for k, n in enumerate(self.kind_counts) if n},
            "migrations": {
                "total": int(mig.sum()),
                "by_level": by_level,
                "by_cause": by_cause,
                "by_level_cause": by_level_cause,
            },
            "wakeups": {
                "total": int(self.wake.sum()),
                "same_cpu": int(self.wake[5]),
                "by_level": {name: int(self.wake[i]) for i, name in enumerate(LEVELS)},
                "by_waker": waker_counts(self.by_waker),
                "llc_pairs": self.wakes.pairs.document(),
            },
            "lost_events": self.lost
            if summary is None
            else max(self.lost, int(summary.get("lost_events", 0))),
            "skipped_lines": 0 if summary is None else int(summary.get("skipped_total", 0)),
            "llc_util": self._llc_util(),
            "per_cpu_busy": self._per_cpu_busy(),
            "wakeup_latency": self.delays.summary(),
        }

    def _llc_util(self) -> dict[str, Any] | None:
        if self.t_start is None or self.t_end is None or self.busy is None or self.samples is None:
            return None
        have_switch = self.kind_counts[kn.K_SWITCH] > 0
        src = self.busy if have_switch else self.samples
        used = src.used_bins(self.t_end)
        w = src.width
        if have_switch:
            # the last bin ends at t_end: divide by the time it actually covers
            span = np.full(used, float(w))
            span[-1] = float(self.t_end + 1 - (src.t0 + (used - 1) * w))
            # an inferred topology's one LLC holds every CPU the trace named
            n_cpus = np.array([max(len(self.cpus_seen), 1)]) if self.levels.inferred else self.levels.llc_cpus
            util = src.values[:, :used] / (span[None, :] * n_cpus[:, None])
        elif self.kind_counts[8] > 0:
            n = self.levels.n_llcs
            sums, counts = src.values[:n, :used], src.values[n:, :used]
            util = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
        else:
            return None
        return {
            "bin_ns": int(w),
            "t_start_ns": int(src.t0),
            "series": [{"llc": i, "util": [round(float(x), 4) for x in row]} for i, row in enumerate(util)],
        }

    def _per_cpu_busy(self) -> list[float] | None:
        if self.kind_counts[kn.K_SWITCH] == 0 or self.t_start is None or self.t_end is None:
            return None
        span = float(self.t_end + 1 - self.t_start)
        return [round(float(x) / span, 4) for x in self.cpu_busy_ns]

    def set_chunk_extras(self, table: pa.Table) -> None:
        """The chunk whose columns only a few kinds use (lost_events, llc, util): read when it has
        such rows (most chunks have none: no pass over them)."""
        self._extras = table

    _extras: pa.Table | None = None


def waker_counts(wk: I64) -> dict[str, int]:
    """Metrics.wakeups.by_waker from kernel.apply_events' WK_* counts."""
    return {
        "shared_llc": int(wk[kn.WK_SHARED_LLC]),
        "cross_llc": int(wk[kn.WK_CROSS_LLC]),
        "to_waker_llc": int(wk[kn.WK_TO_WAKER_LLC]),
        "to_prev_llc": int(wk[kn.WK_TO_PREV_LLC]),
        "elsewhere": int(wk[kn.WK_ELSEWHERE]),
        "on_waker_cpu": int(wk[kn.WK_ON_WAKER_CPU]),
        "still_running": int(wk[kn.WK_STILL_RUNNING]),
        "unknown": int(wk[kn.WK_UNKNOWN]),
    }


def _filled(column: pa.ChunkedArray, null: int, dtype: type[np.generic]) -> npt.NDArray[Any]:
    """A column as numpy with nulls as `null`; all-null columns (most chunks' llc, util, lost_events)
    without a pass over them."""
    if column.null_count == len(column):
        return np.full(len(column), null, dtype=dtype)
    out: npt.NDArray[Any] = column.fill_null(null).to_numpy().astype(dtype)
    return out


def _check_stored_schema(schema: pa.Schema) -> None:
    """A stored chunk has EVENT_SCHEMA's columns in order; string columns may be dictionaries."""
    names = [f.name for f in schema]
    if names != EVENT_SCHEMA.names:
        raise IngestError(f"a stored chunk's columns are {names}, not the event schema's")
    for want, got in zip(EVENT_SCHEMA, schema, strict=True):
        same = got.type == want.type or (
            pa.types.is_string(want.type)
            and pa.types.is_dictionary(got.type)
            and pa.types.is_string(got.type.value_type)
        )
        if not same:
            raise IngestError(f"a stored chunk's column {got.name} is {got.type}, not {want.type}")


__all__ = ["EVENT_SCHEMA", "IngestError", "Ingestor"]
