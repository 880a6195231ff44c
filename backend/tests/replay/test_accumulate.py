"""The ingest's per-chunk counting kernel against the plain numpy it replaced, on random chunks that
include the edge values (unknown level -1 and 4, same CPU 5, no cause, no CPU, lost rows), and its
wakeup rows (by level and by waker class) against numpy's own binning of the same rows."""

from __future__ import annotations

import numpy as np

from placemap.replay.accumulate import N_WAKER, chunk_counts, overview_rows
from placemap.replay.bins import AdaptiveBins


def test_chunk_counts_matches_numpy() -> None:
    rng = np.random.default_rng(7)
    n, nk = 50_000, 10
    kind = rng.integers(0, nk, n).astype(np.uint8)
    ts = np.sort(rng.integers(1_000, 9_000_000_000, n)).astype(np.int64)
    level = rng.integers(-1, 6, n).astype(np.int8)
    cause = rng.integers(-1, 3, n).astype(np.int8)
    cpus = rng.integers(-1, 12, (4, n)).astype(np.int32)
    cpus[2:, kind != 3] = -1
    # any mask of the 8 classes on wakeups (the kernel reads it on wakeup rows only)
    waker = rng.integers(0, 1 << N_WAKER, n).astype(np.int16)
    lost_row, wake_row, waker_row, rows = overview_rows(nk)

    got = AdaptiveBins(rows, int(ts[0]))
    got._fit(int(ts[-1]))
    kc, mig, wake = np.zeros(nk, np.int64), np.zeros((5, 3), np.int64), np.zeros(6, np.int64)
    present = np.zeros(12, np.bool_)
    chunk_counts(kind, ts, level, cause, waker, cpus, got.t0, got.width, got.values, kc, mig, wake, present)

    # the numpy this replaced (replay/ingest.py before the kernel), and the wakeup rows
    want = AdaptiveBins(rows, int(ts[0]))
    is_mig = kind == 3
    lvl, cs = level[is_mig].astype(np.int64), cause[is_mig].astype(np.int64)
    want_mig = np.bincount(lvl.clip(0, 4) * 3 + cs.clip(0, 2), minlength=15).reshape(5, 3)
    want_wake = np.bincount(level[kind == 2].astype(np.int64).clip(0, 5), minlength=6)
    want.add_points(kind.astype(np.int64), ts)
    known = lvl < 4
    want.add_points(nk + lvl[known], ts[is_mig][known])
    is_wake = kind == 2
    want.add_points(wake_row + level[is_wake].astype(np.int64).clip(0, 5), ts[is_wake])
    for j in range(N_WAKER):
        has = is_wake & ((waker.astype(np.int64) >> j) & 1 == 1)
        want.add_points(np.full(int(has.sum()), waker_row + j), ts[has])
    assert lost_row == nk + 4 and rows == nk + 19
    seen = set()
    for arr in cpus:
        seen.update(np.flatnonzero(np.bincount(arr[arr >= 0])).tolist())

    assert (kc == np.bincount(kind, minlength=nk)).all()
    assert (mig == want_mig).all() and mig.sum() == is_mig.sum()
    assert (wake == want_wake).all()
    assert got.width == want.width and np.array_equal(got.values, want.values)
    assert set(np.flatnonzero(present).tolist()) == seen


def test_chunk_counts_bins_any_width() -> None:
    """The overview bin of a row: a shift for the power-of-two widths the bins use, a division for
    any other width; both floor (ts - t0) / width."""
    rng = np.random.default_rng(3)
    n, nk = 5_000, 10
    kind = rng.integers(0, nk, n).astype(np.uint8)
    ts = np.sort(rng.integers(0, 4_000_000, n)).astype(np.int64)
    cpus = np.full((4, n), -1, dtype=np.int32)
    for width in (1024, 1000, 4096, 7):
        t0 = int(ts[0])
        n_bins = int((ts[-1] - t0) // width) + 1
        values = np.zeros((overview_rows(nk)[3], n_bins), dtype=np.float64)
        kc, mig, wake = np.zeros(nk, np.int64), np.zeros((5, 3), np.int64), np.zeros(6, np.int64)
        zeros = np.zeros(n, dtype=np.int8)
        chunk_counts(
            kind,
            ts,
            zeros,
            zeros,
            np.zeros(n, np.int16),
            cpus,
            t0,
            width,
            values,
            kc,
            mig,
            wake,
            np.zeros(1, np.bool_),
        )
        want = np.zeros((nk, n_bins))
        np.add.at(want, (kind.astype(np.int64), (ts - t0) // width), 1.0)
        assert np.array_equal(values[:nk], want), f"width {width}"
