"""The placement state machine as one numba kernel over numpy columns (compiled once, cached on disk).

Rules (see docs/team-notes.md): wakeup_new/wakeup put the task runnable on target_cpu; migrate moves
it to dest_cpu; a switch on CPU c makes prev runnable (prev_state R*, preempted), dead (X/Z) or
sleeping, and next running on c; fork makes the child new; exit makes the task dead; pid 0 is idle.
With `classify`, it also tags migrations with level and cause and wakeups with the level between the
CPU the task last ran on (waking's target_cpu) and the CPU it woke on, and lists placements.
"""

from __future__ import annotations

from typing import Any

import numpy.typing as npt
from numba import njit

# the delay histogram's layout, with DELAY_BUCKETS and delay_bucket_low re-exported for the store
from placemap.sim.latency import DELAY_BUCKETS as DELAY_BUCKETS  # noqa: PLC0414 - re-export
from placemap.sim.latency import SUB_BITS, SUB_BUCKETS
from placemap.sim.latency import delay_bucket_low as delay_bucket_low  # noqa: PLC0414 - re-export

Arr = npt.NDArray[Any]

# kind codes (schemas/events.json)
K_WAKEUP_NEW = 0
K_WAKING = 1
K_WAKEUP = 2
K_MIGRATE = 3
K_SWITCH = 4
K_FORK = 5
K_EXIT = 6
K_EXEC = 7
K_LOST = 9

# task states (index into STATE_NAMES)
S_NEW = 0
S_RUNNABLE = 1
S_RUNNING = 2
S_SLEEPING = 3
S_DEAD = 4
STATE_NAMES: tuple[str, ...] = ("new", "runnable", "running", "sleeping", "dead")

# prev_state codes of a switch
P_NONE = 0
P_PREEMPTED = 1
P_SLEEP = 2
P_DEAD = 3

# cpu_run values besides a pid
RUN_UNKNOWN = -1
RUN_IDLE = 0

# cause codes
C_WAKEUP = 0
C_FORK = 1
C_BALANCE = 2

UNKNOWN_LEVEL = 4
SAME_CPU = 5

# wakeups by where the waker ran (sched_waking's CPU, the CPU select_task_rq_fair() ran on), the
# counts apply_events adds to `wk` (Metrics.wakeups.by_waker):
WK_SHARED_LLC = 0  # the waker's CPU shares an LLC with the wakee's prev CPU (waking's target_cpu)
WK_CROSS_LLC = 1  # it does not: where the wakeup path (wake_affine()) chooses between the two LLCs
WK_TO_WAKER_LLC = 2  # of WK_CROSS_LLC: woke in the waker's LLC
WK_TO_PREV_LLC = 3  # of WK_CROSS_LLC: woke in prev's LLC
WK_ELSEWHERE = 4  # of WK_CROSS_LLC: woke in neither
WK_ON_WAKER_CPU = 5  # of WK_SHARED_LLC and WK_CROSS_LLC: woke on the waker's own CPU
WK_STILL_RUNNING = 6  # woken on its CPU or preempted on its runqueue, and woke there: no choice shows
WK_UNKNOWN = 7  # no sched_waking before it (or a loss since), or a CPU the topology does not describe
WK_COUNTS = 8


@njit(cache=True, inline="always")
def _level(a: int, b: int, matrix: Arr, default_level: int) -> int:
    if a < 0 or b < 0:
        return UNKNOWN_LEVEL
    if a == b:
        return SAME_CPU
    n = matrix.shape[0]
    if a >= n or b >= n:
        return default_level
    return int(matrix[a, b])


@njit(cache=True, inline="always")
def _shares_llc(level: int) -> bool:
    return level == SAME_CPU or level <= 1


@njit(cache=True, inline="always")
def _count_waker(  # noqa: PLR0917 - numba helper
    wk: Arr, waker: int, prev: int, woke: int, still_ran: bool, matrix: Arr, default_level: int
) -> int:
    """Add one wakeup to `wk` (WK_*) and return its classes as a bit mask (bit WK_* set: counted
    there): the waker ran on `waker`, the wakee last ran on `prev` and woke on `woke`. A task
    woken while still on its CPU (the switch that takes it off comes later in the trace) or on its
    runqueue (preempted there) that wakes on that CPU took no placement the trace can show: the
    kernel finds it still queued and chooses nothing (ttwu_runnable()), or, as it leaves the CPU,
    queues the wakeup there (the wakelist of a task still on_cpu, for a waker in another LLC or an
    idle CPU), or waits for it to leave and then chooses, keeping that CPU: an approximation of
    "no choice", which the trace cannot tell apart. A trace without switches never says a task
    runs, so there every wakeup counts by its CPUs."""
    if still_ran and woke == prev:
        wk[WK_STILL_RUNNING] += 1
        return 1 << WK_STILL_RUNNING
    w_p = _level(waker, prev, matrix, default_level)
    w_t = _level(waker, woke, matrix, default_level)
    p_t = _level(prev, woke, matrix, default_level)
    if w_p == UNKNOWN_LEVEL or w_t == UNKNOWN_LEVEL or p_t == UNKNOWN_LEVEL:  # noqa: PLR1714 - numba, plain ints
        wk[WK_UNKNOWN] += 1
        return 1 << WK_UNKNOWN
    mask = 0
    if w_t == SAME_CPU:
        wk[WK_ON_WAKER_CPU] += 1
        mask = 1 << WK_ON_WAKER_CPU
    if _shares_llc(w_p):
        wk[WK_SHARED_LLC] += 1
        return mask | (1 << WK_SHARED_LLC)
    wk[WK_CROSS_LLC] += 1
    mask |= 1 << WK_CROSS_LLC
    if _shares_llc(w_t):
        wk[WK_TO_WAKER_LLC] += 1
        return mask | (1 << WK_TO_WAKER_LLC)
    if _shares_llc(p_t):
        wk[WK_TO_PREV_LLC] += 1
        return mask | (1 << WK_TO_PREV_LLC)
    wk[WK_ELSEWHERE] += 1
    return mask | (1 << WK_ELSEWHERE)


@njit(cache=True)
def assign_slots(  # noqa: PLR0917 - numba kernel
    n: int, pid: Arr, npid: Arr, cpid: Arr, opid: Arr, slot: Arr, new_out: Arr
) -> int:
    """List the pids of rows [0, n) without a slot (slot[p] < 0), each once, in order of appearance."""
    cnt = 0
    for arr in (pid, npid, cpid, opid):
        for i in range(n):
            p = arr[i]
            if p > 0 and slot[p] == -1:
                slot[p] = -2  # listed; the caller gives it its index
                new_out[cnt] = p
                cnt += 1
    return cnt


@njit(cache=True)
def switch_intervals(  # noqa: PLR0917 - numba kernel
    kind: Arr, cpu: Arr, ts: Arr, npid: Arr, sw_ts: Arr, sw_busy: Arr, out_cpu: Arr, out_a: Arr, out_b: Arr
) -> int:
    """Busy run intervals [a, b) closed by this chunk's switches: from a switch to a task (next_pid
    != 0) until the next switch on that CPU. sw_ts/sw_busy carry each CPU's open interval."""
    cnt = 0
    for i in range(kind.shape[0]):
        if kind[i] != K_SWITCH:
            continue
        c = cpu[i]
        if c < 0:
            continue
        if sw_ts[c] >= 0 and sw_busy[c]:
            out_cpu[cnt] = c
            out_a[cnt] = sw_ts[c]
            out_b[cnt] = ts[i]
            cnt += 1
        sw_ts[c] = ts[i]
        sw_busy[c] = npid[i] != 0
    return cnt


@njit(cache=True)
def apply_events(  # noqa: PLR0917 - a numba kernel takes its columns positionally
    n_apply: int,
    kind: Arr,
    cpu: Arr,
    ts: Arr,
    pid: Arr,
    target: Arr,
    orig: Arr,
    dest: Arr,
    pstate: Arr,
    npid: Arr,
    cpid: Arr,
    opid: Arr,
    slot: Arr,
    t_cpu: Arr,
    t_state: Arr,
    cpu_run: Arr,
    t_crow: Arr,
    t_csrc: Arr,
    classify: bool,
    t_waking: Arr,
    t_wprev: Arr,
    t_wcpu: Arr,
    t_wrun: Arr,
    wk: Arr,
    cur: Arr,
    t_wpid: Arr,
    t_qpre: Arr,
    t_forkp: Arr,
    t_events: Arr,
    t_migs: Arr,
    t_first: Arr,
    t_last: Arr,
    matrix: Arr,
    default_level: int,
    ev_level: Arr,
    ev_cause: Arr,
    ev_waker: Arr,
    pl_row: Arr,
    pl_task: Arr,
    pl_cpu: Arr,
    pl_level: Arr,
    pl_cause: Arr,
    pl_wcpu: Arr,
    pl_wpid: Arr,
) -> int:
    """Apply rows [0, n_apply) to the state arrays in place; returns the number of placements listed.

    slot maps a pid to its task index (every pid of the rows has one; slot[0] = -1: idle is no
    task). cpu_run holds the pid running on each CPU (0 idle, -1 unknown). t_crow/t_csrc get the
    last row naming each task and which column named it (0 comm, 1 next_comm, 2 child_comm).
    With classify, each sched_waking keeps its CPU, the waker's (t_wcpu), the waker's pid (its
    cur_pid: 0 for an interrupt on an idle CPU, t_wpid) and whether the task was still on its CPU
    or queued by a preemption (t_wrun; t_qpre: the last switch that took it off was a preemption),
    and a lost-events row forgets every pending waking and preemption; each sched_wakeup adds to
    `wk` (WK_*), and a wakeup's placements (its sched_wakeup and its migrate) name that waker
    (pl_wcpu, pl_wpid; -1 for other placements and a wakeup without sched_waking).
    """
    n_pl = 0
    for i in range(n_apply):
        k = kind[i]
        t = slot[pid[i]]
        if k >= 8:
            if k == K_LOST and classify:
                # the events lost may hold any task's wakeup or switch: no waking before the loss
                # names the waker of a wakeup after it, and no switch before it says a task is
                # still preempted on its runqueue
                t_waking[:] = 0
                t_qpre[:] = 0
            continue
        if t >= 0:
            t_crow[t] = i
            t_csrc[t] = 0
            if classify:
                t_events[t] += 1
                if t_first[t] < 0:
                    t_first[t] = ts[i]
                t_last[t] = ts[i]
        if k == K_SWITCH:
            c = cpu[i]
            occ = cpu_run[c]
            if occ > 0 and occ != pid[i]:
                # the switch that took `occ` off c is not in the trace (real captures have such
                # holes): it no longer runs here, and whether it slept or waits is unknown
                ot = slot[occ]
                if ot >= 0 and t_state[ot] == S_RUNNING and t_cpu[ot] == c:
                    t_state[ot] = S_SLEEPING
            if t >= 0:
                ps = pstate[i]
                if classify:
                    t_qpre[t] = 1 if ps == P_PREEMPTED else 0
                if ps == P_PREEMPTED:
                    t_state[t] = S_RUNNABLE
                elif ps == P_DEAD:
                    t_state[t] = S_DEAD
                elif t_state[t] != S_DEAD:
                    t_state[t] = S_SLEEPING
                t_cpu[t] = c
            nt = slot[npid[i]]
            if nt >= 0:
                t_crow[nt] = i
                t_csrc[nt] = 1
                if classify:
                    t_events[nt] += 1
                    if t_first[nt] < 0:
                        t_first[nt] = ts[i]
                    t_last[nt] = ts[i]
                    t_qpre[nt] = 0
                old = t_cpu[nt]
                if old >= 0 and old != c and cpu_run[old] == npid[i]:
                    # we missed the switch that took it off `old`: that CPU's occupant is unknown
                    cpu_run[old] = RUN_UNKNOWN
                if classify and old != c:
                    pl_row[n_pl] = i
                    pl_task[n_pl] = nt
                    pl_cpu[n_pl] = c
                    pl_level[n_pl] = _level(old, c, matrix, default_level) if old >= 0 else -1
                    pl_cause[n_pl] = -1
                    pl_wcpu[n_pl] = -1
                    pl_wpid[n_pl] = -1
                    n_pl += 1
                t_cpu[nt] = c
                t_state[nt] = S_RUNNING
                cpu_run[c] = npid[i]
            else:
                cpu_run[c] = RUN_IDLE
        elif t < 0:
            continue
        elif k == K_WAKING:
            if classify:
                t_waking[t] = 1
                t_wprev[t] = target[i]
                t_wcpu[t] = cpu[i]
                t_wpid[t] = cur[i]
                # on its CPU still (its switch-out not traced yet), or preempted onto its
                # runqueue by the last switch that took it off (prev_state R/R+)
                st_now = t_state[t]
                t_wrun[t] = 1 if st_now == S_RUNNING or (st_now == S_RUNNABLE and t_qpre[t] != 0) else 0
        elif k == K_WAKEUP:
            tc = target[i]
            if classify:
                prev = t_wprev[t] if t_waking[t] else t_cpu[t]
                lvl = _level(prev, tc, matrix, default_level)
                ev_level[i] = lvl
                if t_waking[t]:
                    ev_waker[i] = _count_waker(wk, t_wcpu[t], prev, tc, t_wrun[t] != 0, matrix, default_level)
                else:
                    wk[WK_UNKNOWN] += 1
                    ev_waker[i] = 1 << WK_UNKNOWN
                pl_row[n_pl] = i
                pl_task[n_pl] = t
                pl_cpu[n_pl] = tc
                pl_level[n_pl] = -1 if lvl == SAME_CPU else lvl
                pl_cause[n_pl] = C_WAKEUP
                pl_wcpu[n_pl] = t_wcpu[t] if t_waking[t] else -1
                pl_wpid[n_pl] = t_wpid[t] if t_waking[t] else -1
                n_pl += 1
                t_waking[t] = 0
            running_here = t_state[t] == S_RUNNING and t_cpu[t] >= 0 and cpu_run[t_cpu[t]] == pid[i]
            if not running_here:
                # a task woken before it switched out stays running where it is
                t_cpu[t] = tc
                if t_state[t] != S_DEAD:
                    t_state[t] = S_RUNNABLE
        elif k == K_WAKEUP_NEW:
            t_cpu[t] = target[i]
            t_state[t] = S_RUNNABLE
            if classify:
                t_forkp[t] = 0
                pl_row[n_pl] = i
                pl_task[n_pl] = t
                pl_cpu[n_pl] = target[i]
                pl_level[n_pl] = -1
                pl_cause[n_pl] = C_FORK
                pl_wcpu[n_pl] = -1
                pl_wpid[n_pl] = -1
                n_pl += 1
        elif k == K_MIGRATE:
            d = dest[i]
            if classify:
                # the event's own orig_cpu; our state's cpu only when the source left it out
                o = orig[i] if orig[i] >= 0 else t_cpu[t]
                lvl = _level(o, d, matrix, default_level)
                ev_level[i] = lvl
                if t_waking[t]:
                    cause = C_WAKEUP
                elif t_forkp[t]:
                    cause = C_FORK
                else:
                    cause = C_BALANCE
                ev_cause[i] = cause
                t_migs[t] += 1
                pl_row[n_pl] = i
                pl_task[n_pl] = t
                pl_cpu[n_pl] = d
                pl_level[n_pl] = lvl
                pl_cause[n_pl] = cause
                pl_wcpu[n_pl] = t_wcpu[t] if cause == C_WAKEUP else -1
                pl_wpid[n_pl] = t_wpid[t] if cause == C_WAKEUP else -1
                n_pl += 1
            t_cpu[t] = d
        elif k == K_FORK:
            ch = slot[cpid[i]]
            if ch >= 0:
                t_crow[ch] = i
                t_csrc[ch] = 2
                t_state[ch] = S_NEW
                t_cpu[ch] = -1
                if classify:
                    t_forkp[ch] = 1
                    t_waking[ch] = 0
                    t_events[ch] += 1
                    if t_first[ch] < 0:
                        t_first[ch] = ts[i]
                    t_last[ch] = ts[i]
        elif k == K_EXIT:
            t_state[t] = S_DEAD
        elif k == K_EXEC:
            o = slot[opid[i]]
            if o >= 0 and o != t:
                # a non-leader thread exec'd and took the leader's pid: the thread's pid is gone
                t_cpu[t] = t_cpu[o]
                t_state[t] = t_state[o]
                if t_cpu[o] >= 0 and cpu_run[t_cpu[o]] == opid[i]:
                    cpu_run[t_cpu[o]] = pid[i]
                t_state[o] = S_DEAD
    return n_pl


# Run-queue delay histogram (wakeup_delays): its layout (a bucket per ns below SUB_BUCKETS, then
# SUB_BUCKETS equal parts per power of two) and its buckets' lower bounds are placemap.sim.latency's,
# which the simulator counts its runs' delays with; delay_bucket below is the same rule in numba.


@njit(cache=True, inline="always")
def delay_bucket(v: int) -> int:
    """The histogram bucket of a delay of v >= 0 ns (see DELAY_BUCKETS)."""
    if v < SUB_BUCKETS:
        return v
    e = 0  # floor(log2(v)), by halving the range (no loop over 64 bits)
    x = v
    for step in (32, 16, 8, 4, 2, 1):
        if x >> step:
            x >>= step
            e += step
    return SUB_BUCKETS + (e - SUB_BITS) * SUB_BUCKETS + ((v >> (e - SUB_BITS)) & (SUB_BUCKETS - 1))


@njit(cache=True)
def wakeup_delays(  # noqa: PLR0917 - numba kernel
    kind: Arr, pid: Arr, npid: Arr, ts: Arr, slot: Arr, t_woken: Arr, hist: Arr, top: Arr
) -> int:
    """Run-queue delays closed by these rows: from a task's sched_wakeup (or sched_wakeup_new) to
    the switch that next runs it, counted into `hist` (delay_bucket) with the largest in top[0];
    returns how many. t_woken carries each task's pending wakeup time (-1: none) across chunks. A
    task switched out while a wakeup is pending was running when woken (the kernel traces a
    wakeup of a task still on its runqueue too): that wakeup is dropped, not measured to a later
    switch-in. A ring-buffer loss (a lost row) drops every pending wakeup: the switch that ran a
    task may be among the lost events, and a later one would make its delay too long."""
    cnt = 0
    for i in range(kind.shape[0]):
        k = kind[i]
        if k in (K_WAKEUP, K_WAKEUP_NEW):
            t = slot[pid[i]] if pid[i] > 0 else -1
            if t >= 0:
                t_woken[t] = ts[i]
        elif k == K_LOST:
            t_woken[:] = -1
        elif k == K_SWITCH:
            t = slot[pid[i]] if pid[i] > 0 else -1
            if t >= 0:
                t_woken[t] = -1
            nt = slot[npid[i]] if npid[i] > 0 else -1
            if nt >= 0 and t_woken[nt] >= 0:
                d = ts[i] - t_woken[nt]
                t_woken[nt] = -1
                if d >= 0:
                    hist[delay_bucket(d)] += 1
                    top[0] = max(top[0], d)
                    cnt += 1
    return cnt
