"""stream T: T memory-bound threads forked by the main thread and re-woken by it every
iteration (an OpenMP parallel loop: futex wakeups, not sync). Each iteration moves
BYTES_PER_ITER split evenly; a thread's speed follows its share of the LLC and node memory
bandwidth (cost.mem_speed), so placement decides the bandwidth: best with one thread per
LLC spread over the nodes. Metric: bandwidth_mb_s (higher is better).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from placemap.sim import cost
from placemap.sim.engine import SLEEP, Engine
from placemap.sim.state import Task
from placemap.sim.workloads.params import check_keys, int_param

BYTES_PER_ITER = 160 * 1024 * 1024  # Stream Copy of 10M doubles: read a[], write c[]
FOOTPRINT_KB = 3 * 80 * 1024  # three arrays of 10M doubles
WSS_KB = 1024  # streamed arrays never stay in cache; only stacks and the loop state do
CLONE_NS = 20_000
ITER_NS = 5_000  # the main thread's barrier and wakeups per iteration
# libgomp threads spin at a barrier before sleeping (GOMP_SPINCOUNT): new threads look busy
# while the main thread creates the others.
SPIN_NS = 300_000


class _Thread:
    def __init__(self, s: Stream) -> None:
        self.s = s
        self.working = False
        self.spun = False

    def step(self, eng: Engine, p: Task) -> int:
        s = self.s
        if not self.working:
            if s.t_start < 0 and not self.spun:  # the first run spins at the start barrier
                self.spun = True
                return SPIN_NS
            if s.t_start < 0:
                s.ready += 1
                if s.ready == s.threads and s.main is not None:
                    eng.wake(s.main, p)
                return SLEEP
            self.working = True
            mbytes = BYTES_PER_ITER / s.threads / 1e6
            return max(1, int(mbytes / cost.THREAD_BANDWIDTH_MBS * 1e9))  # ns at full speed
        self.working = False
        s.bytes_done += BYTES_PER_ITER // s.threads
        s.done += 1
        if s.done == s.threads and s.main is not None:
            eng.wake(s.main, p)
        return SLEEP


class _Main:
    def __init__(self, s: Stream) -> None:
        self.s = s
        self.forked = 0

    def step(self, eng: Engine, p: Task) -> int:
        s = self.s
        if self.forked < s.threads:
            self.forked += 1
            t = eng.fork(p, "stream", _Thread(s))
            t.membound = True
            s.workers.append(t)
            return CLONE_NS
        if s.ready < s.threads or (s.t_start >= 0 and s.done < s.threads):
            return SLEEP
        if s.t_start < 0:
            s.t_start = eng.env.now
        s.done = 0
        for t in s.workers:
            eng.wake(t, p)
        # wait for the iteration (the last thread wakes us)
        return ITER_NS if s.iter_pending() else SLEEP


class Stream:
    """The workload: `threads` memory-bound threads."""

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

    def iter_pending(self) -> bool:
        return self.done < self.threads

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], field: str) -> Stream:
        check_keys(spec, ("threads",), field)
        return cls(int_param(spec, "threads", 4, 1, 4096, field=field))

    def setup(self, eng: Engine, hints: int) -> None:
        cpus = eng.st.cpus
        self.main = eng.spawn("stream", _Main(self), cpus[eng.rng.randrange(len(cpus))], hints=hints)
        self.main.footprint_kb = FOOTPRINT_KB
        self.main.wss_kb = WSS_KB

    def complete(self) -> bool:
        return self.t_start >= 0

    def metric(self, eng: Engine, duration_ns: int) -> float:
        if self.t_start < 0 or eng.env.now <= self.t_start:
            return 0.0
        return round(self.bytes_done / 1e6 / ((eng.env.now - self.t_start) / 1e9), 3)
