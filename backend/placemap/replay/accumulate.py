"""The per-chunk counts of an ingest in one numba pass (compiled once, cached on disk): events by
kind, migrations by level x cause, wakeups by level, the overview histogram's rows (kinds, migration
levels, wakeups by level and by where their waker ran; overview_rows), and which CPUs the chunk
names. numpy did the same in ~20 array passes per chunk; on a 2-core machine that was a tenth of an
import's CPU."""

from __future__ import annotations

from typing import Any

import numpy.typing as npt
from numba import njit

Arr = npt.NDArray[Any]

K_WAKEUP = 2
K_MIGRATE = 3
NO_B = -(2**63)  # busy_series: no interval to bin
N_LEVELS = 4  # migration levels (topo.LEVELS)
N_WAKE = 6  # wakeup buckets: topo.LEVELS, then an unknown level, then the same CPU (Ingestor.wake)
N_WAKER = 8  # wakeups by where their waker ran (kernel.WK_*)


def overview_rows(nk: int) -> tuple[int, int, int, int]:
    """The overview's row layout for `nk` event kinds: its first row of migration levels comes
    after the kinds, then (lost, first wakeup bucket, first waker class, rows in all). Overviews
    stored before the wakeup rows end after the lost row."""
    lost = nk + N_LEVELS
    return lost, lost + 1, lost + 1 + N_WAKE, lost + 1 + N_WAKE + N_WAKER


@njit(cache=True, inline="always")
def _log2(width: int) -> int:
    """log2 of a power of two (the bins' width always is one: 1024, doubled); -1 otherwise."""
    shift = 0
    while (1 << shift) < width:
        shift += 1
    return shift if (1 << shift) == width else -1


@njit(cache=True)
def chunk_counts(  # noqa: PLR0917 - numba kernel
    kind: Arr,
    ts: Arr,
    ev_level: Arr,
    ev_cause: Arr,
    ev_waker: Arr,
    cpus: Arr,
    t0: int,
    width: int,
    overview: Arr,
    kind_counts: Arr,
    mig: Arr,
    wake: Arr,
    cpu_present: Arr,
) -> None:
    """Add one chunk to the totals. overview rows: overview_rows(len(kind_counts)) (the lost row is
    added by the caller); its bins must already cover ts (AdaptiveBins._fit). ev_waker: a wakeup's
    classes by its waker, as a bit mask of kernel.WK_*. cpus: (4, n) cpu, target, orig, dest (-1 none);
    mig counts clip level to 0..4 and cause to 0..2, wakeups level to 0..5 (as the numpy code did)."""
    nk = kind_counts.shape[0]
    wake_row = nk + N_LEVELS + 1
    waker_row = wake_row + N_WAKE
    # a shift instead of a 64-bit division per row: the same floor for any sign
    shift = _log2(width)
    for i in range(kind.shape[0]):
        k = kind[i]
        b = (ts[i] - t0) >> shift if shift >= 0 else (ts[i] - t0) // width
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
            wl = min(max(ev_level[i], 0), N_WAKE - 1)
            wake[wl] += 1
            overview[wake_row + wl, b] += 1.0
            m = ev_waker[i]
            for j in range(N_WAKER):
                if m & (1 << j):
                    overview[waker_row + j, b] += 1.0
        for r in range(cpus.shape[0]):
            c = cpus[r, i]
            if c >= 0:
                cpu_present[c] = True


@njit(cache=True)
def interval_bins(series: Arr, a: Arr, b: Arr, t0: int, width: int, values: Arr) -> None:  # noqa: PLR0917
    """Add the length of each [a, b) (b > a, inside the bins; series < 0: none) to the bins of
    values[series] it overlaps, split exactly at bin edges. One pass instead of ~15 numpy passes and
    five bincounts over the ~25k switch intervals of a chunk (busy time); sums of integer ns in
    float64 are exact."""
    for i in range(a.shape[0]):
        ra = a[i] - t0
        rb = b[i] - t0
        s = series[i]
        if rb <= ra or s < 0:
            continue
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
def busy_series(  # noqa: PLR0917 - numba kernel
    cpus: Arr, a: Arr, b: Arr, cpu_llc: Arr, inferred: bool, cpu_busy_ns: Arr, series: Arr
) -> int:
    """For the busy intervals [a, b) closed on cpus: add each length to its CPU's busy ns, set series
    to its CPU's LLC (every CPU's is 0 for an inferred topology; -1: CPU outside the table or LLC
    unknown) and return the largest b of an interval with b > a and an LLC (NO_B: none), which the
    busy bins must cover. One pass instead of a bincount, a lookup and four masks per chunk; sums of
    integer ns in float64 are exact, so the order of the additions changes nothing."""
    n_map = cpu_llc.shape[0]
    b_max = NO_B
    for i in range(cpus.shape[0]):
        c = cpus[i]
        cpu_busy_ns[c] += b[i] - a[i]
        if inferred:
            s = 0
        elif 0 <= c < n_map:
            s = cpu_llc[c]
        else:
            s = -1
        series[i] = s
        if s >= 0 and b[i] > a[i] and b[i] > b_max:
            b_max = b[i]
    return b_max


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


@njit(cache=True)
def decode_ints(  # noqa: PLR0917 - numba kernel
    kind: Arr,
    values: Any,
    bitmaps: Any,
    modes: Arr,
    offsets: Arr,
    lo: Arr,
    hi: Arr,
    null: Arr,
    out: Arr,
    maxima: Arr,
) -> None:
    """fill_ints for several columns in one call: out[c, i] = values[c][i] where row i is valid and
    lo[c] <= kind[i] < hi[c], else null[c]. modes[c]: 0 every row null (values[c] unused), 1 no nulls
    (bitmaps[c] unused), 2 nulls (bit offsets[c] + i of bitmaps[c]). The last two rows are pid and
    old_pid: an old_pid equal to the row's pid is 0 (an exec that kept its pid). maxima[c] = max(-1,
    out[c]). Most of these columns are null on most rows (orig/dest_cpu: migrations only), so a row
    is filled with its null first and only the set bits are visited, a bitmap byte at a time."""
    n = kind.shape[0]
    n_out = out.shape[0]
    for c in range(n_out):
        row = out[c]
        nl = null[c]
        m = modes[c]
        k_lo = lo[c]
        k_hi = hi[c]
        v = values[c]
        mx = -1
        if m == 1 and k_lo <= 0 and k_hi > 255:
            for i in range(n):
                x = v[i]
                row[i] = x
                mx = max(mx, x)
            maxima[c] = mx
            continue
        for i in range(n):
            row[i] = nl
        filled = 0
        if m == 1:
            for i in range(n):
                k = kind[i]
                if k_lo <= k < k_hi:
                    x = v[i]
                    row[i] = x
                    mx = max(mx, x)
                    filled += 1
        elif m == 2:
            bm = bitmaps[c]
            off = offsets[c]
            for i0 in range(0, n, 8):
                j0 = i0 + off
                sh = j0 & 7
                word = int(bm[j0 >> 3])
                if sh and (j0 >> 3) + 1 < bm.shape[0]:
                    word |= int(bm[(j0 >> 3) + 1]) << 8
                byte = (word >> sh) & 0xFF
                if byte == 0:
                    continue
                for b in range(min(8, n - i0)):
                    if (byte >> b) & 1:
                        i = i0 + b
                        k = kind[i]
                        if k_lo <= k < k_hi:
                            x = v[i]
                            row[i] = x
                            mx = max(mx, x)
                            filled += 1
        if filled < n:
            mx = max(mx, nl)
        maxima[c] = mx
    if n_out >= 2:
        pid = out[n_out - 2]
        opid = out[n_out - 1]
        zeroed = False
        for i in range(n):
            if opid[i] != 0 and opid[i] == pid[i]:
                opid[i] = 0
                zeroed = True
        if zeroed:
            mx = -1
            for i in range(n):
                mx = max(mx, opid[i])
            maxima[n_out - 1] = mx


@njit(cache=True)
def state_codes(indices: Arr, bitmap: Arr, offset: int, codes: Arr, out: Arr) -> None:
    """out[i] = codes[indices[i]] where row i is valid (an empty bitmap: every row), else 0: a
    dictionary column's code per row in one pass (prev_state of a switch)."""
    if bitmap.shape[0] == 0:
        for i in range(out.shape[0]):
            out[i] = codes[indices[i]]
        return
    for i in range(out.shape[0]):
        j = i + offset
        bit = (bitmap[j >> 3] >> (j & 7)) & 1
        out[i] = codes[indices[i] * bit] * bit
