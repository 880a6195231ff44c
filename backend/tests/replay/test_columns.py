"""The chunk columns read straight from Arrow buffers (validity bitmaps, values under nulls, slices,
dictionary indices) equal what pyarrow's own fill_null / take give, on random columns."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from placemap.replay.state import _ints, _ints_where, _strings_at

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
