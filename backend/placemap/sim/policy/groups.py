"""Sched group statistics shared by the fork slow path (update_sg_wakeup_stats) and load
balancing (update_sg_lb_stats), with group_classify()'s has_spare < fully_busy < overloaded.
A CPU's utilization is cpu_util_cfs()'s: with UTIL_EST, the runnable tasks' estimate when higher."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from placemap.sim.cost import TICK_NS
from placemap.sim.state import Rq, State, Task, governor_kept_ticks, task_util_est

if TYPE_CHECKING:
    from mypy_extensions import i64  # compiled, native ints (see core.py); annotations only

GROUP_HAS_SPARE: Final = 0
GROUP_FULLY_BUSY: Final = 1
GROUP_OVERLOADED: Final = 2
MM_FOOTPRINT_OVERLOAD_FACTOR: Final = 4  # an LLC is overloaded past 4x its size in resident footprint


class GroupStats:
    """update_sg_wakeup_stats() for one group."""

    __slots__ = (
        "at_pct",
        "at_tick",
        "at_untouched",
        "avg_load",
        "cpus",
        "footprint",
        "group_type",
        "idle_cpus",
        "load",
        "nr_running",
        "untouched",
        "util",
    )

    def __init__(
        self,
        st: State,
        cpus: tuple[int, ...],
        rqs: list[Rq],
        p: Task | None,
        imbalance_pct: int,
        *,
        footprint: bool,
    ) -> None:
        self.cpus = cpus
        self.idle_cpus = self.nr_running = self.group_type = self.footprint = 0
        self.load = self.util = self.avg_load = 0.0
        # the tick (the jiffy's start) and imbalance_pct of the last compute without a task and
        # footprint, while no runqueue of the group has changed since and no blocked-load
        # update has come (at_tick -1: none; State.changed, State.blocked_update)
        self.at_tick: i64 = -1
        self.at_pct = 0
        # how many of the group's runqueues State.changed has not seen yet (load_balance's
        # statistics, registered in Rq.group_stats; 0, no shortcut, for the others)
        self.untouched: i64 = 0
        # the blocked-load update time to which the loop would have brought those (all
        # idle) when it last skipped them (their pelt_ts; see settle_pelt_ts)
        self.at_untouched: i64 = 0
        self.compute(st, cpus, rqs, p, imbalance_pct, footprint=footprint)

    def compute(
        self,
        st: State,
        cpus: tuple[int, ...],
        rqs: list[Rq],
        p: Task | None,
        imbalance_pct: int,
        *,
        footprint: bool,
    ) -> None:
        """(Re)compute every field for the group of `cpus`, whose runqueues are `rqs` (in the
        same order; State.group_rqs). load_balance keeps one per group (State.group_stats):
        asked again within the same tick while none of the group's runqueues changed since and
        no NOHZ blocked-load update came (State.changed and State.blocked_update reset
        at_tick), the fields it holds are the ones the computation would give, and every
        runqueue of the group is at the time State.seen gives already (no PELT update
        skipped): what the kernel reads of a runqueue changes only at its own updates, at a
        tick while it runs, and at a blocked-load update while it is idle."""
        cacheable = p is None and not footprint
        now = st.now
        tick_t: i64 = now - now % TICK_NS
        if cacheable and self.at_tick == tick_t and self.at_pct == imbalance_pct and self.cpus is cpus:
            return
        # (an if statement: compiled, the conditional expression of an i64 and an int boxed
        # the time into an int object)
        if cacheable:
            self.at_tick = tick_t
        else:
            self.at_tick = -1
        self.at_pct = imbalance_pct
        self.cpus = cpus
        w = len(cpus)
        if cacheable and self.untouched == w:
            # no runqueue of the group has ever had a task: each is idle with util, util_est
            # and load 0.0, which PELT would keep at 0.0, so the loop below would give these
            # (the other node's group of a NUMA domain while its CPUs have run nothing); only
            # their pelt_ts stays behind, brought up by settle_pelt_ts
            self.at_untouched = st.blocked_ts
            self.idle_cpus = w
            self.nr_running = 0
            self.load = self.util = self.avg_load = 0.0
            self.group_type = GROUP_HAS_SPARE
            self.footprint = 0
            return
        idle: i64 = 0
        nr: i64 = 0
        load = util = 0.0
        # each runqueue's averages as the kernel reads them (State.seen, inlined): as of the
        # last tick on a busy CPU, of the last NOHZ blocked-load update or the tick it kept on
        # an idle one
        blocked_t: i64 = st.blocked_ts
        for rq in rqs:
            if rq.curr is not None:
                if rq.pelt_ts < tick_t:
                    st.pelt_to(rq, tick_t)
            else:
                t = blocked_t
                k = rq.kept_ticks
                if k != 0:  # state.kept_tick()
                    t1: i64 = rq.kept_from
                    if tick_t >= t1:
                        if k < 0:
                            k = rq.kept_ticks = governor_kept_ticks(rq)
                        if k > 0:
                            last: i64 = t1 + (k - 1) * TICK_NS
                            t1 = tick_t if tick_t < last else last
                            t = t1 if t1 > t else t  # (not max(): compiled, that boxes the i64s)
                if rq.pelt_ts < t:
                    st.pelt_to(rq, t)
            n = rq.nr_running
            # cpu_util_cfs(): UTIL_EST, the util_est of the runnable tasks when higher
            # (cpu_util_without(): not counting p's own estimate)
            u = rq.util_est
            if p is not None and rq.curr is p:
                n -= 1
                u -= task_util_est(p)
            u = max(u, rq.util)
            nr += n
            if n == 0:
                idle += 1
            load += rq.load
            util += u if u < 1024.0 else 1024.0
        cap = 1024 * w
        self.idle_cpus = idle
        self.nr_running = nr
        self.load = load
        self.util = util
        if nr > w and (cap * 100 < util * imbalance_pct or cap * imbalance_pct < load * 100):
            self.group_type = GROUP_OVERLOADED
        elif nr < w or (cap * imbalance_pct >= load * 100 and cap * 100 > util * imbalance_pct):
            self.group_type = GROUP_HAS_SPARE
        else:
            self.group_type = GROUP_FULLY_BUSY
        self.avg_load = load * 1024 / cap if self.group_type != GROUP_HAS_SPARE else 0.0
        self.footprint = 0
        if footprint:
            members = set(cpus)
            self.footprint = sum(t.footprint_kb for t in st.tasks if t.cpu in members and t is not p)
            if idle == 0 or self.footprint > MM_FOOTPRINT_OVERLOAD_FACTOR * cache_kb(st, cpus):
                self.group_type = GROUP_OVERLOADED
                self.avg_load = load * 1024 / cap


def cache_kb(st: State, cpus: tuple[int, ...]) -> int:
    """Total LLC size of the LLCs that the CPUs belong to."""
    llcs = {st.topo.llc_of[c] for c in cpus}
    return sum(st.topo.llc_size_kb[i] for i in llcs)
