"""PELT-like averages and runqueue bookkeeping."""

from __future__ import annotations

import pytest

from placemap.sim.state import PELT_HALFLIFE_NS, TASK_RUNNABLE, TASK_SLEEPING, Task, decay
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
