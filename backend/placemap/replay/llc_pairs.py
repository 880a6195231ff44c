"""Wakeups by LLC pair: the LLC the waker ran in (the CPU of the task's sched_waking, where
select_task_rq_fair() ran) against the LLC the task woke in (sched_wakeup's target_cpu), as a
square matrix over the topology's LLCs (Metrics.wakeups.llc_pairs: rows the waker's LLC, columns
the wakee's). Its diagonal is the wakeups that woke in their waker's LLC, sharing its cache; the
rest, which pairs of LLCs talk across the machine. Counted are the wakeups of by_waker's shared_llc
and cross_llc (a waker seen, on CPUs the topology describes, and not woken while it still ran), so
the matrix sums to those two counts."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from placemap.replay import kernel as kn
from placemap.replay.accumulate import K_WAKEUP
from placemap.replay.state import ChunkColumns, Placements
from placemap.replay.topo import LevelMap

I64 = npt.NDArray[np.int64]

# by_waker's classes whose waker and wakee CPUs are both known and whose wakeup was a choice
_CHOSEN = (1 << kn.WK_SHARED_LLC) | (1 << kn.WK_CROSS_LLC)


def llc_pairs(levels: LevelMap, cols: ChunkColumns, pl: Placements) -> I64:
    """One chunk's wakeups by (waker's LLC, wakee's LLC): an n_llcs x n_llcs count matrix."""
    n = levels.n_llcs
    woke = cols.kind[pl.row] == K_WAKEUP
    chosen = (pl.ev_waker[pl.row[woke]].astype(np.int64) & _CHOSEN) != 0
    waker = levels.cpu_llc(pl.waker_cpu[woke][chosen])
    wakee = levels.cpu_llc(pl.cpu[woke][chosen])
    ok = (waker >= 0) & (waker < n) & (wakee >= 0) & (wakee < n)
    flat = waker[ok].astype(np.int64) * n + wakee[ok]
    return np.bincount(flat, minlength=n * n).reshape(n, n)
