"""Load the numba kernels (from numba's on-disk cache, compiling on a first run) before they are
needed, so the first upload or seek after start does not pay a second or more for it."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from placemap.replay import kernel as kn
from placemap.replay.accumulate import busy_series, chunk_counts, interval_bins, overview_rows
from placemap.replay.state import ChunkColumns, PlacementState, prev_state_codes
from placemap.schema.events import EVENT_SCHEMA


def warm_kernels() -> None:
    rows = [
        {
            **dict.fromkeys(EVENT_SCHEMA.names),
            "ts_ns": 1,
            "cpu": 0,
            "kind": 0,
            "cur_pid": 1,
            "pid": 2,
            "comm": "w",
            "target_cpu": 0,
        },
        {
            **dict.fromkeys(EVENT_SCHEMA.names),
            "ts_ns": 2,
            "cpu": 0,
            "kind": 4,
            "cur_pid": 1,
            "pid": 1,
            "comm": "w",
            "prev_state": "S",
            "next_pid": 2,
            "next_comm": "w",
        },
    ]
    table = pa.Table.from_pylist(rows, schema=EVENT_SCHEMA)
    cols = ChunkColumns.from_table(table)
    # the importer's chunks hold prev_state as a dictionary with int8 indices (the table above: int32)
    states = pa.array(["S", None, "R+"]).dictionary_encode()
    prev_state_codes(pa.DictionaryArray.from_arrays(states.indices.cast(pa.int8()), states.dictionary))
    PlacementState().apply(table, cols, 2)
    matrix = np.zeros((1, 1), dtype=np.int8)
    state = PlacementState()
    state.apply(table, cols, 2, classify=True, matrix=matrix, default_level=kn.UNKNOWN_LEVEL)
    n = len(cols.kind)
    kn.switch_intervals(
        cols.kind,
        cols.cpu,
        cols.ts,
        cols.npid,
        np.full(1, -1, dtype=np.int64),
        np.zeros(1, dtype=np.bool_),
        np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.int64),
    )
    kn.wakeup_delays(
        cols.kind,
        cols.pid,
        cols.npid,
        cols.ts,
        state.slot,
        np.full(len(state.pids), -1, dtype=np.int64),
        np.zeros(kn.DELAY_BUCKETS, dtype=np.int64),
        np.zeros(1, dtype=np.int64),
    )
    chunk_counts(
        cols.kind,
        cols.ts,
        np.zeros(n, dtype=np.int8),
        np.zeros(n, dtype=np.int8),
        np.zeros(n, dtype=np.int16),
        np.stack([cols.cpu, cols.target, cols.orig, cols.dest]),
        0,
        1024,
        np.zeros((overview_rows(10)[3], 8), dtype=np.float64),
        np.zeros(10, dtype=np.int64),
        np.zeros((5, 3), dtype=np.int64),
        np.zeros(6, dtype=np.int64),
        np.zeros(1, dtype=np.bool_),
    )
    one = np.zeros(1, dtype=np.int64)
    interval_bins(one, one, one + 1, 0, 1024, np.zeros((1, 8), dtype=np.float64))
    busy_series(
        one, one, one + 1, np.zeros(1, dtype=np.int32), True, np.zeros(1), np.zeros(1, dtype=np.int64)
    )
