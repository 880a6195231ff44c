"""Wakeups by LLC pair: the LLC the waker ran in (the CPU of the task's sched_waking, where
select_task_rq_fair() ran) against the LLC the task woke in (sched_wakeup's target_cpu)
(Metrics.wakeups.llc_pairs: the topology's LLC count and the pairs with their wakeups, sparse, so a
machine of many LLCs costs what its pairs do, not their square). The pairs of one LLC are the
wakeups that woke in their waker's LLC, sharing its cache; the rest, which LLCs talk across the
machine. Counted are the wakeups of by_waker's shared_llc and cross_llc (a waker seen, on CPUs the
topology describes, and not woken while it still ran), so the pairs sum to those two counts. A
topology's LLC ids are its LLCs' indices (importer.machine.llc_index_problem refuses others)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from placemap.replay import kernel as kn
from placemap.replay.topo import LevelMap

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

# by_waker's classes whose waker and wakee CPUs are both known and whose wakeup was a choice
CHOSEN = (1 << kn.WK_SHARED_LLC) | (1 << kn.WK_CROSS_LLC)


class PairCounts:
    """The wakeups by (waker's LLC, wakee's LLC) of a recording, added chunk by chunk."""

    def __init__(self, levels: LevelMap) -> None:
        self.levels = levels
        self.n = levels.n_llcs
        self.counts: dict[int, int] = {}  # waker's LLC * n + wakee's LLC -> wakeups

    def add(self, waker_cpu: I32, wakee_cpu: I32, classes: I64) -> None:
        """Wakeups by their waker's CPU, the CPU they woke on and their by_waker classes (a bit
        mask of kernel.WK_*), one element each."""
        chosen = (classes & CHOSEN) != 0
        waker = self.levels.cpu_llc(waker_cpu[chosen]).astype(np.int64)
        wakee = self.levels.cpu_llc(wakee_cpu[chosen]).astype(np.int64)
        ok = (waker >= 0) & (waker < self.n) & (wakee >= 0) & (wakee < self.n)
        flat, n = np.unique(waker[ok] * self.n + wakee[ok], return_counts=True)
        for k, c in zip(flat.tolist(), n.tolist(), strict=True):
            self.counts[k] = self.counts.get(k, 0) + c

    def document(self) -> dict[str, Any]:
        """Metrics.wakeups.llc_pairs: {llcs, pairs: [[waker's LLC, wakee's LLC, wakeups], ...]},
        pairs ordered by waker's LLC, then wakee's."""
        pairs = [[k // self.n, k % self.n, c] for k, c in sorted(self.counts.items())]
        return {"llcs": self.n, "pairs": pairs}
