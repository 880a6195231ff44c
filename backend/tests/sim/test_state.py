"""PELT-like averages and runqueue bookkeeping."""

from __future__ import annotations

import pytest

from placemap.sim.cost import TICK_NS
from placemap.sim.policy.wakeup import update_idle_cpu_scan
from placemap.sim.state import (
    LOAD_AVG_PERIOD_NS,
    NO_TYPICAL_US,
    PELT_HALFLIFE_NS,
    QUIET_IDLE_US,
    TASK_RUNNABLE,
    TASK_SLEEPING,
    TICK_WAKEUP_US,
    Rq,
    State,
    Task,
    decay,
    enter_idle,
    governor_kept_ticks,
    kept_tick,
    record_idle,
    task_util_est,
    typical_interval_us,
)
from tests.sim.scaffold import make_state, task


def test_decay_halves_every_32_periods_of_1024us() -> None:
    assert decay(PELT_HALFLIFE_NS) == pytest.approx(0.5)
    assert decay(0) == 1.0


def test_a_running_task_util_converges_to_1024_and_decays_asleep() -> None:
    st = make_state("bdw-1s-20")
    p = task(st, 0)
    st.now += 10 * PELT_HALFLIFE_NS
    assert st.task_util(p) == pytest.approx(1024, abs=1.5)
    assert st.cpu_util(0) == pytest.approx(1024, abs=1.5)
    st.dequeue_sleep(p)
    assert p.state == TASK_SLEEPING
    st.now += PELT_HALFLIFE_NS
    assert st.task_util(p) == pytest.approx(512, abs=1.5)


def test_runnable_but_waiting_task_gains_load_not_util() -> None:
    st = make_state("bdw-1s-20")
    task(st, 0)
    q = task(st, 0)  # queued behind the first
    assert q.state == TASK_RUNNABLE and st.rqs[0].curr is not q
    st.now += 10 * PELT_HALFLIFE_NS
    st.update_task(q)
    assert q.util == 0.0 and q.load == pytest.approx(1024, abs=1.5)


def test_migration_carries_the_task_averages() -> None:
    st = make_state("bdw-1s-20")
    task(st, 0)
    q = task(st, 0, util=300.0, load=300.0)
    before = st.cpu_util(0), st.cpu_util(1)
    st.move_queued(q, 1)
    assert st.cpu_util(1) == pytest.approx(before[1] + 300)
    assert st.cpu_util(0) == pytest.approx(before[0] - 300)
    assert st.nr_overloaded == 0


def test_short_task_needs_a_measured_average() -> None:
    st = make_state("bdw-1s-20")
    p = Task(1, "x")
    assert not st.is_short(p, 750_000), "never switched voluntarily: unknown, not short"
    p.nvcsw, p.avg_run_ns = 3, 100_000
    assert st.is_short(p, 750_000)


def test_runqueue_averages_decay_exactly_by_their_own_interval() -> None:
    # State reuses the last exp() for the same interval: runqueues brought to now over equal
    # and over different intervals, in any order, decay exactly (bit for bit) as decay(dt)
    st = make_state("bdw-1s-20")
    for c, u in enumerate((900.0, 700.0, 500.0, 300.0)):
        st.rqs[c].util = st.rqs[c].load = u
    base = st.now
    st.rqs[1].pelt_ts = base - 3_000_000
    st.rqs[3].pelt_ts = base - 3_000_000
    st.now = base + 5_000_000
    for c in (0, 1, 2, 3, 0):
        st.pelt(st.rqs[c])
    for c, u, dt in (
        (0, 900.0, 5_000_000),
        (1, 700.0, 8_000_000),
        (2, 500.0, 5_000_000),
        (3, 300.0, 8_000_000),
    ):
        assert st.rqs[c].util == u * decay(dt) + 0.0 and st.rqs[c].load == u * decay(dt) + 0.0
        assert st.rqs[c].pelt_ts == st.now


def _run_then_sleep(st: State, cpu: int, run_ns: int) -> Task:
    p = task(st, cpu)
    st.now += run_ns
    st.dequeue_sleep(p)
    return p


def test_util_est_jumps_up_at_once_and_comes_down_by_a_quarter() -> None:
    st = make_state("bdw-1s-20")
    p = _run_then_sleep(st, 0, 30_000_000)
    u1 = p.util
    assert (p.ue_enqueued, p.ue_ewma) == (u1, u1), "UTIL_EST_FASTUP: an increase is taken whole"
    p.util = u1 - 400.0  # a much shorter activation next
    st.enqueue(p, 0)
    st.set_curr(st.rqs[0], p)
    p.pelt_ts = st.now  # no time passes: the util at dequeue is the one set above
    st.dequeue_sleep(p)
    assert p.ue_enqueued == u1 - 400.0
    assert p.ue_ewma == pytest.approx(u1 - 100.0), "ewma moves 1/4 of the way down"
    assert task_util_est(p) == p.ue_ewma
    before = (p.ue_enqueued, p.ue_ewma)
    p.util = p.ue_ewma - 5.0  # within 1% of the ewma, not of the last enqueued (295 away)
    st.enqueue(p, 0)
    st.set_curr(st.rqs[0], p)
    p.pelt_ts = st.now
    st.dequeue_sleep(p)
    assert p.ue_ewma == before[1] and p.ue_enqueued == p.util, "ewma within the margin: kept"


def test_a_woken_task_weighs_its_estimate_on_its_cpu_util() -> None:
    """cpu_util_cfs() with UTIL_EST: a task woken after a long sleep counts with its util at
    its last dequeue, not its decayed util_avg, until it sleeps again."""
    st = make_state("bdw-1s-20")
    p = _run_then_sleep(st, 3, 30_000_000)
    at_dequeue = p.ue_enqueued
    assert at_dequeue > 400
    st.now += 30_000_000
    st.blocked_update()  # the idle CPU's blocked load brought to now (NOHZ stats)
    assert st.cpu_util(3) < 0.6 * at_dequeue, "asleep: the CPU's util decays, no estimate"
    st.enqueue(p, 3)
    assert st.cpu_util(3) == pytest.approx(at_dequeue), "runnable again: its estimate counts"
    st.set_curr(st.rqs[3], p)
    st.dequeue_sleep(p)
    assert st.rqs[3].util_est == 0.0 and st.cpu_util(3) < 0.6 * at_dequeue


def test_a_herd_just_woken_stops_the_sis_util_scan() -> None:
    """SIS_UTIL reads cpu_util_cfs(): 14 of 16 CPUs of an LLC whose tasks ran 300 ms and slept
    30 ms look half busy by util_avg (a scan budget of several CPUs) but, once woken, full by
    their estimates, and the scan stops."""
    st = make_state("zen3-2s-nps1")
    span = st.sd.llc_spans[2]
    herd = [task(st, c) for c in span[:14]]
    st.now += 300_000_000  # running together: util ~1024 each
    for p in herd:
        st.dequeue_sleep(p)
    st.now += 30_000_000
    assert update_idle_cpu_scan(st, 2) == 0, "no blocked-load update yet: read as at the sleep"
    st.blocked_update()
    assert update_idle_cpu_scan(st, 2) >= 4, "asleep: decayed util leaves a budget"
    for p, c in zip(herd, span[:14], strict=True):
        st.enqueue(p, c)
    assert update_idle_cpu_scan(st, 2) == 0, "woken: estimates of ~14 busy CPUs (>85%)"


def test_an_idle_cpu_is_read_as_of_its_last_blocked_load_update() -> None:
    """v5.13+: nothing decays a tickless idle CPU's blocked load but a NOHZ blocked-load update;
    cpu_util_cfs() and cpu_load() read it as of then (or of the CPU's own last update)."""
    st = make_state("bdw-1s-20")
    p = _run_then_sleep(st, 3, 30_000_000)
    rq = st.rqs[3]
    util0, load0, slept = rq.util, rq.load, st.now
    assert util0 > 400 and load0 > 400
    st.now += 20_000_000
    assert st.cpu_util(3) == util0 and st.cpu_load(3) == load0, "20 ms later: still as at the sleep"
    assert st.blocked_ts < slept
    st.blocked_update()
    assert st.cpu_load(3) == pytest.approx(load0 * decay(20_000_000)), "the update decays it to now"
    assert st.next_blocked == st.now - st.now % TICK_NS + LOAD_AVG_PERIOD_NS
    at_update = st.cpu_load(3)
    st.now += 10_000_000
    assert st.cpu_load(3) == at_update, "10 ms after the update: as of the update"
    st.enqueue(p, 3)  # its own update (an enqueue) brings it to now (p's load was on it already)
    assert rq.pelt_ts == st.now and st.cpu_load(3) == pytest.approx(load0 * decay(30_000_000))


def test_a_busy_cpu_is_read_as_of_its_last_tick() -> None:
    """entity_tick() updates a running CPU's averages every tick (HZ=250, ticks on the 4 ms
    grid); between ticks its readers see the last tick's values."""
    st = make_state("bdw-1s-20")
    assert st.now % TICK_NS == 0
    task(st, 5, util=100.0)
    rq = st.rqs[5]
    start, util0 = st.now, rq.util
    st.now = start + TICK_NS + 3_000_000  # 1 ms before the second tick
    seen = st.cpu_util(5)
    assert rq.pelt_ts == start + TICK_NS, "brought to the first tick, not to now"
    assert seen == pytest.approx(util0 * decay(TICK_NS) + 1024.0 * (1 - decay(TICK_NS)))
    st.now = start + 2 * TICK_NS
    assert st.cpu_util(5) > seen and rq.pelt_ts == st.now, "at the second tick: updated"


def test_an_idle_cpu_is_read_as_of_the_last_tick_it_kept() -> None:
    """The governor kept two ticks of this CPU (Rq.kept_ticks, set on entering idle); each
    that finds it still idle updates its blocked load; after the second the tick is stopped."""
    st = make_state("bdw-1s-20")
    p = _run_then_sleep(st, 3, 30_000_000)  # asleep at NOW + 30 ms, between two ticks
    rq = st.rqs[3]
    slept, load0 = st.now, rq.load
    enter_idle(rq, slept)
    rq.kept_ticks = 2
    first_tick = slept - slept % TICK_NS + TICK_NS
    assert kept_tick(rq, first_tick - 1) == -1
    assert kept_tick(rq, first_tick + 5) == first_tick
    assert kept_tick(rq, first_tick + TICK_NS) == first_tick + TICK_NS
    assert kept_tick(rq, first_tick + 9 * TICK_NS) == first_tick + TICK_NS, "two kept, then stopped"
    st.now = first_tick - 1
    assert st.cpu_load(3) == load0, "before its tick: as at the sleep"
    st.now = first_tick + 1_000_000
    at_tick = load0 * decay(first_tick - slept)
    assert st.cpu_load(3) == pytest.approx(at_tick), "its first tick updated it"
    st.now = first_tick + 5 * TICK_NS
    at_second = load0 * decay(first_tick + TICK_NS - slept)
    assert st.cpu_load(3) == pytest.approx(at_second), "the second did; then the tick stopped"
    rq.kept_ticks = 0  # a long idle expected: the tick stops on entering idle
    assert kept_tick(rq, st.now) == -1
    assert p.state == TASK_SLEEPING


def test_typical_interval_is_menus_repeating_pattern_detector() -> None:
    """get_typical_interval(), traced by hand through menu.c's integer steps (us)."""
    # all eight: avg 960 >> 3 = 120, variance 8 * 20^2 / 8 = 400 <= 400
    assert typical_interval_us([100, 140] * 4) == 120
    # avg 46, variance 4988 >> 3 = 623: no; drop the largest (90): avg 280 // 7 = 40,
    # variance 2800 // 7 = 400: 40
    assert typical_interval_us([10, 50, 30, 70, 20, 90, 40, 60]) == 40
    # avg 93, variance 1524: no; drop both 150s: avg 75, variance 625 > 400 with only 6 of
    # 8 left (6 * 4 <= 24): no pattern
    assert typical_interval_us([50, 100, 150, 50, 100, 150, 50, 100]) == NO_TYPICAL_US
    # avg 250, variance 62500: no; drop the 500s: the rest are 0 (max 0): no pattern
    assert typical_interval_us([0, 500] * 4) == NO_TYPICAL_US
    # one long period among short ones is dropped; a single short one left still has
    # variance 0 <= 400
    assert typical_interval_us([TICK_WAKEUP_US] * 7 + [100]) == 100
    assert typical_interval_us([TICK_WAKEUP_US] * 8) == TICK_WAKEUP_US


def test_the_governor_keeps_the_tick_until_the_pattern_of_short_idles_is_broken() -> None:
    st = make_state("bdw-1s-20")
    rq = st.rqs[3]
    assert governor_kept_ticks(rq) == 0, "before the run: long idle periods, tick stopped"
    rq.idle_hist = [100, 140] * 4
    # each kept tick replaces the oldest period by a long one; the 140s and 100s left keep a
    # variance of at most 400 down to the last one (traced by hand: 120, 122, 120, 124, 120,
    # 126, 120, 140 us), so all eight selections keep the tick and the ninth stops it
    assert governor_kept_ticks(rq) == 8
    rq.idle_hist = [50, 100, 150, 50, 100, 150, 50, 100]
    assert governor_kept_ticks(rq) == 0, "no pattern: the timer-based prediction, long"
    rq.idle_hist, rq.idle_hist_at = [TICK_WAKEUP_US] * 7 + [100], 7
    assert governor_kept_ticks(rq) == 1, "the first kept tick overwrites the only short period"


def test_a_quiet_cpu_keeps_its_tick_only_once_most_of_its_record_is_short() -> None:
    """Before the run a CPU's record holds distinct long periods (QUIET_IDLE_US): the outlier
    rule drops them one at a time and gives up at 6 of 8, so short idles make a pattern only
    once six of the eight are short."""
    st = make_state("bdw-1s-20")
    rq = st.rqs[3]
    assert typical_interval_us(list(QUIET_IDLE_US)) >= TICK_NS // 1000
    for n in range(1, 9):
        record_idle_us(rq, 50)
        assert (governor_kept_ticks(rq) > 0) == (n >= 6), (n, rq.idle_hist)


def record_idle_us(rq: Rq, us: int) -> None:
    enter_idle(rq, 10**10)
    rq.kept_ticks = 0
    record_idle(rq, 10**10 + us * 1000)


def test_an_idle_period_is_recorded_as_menu_update_records_it() -> None:
    """Woken after two of its three kept ticks: two long periods (the tick wakeups), then the
    rest since the second tick, measured."""
    st = make_state("bdw-1s-20")
    rq = st.rqs[3]
    rq.idle_hist, rq.idle_hist_at = [7] * 8, 6
    start = 10 * TICK_NS + 1_000_000
    enter_idle(rq, start)
    rq.kept_ticks = 3
    woke = 12 * TICK_NS + 250_000  # ticks at 11 and 12 x TICK found it idle
    record_idle(rq, woke)
    assert rq.idle_hist == [250, 7, 7, 7, 7, 7, TICK_WAKEUP_US, TICK_WAKEUP_US]
    assert rq.idle_hist_at == 1
    enter_idle(rq, woke + 1_000)
    rq.kept_ticks = 0
    record_idle(rq, woke + 31_000)  # tick stopped: the whole period, 30 us
    assert rq.idle_hist[1] == 30 and rq.idle_hist_at == 2
