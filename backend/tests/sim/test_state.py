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
