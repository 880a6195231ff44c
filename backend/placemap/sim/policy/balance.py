"""Load balancing: periodic load_balance() per domain level (should_we_balance,
find_busiest_group, calculate_imbalance with the NUMA allowance, find_busiest_queue,
detach_tasks with can_migrate_task's cache-hot check, active balance after repeated
failures), newly idle balancing (newidle_balance) and Sistare's STEAL.

Functions decide and return the moves; the engine carries them out (so a running task's
migration, which needs a preemption, stays the engine's business).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from placemap.sim.cost import newidle_lb_cost_ns
from placemap.sim.domains import (
    SD_BALANCE_NEWIDLE,
    SD_NUMA,
    SD_PREFER_SIBLING,
    SD_SHARE_CPUCAPACITY,
    SD_SHARE_LLC,
)
from placemap.sim.features import HINT_WAKE_AFFINE, HINT_WAKE_HOLD
from placemap.sim.policy.groups import GROUP_FULLY_BUSY, GROUP_HAS_SPARE, GROUP_OVERLOADED, GroupStats
from placemap.sim.policy.wakeup import update_idle_cpu_scan
from placemap.sim.state import State, Task, cpu_util_cfs, task_util_est

CPU_IDLE: Final = 0
CPU_NOT_IDLE: Final = 1
CPU_NEWLY_IDLE: Final = 2

SYSCTL_SCHED_MIGRATION_COST_NS: Final = 500_000  # task_hot()
SYSCTL_SCHED_NR_MIGRATE: Final = 32
# A balance that finds every task pinned backs its interval off up to this (ms), beyond the
# domain's max_interval (MAX_PINNED_INTERVAL in fair.c).
MAX_PINNED_INTERVAL_MS: Final = 512
NUMA_IMBALANCE_MIN: Final = 2
# The hints that keep a task on its LLC against the balancer while the LLC has room (RFC:
# "Load balancer is aware of the hints and will try to not migrate a task as long as the LLC
# is not overloaded"). The RFC's patch 5/5 ("sched/fair: Add exception for hints in load
# balancing path") tests only the wakeup hints in can_migrate_task: "Only consider the hints
# from the wakeup path to maintain data locality" (PR_SCHED_HINT_WAKE_AFFINE |
# PR_SCHED_HINT_WAKE_HOLD). The fork hints act at fork only; the balancer moves their tasks as
# it moves anyone's.
HOLDING_HINTS: Final = HINT_WAKE_AFFINE | HINT_WAKE_HOLD

MIGRATE_TASK: Final = 0
MIGRATE_UTIL: Final = 1
MIGRATE_LOAD: Final = 2

R_NOT_BALANCE_CPU: Final = "another CPU of the local group balances this domain"
R_NO_BUSIEST: Final = "no busier group"
R_BALANCED: Final = "balanced"
R_NUMA_ALLOWED: Final = "NUMA imbalance allowed (imb_numa_nr)"
R_MOVED: Final = "pulled from the busiest runqueue of the busiest group"
R_ALL_HOT_OR_PINNED: Final = "every candidate cache hot, pinned, running or hinted"
R_ALL_PINNED: Final = "every task of the busiest runqueue barred from this CPU (affinity or a holding hint)"
R_CURR_PINNED_ALONE: Final = "the busiest runqueue's only task may not run on this CPU: no active balance"
R_CURR_PINNED: Final = "every candidate cache hot; the running task may not run here: no active balance"
R_ACTIVE: Final = "active balance: pushed the running task after repeated failures"
R_STEAL: Final = "stole a queued task from an overloaded CPU of the LLC (STEAL)"
R_NEWIDLE: Final = "newly idle balance pulled a task"


class Move:
    """One task to move from src to dst (a plain class, not a NamedTuple: see Decision)."""

    __slots__ = ("active", "dst", "level", "reason", "src", "task")

    def __init__(self, task: Task, src: int, dst: int, level: int, active: bool, reason: str) -> None:  # noqa: PLR0917 - positional, as the NamedTuple was
        self.task = task
        self.src = src
        self.dst = dst
        self.level = level  # index of the domain in dst's chain
        self.active = active  # the task is running on src (needs a push)
        self.reason = reason

    def __repr__(self) -> str:
        return f"Move({self.task!r}, {self.src} -> {self.dst}, level {self.level}, active={self.active})"


def llc_has_capacity(st: State, cpu: int) -> bool:
    """An LLC not overloaded: no more runnable tasks than CPUs."""
    span = st.sd.llc_span(cpu)
    rqs = st.rqs
    return sum(rqs[c].nr_running for c in span) <= len(span)


def task_hot(st: State, p: Task, sd_flags: int) -> bool:
    """task_hot(): ran within sysctl_sched_migration_cost; SMT siblings share the cache."""
    if sd_flags & SD_SHARE_CPUCAPACITY:
        return False
    return st.now - p.last_ran_ns < SYSCTL_SCHED_MIGRATION_COST_NS


def hint_holds(st: State, p: Task, src: int, dst: int, *, active: bool = False) -> bool:
    """The RFC's balancer respects a holding hint on a move across LLCs (a load_balance() at
    a domain above sd_llc) while the source LLC runs no more tasks than it has CPUs
    (env.ignore_hint = 0). The active balance stopper (active_load_balance_cpu_stop) sets
    ignore_hint = sd->flags & SD_SHARE_PKG_RESOURCES without looking at the LLC: above the
    LLC it never pushes a hinted running task."""
    if not p.hints & HOLDING_HINTS or st.sd.share_cache(src, dst):
        return False
    return active or llc_has_capacity(st, src)


def can_migrate_task(
    st: State, p: Task, src: int, dst: int, *, sd_flags: int, failed: int, nice_tries: int
) -> bool:
    rq = st.rqs[src]
    if not p.allowed(dst) or rq.curr is p:
        return False
    if hint_holds(st, p, src, dst):
        return False
    return not task_hot(st, p, sd_flags) or failed > nice_tries


def adjust_numa_imbalance(imbalance: int, dst_running: int, imb_numa_nr: int) -> int:
    if dst_running > imb_numa_nr:
        return imbalance
    return 0 if imbalance <= NUMA_IMBALANCE_MIN else imbalance


def _pick_busiest(g: GroupStats, busiest: GroupStats | None) -> bool:
    """update_sd_pick_busiest()."""
    if g.nr_running == 0:
        return False
    if busiest is None:
        return True
    if g.group_type != busiest.group_type:
        return g.group_type > busiest.group_type
    if g.group_type == GROUP_FULLY_BUSY:
        # update_sg_lb_stats() computes avg_load for an overloaded group only, so two fully
        # busy groups compare 0 <= 0 and the first stays ("XXX for now avg_load is not
        # computed and always 0 so we select the 1st one"); GroupStats computes it for
        # fully busy groups too, as update_sg_wakeup_stats() does
        return False
    if g.group_type == GROUP_OVERLOADED:
        return g.avg_load > busiest.avg_load
    if g.idle_cpus != busiest.idle_cpus:
        return g.idle_cpus < busiest.idle_cpus
    return g.nr_running > busiest.nr_running


def calculate_imbalance(
    st: State,
    level: int,
    cpu: int,
    *,
    local: GroupStats,
    busiest: GroupStats,
    total_load: float,
    total_cap: int,
    idle: int,
) -> tuple[int, float]:
    """(migration type, imbalance) as calculate_imbalance() computes them."""
    sd = st.sd.per_cpu[cpu][level]
    child_prefers_sibling = level > 0 and bool(st.sd.per_cpu[cpu][level - 1].flags & SD_PREFER_SIBLING)
    if local.group_type == GROUP_HAS_SPARE:
        if busiest.group_type > GROUP_FULLY_BUSY and not sd.flags & SD_SHARE_LLC:
            cap = 1024 * len(local.cpus)
            imb = max(cap, local.util) - local.util
            if idle != CPU_NOT_IDLE and imb < 1:
                return MIGRATE_TASK, 1
            return MIGRATE_UTIL, imb
        if len(busiest.cpus) == 1 or child_prefers_sibling:
            imbalance = max(0, busiest.nr_running - local.nr_running)
        else:
            imbalance = max(0, local.idle_cpus - busiest.idle_cpus)
        if sd.flags & SD_NUMA:
            if st.features.NUMA_IMB_LEGACY:
                # v5.16: allowed while the busiest group runs fewer than 25% of its CPUs
                if busiest.nr_running < len(busiest.cpus) >> 2:
                    imbalance = 0 if imbalance <= NUMA_IMBALANCE_MIN else imbalance
            else:
                imbalance = adjust_numa_imbalance(imbalance, local.nr_running + 1, sd.imb_numa_nr)
        return MIGRATE_TASK, imbalance >> 1
    # local fully busy or overloaded: even out the average load
    local_avg = local.load * 1024 / (1024 * len(local.cpus))
    busiest_avg = busiest.load * 1024 / (1024 * len(busiest.cpus))
    sds_avg = total_load * 1024 / total_cap
    if local.group_type < GROUP_OVERLOADED and local_avg >= busiest_avg:
        return MIGRATE_LOAD, 0.0  # v5.7's "local group is more loaded than the selected busiest"
    # min() of two unsigned differences, one of which may wrap to ~2^64, so that min() takes the
    # other: v6.0 (until 6.4's 91dcf1e8068e, "Fix imbalance overflow") has no exit for a fully
    # busy local group above the domain's average, and then pulls up to the busiest group's
    # excess over it. Never both: local_avg < busiest_avg here (an overloaded local group left
    # find_busiest_group() at or above either average), so one above the average puts the other
    # below it.
    to_avg = (busiest_avg - sds_avg) * len(busiest.cpus)
    from_avg = (sds_avg - local_avg) * len(local.cpus)
    if to_avg < 0.0:
        return MIGRATE_LOAD, from_avg
    return MIGRATE_LOAD, to_avg if from_avg < 0.0 else min(to_avg, from_avg)


def load_balance(
    st: State, cpu: int, level: int, idle: int, failed: list[list[int]]
) -> tuple[list[Move], str]:
    """One load_balance() of `cpu` at domain `level`; `failed` is nr_balance_failed[cpu][level]."""
    sd = st.sd.per_cpu[cpu][level]
    groups = sd.groups
    if idle != CPU_NEWLY_IDLE:
        local_cpus = groups[0]
        first_idle = next((c for c in local_cpus if st.rqs[c].nr_running == 0), -1)
        if (first_idle if first_idle >= 0 else local_cpus[0]) != cpu:
            return _balanced(failed, cpu, level, R_NOT_BALANCE_CPU)
    if idle != CPU_NEWLY_IDLE and st.features.SIS_UTIL and level == st.sd.llc_index[cpu]:
        update_idle_cpu_scan(st, st.sd.llc_id[cpu])  # update_sd_lb_stats() at the LLC domain
    # update_sd_lb_stats(): each group's statistics, into the State's GroupStats of the group
    # (not recomputed when nothing changed since they were computed at this instant)
    stats = st.lb_stats
    pct = sd.imbalance_pct
    ng = len(groups)
    gids = sd.group_ids
    group_rqs = st.group_rqs
    group_stats = st.group_stats
    for i in range(ng):
        gid = gids[i]
        grq = group_rqs[gid]
        cached = group_stats[gid]
        if cached is None:
            gs: GroupStats = GroupStats(st, groups[i], grq, None, pct, footprint=False)
            group_stats[gid] = gs
            for rq in grq:
                rq.group_stats.append(gs)  # State.changed marks it stale
                if not rq.touched:
                    gs.untouched += 1
        else:
            gs = cached
            gs.compute(st, groups[i], grq, None, pct, footprint=False)
        if i < len(stats):
            stats[i] = gs
        else:
            stats.append(gs)
    if level == len(st.sd.per_cpu[cpu]) - 1:
        _top_overload(st, gids, None)
    moves, why, pinned = _find_and_pull(st, cpu, level, idle, failed, stats=stats, excluded=None)
    if pinned < 0:
        return moves, why
    return _redo(st, cpu, level, idle, failed, pinned=pinned)


def _redo(
    st: State, cpu: int, level: int, idle: int, failed: list[list[int]], *, pinned: int
) -> tuple[list[Move], str]:
    """load_balance()'s `goto redo` after LBF_ALL_PINNED: every task of the busiest runqueue
    `pinned` was barred from this CPU (affinity, or a holding hint, which the RFC tests before
    the flag is cleared), so that CPU leaves env->cpus and the balance starts again on the
    others, while some CPU outside the local group is left (`!cpumask_subset(cpus,
    env.dst_grpmask)`). update_sg_lb_stats() then sums only the CPUs of env->cpus, with each
    group's full weight and capacity; find_busiest_queue() skips the cleared ones. The flag
    stays set through the passes that find nothing (out_balanced), so such an end is
    out_all_pinned's: the failures reset and the interval backed off up to
    MAX_PINNED_INTERVAL (R_ALL_PINNED)."""
    sd = st.sd.per_cpu[cpu][level]
    local_cpus = sd.groups[0]
    excluded = {pinned}
    top = level == len(st.sd.per_cpu[cpu]) - 1
    for _ in sd.span:  # each pass clears one more CPU: at most one per CPU of the span
        if all(c in excluded or c in local_cpus for c in sd.span):
            break
        stats: list[GroupStats] = []
        for i, gid in enumerate(sd.group_ids):
            grq = st.group_rqs[gid]
            kept = [rq for rq in grq if rq.cpu not in excluded]
            if len(kept) == len(grq):
                cached = st.group_stats[gid]  # computed by the first pass, at this instant
                assert cached is not None
                stats.append(cached)
            else:
                stats.append(GroupStats(st, sd.groups[i], kept, None, sd.imbalance_pct, footprint=False))
        if top:
            _top_overload(st, sd.group_ids, excluded)
        moves, why, pinned = _find_and_pull(st, cpu, level, idle, failed, stats=stats, excluded=excluded)
        if pinned < 0:
            if not moves and why in {R_NO_BUSIEST, R_BALANCED, R_NUMA_ALLOWED}:
                return _balanced(failed, cpu, level, R_ALL_PINNED)  # out_balanced, flag still set
            return moves, why
        excluded.add(pinned)
    return _balanced(failed, cpu, level, R_ALL_PINNED)


def _top_overload(st: State, gids: tuple[int, ...], excluded: set[int] | None) -> None:
    """update_sd_lb_stats() at the top domain (!env->sd->parent) writes rd->overload from
    update_sg_lb_stats()' SG_OVERLOAD: a runqueue of env->cpus (the span, less the CPUs a
    redo cleared) with more than one task."""
    group_rqs = st.group_rqs
    st.rd_overload = any(
        rq.nr_running > 1 for g in gids for rq in group_rqs[g] if excluded is None or rq.cpu not in excluded
    )


def _find_and_pull(
    st: State,
    cpu: int,
    level: int,
    idle: int,
    failed: list[list[int]],
    *,
    stats: list[GroupStats],
    excluded: set[int] | None,
) -> tuple[list[Move], str, int]:
    """One pass of load_balance() from find_busiest_group() on, over the group statistics
    `stats` (the local group first), the CPUs in `excluded` left out (a redo): (moves, reason,
    -1), or ([], R_ALL_PINNED, the busiest CPU) when every task of the busiest runqueue is
    barred from this CPU (LBF_ALL_PINNED: the caller redoes the balance without it)."""
    sd = st.sd.per_cpu[cpu][level]
    ng = len(sd.groups)
    gids = sd.group_ids
    group_rqs = st.group_rqs
    local: GroupStats = stats[0]
    busiest: GroupStats | None = None
    bi = 0
    for i in range(1, ng):
        gs = stats[i]
        if _pick_busiest(gs, busiest):
            busiest = gs
            bi = i
    if busiest is None:
        return _out(failed, cpu, level, R_NO_BUSIEST)
    if local.group_type > busiest.group_type:
        return _out(failed, cpu, level, R_BALANCED)
    # sum() of the loads in group order: the same additions from 0.0 (Python 3.11's sum of
    # floats adds them in order, uncompensated)
    total_load = 0.0
    total_w = 0
    for i in range(ng):
        gs = stats[i]
        total_load += gs.load
        total_w += len(gs.cpus)
    total_cap = 1024 * total_w
    if local.group_type == GROUP_OVERLOADED:
        l_avg, b_avg = local.load / len(local.cpus), busiest.load / len(busiest.cpus)
        if l_avg >= b_avg or l_avg * 1024 >= total_load * 1024 * 1024 / total_cap:
            return _out(failed, cpu, level, R_BALANCED)
        if 100 * b_avg <= sd.imbalance_pct * l_avg:
            return _out(failed, cpu, level, R_BALANCED)
    prefer_sibling = level > 0 and bool(st.sd.per_cpu[cpu][level - 1].flags & SD_PREFER_SIBLING)
    forced = (
        prefer_sibling and local.group_type == GROUP_HAS_SPARE and busiest.nr_running > local.nr_running + 1
    )
    if not forced and busiest.group_type != GROUP_OVERLOADED:
        if idle == CPU_NOT_IDLE:
            return _out(failed, cpu, level, R_BALANCED)
        if len(busiest.cpus) > 1 and local.idle_cpus <= busiest.idle_cpus + 1:
            return _out(failed, cpu, level, R_BALANCED)
        if busiest.nr_running <= 1:
            return _out(failed, cpu, level, R_BALANCED)
    mtype, imbalance = calculate_imbalance(
        st, level, cpu, local=local, busiest=busiest, total_load=total_load, total_cap=total_cap, idle=idle
    )
    if imbalance <= 0:
        return _out(failed, cpu, level, R_NUMA_ALLOWED if sd.flags & SD_NUMA else R_BALANCED)
    # find_busiest_queue(): cpu_load() / cpu_util() of the busiest group's runqueues, read
    # directly: the group's statistics, computed or kept within this tick, brought each to the
    # time the kernel reads (State.seen would change nothing). A runqueue without a task is
    # never the busiest; the first with the strictly highest value above 0 is.
    src = -1
    best = 0.0
    for rq in group_rqs[gids[bi]]:
        nr = rq.nr_running
        if nr == 0 or (excluded is not None and rq.cpu in excluded):
            continue
        if mtype == MIGRATE_LOAD:
            v = rq.load
            # one task whose load exceeds the imbalance: leave it, unless the CPU's capacity
            # is reduced by RT/IRQ time (check_cpu_capacity()), which the model has none of
            if nr == 1 and v > imbalance:
                continue
        elif mtype == MIGRATE_UTIL:
            if nr <= 1:
                continue
            v = cpu_util_cfs(rq)
        else:
            v = float(nr)
        if v > best:
            best, src = v, rq.cpu
    if src < 0:
        return _out(failed, cpu, level, R_BALANCED)
    rqs = st.rqs
    nf = failed[cpu][level]
    moves: list[Move] = []
    src_rq = rqs[src]
    nr_left = src_rq.nr_running
    # detach_tasks() toward dst (this CPU, then a CPU of the local group its pinned tasks may
    # run on: LBF_DST_PINNED); `tried` holds the earlier destinations, cleared from env->cpus
    dst = cpu
    new_dst = -1
    tried: list[int] | None = None
    queue = src_rq.queue[:SYSCTL_SCHED_NR_MIGRATE]  # a copy; nothing here changes the queue
    while True:
        for p in queue:
            if idle != CPU_NOT_IDLE and nr_left <= 1:
                break
            allowed = p.cpus_allowed
            if allowed is not None and dst not in allowed:
                # can_migrate_task(): LBF_SOME_PINNED, and (not for a newly idle balance, once
                # per pass) the first CPU of the local group still in env->cpus that p may run
                # on becomes new_dst_cpu (LBF_DST_PINNED)
                if new_dst < 0 and idle != CPU_NEWLY_IDLE:
                    for c in sd.groups[0]:
                        if c in allowed and (tried is None or c not in tried):
                            new_dst = c
                            break
                continue
            if not can_migrate_task(
                st, p, src, dst, sd_flags=sd.flags, failed=nf, nice_tries=sd.cache_nice_tries
            ):
                continue
            if mtype == MIGRATE_LOAD:
                # shr_bound(load, nr_balance_failed): shifted right by the failures, at most 63
                load = max(1.0, p.load) / (1 << min(nf, 63))
                if load > imbalance:
                    continue
                imbalance -= max(1.0, p.load)
            elif mtype == MIGRATE_UTIL:
                # detach_tasks(): task_util_est(), max(util_avg, _task_util_est())
                est = task_util_est(p)
                util = p.util if p.util > est else est
                if util > imbalance:
                    continue
                imbalance -= util
            else:
                imbalance -= 1
            moves.append(Move(p, src, dst, level, False, R_MOVED))
            nr_left -= 1
            if idle == CPU_NEWLY_IDLE or imbalance <= 0:
                break
        if new_dst < 0 or imbalance <= 0:
            break
        # "Revisit (affine) tasks on src_cpu that couldn't be moved to us and move them to an
        # alternate dst_cpu in our sched_group": the same busiest runqueue, the next destination
        tried = [dst] if tried is None else [*tried, dst]
        dst = new_dst
        new_dst = -1
        queue = [p for p in queue if all(m.task is not p for m in moves)]
    if moves:
        failed[cpu][level] = 0
        return moves, R_MOVED, -1
    # every destination tried: this CPU, or (LBF_DST_PINNED) tried, which starts with it, and dst
    if src_rq.nr_running > 1 and (
        _all_pinned(st, src_rq.curr, src_rq.queue, src, cpu)
        if tried is None
        else all(_all_pinned(st, src_rq.curr, src_rq.queue, src, d) for d in [*tried, dst])
    ):
        # detach_tasks() walks the runqueue's tasks, the running one included, and
        # LBF_ALL_PINNED stays set while each is barred from each destination tried (the RFC
        # puts its hint test before the flag is cleared): load_balance() then redoes the
        # balance without this runqueue (_redo)
        return _NO_MOVES, R_ALL_PINNED, src
    # Only periodic balances count a failure, but need_active_balance() is asked after newly
    # idle ones too: a newly idle CPU pushes once the periodic failures passed the threshold
    if idle != CPU_NEWLY_IDLE:
        nf += 1
        failed[cpu][level] = nf
    curr = src_rq.curr
    # need_active_balance(): imbalanced_active_balance()
    if mtype == MIGRATE_TASK and nf > sd.cache_nice_tries + 2 and curr is not None:
        if not curr.allowed(cpu):
            # "Don't kick the active_load_balance_cpu_stop, if the curr task on busiest CPU
            # can't be moved to this_cpu": out_one_pinned, the failure counted and kept; the
            # interval is tuned up, past max_interval up to MAX_PINNED_INTERVAL while
            # LBF_ALL_PINNED is still set (set before the detach, which a lone task skips)
            return _NO_MOVES, R_CURR_PINNED_ALONE if src_rq.nr_running == 1 else R_CURR_PINNED, -1
        # active_load_balance_cpu_stop() on the busiest CPU, whatever this CPU runs:
        # detach_one_task() walks cfs_tasks from the tail, the longest queued first and the
        # running task (preempted by the stopper, picked last) at the end, and takes the first
        # that may run here and that no hint holds (the RFC's ignore_hint only within the
        # LLC), cache hotness ignored (LBF_ACTIVE_LB). The engine carries the push out at once
        # (Balancer.apply), and the stopper, having pushed, resets the domain's failure
        # counter ("Active balancing done, reset the failure counter", v5.13 23fb06d9602b,
        # which only dropped the cache_nice_tries+1 write made when the stopper is kicked):
        # the next push needs cache_nice_tries + 3 failed balances again, not one
        for p in [*src_rq.queue, curr]:
            if p.allowed(cpu) and not hint_holds(st, p, src, cpu, active=True):
                failed[cpu][level] = 0
                return [Move(p, src, cpu, level, True, R_ACTIVE)], R_ACTIVE, -1
    return _NO_MOVES, R_ALL_HOT_OR_PINNED, -1


# The moves of a balance that moves nothing: one list for all of them (callers only read it).
_NO_MOVES: Final[list[Move]] = []


def _balanced(failed: list[list[int]], cpu: int, level: int, why: str) -> tuple[list[Move], str]:
    """load_balance()'s out_balanced / out_all_pinned: nothing to do here, so the domain's
    nr_balance_failed starts again from 0 (newly idle balances included)."""
    failed[cpu][level] = 0
    return _NO_MOVES, why


def _out(failed: list[list[int]], cpu: int, level: int, why: str) -> tuple[list[Move], str, int]:
    """_balanced() within a pass of load_balance()."""
    failed[cpu][level] = 0
    return _NO_MOVES, why, -1


def _all_pinned(st: State, curr: Task | None, queue: list[Task], src: int, dst: int) -> bool:
    """Every task of src (the first sysctl_sched_nr_migrate queued, then the running one) is
    barred from dst by its affinity or held there by a hint."""
    for i in range(min(len(queue), SYSCTL_SCHED_NR_MIGRATE)):
        p = queue[i]
        if p.allowed(dst) and not hint_holds(st, p, src, dst):
            return False
    return curr is None or not curr.allowed(dst) or hint_holds(st, curr, src, dst)


def steal_enabled(st: State) -> bool:
    return st.features.STEAL and st.topo.nr_nodes <= st.features.steal_node_limit


def try_steal(st: State, cpu: int) -> Move | None:
    """STEAL: one queued task from an overloaded CPU (nr_running > 1) of this CPU's LLC."""
    if not steal_enabled(st):
        return None
    span = st.sd.llc_span(cpu)
    i = span.index(cpu)
    rqs = st.rqs
    for src in span[i + 1 :] + span[:i]:
        rq = rqs[src]
        if rq.nr_running <= 1:
            continue
        for p in rq.queue:
            if p.allowed(cpu):
                return Move(p, src, cpu, st.sd.llc_index[cpu], False, R_STEAL)
    return None


def newidle_balance(
    st: State, cpu: int, failed: list[list[int]], unbalanced: Callable[[int, int], None] | None = None
) -> tuple[Move | None, int]:
    """newidle_balance(): bottom-up while the expected idle time covers the cost so far plus the
    level's cost; returns the pulled task's move (or None) and the time spent (ns).
    `unbalanced(cpu, level)` is told of each level whose balance moved or failed while its
    balance_interval is above min_interval (Rq.lb_tuned): the balancer resets it (at
    min_interval the reset would change nothing)."""
    rq = st.rqs[cpu]
    # v5.13+ (c5b0a7eefc70 "Remove sysctl_sched_migration_cost condition"; v6.0: "!overload ||
    # avg_idle < sd->max_newidle_lb_cost"): no 500 us avg_idle gate any more, only the cost of
    # the lowest domain's balance, which the loop's first test below applies. rd->overload is
    # sticky: set when a runqueue reached 2 tasks, cleared only by a top-domain balance
    if not st.rd_overload:
        return None, 0
    spent = 0
    for level, sd in enumerate(st.sd.per_cpu[cpu]):
        cost = newidle_lb_cost_ns(sd.weight)
        if rq.avg_idle < spent + cost:
            break
        if sd.flags & SD_BALANCE_NEWIDLE:
            spent += cost
            moves, why = load_balance(st, cpu, level, CPU_NEWLY_IDLE, failed)
            if unbalanced is not None and rq.lb_tuned >> level & 1 and (moves or why == R_ALL_HOT_OR_PINNED):
                unbalanced(cpu, level)  # load_balance(): balance_interval = min_interval
            if moves:
                return moves[0], spent
    return None, spent
