"""Adaptive time histograms filled while ingesting, before the final time range is known.

Bins are [t0 + i*w, t0 + (i+1)*w) with w a power of two; when an event falls past the last bin,
w doubles by summing pairs of bins, so counts and busy time stay exact at the coarser width.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from placemap.replay.accumulate import interval_bins

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

N_BINS = 4096


class AdaptiveBins:
    """`series` rows of N_BINS float64 bins sharing one origin and width."""

    def __init__(self, series: int, t0: int, n_bins: int = N_BINS, width: int = 1024) -> None:
        self.t0 = t0
        self.width = width
        self.n_bins = n_bins
        self.values: F64 = np.zeros((series, n_bins), dtype=np.float64)

    def _fit(self, t_max: int) -> None:
        v = self.values
        h = self.n_bins // 2
        while (t_max - self.t0) // self.width >= self.n_bins:
            # pairs summed into the first half in place (one temporary of half the bins, where a
            # reshaped sum and a concatenation allocated the whole array again)
            np.add(v[:, 0::2], v[:, 1::2], out=v[:, :h])
            v[:, h:] = 0.0
            self.width *= 2

    def add_points(self, series: npt.NDArray[np.integer], ts: I64, weights: F64 | None = None) -> None:
        """Add weight (1 by default) at each time ts to its series."""
        if len(ts) == 0:
            return
        self._fit(int(ts.max()))
        idx = series.astype(np.int64) * self.n_bins + (ts - self.t0) // self.width
        flat = np.bincount(idx, weights=weights, minlength=self.values.size)
        self.values += flat.reshape(self.values.shape)

    def add_intervals(self, series: npt.NDArray[np.integer], a: I64, b: I64) -> None:
        """Add the length of each [a, b) to the bins it overlaps, split exactly at bin edges."""
        keep = b > a
        if not keep.any():
            return
        self._fit(int(b[keep].max()) - 1)
        interval_bins(series.astype(np.int64), a.astype(np.int64), b.astype(np.int64), self.t0, self.width,
                      self.values)  # fmt: skip

    def used_bins(self, t_end: int) -> int:
        """Bins up to and including the one holding t_end."""
        return int((t_end - self.t0) // self.width) + 1


def rebin(values: F64, *, t0: int, width: int, t_start: int, t_end: int, bins: int) -> tuple[int, F64]:
    """Fine adaptive bins -> `bins` equal bins over [t_start, t_end]: each fine bin goes to the output
    bin holding its midpoint (resolution: the fine width). Returns (output bin width, values)."""
    span = max(t_end - t_start + 1, 1)
    bin_ns = -(-span // bins)
    n_fine = values.shape[-1]
    mids = t0 + np.arange(n_fine, dtype=np.int64) * width + width // 2
    j = ((mids - t_start) // bin_ns).clip(0, bins - 1)
    out = np.zeros((*values.shape[:-1], bins), dtype=np.float64)
    if values.ndim == 1:
        out += np.bincount(j, weights=values, minlength=bins)
    else:
        for r in range(values.shape[0]):
            out[r] = np.bincount(j, weights=values[r], minlength=bins)
    return bin_ns, out
