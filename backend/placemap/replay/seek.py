"""Seek: the placement state after every event with ts_ns <= t, from the nearest keyframe plus the
first rows of one chunk (one keyframe read, one chunk decode, a short delta)."""

from __future__ import annotations

import threading
from collections import OrderedDict
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


class _Decoded:
    """A chunk's keyframe and state columns, decoded once (chunks are immutable once written)."""

    def __init__(self, keyframe: PlacementState, table: pa.Table) -> None:
        self.keyframe = keyframe
        self.table = table
        self.cols = ChunkColumns.from_table(table)


CACHE_CHUNKS = 8  # a few MB each: scrubbing or playing stays within a chunk for many requests
_cache: OrderedDict[tuple[str, str, int], _Decoded] = OrderedDict()
_cache_lock = threading.Lock()


def _decoded(store: Store, rid: str, seq: int) -> _Decoded:
    key = (str(store.path), rid, seq)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    kf = store.keyframe(rid, seq)
    data = store.chunk_data(rid, seq)
    assert kf is not None and data is not None
    # as stored (dictionary-encoded strings): the state machine reads dictionaries as they are
    dec = _Decoded(PlacementState.from_keyframe(*kf), decode_blob(*data).select(list(STATE_COLUMNS)))
    with _cache_lock:
        _cache[key] = dec
        while len(_cache) > CACHE_CHUNKS:
            _cache.popitem(last=False)
    return dec


def state_at(store: Store, rid: str, t_ns: int) -> StateAt:
    """The state after all events with ts_ns <= t_ns (the empty state before the first event)."""
    chunk = store.chunk_at(rid, t_ns)
    if chunk is None:
        return StateAt(t_ns, 0, PlacementState())
    dec = _decoded(store, rid, chunk.seq)
    state = dec.keyframe.copy()
    n = int(np.searchsorted(dec.cols.ts, t_ns, side="right"))
    state.apply(dec.table, dec.cols, n)
    return StateAt(t_ns, chunk.first_row + n, state)


def apply_until(state: PlacementState, table: pa.Table, t_ns: int) -> int:
    """Apply the rows of a chunk with ts_ns <= t_ns; returns how many."""
    cols = ChunkColumns.from_table(table)
    n = int(np.searchsorted(cols.ts, t_ns, side="right"))
    state.apply(table, cols, n)
    return n
