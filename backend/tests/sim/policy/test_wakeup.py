"""Wakeup decisions on zen3-2s-nps1 (LLC k = CPUs 8k..8k+7 and their siblings +128), each
test named after the reason the wakee lands where it does."""

from __future__ import annotations

from placemap.sim.cost import SIS_SCAN_COST_PER_CPU_NS, TICK_NS, WAKE_SELECT_RACE_NS
from placemap.sim.features import HINT_WAKE_AFFINE, HINT_WAKE_HOLD, HINT_WAKE_WIDE
from placemap.sim.policy import wakeup as w
from placemap.sim.state import State
from tests.sim.scaffold import NOW, fill, make_state, task

LLC0, LLC2 = 0, 2  # llc ids on zen3-2s-nps1 (CPU 0 and CPU 16)


def llc2_busy(st: State, idle: tuple[int, ...] = (), util: float = 1024.0) -> None:
    fill(st, [c for c in [*range(16, 24), *range(144, 152)] if c not in idle], util)


def test_sync_wakeup_lands_on_prev_17_because_prev_is_idle_and_shares_the_llc() -> None:
    st = make_state()
    waker = task(st, 16)
    p = task(st, 17, state="sleeping")
    d = w.select_task_rq_wake(st, p, waker, 16, sync=True)
    assert d.cpu == 17 and d.reason == w.R_PREV_IDLE_LLC, d.explain()
    assert d.via == w.R_WA_SYNC and d.affine, "wake_affine chose the waker's CPU 16 as target first"


def test_futex_wakeup_from_another_llc_stays_on_idle_prev() -> None:
    st = make_state()
    waker = task(st, 0)
    p = task(st, 17, state="sleeping")
    d = w.select_task_rq_wake(st, p, waker, 0, sync=False)
    assert d.cpu == 17 and d.reason == w.R_TARGET_IDLE and d.via == w.R_WA_PREV_IDLE, d.explain()
    assert not d.affine


def test_interrupt_wakeup_lands_on_idle_waking_cpu_20_sharing_the_llc_with_busy_prev() -> None:
    st = make_state()
    task(st, 17)
    p = task(st, 17, state="sleeping")
    d = w.select_task_rq_wake(st, p, None, 20, sync=False)
    assert d.cpu == 20 and d.via == w.R_WA_THIS_IDLE, d.explain()


def test_lands_on_recent_used_cpu_18_because_it_is_idle_and_shares_the_llc() -> None:
    st = make_state()
    waker = task(st, 16)
    task(st, 17)
    p = task(st, 17, state="sleeping")
    p.recent_used_cpu = 18
    d = w.select_task_rq_wake(st, p, waker, 16, sync=True)
    assert d.cpu == 18 and d.reason == w.R_RECENT_IDLE, d.explain()
    assert p.recent_used_cpu == 17, "prev becomes the next recent_used_cpu"


def test_lands_on_idle_core_18_found_by_the_idle_core_scan() -> None:
    st = make_state()
    waker = task(st, 16)
    task(st, 17)
    p = task(st, 17, state="sleeping")
    d = w.select_task_rq_wake(st, p, waker, 16, sync=True)
    # 145 (17's sibling) is idle but core 17 is not: the scan wants a whole idle core
    assert d.cpu == 18 and d.reason == w.R_IDLE_CORE, d.explain()
    assert st.scan_checked == 4, "17 and 145, then 18 and 146: each sibling's runqueue read"


def test_without_idle_core_lands_on_145_the_idle_smt_sibling_of_prev() -> None:
    st = make_state()
    fill(st, range(16, 24))
    st.has_idle_cores[LLC2] = False
    waker = st.rqs[16].curr
    p = task(st, 17, state="sleeping")
    d = w.select_task_rq_wake(st, p, waker, 16, sync=True)
    assert d.cpu == 145 and d.reason == w.R_IDLE_SMT, d.explain()


def _sis_util_case(**features: bool) -> tuple[int, int]:
    """(nr_idle_scan, chosen CPU) with CPU 151 the only idle CPU of LLC 2 at 55% util."""
    st = make_state(**features)
    llc2_busy(st, idle=(151,), util=600.0)
    st.has_idle_cores[LLC2] = False
    waker = st.rqs[16].curr
    task(st, 0)
    p = task(st, 0, state="sleeping")
    nr = w.update_idle_cpu_scan(st, LLC2)
    d = w.select_task_rq_wake(st, p, waker, 16, sync=True)
    return nr, d.cpu


def test_sis_util_scans_9_of_16_cpus_at_55pct_llc_util_and_misses_idle_151() -> None:
    nr, cpu = _sis_util_case()
    assert nr == 9, "nr_idle_scan = 16 * (1 - (0.55 * 1.17)^2) = 9"
    assert cpu == 16, "151 is the 15th CPU scanned: the wakee stays on busy target 16"


def test_without_sis_util_the_avg_idle_limit_scans_far_enough_to_find_151() -> None:
    _, cpu = _sis_util_case(SIS_UTIL=False)
    assert cpu == 151, "SIS_PROP: avg_idle 1 ms against a near-zero scan cost: whole LLC"


def _sis_prop_case(
    wake_avg_idle: int, jiffies_busy: int = 0, idle: tuple[int, ...] = (151,)
) -> tuple[State, int]:
    """SIS_PROP with CPU 151 (by default) the only idle CPU of LLC 2, the 15th the scan from
    target 16 checks; the LLC's average scan cost 1 us, so the budget is 16 * wake_avg_idle /
    1 us."""
    st = make_state(SIS_UTIL=False)
    llc2_busy(st, idle=idle, util=600.0)
    st.has_idle_cores[LLC2] = False
    st.avg_scan_cost_ns[LLC2] = 999
    st.rqs[16].wake_avg_idle = wake_avg_idle
    st.now += jiffies_busy * TICK_NS
    task(st, 0)
    p = task(st, 0, state="sleeping")
    return st, w.select_task_rq_wake(st, p, st.rqs[16].curr, 16, sync=True).cpu


def test_sis_prop_budget_of_16_cpus_reaches_idle_151_the_15th_checked() -> None:
    st, cpu = _sis_prop_case(1_000)
    assert cpu == 151, "16 * 1000 / 1000 = 16: 15 CPUs checked, the last is 151"
    assert st.scan_checked == 15, "the waker pays for 15 checks (Engine._ttwu)"
    checked = 15 * SIS_SCAN_COST_PER_CPU_NS
    assert st.rqs[16].wake_avg_idle == 1_000 - checked, "the scan's time comes off the prediction"
    assert st.avg_scan_cost_ns[LLC2] == 999 + (checked - 999) // 8 + 1, "update_avg, C's division"


def test_sis_prop_prediction_halves_per_busy_jiffy_and_the_scan_stops_before_151() -> None:
    st, cpu = _sis_prop_case(1_000, jiffies_busy=1)
    assert cpu == 16, "500 ns left after one jiffy: budget 8, 151 not reached"
    assert st.scan_checked == 7
    assert st.rqs[16].wake_avg_idle == 500 and st.rqs[16].wake_stamp == NOW // TICK_NS + 1
    assert st.avg_scan_cost_ns[LLC2] == 999, "a scan that ran out of budget is not accounted"


def test_sis_prop_still_checks_3_cpus_once_the_prediction_has_aged_away() -> None:
    st, cpu = _sis_prop_case(1_000, jiffies_busy=20, idle=(19, 151))
    assert st.rqs[16].wake_avg_idle == 0
    assert cpu == 19, "the budget's floor of 4 checks 17, 18 and 19"


def test_llc_at_85pct_util_is_not_scanned_and_the_wakee_lands_on_busy_target() -> None:
    st = make_state()
    llc2_busy(st, idle=(151,))
    st.has_idle_cores[LLC2] = False
    assert w.update_idle_cpu_scan(st, LLC2) == 0
    task(st, 0)
    p = task(st, 0, state="sleeping")
    d = w.select_task_rq_wake(st, p, st.rqs[16].curr, 16, sync=True)
    assert d.cpu == 16 and d.reason == w.R_SCAN_OFF, d.explain()


def test_full_llc_keeps_the_wakee_on_busy_target_while_llc3_idles() -> None:
    st = make_state()
    llc2_busy(st)
    task(st, 0)
    p = task(st, 0, state="sleeping")
    d = w.select_task_rq_wake(st, p, st.rqs[16].curr, 16, sync=True)
    assert d.cpu == 16 and d.reason == w.R_NO_IDLE, "the wakeup never looks outside the LLC"
    assert not st.has_idle_cores[LLC2], "a failed idle-core scan clears has_idle_cores"


def test_wake_wide_hint_searches_the_parent_domain_when_the_llc_is_full() -> None:
    st = make_state()
    llc2_busy(st)
    task(st, 0)
    p = task(st, 0, state="sleeping", hints=HINT_WAKE_WIDE)
    d = w.select_task_rq_wake(st, p, st.rqs[16].curr, 16, sync=True)
    assert d.cpu == 24 and d.reason == w.R_WIDE_PARENT, d.explain()


def test_wake_wide_many_to_one_waker_skips_affinity_and_stays_on_prev_llc() -> None:
    st = make_state()
    waker = task(st, 16)
    p = task(st, 0, state="sleeping")
    waker.wakee_flips, p.wakee_flips = 300, 16
    waker.wakee_flip_decay_ns = st.now  # flips were counted within the last second
    d = w.select_task_rq_wake(st, p, waker, 16, sync=True)
    assert d.cpu == 0 and d.via == w.R_WIDE, d.explain()
    st2 = make_state()
    waker2 = task(st2, 16)
    p2 = task(st2, 0, state="sleeping")
    assert st2.sd.llc_id[w.select_task_rq_wake(st2, p2, waker2, 16, sync=True).cpu] == LLC2


def test_wake_affine_weight_pulls_to_less_loaded_waker_llc() -> None:
    st = make_state()
    waker = task(st, 16, load=1024.0)
    for _ in range(3):
        task(st, 0, load=1024.0)
    p = task(st, 0, state="sleeping", load=300.0)
    d = w.select_task_rq_wake(st, p, waker, 16, sync=False)
    assert d.via == w.R_WA_WEIGHT_THIS and d.affine and st.sd.llc_id[d.cpu] == LLC2, d.explain()


def test_wake_affine_weight_keeps_prev_when_waker_cpu_is_busier() -> None:
    st = make_state()
    waker = task(st, 16, load=3000.0)
    task(st, 1, load=1024.0)
    p = task(st, 1, state="sleeping", load=300.0)
    d = w.select_task_rq_wake(st, p, waker, 16, sync=False)
    assert d.via == w.R_WA_WEIGHT_PREV and not d.affine and st.sd.llc_id[d.cpu] == LLC0, d.explain()


# --- hints ----------------------------------------------------------------------------


def test_wake_affine_hint_pulls_the_futex_wakee_to_the_wakers_llc_with_an_idle_core() -> None:
    st = make_state()
    waker = task(st, 16)
    p = task(st, 0, state="sleeping", hints=HINT_WAKE_AFFINE)
    d = w.select_task_rq_wake(st, p, waker, 16, sync=False)
    assert st.sd.llc_id[d.cpu] == LLC2 and d.via == w.R_HINT_AFFINE, d.explain()
    assert d.cpu == 17


def test_wake_affine_hint_is_ignored_when_the_wakers_llc_has_no_idle_core() -> None:
    st = make_state()
    waker = task(st, 16)
    st.has_idle_cores[LLC2] = False
    p = task(st, 0, state="sleeping", hints=HINT_WAKE_AFFINE)
    d = w.select_task_rq_wake(st, p, waker, 16, sync=False)
    assert d.cpu == 0 and d.via == w.R_WA_PREV_IDLE, d.explain()


def test_wake_affine_hint_onto_an_llc_at_85pct_util_stacks_on_the_waker_and_keeps_a_stale_idle_core() -> None:
    # v6.0's select_idle_cpu returns at SIS_UTIL's zero budget before its idle-core scan, and
    # so before that scan's set_idle_cores(false): has_idle_cores, set when core 23/151 went
    # idle, stays set, the hint keeps pulling wakees into the overloaded LLC, and each lands
    # on the waker's busy CPU although core 23 is idle (the RFC's known limitation).
    st = make_state()
    llc2_busy(st, idle=(23, 151))
    assert w.update_idle_cpu_scan(st, LLC2) == 0, "14 of 16 CPUs at full util: 87.5%"
    assert st.has_idle_cores[LLC2]
    p = task(st, 0, state="sleeping", hints=HINT_WAKE_AFFINE)
    d = w.select_task_rq_wake(st, p, st.rqs[16].curr, 16, sync=False)
    assert d.via == w.R_HINT_AFFINE and d.cpu == 16 and d.reason == w.R_SCAN_OFF, d.explain()
    assert st.has_idle_cores[LLC2], "no scan ran, so nothing cleared the flag"


def test_sis_util_budget_rounds_as_the_kernels_integers_so_82pct_still_scans() -> None:
    # update_idle_cpu_scan() in v6.0's integers: 14 of LLC 2's 16 CPUs at util 969, sum_util
    # 13566: x = 13566 / 16 = 847, tmp = 847^2 * 117^2 / 10240000 = 959 (truncated), y = 65,
    # nr = 65 * 16 / 1024 = 1. In fractions, 16 * (1 - (0.828 * 1.17)^2) = 0.98 -> 0: no
    # scan at all, and the wake_affine wakee would stack on busy 16 with core 23 idle.
    st = make_state()
    llc2_busy(st, idle=(23, 151), util=969.0)
    assert w.update_idle_cpu_scan(st, LLC2) == 1
    assert st.has_idle_cores[LLC2]
    p = task(st, 0, state="sleeping", hints=HINT_WAKE_AFFINE)
    d = w.select_task_rq_wake(st, p, st.rqs[16].curr, 16, sync=False)
    assert d.via == w.R_HINT_AFFINE and d.cpu == 23 and d.reason == w.R_IDLE_CORE, d.explain()


def test_a_hinted_wakeup_across_llcs_still_counts_in_the_wakers_flips() -> None:
    # record_wakee() runs first in select_task_rq_fair() for every wakeup, before the RFC's
    # hint test: a waker fanning out to hinted wakees builds the flips wake_wide() reads
    st = make_state()
    waker = task(st, 16)
    a = task(st, 0, state="sleeping", hints=HINT_WAKE_AFFINE)
    b = task(st, 8, state="sleeping", hints=HINT_WAKE_AFFINE)
    assert w.select_task_rq_wake(st, a, waker, 16, sync=False).via == w.R_HINT_AFFINE
    assert w.select_task_rq_wake(st, b, waker, 16, sync=False).via == w.R_HINT_AFFINE
    assert waker.wakee_flips == 2 and waker.last_wakee is b


def test_a_timer_wakeup_counts_in_the_flips_of_the_task_it_interrupts() -> None:
    # A timer (hrtimer_wakeup -> try_to_wake_up) runs in the interrupted task's context:
    # select_task_rq_fair()'s record_wakee() and wake_wide() read that `current`, so a task
    # running on the CPU where sleepers' timers fire builds wakee flips of its own
    st = make_state()
    running = task(st, 17)
    a = task(st, 17, state="sleeping")
    b = task(st, 17, state="sleeping")
    w.select_task_rq_wake(st, a, None, 17, sync=False)
    w.select_task_rq_wake(st, b, None, 17, sync=False)
    assert running.wakee_flips == 2 and running.last_wakee is b


def test_wake_hold_hint_keeps_the_sync_wakee_on_prevs_llc() -> None:
    st = make_state()
    waker = task(st, 16)
    task(st, 0)
    p = task(st, 0, state="sleeping", hints=HINT_WAKE_HOLD)
    d = w.select_task_rq_wake(st, p, waker, 16, sync=True)
    assert d.cpu == 1 and d.via == w.R_HINT_HOLD and d.reason == w.R_IDLE_CORE, d.explain()
    st2 = make_state()
    task(st2, 0)
    p2 = task(st2, 0, state="sleeping")
    d2 = w.select_task_rq_wake(st2, p2, task(st2, 16), 16, sync=True)
    assert st2.sd.llc_id[d2.cpu] == LLC2, "without the hint the sync wakeup follows the waker"


# --- features -------------------------------------------------------------------------


def _short_waker_case(**features: bool) -> int:
    st = make_state(**features)
    waker = task(st, 16, load=2000.0)
    waker.nvcsw, waker.avg_run_ns = 10, 100_000
    task(st, 0, load=1024.0)
    p = task(st, 0, state="sleeping", load=0.0)
    d = w.select_task_rq_wake(st, p, waker, 16, sync=False)
    return d.cpu


def test_sis_short_wakes_on_the_wakers_llc_when_the_waker_is_short() -> None:
    st = make_state()
    assert st.sd.llc_id[_short_waker_case()] == LLC0, "default: wake_affine_weight keeps prev's LLC"
    assert st.sd.llc_id[_short_waker_case(SIS_SHORT=True)] == LLC2, "SIS_SHORT: this_cpu runs a short task"


def test_sis_short_leaves_a_wakee_whose_prev_is_idle_there() -> None:
    # wake_affine_idle() tests the idle prev before SIS_SHORT's short waker (the patch's order)
    st = make_state(SIS_SHORT=True)
    waker = task(st, 16)
    waker.nvcsw, waker.avg_run_ns = 10, 100_000
    p = task(st, 0, state="sleeping")
    d = w.select_task_rq_wake(st, p, waker, 16, sync=False)
    assert d.cpu == 0 and d.via == w.R_WA_PREV_IDLE, d.explain()


def test_sis_short_returns_busy_target_when_both_tasks_are_short_on_a_busy_llc() -> None:
    def case(**features: bool) -> tuple[int, str]:
        st = make_state(**features)
        llc2_busy(st, idle=(17,))
        st.has_idle_cores[LLC2] = False
        st.nr_idle_scan[LLC2] = 5
        waker = st.rqs[16].curr
        assert waker is not None
        waker.nvcsw, waker.avg_run_ns = 10, 50_000
        task(st, 0)
        p = task(st, 0, state="sleeping")
        p.nvcsw, p.avg_run_ns = 10, 50_000
        d = w.select_task_rq_wake(st, p, waker, 16, sync=True)
        return d.cpu, d.reason

    assert case() == (17, w.R_IDLE_CPU)
    assert case(SIS_SHORT=True) == (16, w.R_SIS_SHORT)


def _light_waker_on_16(cpu16_util: float = 100.0, **features: bool) -> tuple[int, str]:
    """A sync wakeup from a light waker (util and util_est 100) on CPU 16 whose util_avg is
    cpu16_util (more than 100: blocked utilization of tasks that slept there)."""
    st = make_state(**features)
    waker = task(st, 16, util=100.0)
    st.rqs[16].util_est = 100.0
    st.rqs[16].util = cpu16_util
    task(st, 0)
    p = task(st, 0, state="sleeping", util=100.0)
    d = w.select_task_rq_wake(st, p, waker, 16, sync=True)
    return d.cpu, d.reason


def test_util_fits_capacity_accepts_the_busy_but_light_target() -> None:
    assert _light_waker_on_16() == (17, w.R_IDLE_CORE)
    assert _light_waker_on_16(UTIL_FITS_CAPACITY=True) == (16, w.R_TARGET_FITS)


def test_select_bias_prev_keeps_the_light_prev_over_an_idle_target() -> None:
    def case(**features: bool) -> tuple[int, str]:
        st = make_state(**features)
        task(st, 17, util=100.0)
        p = task(st, 17, state="sleeping", util=100.0)
        d = w.select_task_rq_wake(st, p, None, 20, sync=False)
        return d.cpu, d.reason

    assert case(UTIL_FITS_CAPACITY=True) == (20, w.R_TARGET_IDLE)
    assert case(SELECT_BIAS_PREV=True) == (20, w.R_TARGET_IDLE), "busy prev is not idle without UFC"
    assert case(UTIL_FITS_CAPACITY=True, SELECT_BIAS_PREV=True) == (17, w.R_BIAS_PREV)


def test_util_fits_capacity_counts_the_runnable_tasks_util_est_not_the_cpus_blocked_util() -> None:
    # Desnoyers' task_fits_remaining_cpu_capacity(): cfs.avg.util_est.enqueued (the runnable
    # tasks' estimates) plus the wakee's task_util_est(). CPU 16 runs a light waker (util_est
    # 100) but still carries 800 of blocked utilization from tasks that slept: its util_avg is
    # 900, over 80% with the wakee's 100, yet its runnable estimate leaves room.
    assert _light_waker_on_16(900.0) == (17, w.R_IDLE_CORE)
    assert _light_waker_on_16(900.0, UTIL_FITS_CAPACITY=True) == (16, w.R_TARGET_FITS)


def test_util_fits_capacity_takes_the_wakees_util_est_when_above_its_decayed_util() -> None:
    # a task whose util_avg decayed while it slept still brings its util_est (ewma 700): with
    # the waker's 200 that is over 80% of CPU 16, so the idle core is taken instead
    def case(ewma: float) -> tuple[int, str]:
        st = make_state(UTIL_FITS_CAPACITY=True)
        waker = task(st, 16, util=200.0)
        st.rqs[16].util_est = 200.0
        task(st, 0)
        p = task(st, 0, state="sleeping", util=50.0)
        p.ue_ewma = ewma
        d = w.select_task_rq_wake(st, p, waker, 16, sync=True)
        return d.cpu, d.reason

    assert case(0.0) == (16, w.R_TARGET_FITS)
    assert case(700.0) == (17, w.R_IDLE_CORE)


def test_select_bias_prev_keeps_a_busy_prev_when_the_scan_finds_no_idle_cpu() -> None:
    # the RFC's second part (Chen Yu's suggestion): LLC 2 (CPUs 16-23, 144-151) all busy, the
    # scan fails; the task goes back to prev 17 instead of stacking on the waker's CPU 16
    def case(**features: bool) -> tuple[int, str]:
        st = make_state(**features)
        llc2_busy(st)
        p = task(st, 17, state="sleeping")
        d = w.select_task_rq_wake(st, p, st.rqs[16].curr, 16, sync=True)
        return d.cpu, d.reason

    cpu, _ = case()
    assert cpu == 16
    assert case(SELECT_BIAS_PREV=True) == (17, w.R_BIAS_PREV_BUSY)


def test_no_mc_scans_the_whole_socket_and_finds_llc3() -> None:
    def case(**features: bool) -> int:
        st = make_state(**features)
        llc2_busy(st)
        task(st, 0)
        p = task(st, 0, state="sleeping")
        return w.select_task_rq_wake(st, p, st.rqs[16].curr, 16, sync=True).cpu

    assert case() == 16
    assert case(NO_MC=True) == 24


def test_a_cpu_another_cpus_wakeup_just_chose_still_looks_idle_until_its_ttwu_pending_shows() -> None:
    # the select_task_rq()/ttwu_queue() race (cost.WAKE_SELECT_RACE_NS): a wakeup from CPU 16
    # chose idle CPU 17 at time 0; its wakee is queued there, not running yet (idle exit)
    st = make_state()
    task(st, 17, state="queued")
    rq = st.rqs[17]
    rq.pending_until, rq.pending_from = st.now + WAKE_SELECT_RACE_NS, 16
    assert not st.idle_cpu(17), "outside a wakeup's selection (balance, fork) it is busy"
    st.selecting_from = 20
    assert st.idle_cpu(17), "a selection on CPU 20 reads it before its ttwu_pending is set"
    st.selecting_from = 16
    assert not st.idle_cpu(17), "the waker that chose it knows"
    st.selecting_from = 20
    st.now += WAKE_SELECT_RACE_NS
    assert not st.idle_cpu(17), "the window has closed"


def test_two_wakers_on_different_cpus_within_the_race_window_stack_both_wakees_on_one_idle_cpu() -> None:
    # LLC 2 busy but CPU 17; p's prev 18 busy. CPU 16's waker just sent its wakee to 17; a
    # sync wakeup from CPU 20 in the same window scans from 21 and finds 17 "idle" too
    def case(ns_later: int) -> int:
        st = make_state()
        llc2_busy(st, idle=(17,))
        task(st, 17, state="queued")
        st.rqs[17].pending_until, st.rqs[17].pending_from = st.now + WAKE_SELECT_RACE_NS, 16
        st.now += ns_later
        p = task(st, 18, state="sleeping")
        st.selecting_from = 20
        cpu = w.select_task_rq_wake(st, p, st.rqs[20].curr, 20, sync=True).cpu
        st.selecting_from = -1
        return cpu

    assert case(100) == 17
    assert case(WAKE_SELECT_RACE_NS) == 20, "once visible, no idle CPU: the waker's CPU"
