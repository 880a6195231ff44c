"""Scheduler state the policies read: per-CPU runqueues, per-task PELT-like averages, idle
tracking and the per-LLC shared state (has_idle_cores, nr_idle_scan).

Units follow the kernel: utilization and load on the 0..1024 scale (SCHED_CAPACITY_SCALE),
times in nanoseconds. Averages decay as PELT does (y^32 = 1/2 over periods of 1024 x 1024 ns), computed
in closed form at each update rather than per 1 ms period; see `decay`.

Per-CPU `util` and `load` are the CPU's own running / runnable signals plus the tasks attached
to it (a migrating task carries its averages with it, as attach/detach_entity_load_avg do).
Blocked tasks thus keep weighing on their last CPU while they decay, like the kernel's
blocked load.

What the policies read is what the kernel would read: a CPU's averages as of the kernel's last
update of them (`State.seen`), not brought to now. The kernel updates a runqueue's averages at
its enqueues, dequeues and switches (the model's mutators do the same: `State.pelt`), at every
tick while a task runs there (entity_tick(); ticks at multiples of TICK_NS), at the ticks an
idle CPU keeps while its governor expects a short idle (`kept_tick`), and, for a tickless
idle CPU, only when a NOHZ blocked-load update walks the idle CPUs (`State.blocked_update`:
update_nohz_stats() from a NOHZ stats or balance kick, at most every LOAD_AVG_PERIOD unless a
balance kick comes sooner). Since v5.13 (0826530de3cb) load_balance()'s group statistics no
longer update idle CPUs' blocked load themselves; they read it stale, as do wake_affine_weight(),
find_idlest_group()/find_idlest_cpu(), SIS_UTIL's scan budget and post_init_entity_util_avg().

Objects here are long-lived (one per task and CPU); the event loop creates none per event.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING, Final

from placemap.sim.cost import TICK_NS
from placemap.sim.domains import SchedDomains
from placemap.sim.features import Features
from placemap.sim.topology import Topology

if TYPE_CHECKING:
    # i64: compiled, a native 64-bit int (no tag test, no overflow path); interpreted,
    # annotations only (as in core.py)
    from mypy_extensions import i64

    from placemap.sim.core import Event
    from placemap.sim.engine import Program
    from placemap.sim.policy.groups import GroupStats

SCHED_CAPACITY_SCALE: Final = 1024
NICE_0_LOAD: Final = 1024
PELT_HALFLIFE_NS: Final = 32 * 1024 * 1024  # 32 periods of 1024 x 1024 ns (pelt.c: delta >>= 10)
_K: Final = math.log(2) / PELT_HALFLIFE_NS
# LOAD_AVG_PERIOD (32) ms, msecs_to_jiffies()'d: the least time between two NOHZ blocked-load
# updates that only a stats kick asks for (nohz.next_blocked)
LOAD_AVG_PERIOD_NS: Final = -(-32_000_000 // TICK_NS) * TICK_NS

# Task states
TASK_NEW: Final = 0
TASK_RUNNABLE: Final = 1  # queued or running
TASK_SLEEPING: Final = 2
TASK_DEAD: Final = 3
TASK_WAKING: Final = 4  # woken while still on_cpu where it slept: the wakeup waits for the switch-out


def decay(dt_ns: int) -> float:
    """PELT decay factor over dt_ns."""
    return math.exp(-_K * dt_ns)


@lru_cache(maxsize=16)
def _domains(topo: Topology, no_mc: bool) -> SchedDomains:
    """Domains are immutable once built; runs on one topology share them."""
    return SchedDomains(topo, no_mc=no_mc)


UTIL_EST_MARGIN: Final = SCHED_CAPACITY_SCALE // 100  # 10, C integer division: within 1%, skip


def task_util_est(p: Task) -> float:
    """_task_util_est(): max(ewma, enqueued)."""
    return p.ue_ewma if p.ue_ewma > p.ue_enqueued else p.ue_enqueued


def cpu_util_cfs(rq: Rq) -> float:
    """cpu_util_cfs() of a runqueue whose averages are current: its utilization or, when
    higher, the util_est of its runnable tasks (UTIL_EST), capped at its capacity."""
    u = rq.util if rq.util > rq.util_est else rq.util_est
    return u if u < 1024.0 else 1024.0


def util_est_dequeue(rq: Rq, p: Task) -> None:
    """util_est_dequeue(): p's estimate leaves the runnable sum (p's estimate has not changed
    since it was added: util_est_update() runs after this, on a sleep only)."""
    u = rq.util_est - task_util_est(p)
    rq.util_est = u if u > 0.0 else 0.0


def util_est_update(p: Task) -> None:
    """util_est_update() when p sleeps (v6.0, UTIL_EST_FASTUP on): the util at dequeue becomes
    `enqueued`; the moving average jumps up to it, or moves 1/4 of the way down unless both
    are within 1% of it (then nothing changes at all)."""
    last_enqueued = p.ue_enqueued
    u = p.util
    if p.ue_ewma < u:
        p.ue_enqueued = u
        p.ue_ewma = u
        return
    if abs(u - p.ue_ewma) < UTIL_EST_MARGIN:  # within_margin(): strictly inside
        if abs(last_enqueued - u) >= UTIL_EST_MARGIN:
            p.ue_enqueued = u
        return
    p.ue_enqueued = u
    p.ue_ewma += (u - p.ue_ewma) / 4


def clear_buddies(rq: Rq, p: Task) -> None:
    """clear_buddies(): p is no longer rq's next or last buddy."""
    if rq.next_buddy is p:
        rq.next_buddy = None
    if rq.last_buddy is p:
        rq.last_buddy = None


def settle_pelt_ts(rq: Rq) -> None:
    """The pelt_ts of a runqueue State.changed has not seen yet as it would be had every
    GroupStats.compute brought it to now (the value only: its averages are 0.0 either way):
    for the state after a run, and before its first change (State.changed)."""
    for gs in rq.group_stats:
        rq.pelt_ts = max(rq.pelt_ts, gs.at_untouched)


# The menu idle governor's repeating-pattern predictor (drivers/cpuidle/governors/menu.c):
# the last INTERVALS idle periods of a CPU, in microseconds; a period ended by the tick while
# the governor had kept it counts as 9/10 of MAX_INTERESTING (50 ms) ("assume that the CPU
# could have been idle long (but not forever)"); NO_TYPICAL_US is get_typical_interval()'s
# UINT_MAX, no pattern found
MENU_INTERVALS: Final = 8
TICK_WAKEUP_US: Final = 45_000
NO_TYPICAL_US: Final = (1 << 32) - 1
# A CPU's record before the run: long idle periods of different lengths (100-170 ms), as a
# quiet machine's CPUs leave them, each ended by some timer. Distinct, so that a few short
# periods among them break no pattern: the outlier rule drops the longest one at a time and
# gives up below 3/4 of the samples (eight equal long ones would all be dropped at once,
# leaving the first short period alone as a "pattern")
QUIET_IDLE_US: Final = (100_000, 110_000, 120_000, 130_000, 140_000, 150_000, 160_000, 170_000)


def typical_interval_us(intervals: list[int]) -> int:
    """menu.c's get_typical_interval(): the average of the recorded idle periods when their
    spread is small (variance at most 400 us^2, or the average above six standard deviations
    with at least 3/4 of the samples kept), after dropping the largest ones while more than
    3/4 remain; else NO_TYPICAL_US. Integer arithmetic as the kernel's (the sum shifted by 3
    for all eight samples, else divided)."""
    thresh = NO_TYPICAL_US
    while True:
        total = 0
        divisor = 0
        hi = 0
        for v in intervals:
            if v <= thresh:
                total += v
                divisor += 1
                hi = max(hi, v)
        if hi == 0:
            return NO_TYPICAL_US
        avg = total >> 3 if divisor == MENU_INTERVALS else total // divisor
        variance = 0
        for v in intervals:
            if v <= thresh:
                d = v - avg
                variance += d * d
        variance = variance >> 3 if divisor == MENU_INTERVALS else variance // divisor
        if (avg * avg > variance * 36 and divisor * 4 >= MENU_INTERVALS * 3) or variance <= 400:
            return avg
        if divisor * 4 <= MENU_INTERVALS * 3:
            return NO_TYPICAL_US
        thresh = hi - 1


def governor_kept_ticks(rq: Rq) -> i64:
    """How many ticks an idle CPU keeps from now on, as menu_select() decides on entering
    idle and again after each kept tick wakes it: the tick is kept while the predicted idle
    period is shorter than a tick (predicted_ns < TICK_NSEC), the prediction being the typical
    interval of the CPU's recorded idle periods (the timer-based one, the next timer event
    scaled by the bucket's correction factor, taken as longer than a tick: simplified); each
    kept tick that finds the CPU idle records a long period (TICK_WAKEUP_US), all of them
    equal, so that the outlier rule drops them together: a regular pattern of short idles
    (standard deviation at most 20 us) keeps the tick until all eight periods are such ticks,
    an irregular one until fewer than six short ones are left."""
    hist = rq.idle_hist
    tick_us = TICK_NS // 1000
    if typical_interval_us(hist) >= tick_us:
        return 0
    tmp = list(hist)
    at = rq.idle_hist_at
    k: i64 = 1
    while k < MENU_INTERVALS:
        tmp[at] = TICK_WAKEUP_US
        at = (at + 1) % MENU_INTERVALS
        if typical_interval_us(tmp) >= tick_us:
            break
        k += 1
    return k


def record_idle(rq: Rq, now: i64) -> None:
    """menu_update() for an idle period ending now (rq.idle_since its start): one long
    period per kept tick that woke the CPU, then the measured rest (the exit latency not
    deducted: simplified)."""
    start = rq.idle_since
    first = rq.kept_from
    if first <= now:
        k = rq.kept_ticks
        if k < 0:
            k = rq.kept_ticks = governor_kept_ticks(rq)
        woke: i64 = 0
        while woke < k and first + woke * TICK_NS <= now:
            rq.idle_hist[rq.idle_hist_at] = TICK_WAKEUP_US
            rq.idle_hist_at = (rq.idle_hist_at + 1) % MENU_INTERVALS
            woke += 1
        if woke > 0:
            start = first + (woke - 1) * TICK_NS
    rq.idle_hist[rq.idle_hist_at] = min((now - start) // 1000, NO_TYPICAL_US)
    rq.idle_hist_at = (rq.idle_hist_at + 1) % MENU_INTERVALS


def enter_idle(rq: Rq, now: i64) -> None:
    """The CPU goes idle now: the governor's choice (kept_ticks) is left to be computed when
    the first tick after now (kept_from) comes, if the CPU is still idle then."""
    rq.idle_since = now
    rq.kept_from = (now // TICK_NS + 1) * TICK_NS
    rq.kept_ticks = -1


def kept_tick(rq: Rq, now: i64) -> i64:
    """The last tick at or before `now` that an idle CPU kept, or -1 (none yet, or it stopped
    the tick on entering idle). The governor keeps `Rq.kept_ticks` ticks from the first after
    the CPU went idle (governor_kept_ticks; decided on entering idle from the record as it
    was then, computed here only once an idle period reaches a tick: most end before one);
    each that finds the CPU still idle runs its own balance softirq (run_rebalance_domains():
    update_blocked_averages() and rebalance_domains(CPU_IDLE), the lowest level being due
    every jiffy on an idle CPU)."""
    k = rq.kept_ticks
    if k == 0:
        return -1
    first = rq.kept_from
    t = now - now % TICK_NS
    if t < first:
        return -1
    if k < 0:
        k = rq.kept_ticks = governor_kept_ticks(rq)
        if k == 0:
            return -1
    last = first + (k - 1) * TICK_NS
    return t if t < last else last


class Task:
    """One simulated task (a thread). Mutable, slotted; owned by State.tasks."""

    __slots__ = (
        "avg_run_ns",
        "behavior",
        "burst_ns",
        "cpu",
        "cpus_allowed",
        "exec_start",
        "footprint_kb",
        "group",
        "hints",
        "last_ran_ns",
        "last_wakee",
        "load",
        "membound",
        "name",
        "nvcsw",
        "pelt_ts",
        "pid",
        "program",
        "queued_at",
        "recent_used_cpu",
        "run_since_sleep_ns",
        "state",
        "sum_exec_ns",
        "ue_enqueued",
        "ue_ewma",
        "util",
        "vruntime",
        "wait_start",
        "wake_penalty_ns",
        "wakee_flip_decay_ns",
        "wakee_flips",
        "woken_at",
        "work_ns",
        "wss_kb",
    )

    def __init__(self, pid: int, name: str, group: int = 0, hints: int = 0) -> None:
        self.pid = pid
        self.name = name
        self.group = group
        self.hints = hints
        self.cpu = -1
        self.recent_used_cpu = -1
        self.state = TASK_NEW
        self.util = 0.0
        # util_est (v5.1+, UTIL_EST with UTIL_EST_FASTUP on in v6.0): the task's util at its
        # last dequeue for sleep, and a moving average of it that follows increases at once
        self.ue_enqueued = 0.0
        self.ue_ewma = 0.0
        self.load = 0.0
        self.pelt_ts = 0
        self.vruntime = 0
        self.exec_start = 0
        self.last_ran_ns = -(10**12)
        self.sum_exec_ns = 0
        self.nvcsw = 0
        self.run_since_sleep_ns = 0
        self.avg_run_ns = 0  # average run per voluntary switch (SIS_SHORT's "short task")
        self.wakee_flips = 0
        self.wakee_flip_decay_ns = 0
        self.last_wakee: Task | None = None
        self.footprint_kb = 0
        self.membound = False  # its work is limited by memory bandwidth (cost.mem_speed)
        self.wss_kb = 256  # cache working set refilled after a migration (cost.cold_cache_ns)
        self.cpus_allowed: frozenset[int] | None = None
        self.work_ns = 0  # CPU work left in the current burst, at full speed
        self.burst_ns = 0
        self.wake_penalty_ns = 0
        self.wait_start = 0
        self.woken_at = -1  # time of the pending wakeup (for wakeup latency), -1 when none
        # time of the wakeup (or wakeup_new) row it waits to run after, -1 when none: the run-queue
        # delay (latency.DelayHistogram); schbench's woken_at is its wake loop's stamp instead
        self.queued_at: i64 = -1
        self.behavior: object = None
        # the behavior again when it is an engine.Program: typed, so that compiled, the engine
        # calls its step directly without an isinstance test per burst (Engine._step)
        self.program: Program | None = None

    def allowed(self, cpu: int) -> bool:
        return self.cpus_allowed is None or cpu in self.cpus_allowed

    def __repr__(self) -> str:
        return f"<Task {self.pid} {self.name} cpu={self.cpu}>"


class Rq:
    """One CPU's runqueue: `curr` plus `queue` (runnable, not running)."""

    __slots__ = (
        "avg_idle",
        "busy_ns",
        "cpu",
        "curr",
        "ev",
        "gen",
        "group_stats",
        "idle_hist",
        "idle_hist_at",
        "idle_since",
        "idle_stamp",
        "kept_from",
        "kept_ticks",
        "last_buddy",
        "lb_tuned",
        "leaving",
        "load",
        "min_vruntime",
        "need_resched",
        "next_buddy",
        "nr_running",
        "pelt_ts",
        "pending_from",
        "pending_until",
        "picked_at",
        "queue",
        "run_start",
        "slice_end",
        "speed",
        "starting",
        "touched",
        "util",
        "util_est",
        "wake_avg_idle",
        "wake_list",
        "wake_stamp",
    )

    def __init__(self, cpu: int) -> None:
        self.cpu = cpu
        self.curr: Task | None = None
        self.queue: list[Task] = []
        # i64: the group statistics read both for every runqueue of a group (GroupStats.compute)
        self.nr_running: i64 = 0
        self.busy_ns: i64 = 0  # time a task ran here (Engine._account; read by utilization.LlcSampler)
        # a wakeup that chose this idle CPU: until pending_until its ttwu_pending is not yet
        # set, so a select_task_rq() running on another CPU than pending_from (the waker's)
        # still reads the CPU as idle (State.idle_cpu, cost.WAKE_SELECT_RACE_NS)
        self.pending_until: i64 = 0
        self.pending_from: i64 = -1
        self.util = 0.0
        self.util_est = 0.0  # cfs_rq->avg.util_est.enqueued: util_est of the runnable tasks
        self.load = 0.0
        self.pelt_ts: i64 = 0
        self.idle_stamp = 0
        self.avg_idle = 1_000_000  # ns; rq->avg_idle starts at 2 * sysctl_sched_migration_cost
        # SIS_PROP's budget (94aafc3ee31d): half of avg_idle at each idle exit, halved per jiffy
        # while the CPU stays busy (wake_stamp: the jiffy aged up to) and less each scan's time
        self.wake_avg_idle: i64 = 1_000_000
        self.wake_stamp: i64 = 0
        self.min_vruntime = 0
        # cfs_rq->next and cfs_rq->last: the wakee that preempted curr, and (8+ runnable) the
        # task it preempted; pick_next_entity() prefers them over the leftmost within
        # wakeup_gran, set_next_entity() and dequeue_entity() clear them (clear_buddies())
        self.next_buddy: Task | None = None
        self.last_buddy: Task | None = None
        self.gen = 0  # bumps whenever a scheduled event of this CPU becomes stale
        # the last event posted with gen (compiled layout; Engine._post_gen): stale once gen
        # has moved on, and then taken over by the next such post while still pending
        self.ev: Event | None = None
        self.run_start = 0
        self.picked_at = 0  # when curr was picked: its slice counts from here
        self.slice_end = 0
        self.speed = 1.0
        self.starting = False  # a task is about to start here (idle exit or balance cost)
        self.need_resched = False
        self.idle_since = 0  # -1 while not idle
        # the idle governor's record of the CPU's last idle periods (us; record_idle), the
        # next slot, and the ticks it keeps in the current idle period from kept_from on
        # (enter_idle, governor_kept_ticks, kept_tick; -1: not computed yet); before the run
        # the CPUs were long idle, their ticks stopped (QUIET_IDLE_US)
        self.idle_hist: list[int] = list(QUIET_IDLE_US)
        self.idle_hist_at: i64 = 0
        self.kept_ticks: i64 = 0  # 0 also while the CPU runs
        self.kept_from: i64 = 0
        # the Balancer's: bit L set while this CPU's balance interval at domain level L is
        # above its min_interval (a newly idle balance that moved or failed resets it; at
        # min_interval the reset changes nothing: newidle_balance reads this, the runqueue
        # being at hand, instead of the Balancer's tables)
        self.lb_tuned = 0
        # the task that blocked here and is still on_cpu (newidle balancing before the switch),
        # and the wakeups of it that wait for its switch-out: (wakee, waker, waker's CPU, sync)
        self.leaving: Task | None = None
        self.wake_list: list[tuple[Task, Task | None, int, bool]] = []
        # the load_balance statistics (GroupStats) of the groups this CPU belongs to, made so
        # far: State.changed marks them stale
        self.group_stats: list[GroupStats] = []
        # State.changed has been called for it: until then nothing has run or been queued
        # here and its averages are 0.0, which PELT keeps at 0.0 (GroupStats.untouched)
        self.touched = False


class State:
    """The scheduler's view of the machine at time `now` (ns)."""

    def __init__(self, topo: Topology, features: Features | None = None) -> None:
        self.topo = topo
        self.features = features or Features()
        self.sd = _domains(topo, self.features.NO_MC)
        self.now: i64 = 0
        self.rqs = [Rq(c) for c in range(topo.nr_cpus)]
        # per sched group (SchedDomains.group_cpus), its CPUs' runqueues: the group statistics
        # walk these instead of indexing rqs by CPU number
        self.group_rqs: list[list[Rq]] = [[self.rqs[c] for c in g] for g in self.sd.group_cpus]
        self.cpus = topo.cpus
        n_llc = len(self.sd.llc_spans)
        # sched_domain_shared of each LLC: all CPUs start idle, so every LLC has an idle core.
        self.has_idle_cores = [True] * n_llc
        self.nr_idle_scan = [len(s) for s in self.sd.llc_spans]
        self.avg_scan_cost_ns = [0] * n_llc
        self.tasks: list[Task] = []
        self.smt_weight = max(len(topo.siblings[c]) for c in self.cpus)
        self.nr_overloaded = 0  # CPUs with nr_running > 1 (the root domain's overload flag)
        # rd->overload: set by add_nr_running() when a runqueue reaches 2 runnable tasks, cleared
        # only by update_sd_lb_stats() of a balance at the top domain (no runqueue there with 2+);
        # newidle_balance() gives up while it is clear. Sticky, unlike nr_overloaded
        self.rd_overload = False
        # the last decay computed, by its interval: the CPUs a balance pass brings to now
        # were mostly last brought up to date together (by the pass before), so consecutive
        # ones often decay over the same interval; exp() of the same argument is the same
        # double, so reusing it changes no result
        self._decay_dt: i64 = 0
        self._decay_y = 1.0
        # the last NOHZ blocked-load update (update_nohz_stats() of every idle CPU): an idle
        # CPU's averages, as the policies read them, are as of then or of its own last update,
        # whichever is later (seen); and nohz.next_blocked, before which only a balance kick
        # updates them again
        self.blocked_ts: i64 = 0
        self.next_blocked: i64 = 0
        # load_balance()'s policy.groups.GroupStats: one per sched group (by SchedDomains
        # group id), recomputed in place rather than allocated per call, and the ones of the
        # domain being balanced, in group order
        self.group_stats: list[GroupStats | None] = [None] * len(self.sd.group_cpus)
        self.lb_stats: list[GroupStats] = []
        # select_idle_cpu()'s idle-core scans, numbered: per CPU, the number of the last scan
        # that skips it (its core scanned already)
        self.scan_no = 0
        self.selecting_from = -1  # the waker's CPU while a wakeup's select_task_rq() runs
        # the CPUs the idle scans of the wakeup being selected checked (cost.SIS_SCAN_COST_PER_CPU_NS
        # each: the waker's time, Engine._ttwu)
        self.scan_checked: i64 = 0
        self.scan_mark = [0] * topo.nr_cpus

    # -- queries the policies use --------------------------------------------------------

    def idle_cpu(self, cpu: int) -> bool:
        """available_idle_cpu(): nothing running or queued; during a wakeup's selection
        (selecting_from, the waker's CPU) also a CPU that another CPU's wakeup chose too
        recently for its ttwu_pending to show (the select_task_rq()/ttwu_queue race)."""
        rq = self.rqs[cpu]
        n = rq.nr_running
        return n == 0 or (
            n == 1
            and self.now < rq.pending_until
            and self.selecting_from >= 0
            and rq.pending_from != self.selecting_from
        )

    def core_idle(self, cpu: int) -> bool:
        return all(self.idle_cpu(s) for s in self.topo.siblings[cpu])

    def pelt(self, rq: Rq) -> None:
        """Bring the CPU's running/runnable averages to now (an update the kernel makes: an
        enqueue, dequeue or switch on it)."""
        self.pelt_to(rq, self.now)

    def pelt_to(self, rq: Rq, t: i64) -> None:
        """Bring the CPU's averages to time t (nothing has changed on it since rq.pelt_ts)."""
        dt = t - rq.pelt_ts
        if dt > 0:
            if dt != self._decay_dt:
                self._decay_dt = dt
                self._decay_y = math.exp(-_K * float(dt))  # float(): exact, dt < 2**53
            y = self._decay_y
            gain = 1024.0 * (1.0 - y)
            rq.util = rq.util * y + (gain if rq.curr is not None else 0.0)
            rq.load = rq.load * y + gain * float(rq.nr_running)
            rq.pelt_ts = t

    def seen(self, rq: Rq) -> None:
        """Bring the CPU's averages to the kernel's last update of them, which is what its
        readers see: a CPU running a task updates them at every tick (entity_tick()), an idle
        one at a NOHZ blocked-load update (blocked_ts) and at the ticks it may keep
        (kept_tick); both at their own enqueues, dequeues and switches (pelt_ts). Nothing has
        changed on it since pelt_ts, so whether it ran then is whether it runs now."""
        now = self.now
        if rq.curr is not None:
            t = now - now % TICK_NS
        else:
            t = self.blocked_ts
            t1 = kept_tick(rq, now)
            t = t1 if t1 > t else t
        if t > rq.pelt_ts:
            self.pelt_to(rq, t)

    def blocked_update(self) -> None:
        """A NOHZ blocked-load update (_nohz_idle_balance() with NOHZ_STATS_KICK): every idle
        CPU's averages brought to now (update_nohz_stats()), and nohz.next_blocked set
        LOAD_AVG_PERIOD after the current jiffy. The group statistics computed before it are
        stale (GroupStats.at_tick)."""
        now = self.now
        if self.blocked_ts != now:
            self.blocked_ts = now
            for gs in self.group_stats:
                if gs is not None:
                    gs.at_tick = -1
        self.next_blocked = now - now % TICK_NS + LOAD_AVG_PERIOD_NS  # jiffies + 8

    def cpu_util(self, cpu: int) -> float:
        """cpu_util_cfs() of the CPU as the kernel reads it (seen)."""
        rq = self.rqs[cpu]
        self.seen(rq)
        return cpu_util_cfs(rq)

    def cpu_load(self, cpu: int) -> float:
        """cpu_load(): the CPU's load_avg as the kernel reads it (seen)."""
        rq = self.rqs[cpu]
        self.seen(rq)
        return rq.load

    def update_task(self, p: Task) -> None:
        """Bring p's averages to now (running / runnable / sleeping since p.pelt_ts)."""
        dt = self.now - p.pelt_ts
        if dt > 0:
            if dt != self._decay_dt:
                self._decay_dt = dt
                self._decay_y = math.exp(-_K * float(dt))  # float(): exact, dt < 2**53
            y = self._decay_y
            gain = 1024.0 * (1.0 - y)
            runnable = p.state == TASK_RUNNABLE
            running = runnable and p.cpu >= 0 and self.rqs[p.cpu].curr is p
            p.util = p.util * y + (gain if running else 0.0)
            p.load = p.load * y + (gain if runnable else 0.0)
            p.pelt_ts = self.now

    def task_util(self, p: Task) -> float:
        self.update_task(p)
        return p.util

    def is_short(self, p: Task | None, threshold_ns: int) -> bool:
        """SIS_SHORT: average run per voluntary switch at most threshold (and ever measured)."""
        return p is not None and p.nvcsw > 0 and p.avg_run_ns <= threshold_ns

    def llc_util(self, llc: int) -> float:
        return sum(self.cpu_util(c) for c in self.sd.llc_spans[llc])

    # -- mutators the engine uses ------------------------------------------------------

    def changed(self, rq: Rq) -> None:
        """rq's nr_running, curr, util_est, util or load is about to change (other than by a
        PELT update): the statistics of its groups computed since its last change are stale
        (GroupStats.at_tick)."""
        if not rq.touched:
            settle_pelt_ts(rq)  # (its caller brought it to now already)
            rq.touched = True
            for gs in rq.group_stats:
                gs.untouched -= 1
        for gs in rq.group_stats:
            gs.at_tick = -1

    def attach(self, p: Task, cpu: int) -> None:
        """p's averages join cpu (fork placement, or a wakeup/balance migration)."""
        rq = self.rqs[cpu]
        self.pelt(rq)
        self.changed(rq)
        rq.util = min(1024.0, rq.util + p.util)
        rq.load += p.load
        p.cpu = cpu

    def detach(self, p: Task) -> None:
        if p.cpu < 0:
            return
        rq = self.rqs[p.cpu]
        self.pelt(rq)
        self.changed(rq)
        rq.util = max(0.0, rq.util - p.util)
        rq.load = max(0.0, rq.load - p.load)

    def enqueue(self, p: Task, cpu: int) -> None:
        """p becomes runnable on cpu (queued; the engine decides whether it runs now)."""
        rq = self.rqs[cpu]
        self.update_task(p)
        self.pelt(rq)
        if p.cpu != cpu:
            self.detach(p)
            self.attach(p, cpu)
        p.state = TASK_RUNNABLE
        self.changed(rq)
        rq.queue.append(p)
        rq.nr_running += 1
        rq.util_est += task_util_est(p)  # util_est_enqueue()
        if rq.nr_running == 2:
            self.nr_overloaded += 1
            self.rd_overload = True  # add_nr_running()
        p.wait_start = self.now

    def dequeue_sleep(self, p: Task) -> None:
        """The running task p blocks (voluntary switch)."""
        rq = self.rqs[p.cpu]
        self.update_task(p)
        self.pelt(rq)
        p.state = TASK_SLEEPING
        self.changed(rq)
        clear_buddies(rq, p)
        rq.curr = None
        rq.nr_running -= 1
        util_est_dequeue(rq, p)
        util_est_update(p)
        if rq.nr_running == 1:
            self.nr_overloaded -= 1
        p.nvcsw += 1
        # Chen Yu's SIS_SHORT: average duration per voluntary switch (1/8 EWMA like update_avg)
        p.avg_run_ns += (p.run_since_sleep_ns - p.avg_run_ns) // 8
        p.run_since_sleep_ns = 0

    def set_curr(self, rq: Rq, p: Task | None) -> None:
        self.pelt(rq)
        self.changed(rq)
        if rq.curr is not None:
            self.update_task(rq.curr)
        if p is not None:
            self.update_task(p)
            rq.queue.remove(p)
        rq.curr = p

    def update_min_vruntime(self, rq: Rq) -> None:
        """update_min_vruntime() as update_curr() runs it: the running task's vruntime brought to
        now (it has run since rq.run_start) or the leftmost queued one, whichever is smaller, and
        min_vruntime never moves back. The kernel runs update_curr() at every enqueue, dequeue,
        pick and tick, before it reads min_vruntime."""
        curr = rq.curr
        if curr is not None:
            v = curr.vruntime
            if self.now > rq.run_start:
                v += self.now - rq.run_start
        elif rq.queue:
            v = rq.queue[0].vruntime
        else:
            return
        for t in rq.queue:
            v = min(v, t.vruntime)
        rq.min_vruntime = max(rq.min_vruntime, v)

    def move_queued(self, p: Task, dst: int) -> None:
        """Load balancing: move a queued (not running) task to dst."""
        src = self.rqs[p.cpu]
        self.update_task(p)
        self.pelt(src)
        self.changed(src)
        if src.curr is not None:
            self.update_min_vruntime(src)  # dequeue_entity(): update_curr() before the renormalization
        src.queue.remove(p)
        clear_buddies(src, p)
        src.nr_running -= 1
        util_est_dequeue(src, p)
        if src.nr_running == 1:
            self.nr_overloaded -= 1
        self.detach(p)
        self.attach(p, dst)
        rq = self.rqs[dst]
        self.pelt(rq)
        self.changed(rq)
        if rq.curr is not None:
            self.update_min_vruntime(rq)  # enqueue_entity(): update_curr() before adding min_vruntime
        rq.queue.append(p)
        rq.nr_running += 1
        rq.util_est += task_util_est(p)
        if rq.nr_running == 2:
            self.nr_overloaded += 1
            self.rd_overload = True  # add_nr_running()
        # keep relative vruntime across queues (dequeue_entity / enqueue_entity renormalize)
        p.vruntime = p.vruntime - src.min_vruntime + rq.min_vruntime
