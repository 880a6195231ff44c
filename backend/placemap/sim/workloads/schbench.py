"""schbench -m M -t W: M messenger threads, each forking W workers. Every sleeptime a
messenger wakes its sleeping workers through a futex (not a sync wakeup); a woken worker
runs cputime of work and sleeps again. Metric: p99 wakeup latency in us (lower is better),
from the futex wake to the worker running, over the workers' wakeups after the warmup.

Defaults are schbench's classic -s 30000 -c 30000 (us); both can be set per scenario.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from placemap.sim.engine import SLEEP, Engine
from placemap.sim.state import TASK_SLEEPING, Task
from placemap.sim.workloads.params import check_keys, int_param

WORKER_GROUP = 1  # task group whose wakeup latencies are measured
FUTEX_WAKE_NS = 1_500  # messenger's cost per worker woken (futex_wake + ttwu)
CLONE_NS = 20_000
WSS_KB = 256  # schbench's default per-thread cache footprint (-F 256 KiB)
WARMUP_NS = 100_000_000  # samples before this are dropped (workers still being spread)


class _Messenger:
    def __init__(self, sb: Schbench) -> None:
        self.sb = sb
        self.workers: list[Task] = []
        self.phase = 0  # 0 forking, 1 waking, 2 sleeping

    def step(self, eng: Engine, p: Task) -> int:
        sb = self.sb
        if self.phase == 0:
            if len(self.workers) < sb.workers:
                self.workers.append(eng.fork(p, "schbench-worker", _Worker(sb), group=WORKER_GROUP))
                return CLONE_NS
            self.phase = 1
        if self.phase == 1:
            self.phase = 2
            n = 0
            for w in self.workers:
                if w.state == TASK_SLEEPING and eng.wake(w, p, sync=False):
                    n += 1
            return max(1, n) * FUTEX_WAKE_NS
        self.phase = 1
        eng.wake_at(eng.env.now + sb.sleeptime_ns, p)
        return SLEEP


class _Worker:
    """A worker first puts itself on its messenger's list and waits for a message (schbench's
    msg_and_wait), then works cputime per message: right after the fork it sleeps, so the
    next fork sees its CPU idle."""

    def __init__(self, sb: Schbench) -> None:
        self.sb = sb
        self.running = True  # the first step is the wait for the first message

    def step(self, eng: Engine, p: Task) -> int:
        if self.running:
            self.running = False
            return SLEEP
        self.running = True
        jitter = eng.rng.uniform(0.9, 1.1)  # run-to-run variation of the think time
        return int(self.sb.cputime_ns * jitter)


class _Main:
    def __init__(self, sb: Schbench) -> None:
        self.sb = sb
        self.forked = 0

    def step(self, eng: Engine, p: Task) -> int:
        if self.forked < self.sb.messengers:
            self.forked += 1
            eng.fork(p, "schbench-msg", _Messenger(self.sb))
            return CLONE_NS
        return SLEEP


class Schbench:
    """The workload; the metric reads the engine's wakeup latencies of WORKER_GROUP."""

    metric_name = "p99_wakeup_latency_us"
    better = "lower"
    PARAMS: ClassVar[tuple[str, ...]] = ("messengers", "workers", "cputime_us", "sleeptime_us")

    def __init__(
        self, messengers: int = 1, workers: int = 16, cputime_us: int = 30000, sleeptime_us: int = 30000
    ):
        self.messengers = messengers
        self.workers = workers
        self.cputime_ns = cputime_us * 1000
        self.sleeptime_ns = sleeptime_us * 1000

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], field: str) -> Schbench:
        check_keys(spec, cls.PARAMS, field)
        return cls(
            messengers=int_param(spec, "messengers", 1, 1, 64, field=field),
            workers=int_param(spec, "workers", 16, 1, 4096, field=field),
            cputime_us=int_param(spec, "cputime_us", 30000, 1, 10_000_000, field=field),
            sleeptime_us=int_param(spec, "sleeptime_us", 30000, 1, 10_000_000, field=field),
        )

    def setup(self, eng: Engine, hints: int) -> None:
        eng.track_latency(WORKER_GROUP, WARMUP_NS)
        cpus = eng.st.cpus
        main = eng.spawn("schbench", _Main(self), cpus[eng.rng.randrange(len(cpus))], hints=hints)
        main.wss_kb = WSS_KB

    def complete(self) -> bool:
        return True

    def samples_ns(self, eng: Engine) -> list[int]:
        return eng.wake_latency.get(WORKER_GROUP, [])

    def metric(self, eng: Engine, duration_ns: int) -> float:
        s = sorted(self.samples_ns(eng))
        if not s:
            return 0.0
        return round(s[(99 * (len(s) - 1)) // 100] / 1000, 3)
