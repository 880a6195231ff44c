"""The simulator engine: runs tasks on CPUs over the event loop, asks the policies where
tasks go at fork, wakeup and balance, and charges the cost model.

Execution model: each CPU runs `curr` until its burst of work ends or its CFS slice expires
with others waiting; work progresses at SMT_SPEED while an SMT sibling runs too. A task's
behaviour (workloads/) is asked for its next burst each time one ends and answers with a
duration, SLEEP (block until woken) or EXIT. Wakeups and forks go through the policies;
load balancing runs from a periodic tick per domain interval, and when a CPU goes idle
(newly idle balance, then STEAL).
"""

from __future__ import annotations

import gc
import random
from typing import TYPE_CHECKING, Any, Final, Protocol

from placemap.sim import cost
from placemap.sim.balancing import Balancer
from placemap.sim.core import NORMAL, URGENT, Environment, Handler
from placemap.sim.decisions import NEWIDLE, NEWIDLE_NOTHING, NEWIDLE_SKIPPED, STEAL, DecisionCounts
from placemap.sim.domains import LEVEL_NAMES
from placemap.sim.features import Features
from placemap.sim.latency import DelayHistogram
from placemap.sim.policy import CAUSE_BALANCE, CAUSE_FORK, CAUSE_WAKEUP, CAUSES
from placemap.sim.policy.balance import SYSCTL_SCHED_MIGRATION_COST_NS, newidle_balance, try_steal
from placemap.sim.policy.fork import select_task_rq_fork
from placemap.sim.policy.wakeup import wake_target
from placemap.sim.speed import Speeds
from placemap.sim.state import (
    NICE_0_LOAD,
    TASK_DEAD,
    TASK_SLEEPING,
    TASK_WAKING,
    Rq,
    State,
    Task,
    clear_buddies,
    enter_idle,
    record_idle,
    settle_pelt_ts,
    util_est_dequeue,
)
from placemap.sim.topology import Topology
from placemap.sim.trace import EventLog, idle_comm
from placemap.sim.utilization import LlcSampler

if TYPE_CHECKING:
    from mypy_extensions import i64  # compiled, a native int (see core.py); annotations only

SLEEP: Final = 0
EXIT: Final = -1
LEVELS: Final = ("smt", "llc", "pkg", "numa")  # LEVEL_NAMES[1:]
# the reason a log keeps for the workload's first task (spawn): no fork decision places it
SPAWN_WHY: Final = (
    "no decision: started by the workload",
    "its start CPU (the seed's draw; a replay's recorded CPU)",
)
# The engine's event kinds (Environment.post -> Engine.handle)
EV_CPU: Final = 0  # a CPU's burst or slice ends: (rq, gen)
EV_START: Final = 1  # a CPU leaves idle to run what was queued: (rq, gen)
EV_RESCHED: Final = 2  # a wakeup preempts the running task: (rq, None)
EV_TIMER: Final = 3  # a timer wakes a task: (task, None)
EV_TTWU: Final = 4  # a wakeup that waited for the task's switch-out: (task, (waker, cpu, sync))


class Behavior(Protocol):
    """A task's program: called when its burst ends (or when it first runs)."""

    def step(self, eng: Engine, p: Task) -> int:
        """Next burst in ns of CPU work at full speed, or SLEEP, or EXIT."""
        ...


class Program:
    """A Behavior as a class to derive from: compiled, the engine then calls its step as a
    native method (a direct call with unboxed arguments) instead of through a Protocol, which
    the compiled build calls as any Python object (an attribute lookup, argument parsing and
    a boxed result per burst). For the compiled workloads only: an interpreted class (a
    test's program) cannot derive from a compiled one, and implements Behavior instead."""

    def step(self, eng: Engine, p: Task) -> int:
        """Next burst in ns of CPU work at full speed, or SLEEP, or EXIT."""
        raise NotImplementedError


class Tally:
    """Counts by a small index (0 to 4: a SchedDomains.level_index or a CAUSES index) in native
    int fields: compiled, `counts[i] += 1` on a list of ints makes a new int object past 256 and
    frees the old one at each count; a field counts in place."""

    __slots__ = ("c0", "c1", "c2", "c3", "c4")

    def __init__(self) -> None:
        self.c0 = 0
        self.c1 = 0
        self.c2 = 0
        self.c3 = 0
        self.c4 = 0

    def add(self, i: int) -> None:
        if i == 0:
            self.c0 += 1
        elif i == 1:
            self.c1 += 1
        elif i == 2:
            self.c2 += 1
        elif i == 3:
            self.c3 += 1
        elif i == 4:
            self.c4 += 1
        else:
            raise IndexError(i)

    def get(self, i: int) -> int:
        return (self.c0, self.c1, self.c2, self.c3, self.c4)[i]

    def total(self) -> int:
        return self.c0 + self.c1 + self.c2 + self.c3 + self.c4


class Engine(Handler):
    """One simulation run: state, event loop, seeded RNG and counters."""

    def __init__(
        self,
        topo: Topology,
        features: Features | None = None,
        seed: int = 0,
        log: EventLog | None = None,
        decisions: DecisionCounts | None = None,
    ) -> None:
        self.env = Environment(self)
        self.log = log
        self.decisions = decisions  # counts of the decisions by reason, when the run asks
        # the task that last left each CPU and its state, for sched_switch records
        self.prev_task: list[Task | None] = [None] * topo.nr_cpus
        self.prev_state = ["R"] * topo.nr_cpus
        self.st = State(topo, features)
        self.rng = random.Random(seed)
        st = self.st
        self.speeds = Speeds(topo, st.rqs)
        self.balancer = Balancer(self)
        self.live = 0
        self.stepping: Task | None = None  # the task whose behaviour is running
        # counters
        # counted by SchedDomains.level_index (0, the same CPU, stays 0) and by CAUSES index in
        # Tallies (no string hashing, no int object per count); the properties read them as dicts
        self._migr_level = Tally()
        self._migr_cause = Tally()
        self._wake_level = Tally()
        self.wakeups = 0
        self.wakeups_affine = 0
        # the wakeups by where the waker ran, as a recording's metrics count them from its events
        # (wakeups.by_waker): the waker's CPU in another LLC than prev, and of those, the ones that
        # woke in the waker's LLC and in prev's (the ones on the waker's CPU are the wakeups that
        # _wake_level does not count: level 0)
        self.wakeups_cross_llc = 0
        self.wakeups_to_waker_llc = 0
        self.wakeups_to_prev_llc = 0
        self.switches = 0
        self.llc_util = LlcSampler(st)  # per-LLC utilization over time; the CPUs' busy time
        self.wait_ns = 0
        self.nr_waits = 0
        self.delays = DelayHistogram()  # every run-queue delay after a wakeup
        self.wake_latency: dict[int, list[int]] = {}  # group -> samples (ns), groups that ask
        self.latency_after: dict[int, int] = {}  # group -> time from which samples count
        # Cost parameters used per event, read once per run: compiled, a module attribute that
        # is not Final is a dictionary lookup at each use.
        self._min_gran_ns = cost.SCHED_MIN_GRANULARITY_NS
        self._latency_ns = cost.SCHED_LATENCY_NS
        self._wakeup_gran_ns = cost.SCHED_WAKEUP_GRANULARITY_NS
        self._sleeper_credit_ns = cost.SLEEPER_CREDIT_NS
        self._idle_exit_ns = cost.IDLE_EXIT_NS
        self._idle_exit_deep_ns = cost.IDLE_EXIT_DEEP_NS
        self._deep_idle_after_ns = cost.DEEP_IDLE_AFTER_NS
        self._context_switch_ns = cost.CONTEXT_SWITCH_NS
        self._tick_ns = cost.TICK_NS
        self._scan_cost_ns = cost.SIS_SCAN_COST_PER_CPU_NS
        # by SchedDomains.level_index of waker and wakee CPUs
        self._transfer_ns = [cost.wake_transfer_ns(lv) for lv in LEVEL_NAMES]
        self._ipi_ns = [cost.wake_ipi_ns(lv) for lv in LEVEL_NAMES]
        # per CPU, the extra latency of waking its LLC from power-gated sleep (cost.llc_wake_ns)
        pkg_cpus: dict[int, int] = {}
        for c in topo.cpus:
            pkg_cpus[topo.package_of[c]] = pkg_cpus.get(topo.package_of[c], 0) + 1
        self._llc_wake_ns = [
            cost.llc_wake_ns(len(topo.llc_cpus[topo.llc_of[c]]), pkg_cpus[topo.package_of[c]])
            if topo.online[c]
            else 0
            for c in range(topo.nr_cpus)
        ]

    def handle_gen(self, kind: int, a: Any, g: i64) -> None:
        """A CPU's event posted with its generation (EV_CPU, EV_START; Environment.post_gen),
        called by the compiled event loop."""
        if kind == EV_CPU:
            self._on_cpu(a, g)
        else:
            self._on_start(a, g)

    def handle(self, kind: int, a: Any, b: Any) -> None:
        """An event posted by this engine (EV_*), called by the event loop."""
        if kind == EV_CPU:
            self._on_cpu(a, b)
        elif kind == EV_START:
            self._on_start(a, b)
        elif kind == EV_RESCHED:
            self._on_resched(a, b)
        elif kind == EV_TIMER:
            self._on_timer(a, b)
        else:
            self._on_ttwu(a, b)

    # -- task creation -----------------------------------------------------------------

    def _new_task(self, name: str, behavior: Behavior, group: int, hints: int) -> Task:
        p = Task(len(self.st.tasks) + 1, name, group, hints)
        p.behavior = behavior
        if isinstance(behavior, Program):
            p.program = behavior
        p.pelt_ts = self.env.now
        p.load = float(NICE_0_LOAD)  # init_entity_runnable_average()
        self.st.tasks.append(p)
        self.live += 1
        return p

    def spawn(self, name: str, behavior: Behavior, cpu: int, *, group: int = 0, hints: int = 0) -> Task:
        """Start a task on `cpu` directly (the workload's first process)."""
        self.st.now = self.env.now
        p = self._new_task(name, behavior, group, hints)
        if self.log is not None:
            self.log.wakeup_new(self.env.now, cpu, 0, p, target=cpu, why=SPAWN_WHY)
        p.queued_at = self.env.now
        self._enqueue(p, cpu)
        self.balancer.start()
        return p

    def spawn_asleep(
        self, name: str, behavior: Behavior, cpu: int, *, group: int = 0, hints: int = 0
    ) -> Task:
        """A task that is asleep on `cpu` from the start (a recording's task that slept when the
        recording began): it runs when woken. Asleep for long, its averages have decayed to 0,
        so it adds nothing to the CPU's."""
        self.st.now = self.env.now
        p = self._new_task(name, behavior, group, hints)
        p.util = 0.0
        p.load = 0.0
        p.state = TASK_SLEEPING
        p.cpu = cpu
        self.balancer.start()
        return p

    def fork(self, parent: Task, name: str, behavior: Behavior, *, group: int | None = None) -> Task:
        """wake_up_new_task(): place the child with the fork slow path; it inherits the hints
        and the affinity of its parent."""
        st = self.st
        st.now = self.env.now
        p = self._new_task(name, behavior, parent.group if group is None else group, parent.hints)
        p.cpus_allowed = parent.cpus_allowed
        p.footprint_kb = parent.footprint_kb
        p.wss_kb = parent.wss_kb
        # dup_task_struct() copies the parent's task_struct whole and neither __sched_fork() nor
        # sched_fork() resets record_wakee()'s fields: the child starts with the parent's flips
        p.wakee_flips = parent.wakee_flips
        p.wakee_flip_decay_ns = parent.wakee_flip_decay_ns
        p.last_wakee = parent.last_wakee
        d = select_task_rq_fork(st, p, parent.cpu)
        if self.decisions is not None:
            self.decisions.count_fork(d.via, d.reason)
        # post_init_entity_util_avg() reads the CPU's util_avg (not its util_est) and load_avg
        # as of their last update (State.seen)
        load = st.cpu_load(d.cpu)
        util = st.rqs[d.cpu].util
        p.util = cost.initial_util(util if util < 1024.0 else 1024.0, load)
        log = self.log
        if log is not None:
            log.fork(st.now, parent.cpu, parent, p)
            if d.cpu != parent.cpu:
                log.migrate(st.now, parent.cpu, parent.pid, p, orig=parent.cpu, dest=d.cpu)
            log.wakeup_new(st.now, parent.cpu, parent.pid, p, target=d.cpu, why=(d.via, d.reason))
        p.queued_at = st.now
        if d.cpu != parent.cpu:
            self._count_migration(parent.cpu, d.cpu, CAUSE_FORK)
        # task_fork_fair() on the parent's runqueue (update_curr() first): the parent's vruntime,
        # or min_vruntime + sched_vslice() (START_DEBIT: the slice the child would get there,
        # sched_slice() counting it as one more task) when larger; relative to that
        # min_vruntime, then made absolute on the child's CPU by enqueue_entity() (no
        # place_entity() there: a fork is no ENQUEUE_WAKEUP). sched_child_runs_first is 0.
        src = st.rqs[parent.cpu]
        st.update_min_vruntime(src)
        vslice = max(self._min_gran_ns, self._latency_ns // (src.nr_running + 1))
        rel = max(parent.vruntime, src.min_vruntime + vslice) - src.min_vruntime
        drq = st.rqs[d.cpu]
        if drq.curr is not None:
            st.update_min_vruntime(drq)
        p.vruntime = drq.min_vruntime + rel
        self._enqueue(p, d.cpu, waker_cpu=parent.cpu)
        return p

    # -- wakeups -----------------------------------------------------------------------

    def track_latency(self, group: int, after_ns: int = 0) -> None:
        """Record wakeup latencies (wakeup to running) of the tasks of `group` woken after
        `after_ns` (a warmup)."""
        self.wake_latency.setdefault(group, [])
        self.latency_after[group] = after_ns

    def wake(self, p: Task, waker: Task | None = None, *, cpu: int = -1, sync: bool = False) -> bool:
        """try_to_wake_up(): False when p is not sleeping. Without a waker, the wakeup comes
        from an interrupt or timer on `cpu` (default: p's CPU)."""
        if p.state != TASK_SLEEPING:
            return False
        st = self.st
        st.now = self.env.now
        this_cpu = waker.cpu if waker is not None else (cpu if cpu >= 0 else p.cpu)
        prq = st.rqs[p.cpu]
        if prq.leaving is p:
            # p blocked but its CPU is still balancing before the switch: p is on_cpu, and
            # try_to_wake_up() waits for that (smp_cond_load_acquire(&p->on_cpu, !VAL)) before
            # choosing a CPU, so the wakeup happens at the switch-out (_switched_out)
            p.state = TASK_WAKING
            prq.wake_list.append((p, waker, this_cpu, sync))
            return True
        self._ttwu(p, waker, this_cpu, sync)
        return True

    def _on_ttwu(self, p: Task, w: tuple[Task | None, int, bool]) -> None:
        self.st.now = self.env.now
        p.state = TASK_SLEEPING
        self._ttwu(p, w[0], w[1], w[2])

    def _ttwu(self, p: Task, waker: Task | None, this_cpu: int, sync: bool) -> None:
        st = self.st
        now = st.now
        st.selecting_from = this_cpu
        st.scan_checked = 0
        target, why, via, affine = wake_target(st, p, waker, this_cpu, sync)  # select_task_rq_wake
        st.selecting_from = -1
        if waker is not None and st.scan_checked:
            # the idle scan is the waker's time: added to the work it is doing (or, when it
            # sleeps right after the wakeup, to the next work it does)
            waker.wake_penalty_ns += st.scan_checked * self._scan_cost_ns
        dec = self.decisions
        if dec is not None:
            dec.count_wakeup(via, why)
        self.wakeups += 1
        if affine:
            self.wakeups_affine += 1
        li = st.sd.level_index(this_cpu, target)
        if li:
            self._wake_level.add(li)
        prev = p.cpu
        llc_of = st.topo.llc_of  # the machine's LLCs (NO_MC changes the domains, not the caches)
        waker_llc = llc_of[this_cpu]
        if waker_llc != llc_of[prev]:
            self.wakeups_cross_llc += 1
            woke_llc = llc_of[target]
            if woke_llc == waker_llc:
                self.wakeups_to_waker_llc += 1
            elif woke_llc == llc_of[prev]:
                self.wakeups_to_prev_llc += 1
        rq = st.rqs[target]
        log = self.log
        if log is not None:
            # the task running on the waker's CPU: the waker, or the one a timer or interrupt found
            # there (0: the CPU was idle), as the kernel's sched_waking names its current task
            cur = waker if waker is not None else st.rqs[this_cpu].curr
            wpid = cur.pid if cur is not None else 0
            log.waking(now, this_cpu, wpid, p, prev=prev)
            if target != prev:
                log.migrate(now, this_cpu, wpid, p, orig=prev, dest=target)
            log.wakeup(now, target, rq.curr.pid if rq.curr is not None else 0, p, (via, why))
        # enqueue_entity(): update_curr() brings the target's min_vruntime to now before the
        # renormalization and place_entity() read it (prev's: see docs/kernel-audit.md)
        if rq.curr is not None:
            st.update_min_vruntime(rq)
        if target != prev:
            lv = self._count_migration(prev, target, CAUSE_WAKEUP)
            prq = st.rqs[prev]
            if prq.curr is not None:
                st.update_min_vruntime(prq)
            p.vruntime += rq.min_vruntime - prq.min_vruntime
            p.wake_penalty_ns += cost.cold_cache_ns_at(lv, p.wss_kb)
        if waker is not None:
            p.wake_penalty_ns += self._transfer_ns[li]
        # place_entity(): a sleeper gets at most half a latency period of credit
        floor = rq.min_vruntime - self._sleeper_credit_ns
        p.vruntime = max(p.vruntime, floor)
        p.woken_at = now
        p.queued_at = now
        self._enqueue(p, target, waker_cpu=this_cpu)

    def wake_at(self, time_ns: int, p: Task) -> None:
        """A timer that wakes p at time_ns (on the CPU p sleeps on)."""
        self.env.post(time_ns, NORMAL, EV_TIMER, p, None)

    def _on_timer(self, p: Task, _b: object) -> None:
        self.wake(p)

    def _enqueue(self, p: Task, cpu: int, waker_cpu: int = -1) -> None:
        st = self.st
        rq = st.rqs[cpu]
        was_idle = rq.nr_running == 0 and not rq.starting
        st.enqueue(p, cpu)
        if rq.curr is None:
            if was_idle:
                delay = self._idle_exit_ns
                if st.now - rq.idle_since >= self._deep_idle_after_ns:
                    delay = self._idle_exit_deep_ns
                    if self._llc_asleep(cpu):
                        delay += self._llc_wake_ns[cpu]
                if waker_cpu >= 0 and waker_cpu != cpu:
                    delay += self._ipi_ns[st.sd.level_index(waker_cpu, cpu)]
                if waker_cpu >= 0:
                    rq.pending_until = st.now + cost.WAKE_SELECT_RACE_NS
                    rq.pending_from = waker_cpu
                self._kick(rq, delay)
        elif (
            not rq.need_resched
            and rq.curr.vruntime + (st.now - rq.run_start) - p.vruntime > self._wakeup_gran_ns
        ):  # check_preempt_wakeup() against curr's vruntime as of now
            rq.need_resched = True
            self.env.post(self.env.now, URGENT, EV_RESCHED, rq, None)
            # the preempting wakee becomes the next buddy (NEXT_BUDDY off: only when it
            # preempts); LAST_BUDDY: the preempted task the last, with sched_nr_latency (8)
            # or more runnable here
            rq.next_buddy = p
            if rq.nr_running >= 8:
                rq.last_buddy = rq.curr
        else:
            # check_preempt_tick() at the ticks to come, with one more task runnable here
            end = self._resched_tick(rq, st.now)
            shorter = end < rq.slice_end or len(rq.queue) == 1
            if shorter:
                rq.slice_end = end
            if shorter and rq.curr is not self.stepping:
                # the first waiter: the running task now has a slice end; or an earlier one
                self._account(rq)
                self._arm(rq)

    def _resched_tick(self, rq: Rq, since: int) -> int:
        """When check_preempt_tick() reschedules rq's running task while others wait, the
        runqueue staying as it is: at the first tick at or after `since` (now, or a tick that
        passed while curr ran) at which its runtime since it was picked exceeds sched_slice()
        (its share of the latency period among the nr_running tasks, at least
        min_granularity), or it has run at least min_granularity and its vruntime is more than
        that slice past the leftmost waiting task's. Ticks come every TICK_NS (HZ=250; HRTICK
        is off by default) at multiples of it; between them only a wakeup preempts."""
        p = rq.curr
        assert p is not None
        now = self.st.now
        gran = self._min_gran_ns
        ideal = max(gran, self._latency_ns // rq.nr_running)  # sched_slice(), nice 0
        t = rq.picked_at + ideal + 1  # delta_exec > ideal_runtime
        left = rq.queue[0].vruntime  # __pick_first_entity(): the leftmost waiting task
        for q in rq.queue:
            left = min(left, q.vruntime)
        # curr's vruntime passes left + ideal at now + (left + ideal - its vruntime now), and
        # the vruntime test needs delta_exec >= min_granularity
        t2 = max(rq.picked_at + gran, left + ideal + 1 - (p.vruntime + (now - rq.run_start)) + now)
        t = max(since, min(t, t2))
        tick = self._tick_ns
        # the resched takes effect on the return from the tick's interrupt, after the
        # SCHED_SOFTIRQ balancing that tick raised: 1 ns after the tick, behind the Balancer's
        return (t + tick - 1) // tick * tick + 1

    def _llc_asleep(self, cpu: int) -> bool:
        """Every CPU of cpu's LLC idle for DEEP_IDLE_AFTER_NS or more (cost.LLC_WAKE_NS)."""
        now = self.st.now
        rqs = self.st.rqs
        deep = self._deep_idle_after_ns
        for c in self.st.sd.llc_span(cpu):
            r = rqs[c]
            if r.curr is not None or r.starting or r.idle_since < 0 or now - r.idle_since < deep:
                return False
        return True

    def _kick(self, rq: Rq, delay: int) -> None:
        rq.starting = True
        self._post_gen(rq, self.env.now + delay, EV_START)

    def _post_gen(self, rq: Rq, time_ns: int, kind: int) -> None:
        """Bump rq.gen (its events posted so far become stale: _on_cpu and _on_start ignore
        them) and post kind at time_ns with it. The last one posted, if still pending, is
        taken over (Environment.post_gen_over) rather than left on the heap to be popped and
        ignored: about 10k of the reference's 64k events were such stale ones."""
        rq.gen += 1
        old = rq.ev
        if old is not None and (old.a is not rq or old.g < 0):
            old = None  # reused since for another event
        rq.ev = self.env.post_gen_over(old, time_ns, URGENT, kind, rq, rq.gen)

    def _on_start(self, rq: Rq, gen: int) -> None:
        if gen != rq.gen:
            return
        self.st.now = self.env.now
        rq.starting = False
        if rq.curr is None:
            self._schedule(rq)

    def _on_resched(self, rq: Rq, _b: object) -> None:
        if not rq.need_resched:
            return
        rq.need_resched = False
        if rq.curr is not None and rq.queue:
            self.st.now = self.env.now
            self._account(rq)
            self._preempt(rq)

    # -- running -----------------------------------------------------------------------

    def _account(self, rq: Rq) -> None:
        p = rq.curr
        if p is None:
            return
        dt = self.env.now - rq.run_start
        if dt > 0:
            p.work_ns -= int(dt * rq.speed)
            p.sum_exec_ns += dt
            p.vruntime += dt
            p.run_since_sleep_ns += dt
            rq.busy_ns += dt
            rq.run_start = self.env.now
            self.st.update_min_vruntime(rq)  # update_curr(): min(curr, leftmost)

    def _arm(self, rq: Rq) -> None:
        p = rq.curr
        assert p is not None
        end = self.env.now + max(1, int(p.work_ns / rq.speed + 0.999))
        if rq.queue and rq.slice_end < end:
            end = max(rq.slice_end, self.env.now + 1)
        self._post_gen(rq, end, EV_CPU)

    def _sibling_speed(self, cpu: int) -> None:
        """An SMT sibling of `cpu` started or stopped running: re-time the others."""
        rqs = self.st.rqs
        for s in self.st.topo.siblings[cpu]:
            if s == cpu:
                continue
            srq = rqs[s]
            if srq.curr is None:
                continue
            speed = self._speed(s)
            if speed != srq.speed:
                self._account(srq)
                srq.speed = speed
                self._arm(srq)

    def _speed(self, cpu: int) -> float:
        return self.speeds.speed(cpu)

    def _mem(self, cpu: int, delta: int) -> None:
        """A memory-bound task starts (+1) or stops (-1) running on cpu: re-time the others
        sharing its node's bandwidth."""
        rqs = self.st.rqs
        for c in self.speeds.membound_change(cpu, delta):
            rq = rqs[c]
            speed = self.speeds.speed(c)
            if rq.curr is not None and speed != rq.speed:
                self._account(rq)
                rq.speed = speed
                self._arm(rq)

    def _on_cpu(self, rq: Rq, gen: int) -> None:
        if gen != rq.gen:
            return
        self.st.now = self.env.now
        self._account(rq)
        p = rq.curr
        assert p is not None
        if p.work_ns <= 0:
            self._step(rq, p)
        elif rq.queue:
            # the tick it was set for (1 ns before), or a later one when a waiter has left
            end = self._resched_tick(rq, min(rq.slice_end - 1, self.env.now))
            if end <= self.env.now:
                self._preempt(rq)
            else:
                rq.slice_end = end
                self._arm(rq)
        else:
            self._arm(rq)

    def _step(self, rq: Rq, p: Task) -> None:
        prog = p.program
        self.stepping = p
        if prog is not None:
            ns = prog.step(self, p)
        else:
            behavior: Behavior = p.behavior  # type: ignore[assignment]
            ns = behavior.step(self, p)
        self.stepping = None
        if ns > 0:
            p.work_ns = ns + p.wake_penalty_ns
            p.wake_penalty_ns = 0
            if rq.queue and (rq.need_resched or self.env.now >= rq.slice_end):
                end = self._resched_tick(rq, min(rq.slice_end - 1, self.env.now))
                if rq.need_resched or end <= self.env.now:
                    rq.need_resched = False
                    self._preempt(rq)
                    return
                rq.slice_end = end
            self._arm(rq)
            return
        st = self.st
        p.last_ran_ns = st.now
        self.prev_task[rq.cpu] = p
        if p.membound:
            self._mem(rq.cpu, -1)
        if ns == SLEEP:
            self.prev_state[rq.cpu] = "S"
            st.dequeue_sleep(p)
        else:
            self.prev_state[rq.cpu] = "X"
            if self.log is not None:
                self.log.exit(st.now, rq.cpu, p)
            st.set_curr(rq, None)
            clear_buddies(rq, p)
            rq.nr_running -= 1
            util_est_dequeue(rq, p)
            st.changed(rq)
            if rq.nr_running == 1:
                st.nr_overloaded -= 1
            p.state = TASK_DEAD
            st.detach(p)
            p.cpu = -1
            self.live -= 1
        rq.need_resched = False
        rq.gen += 1
        self._schedule(rq)

    def _put_back(self, rq: Rq) -> None:
        """The running task goes back to the queue (preemption, or before a push)."""
        p = rq.curr
        assert p is not None
        st = self.st
        st.set_curr(rq, None)
        if p.membound:
            self._mem(rq.cpu, -1)
        p.last_ran_ns = st.now
        p.wait_start = st.now
        rq.queue.append(p)
        rq.gen += 1
        self.prev_task[rq.cpu] = p
        self.prev_state[rq.cpu] = "R"

    def _preempt(self, rq: Rq) -> None:
        self._put_back(rq)
        self._pick(rq)

    def _schedule(self, rq: Rq) -> None:
        """curr is gone: run the next queued task, or balance, or go idle."""
        if rq.queue:
            self._pick(rq)
            return
        st = self.st
        cpu = rq.cpu
        mv, spent = newidle_balance(st, cpu, self.balancer.failed, self.balancer.newidle_unbalanced)
        dec = self.decisions
        if dec is not None:
            if mv is not None:
                dec.count_balance(NEWIDLE, st.sd.per_cpu[cpu][mv.level].name, mv.reason)
            else:
                dec.count_balance(NEWIDLE, "", NEWIDLE_NOTHING if spent else NEWIDLE_SKIPPED)
        kind = NEWIDLE
        if mv is None:
            mv = try_steal(st, cpu)
            if mv is not None:
                kind = STEAL
                spent += cost.STEAL_COST_NS
                if dec is not None:
                    dec.count_balance(STEAL, st.sd.per_cpu[cpu][mv.level].name, mv.reason)
        if mv is not None:
            self.balancer.apply(mv, CAUSE_BALANCE, kind)
            if self.prev_state[cpu] == "S":
                rq.leaving = self.prev_task[cpu]  # on_cpu until the switch to the pulled task
            self._kick(rq, spent)
            return
        # nohz_newidle_balance(): a CPU going idle for a while (avg_idle at least
        # sysctl_sched_migration_cost) once nohz.next_blocked has come (in jiffies) updates
        # the idle CPUs' blocked load itself as it enters idle (nohz_run_idle_balance())
        tick = self._tick_ns
        if rq.avg_idle >= SYSCTL_SCHED_MIGRATION_COST_NS and st.now // tick >= st.next_blocked // tick:
            st.blocked_update()
        enter_idle(rq, st.now)  # menu_select()'s choice, computed when a tick comes (kept_tick)
        rq.idle_stamp = st.now
        self.switches += 1
        if self.log is not None:
            self._log_switch(cpu, 0, idle_comm(cpu))
        self._switched_out(rq)
        self.prev_task[cpu] = None
        self.prev_state[cpu] = "R"
        llc = st.sd.llc_id[cpu]
        if not st.has_idle_cores[llc] and st.core_idle(cpu):
            st.has_idle_cores[llc] = True  # __update_idle_core()
        self._sibling_speed(cpu)

    def _pick(self, rq: Rq) -> None:
        st = self.st
        now = st.now
        q = rq.queue
        p = q[0]
        for t in q:
            if t.vruntime < p.vruntime:
                p = t
        rq.min_vruntime = max(rq.min_vruntime, p.vruntime)
        # pick_next_entity(): the next buddy, else the last, when not more than wakeup_gran
        # past the leftmost; set_next_entity() clears the one picked
        b = rq.next_buddy
        if b is not None and b.vruntime - p.vruntime <= self._wakeup_gran_ns:
            p = b
        else:
            b = rq.last_buddy
            if b is not None and b.vruntime - p.vruntime <= self._wakeup_gran_ns:
                p = b
        clear_buddies(rq, p)
        was_idle = rq.idle_since >= 0
        if was_idle:
            delta = now - rq.idle_since
            rq.avg_idle += (min(delta, 1_000_000) - rq.avg_idle) // 8
            rq.wake_avg_idle = rq.avg_idle // 2
            record_idle(rq, now)  # the governor's record, whence its next prediction
            rq.idle_since = -1
            rq.kept_ticks = 0
        st.set_curr(rq, p)
        if p.membound:
            self._mem(rq.cpu, 1)
        self.switches += 1
        if self.log is not None:
            self._log_switch(rq.cpu, p.pid, p.name)
        self._switched_out(rq)
        self.wait_ns += now - p.wait_start
        self.nr_waits += 1
        q_at = p.queued_at
        if q_at >= 0:
            self.delays.add(now - q_at)
            p.queued_at = -1
        if p.woken_at >= 0:
            samples = self.wake_latency.get(p.group)
            if samples is not None and p.woken_at >= self.latency_after[p.group]:
                samples.append(now - p.woken_at)
            p.woken_at = -1
        rq.run_start = now
        rq.picked_at = now
        rq.slice_end = self._resched_tick(rq, now) if q else now + self._latency_ns  # no waiter
        rq.speed = self._speed(rq.cpu)
        if was_idle:
            self._sibling_speed(rq.cpu)
        if p.work_ns <= 0:
            p.work_ns = 0
            p.wake_penalty_ns += self._context_switch_ns
            self._step(rq, p)
        else:
            p.work_ns += self._context_switch_ns
            self._arm(rq)

    def _switched_out(self, rq: Rq) -> None:
        """finish_task_switch(): the task that blocked here is off the CPU (on_cpu = 0); the
        wakeups that waited for it go on, as events at this instant (after the switch)."""
        if rq.leaving is None:
            return
        rq.leaving = None
        for p, waker, this_cpu, sync in rq.wake_list:
            self.env.post(self.st.now, URGENT, EV_TTWU, p, (waker, this_cpu, sync))
        rq.wake_list.clear()

    def _log_switch(self, cpu: int, next_pid: int, next_comm: str) -> None:
        assert self.log is not None
        prev = self.prev_task[cpu]
        pid, comm = (prev.pid, prev.name) if prev is not None else (0, idle_comm(cpu))
        self.log.switch(self.env.now, cpu, (pid, comm), state=self.prev_state[cpu], nxt=(next_pid, next_comm))

    # -- load balancing ----------------------------------------------------------------

    def _count_migration(self, src: int, dst: int, cause: int) -> int:
        """Count a migration from src to dst by level and by cause (an index of CAUSES);
        returns its SchedDomains.level_index for the caller's cost."""
        lvl = self.st.sd.level_index(src, dst)
        if lvl:
            self._migr_level.add(lvl)
            self._migr_cause.add(cause)
        return lvl

    # -- running and results ------------------------------------------------------------

    @property
    def migrations(self) -> dict[str, int]:
        """Migrations by level (LEVELS)."""
        return {name: self._migr_level.get(i + 1) for i, name in enumerate(LEVELS)}

    @property
    def migrations_by_cause(self) -> dict[str, int]:
        return {name: self._migr_cause.get(i) for i, name in enumerate(CAUSES)}

    @property
    def wakeups_by_level(self) -> dict[str, int]:
        """Wakeups by level between the waker's CPU and the chosen one (LEVELS)."""
        return {name: self._wake_level.get(i + 1) for i, name in enumerate(LEVELS)}

    def run(self, until_ns: int) -> None:
        # The loop makes and drops many short-lived lists and tuples and no garbage cycles
        # worth collecting: the cyclic collector's passes (traversing every task, runqueue and
        # domain again and again) are paused while it runs and restored after.
        # The loop stops at every bin boundary of the per-LLC utilization (LlcSampler), which
        # reads the runqueues there and changes nothing.
        enabled = gc.isenabled()
        gc.disable()
        env = self.env
        sampler = self.llc_util
        try:
            while True:
                b = sampler.next_boundary()
                if b >= until_ns:
                    env.run(until_ns)
                    break
                env.run(b)
                if env.stopped:
                    break
                sampler.sample(b)
            sampler.finish(env.now)
        finally:
            if enabled:
                gc.enable()
        # the runqueues nothing has reached yet: their pelt_ts as the group statistics that
        # skipped them would have left it (GroupStats.untouched)
        for rq in self.st.rqs:
            if not rq.touched:
                settle_pelt_ts(rq)

    def busy_at(self, t: int) -> int:
        """The time tasks ran on a CPU up to t, the running ones' time since they were last
        accounted included (read, not accounted: the run stays as it is)."""
        return sum(self.llc_util.busy(t))

    def counters(self, duration_ns: int) -> dict[str, object]:
        """The counters of the result JSON (issue 3 section 5); cpu_utilization counts the tasks
        still running at duration_ns (the run's end) up to it."""
        ncpu = len(self.st.cpus)
        busy = self.busy_at(duration_ns)
        return {
            "migrations": {
                "total": sum(self.migrations.values()),
                "by_level": dict(self.migrations),
                "by_cause": dict(self.migrations_by_cause),
            },
            "wakeups": {
                "total": self.wakeups,
                "affine": self.wakeups_affine,
                "by_level": dict(self.wakeups_by_level),
                "by_waker": self.wakeups_by_waker(),
            },
            "context_switches": self.switches,
            "cpu_utilization": round(busy / (ncpu * duration_ns), 6) if duration_ns > 0 else 0.0,
            "avg_wait_us": round(self.wait_ns / self.nr_waits / 1000, 3) if self.nr_waits else 0.0,
        }

    def wakeups_by_waker(self) -> dict[str, int]:
        """The wakeups by where the waker ran, in the shape of a recording's metrics
        (wakeups.by_waker): every wakeup of the model has its waker's CPU, and none finds its task
        still queued (wake() returns early for those)."""
        cross = self.wakeups_cross_llc
        return {
            "shared_llc": self.wakeups - cross,
            "cross_llc": cross,
            "to_waker_llc": self.wakeups_to_waker_llc,
            "to_prev_llc": self.wakeups_to_prev_llc,
            "elsewhere": cross - self.wakeups_to_waker_llc - self.wakeups_to_prev_llc,
            "on_waker_cpu": self.wakeups - self._wake_level.total(),
            "still_running": 0,
            "unknown": 0,
        }

    def cpu_time(self) -> dict[str, float]:
        """schedstat's two sums over every task at the run's end: the time it ran on a CPU and the
        time it waited runnable on a runqueue (run_delay; a wait ends at its switch-in), in ms,
        and the waits counted."""
        return {
            "run_ms": round(self.busy_at(self.env.now) / 1e6, 6),
            "wait_ms": round(self.wait_ns / 1e6, 6),
            "waits": self.nr_waits,
        }

    def sched_events(self) -> int:
        """Scheduler events simulated: wakeups + context switches + migrations."""
        return self.wakeups + self.switches + self._migr_level.total()
