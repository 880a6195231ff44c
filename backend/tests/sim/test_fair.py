"""The fair class's per-task state against v6.0's kernel/sched/fair.c and core.c: what a forked
child inherits, where vruntime is placed, when the running task is preempted."""

from __future__ import annotations

import pytest

from placemap.sim import cost
from placemap.sim.engine import EXIT, SLEEP, Engine
from placemap.sim.state import Task, decay, util_est_update
from placemap.sim.topology import preset


class Fanout:
    """Wake each of `wakees` in turn (each a different task: record_wakee() counts a flip per
    change of wakee), then fork one child and exit."""

    def __init__(self, wakees: list[Task]) -> None:
        self.wakees = wakees
        self.child: Task | None = None
        self.done = False

    def step(self, eng: Engine, p: Task) -> int:
        if self.done:
            return EXIT
        for w in self.wakees:
            eng.wake(w, p)
        self.child = eng.fork(p, "child", Idle())
        self.done = True
        return 10_000


class Idle:
    def step(self, eng: Engine, p: Task) -> int:
        return SLEEP


def test_a_forked_child_inherits_its_parents_wakee_flips() -> None:
    """dup_task_struct() copies the task_struct and __sched_fork() resets no wakee field, so a
    parent that fanned out to many wakees hands its wakee_flips, wakee_flip_decay_ts and
    last_wakee to its child (wake_wide() of the child's first wakeups sees them)."""
    eng = Engine(preset("bdw-1s-20"))
    sleepers = [eng.spawn_asleep(f"s{i}", Idle(), 5) for i in range(6)]
    f = Fanout(sleepers)
    parent = eng.spawn("parent", f, 0)
    eng.run(1_000_000)
    assert f.child is not None
    assert parent.wakee_flips == 6
    assert f.child.wakee_flips == parent.wakee_flips
    assert f.child.last_wakee is sleepers[-1]
    assert f.child.wakee_flip_decay_ns == parent.wakee_flip_decay_ns


class FirstRun:
    """Record p's vruntime and the other task's when p first runs, then exit."""

    def __init__(self) -> None:
        self.other: Task | None = None
        self.mine = 0
        self.others = 0

    def step(self, eng: Engine, p: Task) -> int:
        assert self.other is not None
        self.mine, self.others = p.vruntime, self.other.vruntime
        return EXIT


class Hog:
    def __init__(self, ns: int) -> None:
        self.ns = ns
        self.ran = False

    def step(self, eng: Engine, p: Task) -> int:
        if self.ran:
            return EXIT
        self.ran = True
        return self.ns


def test_a_wakee_is_placed_against_min_vruntime_brought_to_now() -> None:
    """enqueue_entity() runs update_curr() before place_entity(): min_vruntime follows the
    running task's vruntime as of the wakeup, so a long sleeper woken 20 ms into a lone hog's
    run gets min_vruntime(now) - sched_latency/2, not 12 ms below the value min_vruntime had
    when the hog was picked (which let it run 20 ms longer before the hog got the CPU back)."""
    eng = Engine(preset("bdw-1s-20"))
    fr = FirstRun()
    b = eng.spawn_asleep("sleeper", fr, 3)
    b.cpus_allowed = frozenset({3})
    a = eng.spawn("hog", Hog(100_000_000), 3)
    a.cpus_allowed = frozenset({3})
    fr.other = a
    eng.wake_at(20_000_000, b)
    eng.run(30_000_000)
    assert fr.others > 19_000_000, "the hog ran until the wakeup preempted it"
    assert fr.mine == fr.others - cost.SLEEPER_CREDIT_NS


def test_min_vruntime_is_the_smaller_of_the_running_and_the_leftmost_task() -> None:
    """update_min_vruntime(): min(curr's vruntime brought to now, the leftmost queued one), and
    it never moves back."""
    st = Engine(preset("bdw-1s-20")).st
    rq = st.rqs[0]
    a, c = Task(1, "a"), Task(2, "c")
    rq.curr, rq.queue = a, [c]
    a.vruntime, rq.run_start, st.now = 10_000_000, 0, 5_000_000
    c.vruntime = 12_000_000
    st.update_min_vruntime(rq)
    assert rq.min_vruntime == 12_000_000
    c.vruntime = 20_000_000
    st.update_min_vruntime(rq)
    assert rq.min_vruntime == 15_000_000
    a.vruntime = 0
    st.update_min_vruntime(rq)
    assert rq.min_vruntime == 15_000_000, "never backwards"


class ForkTwice:
    """Run 2 ms, fork a child, run 1 ms, fork another; record each child's vruntime minus
    the parent's at its fork."""

    def __init__(self) -> None:
        self.stage = 0
        self.debits: list[int] = []

    def step(self, eng: Engine, p: Task) -> int:
        self.stage += 1
        if self.stage == 1:
            return 2_000_000
        if self.stage in (2, 3):
            c = eng.fork(p, f"child{self.stage}", Idle())
            self.debits.append(c.vruntime - p.vruntime)
            return 1_000_000
        return EXIT


def test_a_forked_childs_start_debit_is_its_slice_on_the_parents_runqueue() -> None:
    """task_fork_fair(): place_entity(initial) puts the child at min_vruntime + sched_vslice(),
    the slice sched_slice() gives it counted as one more task on the parent's runqueue:
    24 ms / 2 beside a lone parent (min_vruntime is then the parent's), 24 ms / 3 beside the
    parent and the first child; not sysctl_sched_min_granularity."""
    eng = Engine(preset("bdw-1s-20"))
    f = ForkTwice()
    p = eng.spawn("parent", f, 3)
    p.cpus_allowed = frozenset({3})  # the children inherit it: all on CPU 3
    eng.run(50_000_000)
    assert f.debits == [cost.SCHED_LATENCY_NS // 2, cost.SCHED_LATENCY_NS // 3]


class FirstAt:
    def __init__(self) -> None:
        self.at = -1

    def step(self, eng: Engine, p: Task) -> int:
        self.at = eng.env.now
        return EXIT


def test_the_running_task_is_preempted_at_a_tick_once_its_vruntime_leads_by_a_slice() -> None:
    """check_preempt_tick() at each tick (HZ=250, no HRTICK): after min_granularity, the running
    task is rescheduled once its vruntime exceeds the leftmost waiter's by more than its
    sched_slice() (24 ms / 3 with two waiters), even though its runtime since it was picked
    has not reached that slice; and only at a tick. Here the hog (vruntime 20 ms) is picked at
    2 us; two sleepers (vruntime 17 and 19 ms: too close to preempt it at the 1 ms wakeup) wait;
    its lead over 17 ms passes 8 ms at 5 ms, so the leftmost runs at the 8 ms tick (not at
    8 ms + 2 us, nor at 12 ms after a full slice), once the tick's softirq (load balancing) has
    run: 1 ns after it."""
    eng = Engine(preset("bdw-1s-20"))
    hog = eng.spawn("hog", Hog(100_000_000), 3)
    hog.cpus_allowed = frozenset({3})
    hog.vruntime = 20_000_000
    firsts = []
    for v in (17_000_000, 19_000_000):
        f = FirstAt()
        w = eng.spawn_asleep("w", f, 3)
        w.cpus_allowed = frozenset({3})
        w.vruntime = v
        eng.wake_at(1_000_000, w)
        firsts.append(f)
    eng.run(30_000_000)
    assert firsts[0].at == 2 * cost.TICK_NS + 1


def test_pelt_halves_over_32_periods_of_1024_units_of_1024_ns() -> None:
    """___update_load_sum() counts time in units of 1024 ns (delta >>= 10, "a reasonable
    approximation of 1us") and accumulate_sum() in periods of 1024 such units, with
    y^32 = 1/2: a signal halves over 32 * 1024 * 1024 ns (33.55 ms), not 32 * 1024 us."""
    assert decay(32 * 1024 * 1024) == pytest.approx(0.5)
    assert decay(32 * 1024 * 1000) > 0.505


class Blip:
    """When first run, note the task it preempted; run 100 us; sleep."""

    def __init__(self) -> None:
        self.preempted: Task | None = None
        self.ran = False

    def step(self, eng: Engine, p: Task) -> int:
        if not self.ran:
            self.ran = True
            self.preempted = eng.prev_task[p.cpu]
            return 100_000
        return SLEEP


def test_the_cpu_returns_to_the_task_a_wakeup_preempted_with_8_or_more_runnable() -> None:
    """check_preempt_wakeup(): a wakee that preempts becomes the next buddy and, with
    sched_nr_latency (8) or more tasks runnable, the preempted task the last buddy (LAST_BUDDY
    on); when the wakee sleeps, pick_next_entity() gives the CPU back to the last buddy, not
    to the leftmost waiting hog, as it is within wakeup_gran of it."""
    eng = Engine(preset("bdw-1s-20"))
    hogs = [eng.spawn(f"hog{i}", Hog(1_000_000_000), 3) for i in range(8)]
    for h in hogs:
        h.cpus_allowed = frozenset({3})
    b = Blip()
    w = eng.spawn_asleep("w", b, 3)
    w.cpus_allowed = frozenset({3})
    eng.wake_at(50_000_000, w)
    eng.run(50_500_000)
    rq = eng.st.rqs[3]
    assert b.preempted in hogs
    left = min((h for h in hogs if h is not b.preempted), key=lambda h: h.vruntime)
    assert left.vruntime < b.preempted.vruntime, "the preempted hog is not the leftmost"
    assert rq.curr is b.preempted
    assert rq.next_buddy is None and rq.last_buddy is None, "picked: cleared"


def test_util_est_margin_is_the_kernels_integer_one_percent() -> None:
    """UTIL_EST_MARGIN is SCHED_CAPACITY_SCALE / 100 in C's integers: 10, not 10.24. A util 10.2
    below the ewma is outside the margin, so util_est_update() moves the ewma a quarter of the
    way down to it."""
    p = Task(1, "t")
    p.ue_ewma = p.ue_enqueued = 500.0
    p.util = 489.8
    util_est_update(p)
    assert p.ue_enqueued == 489.8
    assert p.ue_ewma == pytest.approx(500.0 - 10.2 / 4)
