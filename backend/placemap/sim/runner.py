"""Many independent scenarios over a pool of worker processes (calibration runs hundreds).

Results come back in the order of the input whatever order the workers finish in, so the
output of a parallel run is byte-identical to a sequential one: every scenario is seeded and
runs alone in its process, and whoever combines results (calibration averages over seeds)
combines them in input order. Work is handed out longest first (by the caller's estimate) so
that one long run does not start last and leave the other cores idle. Workers are spawned,
not forked, so that a caller with threads (a server) is safe; each imports the simulator once.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from placemap.sim.scenario import run_scenario

Progress = Callable[[int, int, int], None]  # (done, total, index of the one just done)


def default_jobs() -> int:
    """Worker processes to use: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def run_one(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """One scenario with deterministic output (no wall clock): what a worker runs."""
    return run_scenario(scenario, wall_clock=False)


def run_many(
    scenarios: Sequence[Mapping[str, Any]],
    jobs: int = 0,
    cost: Sequence[float] | None = None,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Run every scenario; results in input order. jobs=0: default_jobs(); 1: in this process.
    `cost` (same length) is an estimate of each run's length, used only to order the work."""
    n = len(scenarios)
    jobs = min(jobs or default_jobs(), n)
    results: list[dict[str, Any] | None] = [None] * n
    if jobs <= 1:
        for i, sc in enumerate(scenarios):
            results[i] = run_one(sc)
            if progress is not None:
                progress(i + 1, n, i)
        return [r for r in results if r is not None]
    order = sorted(range(n), key=lambda i: -cost[i]) if cost is not None else list(range(n))
    ctx = multiprocessing.get_context("spawn")
    done = 0
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        # keep only a few runs queued per worker so that the longest-first order holds
        pending: dict[Future[dict[str, Any]], int] = {}
        it = iter(order)
        for i in it:
            pending[pool.submit(run_one, scenarios[i])] = i
            if len(pending) >= 2 * jobs:
                break
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in sorted(finished, key=lambda f: pending[f]):
                i = pending.pop(fut)
                results[i] = fut.result()
                done += 1
                if progress is not None:
                    progress(done, n, i)
                nxt = next(it, None)
                if nxt is not None:
                    pending[pool.submit(run_one, scenarios[nxt])] = nxt
    return [r for r in results if r is not None]
