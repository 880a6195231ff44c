"""load_balance() when tasks may not move (v6.0's affinity handling, and the RFC's holding
hints, which its can_migrate_task() tests before LBF_ALL_PINNED is cleared):

- LBF_ALL_PINNED: every task of the busiest runqueue barred from this CPU clears that CPU
  from env->cpus and the balance is redone on the others (`goto redo`), the group statistics
  summed without it; only when no CPU outside the local group is left, or a pass finds
  nothing, does it end at out_all_pinned;
- LBF_DST_PINNED: a periodic balance whose tasks may not run on this CPU moves them to the
  first CPU of the local group they may run on (new_dst_cpu), which is then woken;
- out_one_pinned: a due active balance whose running task may not run on this CPU kicks no
  stopper; the failure is counted and kept, and with the busiest runqueue's only task the
  interval backs off up to MAX_PINNED_INTERVAL.
"""

from __future__ import annotations

import random

from placemap.sim.features import HINT_WAKE_AFFINE
from placemap.sim.policy import balance as b
from placemap.sim.state import State
from tests.sim.scaffold import balance_intervals_ms, make_state, no_failures, task, ticking_engine

MC, PKG = 1, 2  # level indices on zen3-2s-nps1: SMT, MC, PKG, NUMA


def _held(st: State, cpu: int, n: int) -> None:
    """`n` wake_affine tasks on `cpu` (one running): held on their LLC while it has room."""
    task(st, cpu, hints=HINT_WAKE_AFFINE)
    for _ in range(n - 1):
        task(st, cpu, state="queued", hints=HINT_WAKE_AFFINE)


def _bound(st: State, cpus: list[int]) -> None:
    """One running task on each CPU, bound to it."""
    for c in cpus:
        task(st, c).cpus_allowed = frozenset({c})


def test_an_all_pinned_busiest_runqueue_is_left_out_and_the_next_group_gives_the_task() -> None:
    # LLC 1's CPU 8 runs three held tasks, LLC 2's CPU 16 two free ones: LLC 1 is the busiest
    # group (more tasks, as many idle CPUs), CPU 8 its busiest runqueue, all pinned; redone
    # without CPU 8, LLC 1 runs nothing and LLC 2 is the busiest: CPU 0 pulls from CPU 16
    st = make_state()
    _held(st, 8, 3)
    task(st, 16)
    free = task(st, 16, state="queued")
    nf = no_failures(st)
    nf[0][PKG] = 2
    moves, why = b.load_balance(st, 0, PKG, b.CPU_IDLE, nf)
    assert why == b.R_MOVED and [(m.task, m.src, m.dst) for m in moves] == [(free, 16, 0)]
    assert nf[0][PKG] == 0


def test_the_redo_takes_the_next_busiest_runqueue_of_the_same_group() -> None:
    # LLC 1: CPU 8 three held tasks, CPU 9 two free ones; migrate_task picks CPU 8 (3 > 2),
    # all pinned; redone without it, CPU 9 of the same group gives its queued task
    st = make_state()
    _held(st, 8, 3)
    task(st, 9)
    free = task(st, 9, state="queued")
    moves, why = b.load_balance(st, 0, PKG, b.CPU_IDLE, no_failures(st))
    assert why == b.R_MOVED and [(m.task, m.src) for m in moves] == [(free, 9)]


def test_a_redo_that_finds_nothing_ends_as_all_pinned() -> None:
    # redone without CPU 8, the busiest group (LLC 2) runs one task: balanced, but the flag
    # set by the first pass stays: out_all_pinned's back-off, not a balanced outcome's
    st = make_state()
    _held(st, 8, 3)
    task(st, 16)
    nf = no_failures(st)
    nf[0][PKG] = 5
    moves, why = b.load_balance(st, 0, PKG, b.CPU_IDLE, nf)
    assert moves == [] and why == b.R_ALL_PINNED and nf[0][PKG] == 0


def test_a_redo_at_the_top_domain_writes_rd_overload_without_the_cleared_cpu() -> None:
    # node 1 runs 16 tasks, three of them on CPU 64, all three bound to it: the only
    # overloaded runqueue. CPU 0's NUMA-level balance (the top domain) finds it all pinned;
    # redone without it, update_sd_lb_stats() writes rd->overload from the others: clear
    st = make_state()
    for c in range(65, 79):
        task(st, c)
    for _ in range(3):
        task(st, 64).cpus_allowed = frozenset({64})
    top = len(st.sd.per_cpu[0]) - 1
    moves, why = b.load_balance(st, 0, top, b.CPU_IDLE, no_failures(st))
    assert moves == [] and why == b.R_ALL_HOT_OR_PINNED, why
    assert st.rd_overload is False


def test_a_task_pinned_off_this_cpu_moves_to_the_cpu_of_the_local_group_it_may_run_on() -> None:
    # MC level of CPU 0: local group core 0 (CPUs 0 and 128). CPU 1's queued task may run on
    # CPUs 1 and 128 only: LBF_DST_PINNED, new_dst_cpu 128
    st = make_state()
    task(st, 1)
    pinned = task(st, 1, state="queued")
    pinned.cpus_allowed = frozenset({1, 128})
    moves, why = b.load_balance(st, 0, MC, b.CPU_IDLE, no_failures(st))
    assert why == b.R_MOVED and [(m.task, m.src, m.dst) for m in moves] == [(pinned, 1, 128)]
    # a newly idle balance computes no new_dst_cpu; the running task, which could run here,
    # cleared LBF_ALL_PINNED: a plain failure
    moves, why = b.load_balance(st, 0, MC, b.CPU_NEWLY_IDLE, no_failures(st))
    assert moves == [] and why == b.R_ALL_HOT_OR_PINNED


def test_the_balancer_wakes_the_idle_cpu_a_pinned_task_was_moved_to() -> None:
    eng = ticking_engine()
    st = eng.st
    task(st, 1)
    pinned = task(st, 1, state="queued")
    pinned.cpus_allowed = frozenset({1, 128})
    bal = eng.balancer
    for level in range(len(bal.due_idle[0])):
        bal.force_due(0, level)
    bal._on_tick(None, None)
    assert pinned.cpu == 128 and st.rqs[128].starting, "moved to CPU 128, which is woken"
    assert not st.rqs[0].starting and st.rqs[0].nr_running == 0, "CPU 0 itself stays idle"


def test_a_due_push_of_a_running_task_pinned_off_this_cpu_is_out_one_pinned() -> None:
    # a whole core of LLC 1 busy plus CPU 9 (as in test_rfc_balancer's push), each task bound
    # to its CPU: the imbalance is a task, the push of CPU 8's comes due after
    # cache_nice_tries + 2 failures, but the stopper is not kicked; the failures keep counting
    st = make_state()
    _bound(st, [8, 136, 9])
    nf = no_failures(st)
    nice = st.sd.per_cpu[0][PKG].cache_nice_tries
    whys = [b.load_balance(st, 0, PKG, b.CPU_IDLE, nf)[1] for _ in range(nice + 4)]
    assert whys[: nice + 2] == [b.R_ALL_HOT_OR_PINNED] * (nice + 2), whys
    assert whys[nice + 2 :] == [b.R_CURR_PINNED_ALONE] * 2, whys
    assert nf[0][PKG] == nice + 4, "out_one_pinned keeps the counted failures"


def test_the_stopper_pushes_the_running_task_past_queued_ones_that_hints_hold() -> None:
    # CPU 8 runs an unhinted task with two wake_affine tasks queued behind it, held on LLC 1
    # (room left): detach_tasks() finds nothing to pull (the running task clears
    # LBF_ALL_PINNED, so no redo), the failures mount, and once the push is due the stopper's
    # detach_one_task() skips the held ones and takes the running task
    st = make_state()
    free = task(st, 8)
    task(st, 8, state="queued", hints=HINT_WAKE_AFFINE)
    task(st, 8, state="queued", hints=HINT_WAKE_AFFINE)
    nf = no_failures(st)
    nice = st.sd.per_cpu[0][PKG].cache_nice_tries
    got = [b.load_balance(st, 0, PKG, b.CPU_IDLE, nf) for _ in range(nice + 3)]
    assert [why for _, why in got] == [b.R_ALL_HOT_OR_PINNED] * (nice + 2) + [b.R_ACTIVE]
    push = got[-1][0]
    assert [(m.task, m.src, m.dst, m.active) for m in push] == [(free, 8, 0, True)]
    assert nf[0][PKG] == 0


def test_out_one_pinned_with_the_only_task_backs_the_interval_off_up_to_max_pinned_interval() -> None:
    eng = ticking_engine()
    _bound(eng.st, [8, 136, 9])
    eng.balancer.failed[0][PKG] = 10  # the push long due
    seen = balance_intervals_ms(eng, 0, PKG, 6)
    assert seen[-1] == b.MAX_PINNED_INTERVAL_MS > eng.st.sd.per_cpu[0][PKG].max_interval_ms, seen
    assert eng.balancer.failed[0][PKG] == 16, "one more counted failure per balance, none reset"


def test_random_pinned_and_hinted_runqueues_only_ever_move_tasks_where_they_may_run() -> None:
    """Seeded random states on zen3-2s-nps1 (LLCs 0-3: tasks running or queued, some bound to
    a few CPUs, some wake_affine-hinted): every periodic and newly idle balance of a sample of
    CPUs at every level ends (the redo clears one CPU per pass), moves each task at most once,
    from the CPU it is on, to a CPU of the balancing CPU's local group that its affinity
    allows, never the running task but by an active push, and an all-pinned end resets the
    failures."""
    rnd = random.Random(15)
    for _ in range(12):
        st = make_state()
        llcs = [st.sd.llc_spans[i] for i in range(4)]
        for _ in range(rnd.randrange(10, 60)):
            llc = rnd.choice(llcs)
            c = rnd.choice(llc)
            p = task(st, c, hints=HINT_WAKE_AFFINE if rnd.random() < 0.4 else 0)
            if rnd.random() < 0.4:
                p.cpus_allowed = frozenset({c, *rnd.sample(list(llc), 2), *rnd.sample(range(256), 1)})
        cpus = [llc[0] for llc in llcs] + rnd.sample(range(256), 8)
        for cpu in cpus:
            for level in range(len(st.sd.per_cpu[cpu])):
                for idle in (b.CPU_IDLE, b.CPU_NEWLY_IDLE, b.CPU_NOT_IDLE):
                    nf = no_failures(st)
                    nf[cpu][level] = rnd.randrange(0, 8)
                    moves, why = b.load_balance(st, cpu, level, idle, nf)
                    local = st.sd.per_cpu[cpu][level].groups[0]
                    assert len({id(m.task) for m in moves}) == len(moves)
                    for m in moves:
                        assert m.task.cpu == m.src != m.dst and m.task.allowed(m.dst), (m, why)
                        assert m.dst in local, (m, local)
                        assert m.active or st.rqs[m.src].curr is not m.task
                        assert m.dst == cpu or (idle != b.CPU_NEWLY_IDLE and not m.task.allowed(cpu))
                    if why == b.R_ALL_PINNED:
                        assert moves == [] and nf[cpu][level] == 0
