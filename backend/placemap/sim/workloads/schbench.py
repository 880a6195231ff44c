"""schbench -m M -t W: M messenger threads, each forking W workers. A worker puts itself on
its messenger's list, posts the messenger and waits; the messenger, once posted, sleeps
sleeptime (plus up to a quarter of jitter) and then wakes every worker on its list through a
futex (not a sync wakeup); a woken worker runs cputime of work and goes back on the list.
Metric: p99 wakeup latency in us (lower is better), from the wake loop's single timestamp (as
schbench takes it) to the worker running, over the workers' wakeups after the warmup.

Defaults are schbench's classic -s 30000 -c 30000 (us); both can be set per scenario.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from placemap.sim import latency
from placemap.sim.cost import SMT_SPEED
from placemap.sim.engine import SLEEP, Engine
from placemap.sim.state import Task
from placemap.sim.workloads.catalog import read

WORKER_GROUP: Final = 1  # task group whose wakeup latencies are measured
FUTEX_WAKE_NS: Final = 1_500  # messenger's cost per worker woken (futex_wake + ttwu)
CLONE_NS: Final = 20_000
WSS_KB: Final = 256  # schbench's default per-thread cache footprint (-F 256 KiB)
WARMUP_NS: Final = 100_000_000  # samples before this are dropped (workers still being spread)
# a worker's cputime is a wall-clock spin (usec_spin loops on gettimeofday), run as CPU work in chunks:
# each chunk assumes the slowest speed (an SMT sibling busy) so it cannot overshoot the deadline, and
# the last chunk, at most this long, runs at the CPU's speed at that moment
SPIN_FINAL_NS: Final = 1_000_000


class _Messenger:
    """schbench's run_msg_thread: wake every worker on the message list (one gtod for the
    whole list), wait on its own futex until a worker posts it (a worker that finished its
    work and put itself back on the list), then usleep(sleeptime + jitter) and loop. So a
    round starts only after a worker has finished, and by then the others have finished too:
    every round wakes the whole herd at once."""

    def __init__(self, sb: Schbench) -> None:
        self.sb = sb
        self.workers: list[Task] = []
        self.waiting: list[Task] = []  # the message list (xlist), in posting order
        self.posted = False  # the messenger's futex: a worker posted since FUTEX_BLOCKED
        self.in_fwait = False  # blocked on its futex (a post wakes it), not in usleep
        self.batch: list[Task] = []  # the spliced list the wake loop goes through, from its end
        self.stamp = 0  # the wake loop's gtod: every wakee's wake_time
        self.loop_sizes: list[int] = []  # workers on the list at each wake loop
        self.loop_spans: list[int] = []  # ns from each loop's stamp to its end (preemption shows)
        self.phase = 0  # 0 forking, 1 wake loop start, 4 waking one by one, 2 fwait, 3 usleep

    def post(self, eng: Engine, worker: Task, p: Task) -> None:
        """A worker's msg_and_wait: xlist_add then fpost(&msg_thread->futex)."""
        self.waiting.append(worker)  # xlist_add prepends: the loop wakes the last poster first
        self.posted = True
        if self.in_fwait:
            self.in_fwait = False
            eng.wake(p, worker, sync=False)

    def step(self, eng: Engine, p: Task) -> int:
        sb = self.sb
        if self.phase == 0:
            if len(self.workers) < sb.workers:
                self.workers.append(eng.fork(p, "schbench-worker", _Worker(sb, self, p), group=WORKER_GROUP))
                return CLONE_NS
            self.phase = 1
        if self.phase == 1:
            # td->futex = FUTEX_BLOCKED, then xlist_wake_all: splice the list, one gtod
            self.posted = False
            self.batch, self.waiting = self.waiting, []
            self.stamp = eng.env.now
            self.loop_sizes.append(len(self.batch))
            self.phase = 4
        if self.phase == 4:
            # One futex wake per step: the loop takes n wakes of time, and a wakee that
            # preempted the messenger would hold up the rest of the loop. schbench charges
            # every wakee from the loop's single gtod, taken "to detect when the scheduler is
            # just preempting the waker and giving away the rest of its timeslice".
            while self.batch:
                w = self.batch.pop()
                if eng.wake(w, p, sync=False):
                    w.woken_at = self.stamp
                    return FUTEX_WAKE_NS
            self.loop_spans.append(eng.env.now - self.stamp)
            self.phase = 2
        if self.phase == 2:
            self.phase = 3
            if not self.posted:  # fwait returns at once when a worker posted meanwhile
                self.in_fwait = True
                return SLEEP
        # woken by a post (or it came during the loop): usleep(sleeptime + rand % (sleeptime/4))
        self.phase = 1
        jitter = eng.rng.randrange(max(1, sb.sleeptime_ns // 4))
        eng.wake_at(eng.env.now + sb.sleeptime_ns + jitter, p)
        return SLEEP


class _Worker:
    """schbench's worker_thread (2022, the RFC's): spin cputime first (usec_spin: wall-clock time,
    whatever share of a core the worker gets), then msg_and_wait (put itself on its messenger's
    list, post the messenger, wait for a message), and again."""

    def __init__(self, sb: Schbench, msg: _Messenger, msg_task: Task) -> None:
        self.sb = sb
        self.msg = msg
        self.msg_task = msg_task
        self.running = False  # the first step starts the spin: a new worker spins before it posts
        self.spin_end = 0  # when the current spin's wall-clock cputime is over
        self.last_spin = (0, 0)  # (start, post) of the last finished spin, for tests and tracing

    def step(self, eng: Engine, p: Task) -> int:
        now = eng.env.now
        if self.running:
            left = self.spin_end - now
            if left > 0:
                return _spin_chunk(eng, p, left)
            self.running = False
            self.last_spin = (self.spin_end - self.sb.cputime_ns, now)
            self.msg.post(eng, p, self.msg_task)
            return SLEEP
        self.running = True
        self.spin_end = now + self.sb.cputime_ns
        return _spin_chunk(eng, p, self.sb.cputime_ns)


def _spin_chunk(eng: Engine, p: Task, left: int) -> int:
    """CPU work for the next piece of a wall-clock spin with `left` ns to go (see SPIN_FINAL_NS)."""
    if left <= SPIN_FINAL_NS:
        return max(1, int(left * eng.st.rqs[p.cpu].speed))
    return max(1, int(left * SMT_SPEED))


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

    def __init__(
        self, messengers: int = 1, workers: int = 16, cputime_us: int = 30000, sleeptime_us: int = 30000
    ):
        self.messengers = messengers
        self.workers = workers
        self.cputime_ns = cputime_us * 1000
        self.sleeptime_ns = sleeptime_us * 1000
        self.samples: list[int] = []  # the engine's latency list of WORKER_GROUP, once set up

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], field: str) -> Schbench:
        p = read(spec, "schbench", field)
        return cls(
            messengers=p.int("messengers"),
            workers=p.int("workers"),
            cputime_us=p.int("cputime_us"),
            sleeptime_us=p.int("sleeptime_us"),
        )

    def setup(self, eng: Engine, hints: int) -> None:
        eng.track_latency(WORKER_GROUP, WARMUP_NS)
        self.samples = eng.wake_latency[WORKER_GROUP]
        cpus = eng.st.cpus
        main = eng.spawn("schbench", _Main(self), cpus[eng.rng.randrange(len(cpus))], hints=hints)
        main.wss_kb = WSS_KB

    def complete(self) -> bool:
        """A p99 needs samples: a run that ends within the warmup has none (its metric is 0)."""
        return bool(self.samples)

    def metric(self, eng: Engine, duration_ns: int) -> float:
        s = sorted(self.samples)
        if not s:
            return 0.0
        return round(latency.percentile(s, latency.P99) / 1000, 3)

    def latency_us(self) -> dict[str, Any]:
        """The wakeup latencies' distribution (latency.summary): the metric is its p99."""
        return latency.summary(self.samples)
