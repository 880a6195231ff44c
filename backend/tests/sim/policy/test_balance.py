"""Load balancing decisions: periodic per level, cache-hot tasks, the NUMA allowance (current
and NUMA_IMB_LEGACY), wakeup hints, active balance, newly idle balance and STEAL."""

from __future__ import annotations

from placemap.sim.features import HINT_FORK_AFFINE, HINT_FORK_SPREAD, HINT_WAKE_AFFINE
from placemap.sim.policy import balance as b
from placemap.sim.policy.groups import GroupStats
from placemap.sim.state import State, Task
from tests.sim.scaffold import fill, make_state, no_failures, task

MC, PKG, NUMA = 1, 2, 3  # level indices on zen3-2s-nps1: SMT, MC, PKG, NUMA


def test_idle_cpu0_pulls_a_queued_task_from_overloaded_cpu1_in_its_llc() -> None:
    st = make_state()
    task(st, 1, load=1024.0)
    q1 = task(st, 1, load=1024.0)
    task(st, 1, load=1024.0)
    moves, why = b.load_balance(st, 0, MC, b.CPU_IDLE, no_failures(st))
    assert why == b.R_MOVED and [(m.task, m.src, m.dst) for m in moves] == [(q1, 1, 0)]


def test_cache_hot_tasks_are_not_pulled() -> None:
    st = make_state()
    task(st, 1)
    task(st, 1, state="queued", ran_ago_ns=100_000)  # ran 0.1 ms ago < 0.5 ms
    moves, why = b.load_balance(st, 0, MC, b.CPU_IDLE, no_failures(st))
    assert moves == [] and why == b.R_ALL_HOT_OR_PINNED


def test_cache_hot_task_moves_after_cache_nice_tries_failures() -> None:
    st = make_state()
    task(st, 1)
    hot = task(st, 1, state="queued", ran_ago_ns=100_000)
    nf = no_failures(st)
    nf[0][MC] = 2  # > cache_nice_tries (1) of MC
    moves, _ = b.load_balance(st, 0, MC, b.CPU_IDLE, nf)
    assert [m.task for m in moves] == [hot]


def test_only_the_first_idle_cpu_of_the_local_group_balances() -> None:
    st = make_state()
    task(st, 1)
    task(st, 1)
    moves, why = b.load_balance(st, 128, MC, b.CPU_IDLE, no_failures(st))
    assert moves == [] and why == b.R_NOT_BALANCE_CPU, "CPU 0 is the balancing CPU of core 0/128"


def test_busy_cpu_does_not_pull_from_a_group_that_is_not_overloaded() -> None:
    st = make_state()
    fill(st, [*range(0, 8), *range(128, 136)], util=0.0)  # no idle CPU: CPU 0 balances LLC 0
    task(st, 8)
    task(st, 8)
    moves, why = b.load_balance(st, 0, PKG, b.CPU_NOT_IDLE, no_failures(st))
    assert moves == [] and why == b.R_BALANCED


def _numa_case(**features: bool) -> tuple[list[b.Move], str]:
    """Node 1 runs 8 tasks, node 0 runs 10 (one CPU with a queued one): a difference of 2."""
    st = make_state(**features)
    fill(st, range(64, 72))
    fill(st, range(0, 9))
    task(st, 0, state="queued")
    return b.load_balance(st, 72, NUMA, b.CPU_IDLE, no_failures(st))


def test_numa_imbalance_of_2_is_moved_once_the_local_node_exceeds_imb_numa_nr() -> None:
    moves, why = _numa_case()
    assert why == b.R_MOVED and len(moves) == 1 and moves[0].src == 0, "8 + 1 > imb_numa_nr 8"


def test_numa_imb_legacy_allows_the_imbalance_below_25pct_of_the_node() -> None:
    moves, why = _numa_case(NUMA_IMB_LEGACY=True)
    assert moves == [] and why == b.R_NUMA_ALLOWED, "10 < 128 / 4 busiest tasks: allowed"


def test_numa_allowance_keeps_a_small_imbalance_on_a_lightly_loaded_node() -> None:
    st = make_state()
    task(st, 0)
    task(st, 0, state="queued")
    moves, why = b.load_balance(st, 64, NUMA, b.CPU_IDLE, no_failures(st))
    assert moves == [] and why == b.R_NUMA_ALLOWED


def test_wake_affine_hinted_task_is_not_pulled_off_its_llc_while_the_llc_has_room() -> None:
    def case(hints: int) -> int:
        st = make_state()
        task(st, 8)
        task(st, 8, state="queued", hints=hints)
        task(st, 8, state="queued", hints=hints)
        return len(b.load_balance(st, 0, PKG, b.CPU_IDLE, no_failures(st))[0])

    assert case(0) == 1
    assert case(HINT_WAKE_AFFINE) == 0


def test_wake_hints_hold_a_task_on_its_llc_until_the_llc_is_overloaded_fork_hints_never() -> None:
    # the RFC balancer (patch 5/5) tests only the wakeup hints, and only while the source LLC
    # runs no more tasks than it has CPUs; then it moves what it must
    def case(hints: int, overloaded: bool = False) -> int:
        st = make_state()
        # some utilization: find_busiest_queue() takes, for migrate_util, a runqueue whose
        # cpu_util_cfs() is above 0
        task(st, 8, util=100.0)
        task(st, 8, state="queued", hints=hints, util=100.0)
        task(st, 8, state="queued", hints=hints, util=100.0)
        if overloaded:
            fill(st, [*range(9, 16), *range(136, 144)])  # 18 runnable on the 16-CPU LLC
        return len(b.load_balance(st, 0, PKG, b.CPU_IDLE, no_failures(st))[0])

    assert case(0) == 1
    assert case(HINT_FORK_AFFINE) == 1
    assert case(HINT_FORK_SPREAD) == 1
    assert case(HINT_WAKE_AFFINE) == 0
    assert case(HINT_WAKE_AFFINE, overloaded=True) >= 1


def test_active_balance_pushes_the_running_task_after_repeated_failures() -> None:
    st = make_state()
    fill(st, [8, 136])  # a whole core of LLC 1 busy, LLC 0 idle: has_spare both
    fill(st, [9])
    nf = no_failures(st)
    got = []
    for _ in range(5):
        got.append(b.load_balance(st, 0, PKG, b.CPU_IDLE, nf)[1])
    assert b.R_ACTIVE in got and got[0] == b.R_ALL_HOT_OR_PINNED, got


def test_newly_idle_cpu_pulls_when_its_expected_idle_time_covers_the_cost() -> None:
    st = make_state()
    task(st, 1)
    q = task(st, 1, state="queued")
    mv, cost = b.newidle_balance(st, 0, no_failures(st))
    assert mv is not None and mv.task is q and cost > 0
    # v6.0 gates on the lowest domain's balance cost only (no 500 us sysctl_sched_migration_cost
    # test since v5.13): 100 us of expected idle still pulls; 1 us, below the SMT cost, does not
    st.rqs[0].avg_idle = 100_000
    mv, _ = b.newidle_balance(st, 0, no_failures(st))
    assert mv is not None and mv.task is q
    st.rqs[0].avg_idle = 1_000
    assert b.newidle_balance(st, 0, no_failures(st)) == (None, 0)


def test_rd_overload_is_sticky_until_a_balance_of_the_top_domain() -> None:
    """rd->overload is set by add_nr_running() when a runqueue reaches 2 tasks and cleared only
    by update_sd_lb_stats() of a top-domain balance (!env->sd->parent); newidle_balance() gives
    up only while it is clear. A runqueue back to one task leaves it set: newly idle CPU 0
    still walks its domains (and spends their cost), its own NUMA-level balance clearing it."""
    st = make_state()
    task(st, 1)
    q = task(st, 1, state="queued")
    st.dequeue_sleep(q)  # CPU 1 back to one task: no runqueue has 2, the flag stays
    assert st.nr_overloaded == 0 and st.rd_overload
    b.load_balance(st, 0, MC, b.CPU_IDLE, no_failures(st))
    assert st.rd_overload, "only the top domain's balance writes it"
    mv, spent = b.newidle_balance(st, 0, no_failures(st))
    assert mv is None and spent > 0, "tried: rd->overload still set"
    assert not st.rd_overload, "cleared by the newly idle balance of the top (NUMA) domain"
    assert b.newidle_balance(st, 0, no_failures(st)) == (None, 0)
    task(st, 1, state="queued")
    assert st.rd_overload, "set again when CPU 1 reaches 2"


def test_steal_takes_a_queued_task_from_an_overloaded_cpu_of_the_llc() -> None:
    st = make_state(STEAL=True)
    task(st, 5)
    q = task(st, 5, state="queued", ran_ago_ns=10_000)  # cache hot: steal does not care
    mv = b.try_steal(st, 0)
    assert mv is not None and (mv.task, mv.src, mv.reason) == (q, 5, b.R_STEAL)
    assert b.try_steal(make_state(), 0) is None, "off by default"


def test_steal_is_disabled_beyond_steal_node_limit_nodes() -> None:
    def case(**features: bool | int) -> bool:
        st = make_state("zen3-2s-nps4", STEAL=True, **features)
        task(st, 5)
        task(st, 5, state="queued")
        return b.try_steal(st, 0) is not None

    assert not case(), "8 nodes > steal_node_limit 2"
    assert case(steal_node_limit=8)


def test_migrate_util_takes_from_the_cpu_whose_runnable_estimate_is_highest() -> None:
    """find_busiest_queue() for migrate_util reads cpu_util_cfs(), UTIL_EST included: of two
    CPUs of the overloaded LLC 1 with the same util_avg, the one whose queued task woke with a
    high util_est is the busiest, and idle LLC 0 pulls from it."""
    st = make_state()
    fill(st, [*range(8, 16), *range(136, 144)], util=900.0)  # 14400 > 85% of 16 x 1024
    low = task(st, 8, state="sleeping")
    high = task(st, 9, state="sleeping")
    high.ue_ewma = 1000.0  # it ran long before it slept; low's estimate is 0
    st.enqueue(low, 8)
    st.enqueue(high, 9)
    assert st.rqs[8].util == st.rqs[9].util and st.cpu_util(9) > st.cpu_util(8)
    moves, why = b.load_balance(st, 0, PKG, b.CPU_IDLE, no_failures(st))
    assert why == b.R_MOVED and [(m.task, m.src) for m in moves] == [(high, 9)]


def test_find_busiest_queue_never_picks_a_runqueue_without_a_task() -> None:
    """find_busiest_queue() skips a CPU with no CFS task whatever its (blocked) load: core 1
    is the overloaded group (CPU 129 runs 3 tasks, CPU 1 none but a sleeper's blocked load
    of 4000), so busy CPU 0 of fully busy core 0 pulls load from CPU 129."""
    st = make_state()
    fill(st, [0, 128, *range(2, 8), *range(130, 136)])
    task(st, 1, state="sleeping", load=4000.0)
    task(st, 129, util=1024.0)
    task(st, 129, util=1024.0)
    task(st, 129, util=1024.0)
    nf = no_failures(st)
    nf[0][MC] = 1  # 1024 >> 1 fits the imbalance (625)
    moves, why = b.load_balance(st, 0, MC, b.CPU_NOT_IDLE, nf)
    assert why == b.R_MOVED and [m.src for m in moves] == [129], why


def test_the_first_of_two_fully_busy_groups_is_the_busiest() -> None:
    """update_sg_lb_stats() leaves avg_load at 0 for a group that is not overloaded, so
    update_sd_pick_busiest() keeps the first fully busy group: core 1 before core 2, although
    core 2's tasks weigh more. After cache_nice_tries + 2 failures CPU 0 pushes core 1's."""
    st = make_state()
    fill(st, [1, 129])
    task(st, 2, util=1024.0, load=2000.0)
    task(st, 130, util=1024.0, load=2000.0)
    nf = no_failures(st)
    nf[0][MC] = 3
    moves, why = b.load_balance(st, 0, MC, b.CPU_IDLE, nf)
    assert why == b.R_ACTIVE and [m.src for m in moves] == [1], [(m.src, m.dst) for m in moves]


def test_migrate_util_detaches_by_the_tasks_util_estimate() -> None:
    """detach_tasks() weighs a task by task_util_est() for migrate_util: a task of util_avg 100
    whose util_est is 1000 does not fit the local LLC's 500 of spare capacity."""
    st = make_state()
    fill(st, [*range(1, 8), *range(128, 136)])  # LLC 0 but CPU 0: 15 CPUs busy
    task(st, 0, state="sleeping", util=524.0)  # LLC 0's spare capacity: 16384 - 15884 = 500
    fill(st, [*range(8, 16), *range(136, 144)])  # LLC 1 full, and one more queued on CPU 8:
    p = Task(len(st.tasks) + 1, "est")
    st.tasks.append(p)
    p.util = p.load = 100.0
    p.ue_ewma = 1000.0
    p.pelt_ts = st.now
    p.last_ran_ns = st.now - 10**9
    st.enqueue(p, 8)
    moves, why = b.load_balance(st, 0, PKG, b.CPU_IDLE, no_failures(st))
    assert moves == [] and why == b.R_ALL_HOT_OR_PINNED, (why, [m.task for m in moves])


def test_a_newly_idle_balance_pushes_once_periodic_failures_passed_the_threshold() -> None:
    """load_balance() counts failures of periodic balances only, but asks need_active_balance()
    after a newly idle one too: with nr_balance_failed already above cache_nice_tries + 2
    (PKG: 3) a newly idle CPU 0 pushes the running task of CPU 8 (the first busiest runqueue);
    at 3 it does not, nor counts the failure."""
    st = make_state()
    fill(st, [8, 136])
    fill(st, [9])
    nf = no_failures(st)
    nf[0][PKG] = 3
    assert b.load_balance(st, 0, PKG, b.CPU_NEWLY_IDLE, nf)[1] == b.R_ALL_HOT_OR_PINNED
    assert nf[0][PKG] == 3
    nf[0][PKG] = 4
    moves, why = b.load_balance(st, 0, PKG, b.CPU_NEWLY_IDLE, nf)
    assert why == b.R_ACTIVE and [(m.src, m.active) for m in moves] == [(8, True)]


def test_a_heavy_task_fits_after_more_than_8_failures_as_shr_bound_shifts_it() -> None:
    """detach_tasks() tests shr_bound(load, nr_balance_failed) > imbalance: the shift goes up
    to 63. With 9 failures a queued task of load 2^20 counts 2048, which fits CPU 0's
    imbalance of 3000 (busy core 0 of load 73330 per CPU against the overloaded core 1)."""
    st = make_state()
    task(st, 0, util=1024.0, load=73330.0)
    task(st, 128, util=1024.0, load=73330.0)
    task(st, 1, util=1024.0)
    task(st, 129, util=1024.0)
    heavy = task(st, 129, state="queued", util=0.0, load=float(1 << 20))
    nf = no_failures(st)
    nf[0][MC] = 9
    moves, why = b.load_balance(st, 0, MC, b.CPU_NOT_IDLE, nf)
    assert why == b.R_MOVED and [m.task for m in moves] == [heavy], why


def test_a_fully_busy_cpu_above_the_domain_average_pulls_the_busiest_groups_excess() -> None:
    """v6.0's calculate_imbalance() (before 6.4's "Fix imbalance overflow"): core 0 (CPUs 0
    and 128, a task each) is fully busy with avg_load 1024, above the LLC's average of 320
    ((2048 + 3072) / 16) and below overloaded core 1's 1536 (CPU 1: three tasks). The
    difference to the average wraps, so min() takes the busiest group's excess over it,
    (1536 - 320) x 2 = 2432: busy CPU 0 pulls both queued tasks of CPU 1 (1024 each)."""
    st = make_state()
    fill(st, [0, 128])
    task(st, 1, util=1024.0)
    q1 = task(st, 1, util=1024.0)
    q2 = task(st, 1, util=1024.0)
    mtype, imbalance = _imbalance_at(st, 0, MC)
    assert (mtype, imbalance) == (b.MIGRATE_LOAD, 2432.0)
    moves, why = b.load_balance(st, 0, MC, b.CPU_NOT_IDLE, no_failures(st))
    assert why == b.R_MOVED and sorted(m.task.pid for m in moves) == sorted([q1.pid, q2.pid])


def test_a_fully_busy_cpu_pulls_nothing_from_a_busiest_group_it_outweighs() -> None:
    """The exit v6.0 has (v5.7's "local group is more loaded than the selected busiest
    group"): fully busy core 0 (two tasks of load 2100, avg_load 2100) against overloaded
    core 1 (four tasks of load 1024, avg_load 2048) has no imbalance."""
    st = make_state()
    task(st, 0, util=1024.0, load=2100.0)
    task(st, 128, util=1024.0, load=2100.0)
    fill(st, [1, 1, 1, 129])
    mtype, imbalance = _imbalance_at(st, 0, MC)
    assert (mtype, imbalance) == (b.MIGRATE_LOAD, 0.0)


def _imbalance_at(st: State, cpu: int, level: int) -> tuple[int, float]:
    """calculate_imbalance() of `cpu`'s domain `level` with the local group first and the
    busiest as update_sd_pick_busiest() picks it."""
    sd = st.sd.per_cpu[cpu][level]
    stats = [
        GroupStats(st, g, [st.rqs[c] for c in g], None, sd.imbalance_pct, footprint=False) for g in sd.groups
    ]
    busiest = None
    for gs in stats[1:]:
        if b._pick_busiest(gs, busiest):
            busiest = gs
    assert busiest is not None
    total = 0.0
    for gs in stats:
        total += gs.load
    return b.calculate_imbalance(
        st,
        level,
        cpu,
        local=stats[0],
        busiest=busiest,
        total_load=total,
        total_cap=1024 * len(sd.span),
        idle=b.CPU_NOT_IDLE,
    )


def test_a_busiest_group_below_the_domain_average_gives_the_local_groups_shortfall() -> None:
    """The other wrap: fully busy core 2 (two tasks of load 20000) lifts the LLC's average to
    2820 ((2048 + 3072 + 40000) / 16), above overloaded core 1's 1536 (the busiest by type),
    so (1536 - 2820) wraps and min() takes fully busy core 0's shortfall, (2820 - 1024) x 2."""
    st = make_state()
    fill(st, [0, 128])
    fill(st, [1, 1, 1])
    task(st, 2, util=1024.0, load=20000.0)
    task(st, 130, util=1024.0, load=20000.0)
    assert _imbalance_at(st, 0, MC) == (b.MIGRATE_LOAD, 3592.0)
