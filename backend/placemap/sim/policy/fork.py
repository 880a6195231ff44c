"""The fork/exec slow path: find_idlest_cpu() walking down from the highest SD_BALANCE_FORK
domain, find_idlest_group() (group type, the NUMA imbalance allowance, the local tie bias)
and find_idlest_group_cpu(); plus the toggles that change them (hints fork_affine and
fork_spread, MM_FOOTPRINT, NUMA_IMB_LEGACY).
"""

from __future__ import annotations

from typing import Final

from placemap.sim.domains import SD_BALANCE_FORK, SD_NUMA, SD_SHARE_LLC, Domain, sorted_contains
from placemap.sim.features import HINT_FORK_AFFINE, HINT_FORK_SPREAD
from placemap.sim.policy import Decision
from placemap.sim.policy.balance import adjust_numa_imbalance
from placemap.sim.policy.groups import GROUP_HAS_SPARE, GroupStats, cache_kb
from placemap.sim.state import State, Task

R_STAY_LOCAL: Final = "local group has at least as many idle CPUs as the idlest (tie stays local)"
R_NUMA_ALLOW: Final = (
    "NUMA imbalance allowed: local node below imb_numa_nr running tasks, at most 2 idle CPUs fewer"
)
R_NUMA_ALLOW_LEGACY: Final = "NUMA imbalance allowed: local node below 25% of the domain (NUMA_IMB_LEGACY)"
R_IDLEST: Final = "idlest group has more idle CPUs"
R_LESS_BUSY: Final = "idlest group is of a less busy type"
R_LOCAL_LESS_BUSY: Final = "local group is of a less busy type"
R_LOAD_BALANCED: Final = "loads within imbalance_pct: stay local"
R_LOAD_IDLEST: Final = "idlest group's load lower by more than imbalance_pct"
R_FORK_AFFINE: Final = "fork_affine hint: more than half of the local group's CPUs idle"
R_FORK_SPREAD: Final = "fork_spread hint: tie in idle CPUs, idlest group has lower utilization"
R_FOOTPRINT: Final = "MM_FOOTPRINT: tie in idle CPUs, best fit of the memory footprint"
R_NO_GROUP: Final = "no group to move to at any level: parent's CPU"
R_ONLY_LOCAL: Final = "local group not allowed: idlest"
R_CPU_IDLE: Final = "most recently idled CPU of the chosen group"
R_CPU_LEAST_LOADED: Final = "no idle CPU in the chosen group: least loaded"


def _hole(st: State, g: GroupStats) -> int:
    return cache_kb(st, g.cpus) - g.footprint


def _footprint_better(st: State, p: Task, a: GroupStats, b: GroupStats) -> bool:
    """Is a a better fit than b for p's footprint (smallest sufficient hole)?"""
    ha, hb = _hole(st, a), _hole(st, b)
    fa, fb = ha >= p.footprint_kb, hb >= p.footprint_kb
    if fa != fb:
        return fa
    return ha < hb if fa else ha > hb


def _pick_idlest(st: State, p: Task, idlest: GroupStats | None, g: GroupStats, footprint: bool) -> bool:
    """update_pick_idlest(): is g idler than the current idlest?"""
    if idlest is None:
        return True
    if g.group_type != idlest.group_type:
        return g.group_type < idlest.group_type
    if g.group_type != GROUP_HAS_SPARE:
        return g.avg_load < idlest.avg_load
    if idlest.idle_cpus != g.idle_cpus:
        return g.idle_cpus > idlest.idle_cpus
    if footprint:
        return _footprint_better(st, p, g, idlest)
    return g.util < idlest.util


def find_idlest_group(st: State, sd: Domain, p: Task, this_cpu: int) -> tuple[tuple[int, ...] | None, str]:
    """The group to move the new task to, or None to stay in the local group."""
    feat = st.features
    # MM_FOOTPRINT acts where groups are whole LLCs or more (above sd_llc)
    footprint = feat.MM_FOOTPRINT and not sd.flags & SD_SHARE_LLC
    local: GroupStats | None = None
    idlest: GroupStats | None = None
    for i, cpus in enumerate(sd.groups):
        if p.cpus_allowed is not None and not p.cpus_allowed.intersection(cpus):
            continue
        g = GroupStats(st, cpus, st.group_rqs[sd.group_ids[i]], p, sd.imbalance_pct, footprint=footprint)
        if sorted_contains(cpus, this_cpu):  # groups are ascending tuples
            local = g
        elif _pick_idlest(st, p, idlest, g, footprint):
            idlest = g
    if idlest is None:
        return None, R_STAY_LOCAL
    if local is None:
        return idlest.cpus, R_ONLY_LOCAL
    if local.group_type < idlest.group_type:
        return None, R_LOCAL_LESS_BUSY
    if local.group_type > idlest.group_type:
        return idlest.cpus, R_LESS_BUSY
    if local.group_type != GROUP_HAS_SPARE:
        imbalance = 1024 * (sd.imbalance_pct - 100) // 100
        if sd.flags & SD_NUMA and idlest.avg_load + imbalance >= local.avg_load:
            return None, R_LOAD_BALANCED
        if idlest.avg_load >= local.avg_load + imbalance:
            return None, R_LOAD_BALANCED
        if 100 * local.avg_load <= sd.imbalance_pct * idlest.avg_load:
            return None, R_LOAD_BALANCED
        return idlest.cpus, R_LOAD_IDLEST
    # The RFC's patch 4/5 ("sched/fair: Consider hints in the initial task wakeup path"), in
    # find_idlest_group()'s group_has_spare case: with either fork hint the NUMA preference is
    # skipped ("If a hint is set, override any NUMA preference behavior"); fork_affine then
    # stays local while more than half of the local group's CPUs are idle
    # (local_sgs.idle_cpus > local->group_weight / 2: "consolidation until half of the local
    # group is filled"); fork_spread breaks a tie in idle CPUs by the lower utilization.
    spread = bool(p.hints & HINT_FORK_SPREAD)
    fork_hint = bool(p.hints & (HINT_FORK_SPREAD | HINT_FORK_AFFINE))
    if sd.flags & SD_NUMA and not fork_hint:
        if feat.NUMA_IMB_LEGACY:
            # v5.16: allow_numa_imbalance(local running, domain weight): below 25% of the domain.
            if local.nr_running < sd.weight >> 2:
                return None, R_NUMA_ALLOW_LEGACY
        else:
            imb_numa_nr = sd.imb_numa_nr
            if p.cpus_allowed is not None:
                imb_numa_nr = min(len(p.cpus_allowed.intersection(local.cpus)), imb_numa_nr)
            # v5.19's cb29a5c19d2d ("sched/numa: Apply imbalance limitations consistently"),
            # in tip at 5531ecffa4b9: the same adjust_numa_imbalance() as the balancer, on the
            # difference in idle CPUs. The child stays local only while the local node runs
            # at most imb_numa_nr tasks with it AND has at most NUMA_IMBALANCE_MIN (2) fewer
            # idle CPUs than the idlest node; before that commit the first condition alone.
            imbalance = abs(local.idle_cpus - idlest.idle_cpus)
            if not adjust_numa_imbalance(imbalance, local.nr_running + 1, imb_numa_nr):
                return None, R_NUMA_ALLOW
    if p.hints & HINT_FORK_AFFINE and local.idle_cpus > len(local.cpus) // 2:
        return None, R_FORK_AFFINE
    if local.idle_cpus == idlest.idle_cpus:
        if spread:
            return (idlest.cpus, R_FORK_SPREAD) if idlest.util < local.util else (None, R_STAY_LOCAL)
        if footprint:
            return (
                (idlest.cpus, R_FOOTPRINT) if _footprint_better(st, p, idlest, local) else (None, R_FOOTPRINT)
            )
    if local.idle_cpus >= idlest.idle_cpus:
        return None, R_STAY_LOCAL
    return idlest.cpus, R_IDLEST


def find_idlest_group_cpu(st: State, cpus: tuple[int, ...], p: Task) -> tuple[int, str]:
    """Most recently idled allowed CPU (one idle state modelled), else the least loaded."""
    if len(cpus) == 1:
        return cpus[0], R_CPU_IDLE if st.idle_cpu(cpus[0]) else R_CPU_LEAST_LOADED
    best_idle = -1
    latest = -1
    least = -1
    min_load = float("inf")
    for c in cpus:
        if not p.allowed(c):
            continue
        rq = st.rqs[c]
        if rq.nr_running == 0:
            if rq.idle_stamp > latest:
                latest = rq.idle_stamp
                best_idle = c
        elif best_idle < 0:
            load = st.cpu_load(c)
            if load < min_load:
                min_load = load
                least = c
    if best_idle >= 0:
        return best_idle, R_CPU_IDLE
    return least, R_CPU_LEAST_LOADED


def select_task_rq_fork(st: State, p: Task, this_cpu: int, sd_flag: int = SD_BALANCE_FORK) -> Decision:
    """find_idlest_cpu() from the highest domain of this_cpu carrying sd_flag. For a fork,
    first wake_up_new_task()'s `p->recent_used_cpu = task_cpu(p)`: the child's task_cpu() is
    still the CPU sched_fork() ran on (the parent's, this_cpu), so the child's first wakeup
    can take the parent's CPU as recent_used_cpu in select_idle_sibling()."""
    if sd_flag == SD_BALANCE_FORK:
        p.recent_used_cpu = this_cpu
    top: Domain | None = None
    for dom in st.sd.per_cpu[this_cpu]:
        if not dom.flags & sd_flag:
            break
        top = dom
    if top is None:
        return Decision(this_cpu, R_NO_GROUP)
    cpu = this_cpu
    new_cpu = this_cpu
    reason = R_NO_GROUP
    steps: list[str] = []
    level = len(st.sd.per_cpu[cpu]) - 1
    while st.sd.per_cpu[cpu][level] is not top:
        level -= 1
    while level >= 0:
        sd = st.sd.per_cpu[cpu][level]
        if not sd.flags & sd_flag:
            level -= 1
            continue
        group, why = find_idlest_group(st, sd, p, cpu)
        steps.append(f"{sd.name}: {why}")
        if group is None:
            level -= 1
            continue
        new_cpu, reason = find_idlest_group_cpu(st, group, p)
        if new_cpu == cpu:
            level -= 1
            continue
        weight = sd.weight
        cpu = new_cpu
        level = -1
        for i, tmp in enumerate(st.sd.per_cpu[cpu]):
            if weight <= tmp.weight:
                break
            if tmp.flags & sd_flag:
                level = i
    return Decision(new_cpu, reason, "; ".join(steps))
