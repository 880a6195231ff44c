"""Seek: the placement state after every event with ts_ns <= t, from the nearest keyframe plus the
first rows of one chunk (one keyframe read, one chunk decode, a short delta)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from placemap.replay.state import ChunkColumns, PlacementState
from placemap.store.codec import decode_blob
from placemap.store.store import Store

# columns the state machine reads (decoding only these keeps a seek cheap)
STATE_COLUMNS = (
    "ts_ns",
    "kind",
    "cpu",
    "pid",
    "comm",
    "target_cpu",
    "orig_cpu",
    "dest_cpu",
    "prev_state",
    "next_pid",
    "next_comm",
    "child_pid",
    "child_comm",
    "old_pid",
)


@dataclass
class StateAt:
    """A state and where it is: the number of events applied (event_index = rows before + applied)."""

    t_ns: int
    event_index: int
    state: PlacementState


def state_at(store: Store, rid: str, t_ns: int) -> StateAt:
    """The state after all events with ts_ns <= t_ns (the empty state before the first event)."""
    chunk = store.chunk_at(rid, t_ns)
    if chunk is None:
        return StateAt(t_ns, 0, PlacementState())
    kf = store.keyframe(rid, chunk.seq)
    data = store.chunk_data(rid, chunk.seq)
    assert kf is not None and data is not None
    state = PlacementState.from_keyframe(*kf)
    # as stored (dictionary-encoded strings): the state machine reads dictionaries as they are
    table = decode_blob(*data).select(list(STATE_COLUMNS))
    n = apply_until(state, table, t_ns)
    return StateAt(t_ns, chunk.first_row + n, state)


def apply_until(state: PlacementState, table: pa.Table, t_ns: int) -> int:
    """Apply the rows of a chunk with ts_ns <= t_ns; returns how many."""
    cols = ChunkColumns.from_table(table)
    n = int(np.searchsorted(cols.ts, t_ns, side="right"))
    state.apply(table, cols, n)
    return n
