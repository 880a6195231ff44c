"""The per-chunk counts of an ingest in one numba pass (compiled once, cached on disk): events by
kind, migrations by level x cause, wakeups by level, the overview histogram's kind and migration-level
rows, and which CPUs the chunk names. numpy did the same in ~20 array passes per chunk; on a 2-core
machine that was a tenth of an import's CPU."""

from __future__ import annotations

from typing import Any

import numpy.typing as npt
from numba import njit

Arr = npt.NDArray[Any]

K_WAKEUP = 2
K_MIGRATE = 3


@njit(cache=True)
def chunk_counts(  # noqa: PLR0917 - numba kernel
    kind: Arr,
    ts: Arr,
    ev_level: Arr,
    ev_cause: Arr,
    cpus: Arr,
    t0: int,
    width: int,
    overview: Arr,
    kind_counts: Arr,
    mig: Arr,
    wake: Arr,
    cpu_present: Arr,
) -> None:
    """Add one chunk to the totals. overview rows: kinds (len(kind_counts)), then migration levels;
    its bins must already cover ts (AdaptiveBins._fit). cpus: (4, n) cpu, target, orig, dest (-1 none);
    mig counts clip level to 0..4 and cause to 0..2, wakeups level to 0..5 (as the numpy code did)."""
    nk = kind_counts.shape[0]
    for i in range(kind.shape[0]):
        k = kind[i]
        b = (ts[i] - t0) // width
        if k < nk:
            kind_counts[k] += 1
            overview[k, b] += 1.0
        if k == K_MIGRATE:
            lv = ev_level[i]
            ca = ev_cause[i]
            mig[min(max(lv, 0), 4), min(max(ca, 0), 2)] += 1
            if lv < 4:
                overview[nk + lv, b] += 1.0
        elif k == K_WAKEUP:
            wake[min(max(ev_level[i], 0), 5)] += 1
        for r in range(cpus.shape[0]):
            c = cpus[r, i]
            if c >= 0:
                cpu_present[c] = True


@njit(cache=True)
def interval_bins(series: Arr, a: Arr, b: Arr, t0: int, width: int, values: Arr) -> None:  # noqa: PLR0917
    """Add the length of each [a, b) (b > a, inside the bins) to the bins of values[series] it
    overlaps, split exactly at bin edges. One pass instead of ~15 numpy passes and five bincounts over
    the ~25k switch intervals of a chunk (busy time); sums of integer ns in float64 are exact."""
    for i in range(a.shape[0]):
        ra = a[i] - t0
        rb = b[i] - t0
        if rb <= ra:
            continue
        s = series[i]
        ia = ra // width
        ib = (rb - 1) // width
        if ia == ib:
            values[s, ia] += rb - ra
            continue
        values[s, ia] += (ia + 1) * width - ra
        values[s, ib] += rb - ib * width
        for j in range(ia + 1, ib):
            values[s, j] += width


@njit(cache=True)
def fill_ints(  # noqa: PLR0917 - numba kernel
    values: Arr, bitmap: Arr, offset: int, kind: Arr, k_lo: int, k_hi: int, null: int, out: Arr
) -> None:
    """out[i] = values[i] where row i is valid (bit offset+i of the Arrow validity bitmap; an empty
    bitmap: every row) and, when kind is given, k_lo <= kind[i] < k_hi; else null. One pass instead of
    unpacking the bitmap, a where and a cast per column."""
    has_bitmap = bitmap.shape[0] > 0
    has_kind = kind.shape[0] > 0
    for i in range(out.shape[0]):
        ok = True
        if has_kind:
            k = kind[i]
            ok = k_lo <= k < k_hi
        if ok and has_bitmap:
            j = i + offset
            ok = (bitmap[j >> 3] >> (j & 7)) & 1 == 1
        out[i] = values[i] if ok else null
