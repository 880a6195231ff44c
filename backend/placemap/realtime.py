"""Opt-in real-time priority for the server's event loop thread (`placemap serve --realtime N`).

On a host that is both traced and serving, a saturated workload (hackbench -g 8: 320 runnable tasks on
2 CPUs) leaves the event loop, which validates collectors' batches and fans them out to viewers,
waiting for CPU for up to seconds. `perf record -r N` offers the same remedy for its reader. Only the
event loop thread and the loop's default executor threads (asyncio.to_thread: the live batches'
SQLite commits) get SCHED_FIFO: a commit thread left ordinary holds the GIL while it waits for CPU
behind the workload, and the real-time loop then waits for it (measured: p99 recv -> publish 300-500
ms). SCHED_RESET_ON_FORK makes every process they start (the chunk worker, simulation jobs, the
importer) and the request threads of FastAPI's sync endpoints (anyio's pool, started by the loop)
ordinary tasks, so the heavy work keeps its normal priority; the kernel's RT throttling bounds the rest.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

MIN_PRIORITY = 1
MAX_PRIORITY = 99


class RealtimeError(RuntimeError):
    """The priority could not be set (not root / no CAP_SYS_NICE, or an RT cgroup without budget)."""


def make_current_thread_realtime(priority: int) -> None:
    """The calling thread to SCHED_FIFO at `priority`, its later children reset to SCHED_OTHER."""
    if not MIN_PRIORITY <= priority <= MAX_PRIORITY:
        raise RealtimeError(f"real-time priority {priority} is outside {MIN_PRIORITY}..{MAX_PRIORITY}")
    try:
        # pid 0 is the calling thread on Linux (the scheduler's unit is the thread)
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(priority))
    except PermissionError as exc:
        raise RealtimeError(
            f"SCHED_FIFO {priority} refused ({exc.strerror}): needs root or CAP_SYS_NICE"
        ) from exc
    except OSError as exc:
        raise RealtimeError(f"SCHED_FIFO {priority} refused: {exc.strerror}") from exc


POOL_THREAD_NAME = "placemap-rt"  # what ps / top -H show for the executor's real-time threads


def _pool_thread(priority: int) -> None:
    make_current_thread_realtime(priority)
    # name the kernel task (Python 3.11 does not): an operator sees which threads run real-time
    Path(f"/proc/self/task/{threading.get_native_id()}/comm").write_text(POOL_THREAD_NAME)


def realtime_executor(priority: int) -> ThreadPoolExecutor:
    """A thread pool whose threads make themselves SCHED_FIFO at `priority` (the loop's default executor)."""
    return ThreadPoolExecutor(
        thread_name_prefix=POOL_THREAD_NAME, initializer=_pool_thread, initargs=(priority,)
    )
