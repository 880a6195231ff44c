"""The chunk columns read straight from Arrow buffers (validity bitmaps, values under nulls, slices,
dictionary indices) equal what pyarrow's own fill_null / take give, on random columns."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from placemap.replay import kernel as kn
from placemap.replay.state import ChunkColumns, _ints, _ints_where, _strings_at, prev_state_codes

RNG = np.random.default_rng(7)


def _nullable_ints(n: int, null_share: float, dtype: pa.DataType) -> pa.Array:
    values = RNG.integers(-100, 100, n)
    mask = RNG.random(n) < null_share
    # values under nulls are garbage on purpose: a reader must not see them
    return pa.array(values, type=dtype, mask=mask)


@pytest.mark.parametrize("null_share", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("dtype", [pa.int8(), pa.int16(), pa.int32()])
@pytest.mark.parametrize("offset", [0, 3, 13])
def test_ints_equal_fill_null(null_share: float, dtype: pa.DataType, offset: int) -> None:
    arr = _nullable_ints(1000, null_share, dtype).slice(offset, 900)
    for column in (arr, pa.chunked_array([arr]), pa.chunked_array([arr.slice(0, 400), arr.slice(400)])):
        want = np.asarray(arr.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int32)
        got = _ints(column, -1)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want, err_msg="nulls are -1, other values unchanged")
        kind = RNG.integers(0, 10, len(arr)).astype(np.uint8)
        for lo, hi in ((0, 8), (4, 5), (7, 8)):
            rows = (kind >= lo) & (kind < hi)
            want_where = np.where(rows, arr.fill_null(0).to_numpy(zero_copy_only=False), 0)
            got_where = _ints_where(column, kind, lo, hi)
            np.testing.assert_array_equal(got_where, want_where, err_msg="0 off the kinds, on nulls")


@pytest.mark.parametrize("dictionary", [True, False])
@pytest.mark.parametrize("null_share", [0.0, 0.2, 1.0])
def test_strings_at_equal_take(dictionary: bool, null_share: float) -> None:
    names = np.array(["hackbench", "a b=c", "x pid=1 prio=1", "", "\u00e9t\u00e9", "kw/0:1"], dtype=object)
    values = names[RNG.integers(0, len(names), 500)]
    mask = RNG.random(500) < null_share
    arr = pa.array(values.tolist(), type=pa.string(), mask=mask).slice(5)
    if dictionary:
        arr = arr.dictionary_encode()
        arr = pa.DictionaryArray.from_arrays(arr.indices.cast(pa.int8()), arr.dictionary)
    rows = RNG.integers(0, len(arr), 300).astype(np.int32)
    want = arr.take(pa.array(rows)).cast(pa.string()).to_pylist()
    got = _strings_at(pa.chunked_array([arr]), rows)
    assert got.tolist() == want, "each row's string (None for null), as pyarrow's take gives it"


@pytest.mark.parametrize("null_share", [0.0, 0.05, 0.6, 1.0])
@pytest.mark.parametrize("offset", [0, 5, 8, 13])
def test_chunk_columns_equal_fill_null(null_share: float, offset: int) -> None:
    """ChunkColumns.from_table (one decode_ints call, bitmap bytes at any bit offset, sparse columns)
    gives what _ints / _ints_where give per column, and the maxima the arrays hold."""
    n = 1000
    kind = pa.array(RNG.integers(0, 10, n + 20).astype(np.uint8), type=pa.uint8()).slice(offset, n)
    cols = {}
    for name in ("cpu", "target_cpu", "orig_cpu", "dest_cpu", "pid", "next_pid", "child_pid", "old_pid"):
        cols[name] = _nullable_ints(n + 20, null_share, pa.int32()).slice(offset, n)
    # an exec whose old_pid is its own pid: 0 (the same task)
    pid_values = cols["pid"].fill_null(0).to_numpy(zero_copy_only=False)
    old = cols["old_pid"].to_numpy(zero_copy_only=False).copy()
    old[::7] = pid_values[::7]
    cols["old_pid"] = pa.array(old, type=pa.int32(), mask=np.asarray(cols["old_pid"].is_null()))
    table = pa.table(
        {"ts_ns": pa.array(np.arange(n), type=pa.int64()), "kind": kind, **cols,
         "prev_state": pa.array(RNG.choice(["S", "R", "R+", "D", "X"], n).tolist()).dictionary_encode()}
    )  # fmt: skip
    got = ChunkColumns.from_table(table)
    k = np.asarray(kind.to_numpy(zero_copy_only=False))
    want_pid = _ints_where(table.column("pid"), k, 0, 8)
    want_opid = _ints_where(table.column("old_pid"), k, 7, 8)
    want_opid[want_opid == want_pid] = 0
    want = {
        "cpu": _ints(table.column("cpu"), -1),
        "target": _ints(table.column("target_cpu"), -1),
        "orig": _ints(table.column("orig_cpu"), -1),
        "dest": _ints(table.column("dest_cpu"), -1),
        "npid": _ints_where(table.column("next_pid"), k, 4, 5),
        "cpid": _ints_where(table.column("child_pid"), k, 5, 6),
        "pid": want_pid,
        "opid": want_opid,
    }
    for field, arr in want.items():
        np.testing.assert_array_equal(getattr(got, field), arr, err_msg=field)
    assert got.maxima is not None and got.cpus is not None
    rows = [want[f] for f in ("cpu", "target", "orig", "dest", "npid", "cpid", "pid", "opid")]
    assert got.maxima.tolist() == [int(r.max(initial=-1)) for r in rows], "each column's max(-1, ...)"
    np.testing.assert_array_equal(got.cpus, np.stack(rows[:4]))


@pytest.mark.parametrize("index_type", [pa.int8(), pa.int16(), pa.int32()])
@pytest.mark.parametrize("offset", [0, 3])
def test_prev_state_codes_per_row(index_type: pa.DataType, offset: int) -> None:
    """A switch's prev_state code per row from the dictionary (any index width, nulls, a slice)."""
    states = ["S", "R", "R+", "D", "X", "Z", "0", "I"]
    values = RNG.choice(states, 400).tolist()
    mask = RNG.random(400) < 0.4
    enc = pa.array(values, mask=mask).dictionary_encode()
    arr = pa.DictionaryArray.from_arrays(enc.indices.cast(index_type), enc.dictionary).slice(offset)
    ref = {"R": kn.P_PREEMPTED, "R+": kn.P_PREEMPTED, "0": kn.P_PREEMPTED, "X": kn.P_DEAD, "Z": kn.P_DEAD}
    want = [kn.P_NONE if s is None else ref.get(s, kn.P_SLEEP) for s in arr.cast(pa.string()).to_pylist()]
    assert prev_state_codes(pa.chunked_array([arr])).tolist() == want
