"""Periodic load balancing driven by the tick: per CPU and domain level, at the domain's
interval (doubled while balanced up to max_interval, times busy_factor on a busy CPU), and
carrying out the moves the balance policy decides. Idle CPUs are balanced only when a busy
CPU would kick NOHZ idle balancing: some runqueue has a task waiting, or some LLC has more
than one busy CPU (nohz_balancer_kick), or at the ticks an idle CPU keeps while its
governor expects a short idle (state.kept_tick). The same kicks, and a stats kick every
LOAD_AVG_PERIOD, update the idle CPUs' blocked load (State.blocked_update)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from placemap.sim import cost
from placemap.sim.core import NORMAL
from placemap.sim.decisions import PERIODIC
from placemap.sim.policy import CAUSE_BALANCE
from placemap.sim.policy.balance import (
    CPU_IDLE,
    CPU_NOT_IDLE,
    MAX_PINNED_INTERVAL_MS,
    R_ALL_HOT_OR_PINNED,
    R_ALL_PINNED,
    R_CURR_PINNED_ALONE,
    R_NOT_BALANCE_CPU,
    Move,
    load_balance,
)
from placemap.sim.state import kept_tick

if TYPE_CHECKING:
    from placemap.sim.engine import Engine
    from placemap.sim.state import Rq


def balance_interval_ns(interval_ns: int, busy_factor: int, busy: bool, nr_cpus: int) -> int:
    """get_sd_balance_interval(): the domain's balance_interval (ms), times busy_factor on a
    busy CPU, in jiffies rounded up (msecs_to_jiffies), one jiffy less when busy ("preventing
    their balancing periods from being multiples of each other"), clamped to [1,
    max_load_balance_interval = HZ * num_online_cpus() / 10]; a jiffy is the tick."""
    ms = interval_ns // 1_000_000
    if busy:
        ms *= busy_factor
    jiffies = -(-ms * 1_000_000 // cost.TICK_NS)
    if busy:
        jiffies -= 1
    hz = 1_000_000_000 // cost.TICK_NS
    jiffies = max(1, min(jiffies, hz * nr_cpus // 10))
    return jiffies * cost.TICK_NS


class Balancer:
    """Balancing state of one run: intervals, next balance times, nr_balance_failed."""

    def __init__(self, eng: Engine) -> None:
        self.eng = eng
        per_cpu = eng.st.sd.per_cpu
        self.failed = [[0] * len(per_cpu[c]) for c in range(len(per_cpu))]
        # each domain's min_interval (ns), the interval a newly idle balance resets to: read
        # only, so the CPUs whose domains have the same weights share one row
        rows: dict[tuple[int, ...], list[int]] = {}
        self.min_interval: list[list[int]] = []
        for doms in per_cpu:
            key = tuple([d.min_interval_ms for d in doms])
            row = rows.get(key)
            if row is None:
                row = rows[key] = [ms * 1_000_000 for ms in key]
            self.min_interval.append(row)
        self.interval = [list(row) for row in self.min_interval]
        # rebalance_domains() balances a level when jiffies reach sd->last_balance plus
        # get_sd_balance_interval(sd, busy), the interval times busy_factor on a busy CPU, with
        # the CPU's busy state at that check (not at the last balance): so each level keeps
        # both due times, an idle CPU's and a busy one's, set together with last_balance
        self.due_idle = [[0] * len(doms) for doms in per_cpu]
        self.due_busy = [[0] * len(doms) for doms in per_cpu]
        self.last_balance = [[0] * len(doms) for doms in per_cpu]
        self.nr_cpus = len(eng.st.cpus)  # max_load_balance_interval's num_online_cpus()
        self.ticking = False

    def start(self) -> None:
        if not self.ticking:
            self.ticking = True
            env = self.eng.env
            # the next jiffy: scheduler_tick(), which raises the SCHED_SOFTIRQ balance, comes on
            # the jiffy grid (multiples of TICK_NS from the run's time 0, skew_tick=0), the grid
            # of the engine's check_preempt_tick(); not TICK_NS after the first task's start
            tick = cost.TICK_NS
            env.schedule((env.now // tick + 1) * tick, NORMAL, self._on_tick, None, None)

    def apply(self, m: Move, cause: int, kind: str) -> None:
        """Carry out a move: a queued task changes runqueue; a running one (active balance)
        is preempted first. `kind`: the balance that decided it (periodic, newidle, steal), for
        the reason a log keeps."""
        eng = self.eng
        st = eng.st
        p = m.task
        src = st.rqs[m.src]
        # an active push of the running task preempts it first (the stopper runs there); one
        # of a queued task (detach_one_task() took it before the running one) does not
        preempt = m.active and src.curr is p
        if m.active and not preempt and p.cpu != m.src:
            return
        if preempt:
            eng._account(src)
            eng._put_back(src)
        if eng.log is not None:
            cur = st.rqs[m.dst].curr
            why = (f"{kind} balance at {st.sd.per_cpu[m.dst][m.level].name}", m.reason)
            eng.log.migrate(
                st.now, m.dst, cur.pid if cur is not None else 0, p, orig=m.src, dest=m.dst, why=why
            )
        st.move_queued(p, m.dst)
        pen = cost.cold_cache_ns_at(eng._count_migration(m.src, m.dst, cause), p.wss_kb)
        if p.work_ns > 0:
            p.work_ns += pen
        else:
            p.wake_penalty_ns += pen
        if preempt:
            eng._schedule(src)

    def newidle_unbalanced(self, cpu: int, level: int) -> None:
        """A newly idle load_balance() of cpu's domain `level` moved a task or failed to: its
        "We were unbalanced, so reset the balancing interval" is before `goto out` for every
        balance type (only out_balanced's tuning up is skipped for CPU_NEWLY_IDLE), so
        balance_interval is min_interval again and the periodic balance, due at last_balance
        plus the interval, may come sooner."""
        # Only called for a level whose Rq.lb_tuned bit is set (newidle_balance), i.e. whose
        # interval is above min_interval: at min_interval every writer keeps each due time at
        # most last_balance plus that interval, idle or busy (the tick sets them together; this
        # method only lowers them), so the reset would change nothing (most of the reference
        # run's resets)
        iv = self.min_interval[cpu][level]
        self.interval[cpu][level] = iv
        self.eng.st.rqs[cpu].lb_tuned &= ~(1 << level)
        last = self.last_balance[cpu][level]
        idle_iv, busy_iv = self._intervals(cpu, level, iv)
        self.due_idle[cpu][level] = min(self.due_idle[cpu][level], last + idle_iv)
        self.due_busy[cpu][level] = min(self.due_busy[cpu][level], last + busy_iv)

    def force_due(self, cpu: int, level: int) -> None:
        """Make cpu's balance at `level` due now, whether the CPU is idle or busy (tests)."""
        self.due_idle[cpu][level] = 0
        self.due_busy[cpu][level] = 0

    def _set_due(self, cpu: int, level: int, now: int) -> None:
        """The level was balanced (or passed over) at `now`: sd->last_balance = jiffies, and
        the next due times with the level's interval as it is now."""
        idle_iv, busy_iv = self._intervals(cpu, level, self.interval[cpu][level])
        self.last_balance[cpu][level] = now
        self.due_idle[cpu][level] = now + idle_iv
        self.due_busy[cpu][level] = now + busy_iv

    def _intervals(self, cpu: int, level: int, iv: int) -> tuple[int, int]:
        """get_sd_balance_interval() of the level with balance_interval `iv`, for an idle CPU
        and for a busy one (ns)."""
        bf = self.eng.st.sd.per_cpu[cpu][level].busy_factor
        n = self.nr_cpus
        return balance_interval_ns(iv, bf, False, n), balance_interval_ns(iv, bf, True, n)

    @staticmethod
    def _tuned(rq: Rq, level: int, above_min: bool) -> None:
        """Rq.lb_tuned's bit of the level after the tick set its interval."""
        if above_min:
            rq.lb_tuned |= 1 << level
        else:
            rq.lb_tuned &= ~(1 << level)

    def _llc_has_busy_pair(self) -> bool:
        """nohz_balancer_kick(): an LLC with more than one busy CPU has load idle CPUs elsewhere
        could take (sd_llc_shared->nr_busy_cpus > 1)."""
        rqs = self.eng.st.rqs
        for span in self.eng.st.sd.llc_spans:
            busy = 0
            for c in span:
                if rqs[c].nr_running:
                    busy += 1
                    if busy > 1:
                        return True
        return False

    def _stats_kick(self, kick: bool) -> bool:
        """nohz_balancer_kick() at this tick's busy CPUs: NOHZ_STATS_KICK, the idle CPUs'
        blocked load updated, when nohz.next_blocked has passed (time_after(): strictly,
        in jiffies) or with a balance kick (NOHZ_BALANCE_KICK comes with NOHZ_STATS_KICK),
        which needs `kick` and an idle CPU due for a balance (nohz.next_balance). Simplified:
        nohz.has_blocked taken as set (a fully decayed CPU's update changes nothing), and the
        update made at the tick itself, before the tick's balances (the ILB runs it once the
        busy CPU's IPI reaches it, microseconds later)."""
        st = self.eng.st
        now = st.now
        rqs = st.rqs
        if now > st.next_blocked:
            return any(rq.nr_running or rq.starting for rq in rqs)  # a busy CPU ticks and kicks
        if not kick:
            return False
        for cpu in st.cpus:
            rq = rqs[cpu]
            nb = self.due_idle[cpu]  # (empty for a CPU without domains)
            if rq.nr_running == 0 and not rq.starting and nb and min(nb) <= now:
                return True
        return False

    def _on_tick(self, _a: object, _b: object) -> None:
        eng = self.eng
        st = eng.st
        now = st.now = eng.env.now
        if eng.live == 0:
            self.ticking = False
            return
        kick = st.nr_overloaded > 0 or self._llc_has_busy_pair()
        if self._stats_kick(kick):
            st.blocked_update()
        dec = eng.decisions
        for cpu in st.cpus:
            rq = st.rqs[cpu]
            idle = rq.nr_running == 0 and not rq.starting
            if idle and not kick and kept_tick(rq, now) != now:
                continue  # tickless: balanced only by a NOHZ kick
            due_idle = self.due_idle[cpu]
            due_busy = self.due_busy[cpu]
            iv = self.interval[cpu]
            mins = self.min_interval[cpu]
            for level, sd in enumerate(st.sd.per_cpu[cpu]):
                if now < (due_idle[level] if idle else due_busy[level]):
                    continue
                moves, why = load_balance(st, cpu, level, CPU_IDLE if idle else CPU_NOT_IDLE, self.failed)
                if dec is not None:
                    dec.count_balance(PERIODIC, sd.name, why)
                if why == R_NOT_BALANCE_CPU:
                    # should_we_balance() failed: load_balance() goes to out_balanced (this
                    # level's interval tuned up) and clears continue_balancing, so
                    # rebalance_domains() walks no higher: the levels above keep their
                    # last_balance, interval and nr_balance_failed, due again next tick
                    iv[level] = min(iv[level] * 2, sd.max_interval_ms * 1_000_000)
                    self._set_due(cpu, level, now)
                    self._tuned(rq, level, iv[level] != mins[level])
                    break
                if moves or why == R_ALL_HOT_OR_PINNED:
                    # unbalanced (moved, or failed to): back to the shortest interval
                    iv[level] = sd.min_interval_ms * 1_000_000
                    for m in moves:
                        self.apply(m, CAUSE_BALANCE, PERIODIC)
                        if m.dst != cpu:
                            # LBF_DST_PINNED: attached to another CPU of the local group,
                            # which an idle one leaves idle for (attach_task()'s
                            # check_preempt_curr() of its idle task)
                            to = st.rqs[m.dst]
                            if to.curr is None and not to.starting:
                                eng._kick(to, cost.IDLE_EXIT_NS)
                    if moves and idle and rq.curr is None and not rq.starting and rq.nr_running:
                        eng._kick(rq, cost.IDLE_EXIT_NS)
                    if moves and not moves[0].active:
                        # rebalance_domains(): after a pull (ld_moved > 0) the CPU's state is
                        # read again, idle_cpu() false with tasks queued, so the levels above
                        # balance as CPU_NOT_IDLE and this one's next interval is the busy one
                        # (an active push is carried out later by the stopper: ld_moved 0;
                        # moves only to another CPU of the group leave this one idle)
                        idle = rq.nr_running == 0
                elif why in {R_ALL_PINNED, R_CURR_PINNED_ALONE}:
                    # every task pinned (LBF_ALL_PINNED still set at out_all_pinned or
                    # out_one_pinned): back off up to MAX_PINNED_INTERVAL
                    cap = max(sd.max_interval_ms, MAX_PINNED_INTERVAL_MS) * 1_000_000
                    if iv[level] < cap:
                        iv[level] *= 2
                else:  # balanced: tune the interval up
                    iv[level] = min(iv[level] * 2, sd.max_interval_ms * 1_000_000)
                self._set_due(cpu, level, now)
                self._tuned(rq, level, iv[level] != mins[level])
        eng.env.schedule(now + cost.TICK_NS, NORMAL, self._on_tick, None, None)
