"""The wakeup fast path of select_task_rq_fair() (v6.1 era): wake_wide(), wake_affine()
(wake_affine_idle, wake_affine_weight), select_idle_sibling() with recent_used_cpu, the
idle-core scan and select_idle_cpu()'s SIS_UTIL / SIS_PROP scan limits; plus the toggles
that change them (SIS_SHORT, UTIL_FITS_CAPACITY, SELECT_BIAS_PREV, hints wake_affine,
wake_hold, wake_wide). Never looks outside the target's LLC, except for the wake_wide hint.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Final

from placemap.sim.cost import SIS_SCAN_COST_PER_CPU_NS, TICK_NS
from placemap.sim.domains import SD_WAKE_AFFINE, index_after
from placemap.sim.features import HINT_WAKE_AFFINE, HINT_WAKE_HOLD, HINT_WAKE_WIDE
from placemap.sim.policy import Decision
from placemap.sim.state import State, Task, task_util_est

NSEC_PER_SEC: Final = 1_000_000_000
SYSCTL_SCHED_MIN_GRANULARITY_NS: Final = 750_000  # unscaled; SIS_SHORT's "short task" bound

# Reasons (fixed strings; tests and explanations quote them)
R_TARGET_IDLE: Final = "target idle"
R_PREV_IDLE_LLC: Final = "prev idle and shares the LLC with the target"
R_PREV_FITS: Final = "prev's utilization plus the task's fits its capacity (UTIL_FITS_CAPACITY)"
R_TARGET_FITS: Final = "target's utilization plus the task's fits its capacity (UTIL_FITS_CAPACITY)"
R_BIAS_PREV: Final = "prev checked before target (SELECT_BIAS_PREV)"
R_BIAS_PREV_BUSY: Final = "no idle CPU in the target's LLC: prev rather than target (SELECT_BIAS_PREV)"
R_RECENT_IDLE: Final = "recent_used_cpu idle and shares the LLC with the target"
R_RECENT_FITS: Final = "recent_used_cpu fits the task (UTIL_FITS_CAPACITY)"
R_IDLE_SMT: Final = "idle SMT sibling of prev"
R_IDLE_CORE: Final = "idle core found in the target's LLC"
R_IDLE_CPU: Final = "idle CPU found by select_idle_cpu in the target's LLC"
R_SIS_SHORT: Final = "short wakee and short current task on a busy LLC: target kept (SIS_SHORT)"
R_NO_IDLE: Final = "no idle CPU in the target's LLC: target"
R_SCAN_OFF: Final = "LLC at 85% util or more: no scan (SIS_UTIL), target"
R_WIDE_PARENT: Final = "no idle CPU in the LLC; idle CPU in the parent domain (wake_wide hint)"

R_WA_THIS_IDLE: Final = "wake_affine_idle: waker's CPU idle and shares the LLC with prev"
R_WA_PREV_IDLE_LLC: Final = "wake_affine_idle: both idle, sharing the LLC: prev"
R_WA_SYNC: Final = "wake_affine_idle: sync wakeup and the waker is alone on its CPU"
R_WA_SHORT: Final = "wake_affine_idle: the waker's CPU runs only a short task (SIS_SHORT)"
R_WA_PREV_IDLE: Final = "wake_affine_idle: prev idle"
R_WA_WEIGHT_THIS: Final = "wake_affine_weight: waker's CPU less loaded"
R_WA_WEIGHT_PREV: Final = "wake_affine_weight: prev not more loaded"
R_WA_SAME: Final = "waker runs on prev"
R_WIDE: Final = "wake_wide: many-to-one waker, affinity skipped"
R_NOT_AFFINE: Final = "prev outside every SD_WAKE_AFFINE domain of the waker"
R_HINT_AFFINE: Final = "wake_affine hint: the waker's LLC has an idle core"
R_HINT_HOLD: Final = "wake_hold hint: prev's LLC has an idle core"


def record_wakee(st: State, waker: Task, p: Task) -> None:
    """record_wakee(): the waker's flip count, halved every second."""
    if st.now - waker.wakee_flip_decay_ns > NSEC_PER_SEC:
        waker.wakee_flips >>= 1
        waker.wakee_flip_decay_ns = st.now
    if waker.last_wakee is not p:
        waker.last_wakee = p
        waker.wakee_flips += 1


def wake_wide(st: State, waker: Task, p: Task, this_cpu: int) -> bool:
    """wake_wide(): a many-to-one pattern whose fan-out exceeds the LLC size."""
    master = waker.wakee_flips
    slave = p.wakee_flips
    factor = len(st.sd.llc_span(this_cpu))
    if master < slave:
        master, slave = slave, master
    return not (slave < factor or master < slave * factor)


def wake_affine_idle(st: State, this_cpu: int, prev_cpu: int, sync: bool) -> tuple[int, str]:
    """-1 when undecided (then wake_affine_weight decides)."""
    if st.idle_cpu(this_cpu) and st.sd.share_cache(this_cpu, prev_cpu):
        return (prev_cpu, R_WA_PREV_IDLE_LLC) if st.idle_cpu(prev_cpu) else (this_cpu, R_WA_THIS_IDLE)
    rq = st.rqs[this_cpu]
    if sync and rq.nr_running == 1:
        return this_cpu, R_WA_SYNC
    if st.idle_cpu(prev_cpu):
        return prev_cpu, R_WA_PREV_IDLE
    # SIS_SHORT (Chen Yu's patch puts it after the idle prev): the only task running is short
    if st.features.SIS_SHORT and rq.nr_running == 1 and st.is_short(rq.curr, SYSCTL_SCHED_MIN_GRANULARITY_NS):
        return this_cpu, R_WA_SHORT
    return -1, ""


def wake_affine_weight(
    st: State, imbalance_pct: int, p: Task, *, waker: Task | None, this_cpu: int, prev_cpu: int, sync: bool
) -> tuple[int, str]:
    """Compare loads; the waker's own load is discounted on a sync wakeup (WA_BIAS on)."""
    this_eff = st.cpu_load(this_cpu)
    if sync and waker is not None:
        current_load = waker.load
        if current_load > this_eff:
            return this_cpu, R_WA_WEIGHT_THIS
        this_eff -= current_load
    task_load = p.load
    this_eff = (this_eff + task_load) * 100 * 1024
    prev_eff = (st.cpu_load(prev_cpu) - task_load) * (100 + (imbalance_pct - 100) // 2) * 1024
    if sync:
        prev_eff += 1
    return (this_cpu, R_WA_WEIGHT_THIS) if this_eff < prev_eff else (-1, R_WA_WEIGHT_PREV)


def wake_affine(
    st: State, imbalance_pct: int, p: Task, *, waker: Task | None, this_cpu: int, prev_cpu: int, sync: bool
) -> tuple[int, str]:
    """this_cpu when the wakeup should be pulled to the waker, else prev_cpu."""
    target, why = wake_affine_idle(st, this_cpu, prev_cpu, sync)
    if target < 0:
        target, why = wake_affine_weight(
            st, imbalance_pct, p, waker=waker, this_cpu=this_cpu, prev_cpu=prev_cpu, sync=sync
        )
    return (this_cpu, why) if target == this_cpu else (prev_cpu, why)


def _fits(st: State, cpu: int, task_util: float) -> bool:
    """task_fits_remaining_cpu_capacity() (UTIL_FITS_CAPACITY, Desnoyers' RFC v2): the util_est
    of the CPU's runnable tasks (cfs.avg.util_est.enqueued, blocked tasks not counted) plus the
    wakee's task_util_est() within fits_capacity()'s 80% of the capacity (1024: no RT/IRQ)."""
    return (st.rqs[cpu].util_est + task_util) * 1280 < 1024 * 1024


def _wrap(span: tuple[int, ...], start: int) -> tuple[int, ...]:
    """for_each_cpu_wrap(cpu, span, start): span from the first CPU >= start, wrapping."""
    i = bisect_right(span, start - 1)
    return span[i:] + span[:i]


def update_idle_cpu_scan(st: State, llc: int) -> int:
    """SIS_UTIL (70fb5ccf2ebb): nr_idle_scan = llc_weight * (1 - (x * pct/100)^2), x the LLC's
    sum of cpu_util_cfs() over its capacity, pct the LLC domain's imbalance_pct (117): no scan
    from 85%. In the kernel's integers: x' = sum_util / llc_weight, tmp = x'^2 * pct^2 /
    (10000 * 1024) capped at 1024, y = (1024 - tmp) * llc_weight / 1024, each division
    truncating (tmp down, so the budget rounds up by one where a fraction would not).
    Called from the LLC-level periodic balance (update_sd_lb_stats(), not newly idle)."""
    sd = st.sd
    span = sd.llc_spans[llc]
    w = len(span)
    first = span[0]
    pct = sd.per_cpu[first][sd.llc_index[first]].imbalance_pct
    # sum_util: the groups' group_util, each CPU's cpu_util_cfs() (an unsigned long)
    sum_util = 0
    for c in span:
        sum_util += int(st.cpu_util(c))
    x = sum_util // w
    tmp = min(x * x * pct * pct // (10000 * 1024), 1024)
    nr = (1024 - tmp) * w // 1024
    st.nr_idle_scan[llc] = nr
    return nr


def select_idle_cpu(st: State, p: Task, has_idle_core: bool, target: int, this_cpu: int) -> tuple[int, str]:
    """Scan the target's LLC for an idle core (when one is advertised) or an idle CPU."""
    sd = st.sd
    llc = sd.llc_id[target]
    span = sd.llc_spans[llc]
    feat = st.features
    nr = len(span) + 1
    if feat.SIS_UTIL:
        # v6.0 (70fb5ccf2ebb) reads the budget whether or not an idle core is advertised: at
        # nr_idle_scan 0 it returns before the idle-core scan too, and so before the scan's
        # set_idle_cores(target, false): a stale has_idle_cores stays set on an overloaded LLC
        # (the RFC's "Limitations": the hints' bail-out test "can lead to tasks piling on the
        # same CPU"). The budget itself limits only the idle-CPU scan (--nr below).
        nr = st.nr_idle_scan[llc] + 1
        if nr == 1:
            return -1, R_SCAN_OFF
        if (
            not has_idle_core
            and feat.SIS_SHORT
            and 5 * nr < 3 * len(span)
            and st.is_short(st.rqs[target].curr, SYSCTL_SCHED_MIN_GRANULARITY_NS)
            and st.is_short(p, SYSCTL_SCHED_MIN_GRANULARITY_NS)
        ):
            return target, R_SIS_SHORT
    elif not has_idle_core:
        # SIS_PROP (v6.0): the waker CPU's predicted idle time against the LLC's average scan
        # cost. The prediction, wake_avg_idle, is half of avg_idle at the CPU's last idle exit,
        # aged by half for every jiffy since while the CPU stayed busy.
        trq = st.rqs[this_cpu]
        jiffy = st.now // TICK_NS
        while trq.wake_stamp < jiffy and trq.wake_avg_idle:
            trq.wake_stamp += 1
            trq.wake_avg_idle >>= 1
        avg_cost = st.avg_scan_cost_ns[llc] + 1
        span_avg = len(span) * trq.wake_avg_idle
        nr = span_avg // avg_cost if span_avg > 4 * avg_cost else 4
    siblings = st.topo.siblings
    allowed = p.cpus_allowed
    idle_cpu = -1
    scanned = 0
    # the CPUs to skip in the idle-core scan (the siblings of the cores scanned so far): the
    # ones whose State.scan_mark is this scan's number, instead of a set built per scan
    mark = st.scan_mark
    scan = st.scan_no + 1
    st.scan_no = scan
    # for_each_cpu_wrap(cpu, span, target + 1), by index (as _wrap, without building it)
    w = len(span)
    i = index_after(span, target)
    # (a named loop variable: compiled, `_` is untyped and its every value was boxed)
    for _step in range(w):
        if i == w:
            i = 0
        cpu = span[i]
        i += 1
        if (has_idle_core and mark[cpu] == scan) or (allowed is not None and cpu not in allowed):
            continue
        if has_idle_core:
            core_is_idle = True
            for s in siblings[cpu]:
                scanned += 1  # each sibling's runqueue is read
                if not st.idle_cpu(s):
                    core_is_idle = False
                    if idle_cpu != -1:
                        break
                elif idle_cpu == -1 and (allowed is None or s in allowed):
                    idle_cpu = s
            if core_is_idle:
                st.scan_checked += scanned
                return cpu, R_IDLE_CORE
            for s in siblings[cpu]:
                mark[s] = scan
        else:
            scanned += 1
            nr -= 1
            if nr <= 0:
                # the budget ran out: v6.0 returns here, before SIS_PROP's accounting below
                st.scan_checked += scanned - 1
                return -1, R_NO_IDLE
            if st.idle_cpu(cpu):
                idle_cpu = cpu
                break
    st.scan_checked += scanned
    if has_idle_core:
        st.has_idle_cores[llc] = False
    elif not feat.SIS_UTIL:
        # SIS_PROP learns from a scan that found an idle CPU or covered the span: its time
        # comes off the waker CPU's predicted idle time and into the LLC's average scan cost
        cost = scanned * SIS_SCAN_COST_PER_CPU_NS
        trq = st.rqs[this_cpu]
        trq.wake_avg_idle -= min(trq.wake_avg_idle, cost)
        diff = cost - st.avg_scan_cost_ns[llc]
        st.avg_scan_cost_ns[llc] += diff // 8 if diff >= 0 else -(-diff // 8)  # update_avg(), C's /
    return idle_cpu, R_IDLE_CPU if idle_cpu >= 0 else R_NO_IDLE


def _parent_scan(st: State, p: Task, target: int) -> int:
    """wake_wide hint: idle core, else idle CPU, in the parent of the target's sd_llc."""
    doms = st.sd.per_cpu[target]
    i = st.sd.llc_index[target] + 1
    if i >= len(doms):
        return -1
    llc = st.sd.llc_id[target]
    fallback = -1
    for cpu in _wrap(doms[i].span, target + 1):
        if st.sd.llc_id[cpu] == llc or not p.allowed(cpu):
            continue
        st.scan_checked += 1
        if not st.idle_cpu(cpu):
            continue
        if st.core_idle(cpu):
            return cpu
        if fallback < 0:
            fallback = cpu
    return fallback


def select_idle_sibling(st: State, p: Task, prev: int, target: int, this_cpu: int) -> tuple[int, str]:
    """Pick an idle CPU sharing the target's LLC, else the target (busy or not): (cpu, reason).
    A plain tuple, not a Decision: select_task_rq_wake builds the one Decision per wakeup (a
    NamedTuple is built by a Python-level call even when compiled)."""
    feat = st.features
    sd = st.sd
    ufc = feat.UTIL_FITS_CAPACITY
    # sync_entity_load_avg() then task_util_est(): max(util_avg, _task_util_est())
    pu = 0.0
    if ufc:
        pu = st.task_util(p)
        ue = task_util_est(p)
        pu = max(pu, ue)
    bias_prev = feat.SELECT_BIAS_PREV and prev != target and sd.share_cache(prev, target) and p.allowed(prev)
    if bias_prev and (st.idle_cpu(prev) or (ufc and _fits(st, prev, pu))):
        return prev, R_BIAS_PREV
    if st.idle_cpu(target):
        return target, R_TARGET_IDLE
    if ufc and _fits(st, target, pu):
        return target, R_TARGET_FITS
    if prev != target and sd.share_cache(prev, target) and p.allowed(prev):
        if st.idle_cpu(prev):
            return prev, R_PREV_IDLE_LLC
        if ufc and _fits(st, prev, pu):
            return prev, R_PREV_FITS
    recent = p.recent_used_cpu
    p.recent_used_cpu = prev
    if recent >= 0 and recent not in (prev, target) and sd.share_cache(recent, target) and p.allowed(recent):
        if st.idle_cpu(recent):
            return recent, R_RECENT_IDLE
        if ufc and _fits(st, recent, pu):
            return recent, R_RECENT_FITS
    has_idle_core = False
    if st.smt_weight > 1:
        has_idle_core = st.has_idle_cores[sd.llc_id[target]]
        if not has_idle_core and sd.share_cache(prev, target):
            for s in st.topo.siblings[prev]:
                if s != prev and st.idle_cpu(s) and p.allowed(s):
                    return s, R_IDLE_SMT
    cpu, why = select_idle_cpu(st, p, has_idle_core, target, this_cpu)
    if cpu >= 0:
        return cpu, why
    if p.hints & HINT_WAKE_WIDE:
        cpu = _parent_scan(st, p, target)
        if cpu >= 0:
            return cpu, R_WIDE_PARENT
    if bias_prev:
        # SELECT_BIAS_PREV's second part: every CPU busy, keep the task where it ran
        return prev, R_BIAS_PREV_BUSY
    return target, why


def select_task_rq_wake(st: State, p: Task, waker: Task | None, this_cpu: int, sync: bool) -> Decision:
    """select_task_rq_fair() for a wakeup (WF_TTWU): p last ran on p.cpu; the waker runs on
    this_cpu (waker None: an interrupt or timer on this_cpu)."""
    cpu, why, via, affine = wake_target(st, p, waker, this_cpu, sync)
    return Decision(cpu, why, via, affine)


def wake_target(
    st: State, p: Task, waker: Task | None, this_cpu: int, sync: bool
) -> tuple[int, str, str, bool]:
    """select_task_rq_wake's decision as a plain tuple (cpu, reason, via, affine), for the
    engine's wakeups: compiled, a tuple of fixed shape is returned as a C struct, where a
    Decision is an object allocated and freed per wakeup."""
    prev = p.cpu
    sd = st.sd
    # record_wakee() is select_task_rq_fair()'s first step for every WF_TTWU wakeup; the RFC's
    # hint test (patch 3/5) comes after it, so a hinted wakeup counts in the waker's flips too.
    # It and wake_wide() read `current`: for a wakeup from a timer or an interrupt, the task
    # the interrupt hit on this_cpu (or the CPU's idle task, whose flips are not modelled)
    cur = waker if waker is not None else st.rqs[this_cpu].curr
    if cur is not None:
        record_wakee(st, cur, p)
    hints = p.hints & (HINT_WAKE_AFFINE | HINT_WAKE_HOLD)
    if hints and not sd.share_cache(this_cpu, prev):
        if hints & HINT_WAKE_AFFINE and st.has_idle_cores[sd.llc_id[this_cpu]]:
            cpu, why = select_idle_sibling(st, p, prev, this_cpu, this_cpu)
            return cpu, why, R_HINT_AFFINE, True
        if hints & HINT_WAKE_HOLD and st.has_idle_cores[sd.llc_id[prev]]:
            cpu, why = select_idle_sibling(st, p, prev, prev, this_cpu)
            return cpu, why, R_HINT_HOLD, False
    want_affine = True
    via = R_NOT_AFFINE
    if cur is not None and wake_wide(st, cur, p, this_cpu):
        want_affine = False
        via = R_WIDE
    if not p.allowed(this_cpu):
        want_affine = False
    target = prev
    affine = False
    if want_affine:
        for dom in sd.per_cpu[this_cpu]:
            if dom.flags & SD_WAKE_AFFINE and prev in dom.span_set:
                if this_cpu != prev:
                    target, via = wake_affine(
                        st, dom.imbalance_pct, p, waker=waker, this_cpu=this_cpu, prev_cpu=prev, sync=sync
                    )
                    affine = target == this_cpu
                else:
                    via = R_WA_SAME
                break
    cpu, why = select_idle_sibling(st, p, prev, target, this_cpu)
    return cpu, why, via, affine
