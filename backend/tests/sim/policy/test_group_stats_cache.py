"""load_balance keeps one GroupStats per sched group and, asked again within the same tick,
computes a group again only when one of its runqueues changed since (State.changed) or a NOHZ
blocked-load update came (State.blocked_update): the statistics it uses must always be the
ones a fresh computation gives."""

from __future__ import annotations

import pytest

from placemap.sim.cost import TICK_NS
from placemap.sim.policy import balance as b
from placemap.sim.policy.groups import GroupStats
from placemap.sim.state import State, enter_idle, settle_pelt_ts
from tests.sim.scaffold import NOW, make_state, task

FIELDS = ("idle_cpus", "nr_running", "load", "util", "group_type", "avg_load")


def _check(st: State, cpu: int, level: int) -> dict[int, tuple[object, ...]]:
    """Balance cpu at level (newly idle) and compare the kept statistics of each group with a
    fresh computation; returns the kept ones by group id."""
    b.load_balance(st, cpu, level, b.CPU_NEWLY_IDLE, [[0] * 8 for _ in st.rqs])
    sd = st.sd.per_cpu[cpu][level]
    kept = {}
    for cpus, gid in zip(sd.groups, sd.group_ids, strict=True):
        gs = st.group_stats[gid]
        assert gs is not None
        fresh = GroupStats(st, cpus, st.group_rqs[gid], None, sd.imbalance_pct, footprint=False)
        have = tuple(getattr(gs, f) for f in FIELDS)
        assert have == tuple(getattr(fresh, f) for f in FIELDS), f"group {cpus[:4]}..."
        kept[gid] = have
    return kept


def test_group_statistics_follow_every_runqueue_change_at_one_instant() -> None:
    st = make_state()
    for c in (8, 9, 9, 64):
        task(st, c, util=300.0)
    top = len(st.sd.per_cpu[0]) - 1  # NUMA: both nodes' groups
    before = _check(st, 0, top)
    assert _check(st, 0, top) == before, "nothing changed: the same statistics"
    # the same instant: a task wakes on CPU 70 (node 1), another blocks on CPU 8 (node 0)
    task(st, 70, util=500.0)
    rq8 = st.rqs[8]
    assert rq8.curr is not None
    st.dequeue_sleep(rq8.curr)
    after = _check(st, 0, top)
    assert after != before
    n0, n1 = st.sd.per_cpu[0][top].group_ids
    assert after[n0][1] == before[n0][1] - 1 and after[n1][1] == before[n1][1] + 1  # nr_running
    # a queued task moved between nodes (load balancing)
    queued = st.rqs[9].queue[0]
    st.move_queued(queued, 100)
    moved = _check(st, 0, top)
    assert moved[n0][1] == after[n0][1] - 1 and moved[n1][1] == after[n1][1] + 1


def test_a_group_none_of_whose_runqueues_ever_changed_is_not_walked_and_gives_the_same() -> None:
    st = make_state()
    for c in (8, 9):
        task(st, c, util=300.0)
    top = len(st.sd.per_cpu[0]) - 1
    n0, n1 = st.sd.per_cpu[0][top].group_ids
    node1 = st.sd.per_cpu[0][top].groups[1]
    _check(st, 0, top)
    gs1 = st.group_stats[n1]
    assert gs1 is not None and gs1.untouched == len(node1)
    st.now += 3_000_000  # a later instant: node 1's runqueues are not brought to now ...
    st.blocked_update()  # (where a NOHZ blocked-load update has just put idle CPUs' averages)
    b.load_balance(st, 0, top, b.CPU_NEWLY_IDLE, [[0] * 8 for _ in st.rqs])
    assert gs1.at_untouched == st.now and gs1.idle_cpus == len(node1) and gs1.util == 0.0
    assert all(st.rqs[c].pelt_ts == NOW for c in node1)
    for c in node1:  # ... only their pelt_ts is, afterwards, where the walk would have left it
        settle_pelt_ts(st.rqs[c])
    assert all(st.rqs[c].pelt_ts == st.now for c in node1)
    _check(st, 0, top)  # a fresh computation agrees
    st.now += 3_000_000
    task(st, 70, util=500.0)  # node 1's first task: walked again from now on
    assert gs1.untouched == len(node1) - 1
    assert _check(st, 0, top)[n1][1] == 1
    gs0 = st.group_stats[n0]
    assert gs0 is not None and gs0.untouched == len(node1) - 2  # CPUs 8 and 9 changed


def test_group_statistics_kept_within_a_tick_follow_ticks_and_blocked_load_updates() -> None:
    """What the kernel reads of a runqueue changes only at its own updates, at a tick while it
    runs and at a NOHZ blocked-load update while it is idle: kept statistics serve later
    instants of the same tick, and every one of those three makes them computed again."""
    st = make_state()
    for c in (8, 9, 64):
        task(st, c, util=300.0)
    task(st, 10, state="sleeping", util=600.0)  # idle CPU 10 carries blocked load
    top = len(st.sd.per_cpu[0]) - 1
    n0 = st.sd.per_cpu[0][top].group_ids[0]
    before = _check(st, 0, top)
    gs0 = st.group_stats[n0]
    assert gs0 is not None
    st.now += 1_000_000  # the same tick: nothing the kernel reads has changed
    assert _check(st, 0, top) == before and st.rqs[8].pelt_ts == NOW
    st.blocked_update()  # CPU 10's blocked load decays by 1 ms
    after_update = _check(st, 0, top)
    assert after_update[n0][2] < before[n0][2], "node 0's load: CPU 10's blocked load decayed"
    st.now = NOW + TICK_NS  # the next tick: the running CPUs' averages move on
    after_tick = _check(st, 0, top)
    assert after_tick[n0][3] > after_update[n0][3], "node 0's util: CPUs 8 and 9 ran a tick"


def _seen_case() -> tuple[State, tuple[int, ...]]:
    st = make_state()
    llc = st.sd.llc_spans[0]
    for c in llc[:3]:
        task(st, c, util=400.0)
    sleepers = [task(st, c) for c in llc[3:6]]
    st.now += 6_000_000
    for p in sleepers:
        st.dequeue_sleep(p)
    kept = st.rqs[llc[3]]
    enter_idle(kept, st.now)
    kept.kept_ticks = 2
    return st, llc


def test_group_statistics_read_each_runqueue_as_state_seen_does() -> None:
    """GroupStats.compute inlines State.seen: a group's load and util are the sums of what
    cpu_load() and cpu_util() read, for busy CPUs (last tick), idle ones (last blocked-load
    update) and an idle one that kept its tick, at instants on both sides of those. Read in
    both orders (each read brings runqueues forward only), so that neither may go further."""
    a, llc = _seen_case()
    b, _ = _seen_case()
    # idle from +6 ms, its two kept ticks at +8 and +12 ms: read at +7, +9.5, +13.5 (past both),
    # +17.5 (a blocked-load update) and +37.5 ms
    for step, update in (
        (1_000_000, False),
        (2_500_000, False),
        (TICK_NS, False),
        (TICK_NS, True),
        (5 * TICK_NS, False),
    ):
        for st in (a, b):
            st.now += step
            if update:
                st.blocked_update()
        sums_a = (sum(a.cpu_load(c) for c in llc), sum(a.cpu_util(c) for c in llc))
        gs_a = GroupStats(a, llc, [a.rqs[c] for c in llc], None, 117, footprint=False)
        gs_b = GroupStats(b, llc, [b.rqs[c] for c in llc], None, 117, footprint=False)
        sums_b = (sum(b.cpu_load(c) for c in llc), sum(b.cpu_util(c) for c in llc))
        for load, util in (sums_a, sums_b, (gs_a.load, gs_a.util), (gs_b.load, gs_b.util)):
            assert load == pytest.approx(sums_a[0], rel=1e-12) and util == pytest.approx(sums_a[1], rel=1e-12)
