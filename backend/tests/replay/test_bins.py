"""Adaptive histograms: exact interval splitting and pair merging, against brute force."""

from __future__ import annotations

import numpy as np

from placemap.replay.bins import AdaptiveBins, rebin


def test_intervals_split_exactly_across_bins_while_the_width_grows() -> None:
    rng = np.random.default_rng(3)
    t0 = 1_000_003
    bins = AdaptiveBins(2, t0, n_bins=64, width=4)
    spans = []
    for step in range(5):  # later batches reach further, forcing the width to double
        a = t0 + rng.integers(0, 1000 * 4**step, 50)
        b = a + rng.integers(0, 300 * 2**step, 50)
        s = rng.integers(0, 2, 50)
        bins.add_intervals(s, a, b)
        spans.append((s, a, b))
    w = bins.width
    expected = np.zeros_like(bins.values)
    for s, a, b in spans:
        for si, ai, bi in zip(s, a, b, strict=True):
            for t in range(int(ai), int(bi)):  # one ns at a time
                expected[si, (t - t0) // w] += 1
    assert np.array_equal(bins.values, expected)


def test_points_and_rebin_keep_totals() -> None:
    bins = AdaptiveBins(1, 0, n_bins=16, width=1)
    ts = np.arange(0, 1000, 7, dtype=np.int64)
    bins.add_points(np.zeros(len(ts), dtype=np.int64), ts)
    assert bins.width == 64 and bins.values.sum() == len(ts)
    bin_ns, out = rebin(bins.values[0], t0=0, width=bins.width, t_start=0, t_end=993, bins=4)
    assert bin_ns == 249 and out.sum() == len(ts)


def test_intervals_all_within_one_bin_each() -> None:
    bins = AdaptiveBins(1, 0, n_bins=8, width=10)
    bins.add_intervals(np.zeros(2, dtype=np.int64), np.array([1, 12]), np.array([3, 19]))
    assert bins.values[0, :2].tolist() == [2.0, 7.0]
