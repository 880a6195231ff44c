"""stream T: an OpenMP team of T memory-bound threads. As libgomp builds a team, the main
thread is one of the T (it forks T - 1 threads, then takes its own share of every parallel
loop) and re-wakes the others each iteration (futex wakeups, not sync). Each iteration moves
BYTES_PER_ITER split evenly; a thread's speed follows its share of the LLC and node memory
bandwidth (cost.mem_speed), so placement decides the bandwidth: best with one thread per
LLC spread over the nodes. Metric: bandwidth_mb_s (higher is better).

Why the main thread counts: the fork slow path keeps a child on its parent's node while the
node would stay within the NUMA imbalance allowance (imb_numa_nr running tasks, and at most 2
idle CPUs fewer than the other node since v5.19), and the parent is running. With main
streaming too, the team leans to the parent's node (2+0, 3+1, 5+3 at 2, 4, 8 threads), as the
kernel does on tip; modelled as a separate coordinator, the first thread of a 2-thread run
would be alone on its node and no hint could matter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from placemap.sim import cost
from placemap.sim.engine import SLEEP, Engine
from placemap.sim.state import Task
from placemap.sim.workloads.catalog import read

BYTES_PER_ITER: Final = 160 * 1024 * 1024  # Stream Copy of 10M doubles: read a[], write c[]
FOOTPRINT_KB: Final = 3 * 80 * 1024  # three arrays of 10M doubles
WSS_KB: Final = 1024  # streamed arrays never stay in cache; only stacks and the loop state do
CLONE_NS: Final = 20_000
ITER_NS: Final = 5_000  # the main thread's barrier and wakeups per iteration
# A new thread's first parallel region (stream's array initialisation, then libgomp's spin at
# the barrier, GOMP_SPINCOUNT): the team's threads look busy while main creates the others.
SPIN_NS: Final = 300_000


def _share_ns(s: Stream) -> int:
    """One thread's part of an iteration, in ns at full speed."""
    mbytes = BYTES_PER_ITER / s.threads / 1e6
    return max(1, int(mbytes / cost.THREAD_BANDWIDTH_MBS * 1e9))


class _Thread:
    def __init__(self, s: Stream) -> None:
        self.s = s
        self.working = False
        self.spun = False

    def step(self, eng: Engine, p: Task) -> int:
        s = self.s
        if not self.working:
            if s.t_start < 0 and not self.spun:  # the first run: initialisation and spin
                self.spun = True
                return SPIN_NS
            if s.t_start < 0:
                s.ready += 1
                if s.ready == s.threads - 1 and s.main is not None:
                    eng.wake(s.main, p)
                return SLEEP
            self.working = True
            return _share_ns(s)
        self.working = False
        s.finish_share(eng, p)
        return SLEEP


class _Main:
    """Forks the team, then works its own share of every iteration and starts the next one
    once every share is done."""

    def __init__(self, s: Stream) -> None:
        self.s = s
        self.forked = 0
        self.phase = 0  # 0 forking, 1 own initialisation, 2 waiting, 3 working

    def step(self, eng: Engine, p: Task) -> int:
        s = self.s
        if self.phase == 0:
            if self.forked < s.threads - 1:
                self.forked += 1
                t = eng.fork(p, "stream", _Thread(s))
                t.membound = True
                s.workers.append(t)
                return CLONE_NS
            self.phase = 1
            return SPIN_NS if s.threads > 1 else 1
        if self.phase == 3:  # own share done
            s.finish_share(eng, p)
        if s.ready < s.threads - 1 or (s.t_start >= 0 and s.done < s.threads):
            self.phase = 2
            return SLEEP  # the last thread to get ready / to finish wakes us
        if s.t_start < 0:
            s.t_start = eng.env.now
        s.done = 0
        for t in s.workers:
            eng.wake(t, p)
        self.phase = 3
        return ITER_NS + _share_ns(s)


class Stream:
    """The workload: a team of `threads` memory-bound threads, main included."""

    metric_name = "bandwidth_mb_s"
    better = "higher"

    def __init__(self, threads: int = 4) -> None:
        self.threads = threads
        self.workers: list[Task] = []
        self.main: Task | None = None
        self.ready = 0
        self.done = 0
        self.bytes_done = 0
        self.t_start = -1

    def finish_share(self, eng: Engine, p: Task) -> None:
        """A thread (main included) finished its share of the iteration; the last one to
        finish, when it is not main, wakes main for the next iteration."""
        self.bytes_done += BYTES_PER_ITER // self.threads
        self.done += 1
        if self.done == self.threads and self.main is not None and p is not self.main:
            eng.wake(self.main, p)

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], field: str) -> Stream:
        return cls(read(spec, "stream", field).int("threads"))

    def setup(self, eng: Engine, hints: int) -> None:
        cpus = eng.st.cpus
        self.main = eng.spawn("stream", _Main(self), cpus[eng.rng.randrange(len(cpus))], hints=hints)
        self.main.footprint_kb = FOOTPRINT_KB
        self.main.wss_kb = WSS_KB
        self.main.membound = True

    def complete(self) -> bool:
        return self.t_start >= 0

    def metric(self, eng: Engine, duration_ns: int) -> float:
        if self.t_start < 0 or eng.env.now <= self.t_start:
            return 0.0
        return round(self.bytes_done / 1e6 / ((eng.env.now - self.t_start) / 1e9), 3)
