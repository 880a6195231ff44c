"""Counts taken from each chunk's wakeup placements and their classes by where the waker ran
(kernel.WK_*): each task's wakeups, those whose waker ran in another LLC than its prev CPU, and of
those the pulls to the waker's LLC (the tasks table's wakeups, cross_llc, pulled), and the wakeups
by LLC pair (llc_pairs.PairCounts). One selection of a chunk's wakeups feeds both; the ingest and
the refill of an older recording (waker_refill) count with it alike."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from placemap.replay import kernel as kn
from placemap.replay.accumulate import K_WAKEUP
from placemap.replay.llc_pairs import PairCounts
from placemap.replay.state import ChunkColumns, Placements
from placemap.replay.topo import LevelMap


class WakeCounts:
    """A recording's per-task wakeup counts (by task index) and wakeups by LLC pair, chunk by chunk."""

    def __init__(self, levels: LevelMap) -> None:
        self.tasks: npt.NDArray[np.int64] = np.zeros((3, 64), dtype=np.int64)  # wakeups, cross_llc, pulled
        self.pairs = PairCounts(levels)

    def add(self, n_tasks: int, cols: ChunkColumns, pl: Placements) -> None:
        """One chunk's wakeup placements (pl.task indices below n_tasks)."""
        if self.tasks.shape[1] < n_tasks:
            grown = np.zeros((3, max(n_tasks, 2 * self.tasks.shape[1])), dtype=np.int64)
            grown[:, : self.tasks.shape[1]] = self.tasks
            self.tasks = grown
        woke = cols.kind[pl.row] == K_WAKEUP
        task = pl.task[woke]
        mask = pl.ev_waker[pl.row[woke]].astype(np.int64)
        width = self.tasks.shape[1]
        self.tasks[0] += np.bincount(task, minlength=width)
        self.tasks[1] += np.bincount(task[(mask >> kn.WK_CROSS_LLC) & 1 == 1], minlength=width)
        self.tasks[2] += np.bincount(task[(mask >> kn.WK_TO_WAKER_LLC) & 1 == 1], minlength=width)
        self.pairs.add(pl.waker_cpu[woke], pl.cpu[woke], mask)

    def task(self, i: int) -> tuple[int, int, int]:
        """Task index i's wakeups, wakeups from another LLC, and pulls to the waker's LLC."""
        if i >= self.tasks.shape[1]:
            return 0, 0, 0
        w, c, p = (int(x) for x in self.tasks[:, i])
        return w, c, p
