"""The engine on small hand-built programs: CPU sharing, SMT slowdown, sync ping-pong pulled
onto one LLC, runqueue invariants after a run."""

from __future__ import annotations

import pytest

from placemap.sim import cost
from placemap.sim.engine import EXIT, SLEEP, Engine, Program, Tally
from placemap.sim.state import QUIET_IDLE_US, Task, governor_kept_ticks
from placemap.sim.topology import preset
from placemap.sim.trace import WAKING, EventLog
from placemap.sim.workloads.hackbench import Hackbench


class Burn:
    """Run `work_ns` of CPU work once, then exit; remember when it ended."""

    def __init__(self, work_ns: int) -> None:
        self.work_ns = work_ns
        self.done_at = -1
        self.started = False

    def step(self, eng: Engine, p: Task) -> int:
        if not self.started:
            self.started = True
            return self.work_ns
        self.done_at = eng.env.now
        return EXIT


class PingPong:
    """Wake the partner (sync), then sleep; `rounds` times."""

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.partner: Task | None = None
        self.turn = False

    def step(self, eng: Engine, p: Task) -> int:
        if self.turn:
            self.turn = False
            if self.partner is not None:
                eng.wake(self.partner, p, sync=True)
            self.rounds -= 1
            return SLEEP if self.rounds > 0 else EXIT
        self.turn = True
        return 5_000


def invariants(eng: Engine) -> None:
    st = eng.st
    for rq in st.rqs:
        assert rq.nr_running == (rq.curr is not None) + len(rq.queue), rq.cpu
    assert st.nr_overloaded == sum(1 for rq in st.rqs if rq.nr_running > 1)


def test_a_lone_task_runs_at_full_speed() -> None:
    eng = Engine(preset("bdw-1s-20"))
    b = Burn(1_000_000)
    eng.spawn("burn", b, 0)
    eng.run(10_000_000)
    start = cost.IDLE_EXIT_NS
    assert b.done_at == start + 1_000_000 + cost.CONTEXT_SWITCH_NS
    invariants(eng)


def test_busy_smt_sibling_slows_the_task_to_smt_speed() -> None:
    eng = Engine(preset("bdw-1s-20"))
    a, b = Burn(1_000_000), Burn(1_000_000)
    eng.spawn("a", a, 0)
    eng.spawn("b", b, 10)  # CPU 10 is CPU 0's sibling
    eng.run(10_000_000)
    expected = cost.IDLE_EXIT_NS + (1_000_000 + cost.CONTEXT_SWITCH_NS) / cost.SMT_SPEED
    assert abs(a.done_at - expected) <= 2 and abs(b.done_at - expected) <= 2


def test_two_tasks_pinned_to_one_cpu_share_it() -> None:
    eng = Engine(preset("bdw-1s-20"))
    a, b = Burn(20_000_000), Burn(20_000_000)
    for name, beh in (("a", a), ("b", b)):
        p = eng.spawn(name, beh, 3)
        p.cpus_allowed = frozenset({3})
    eng.run(100_000_000)
    assert eng.switches > 4, "slices alternate"
    assert abs(a.done_at - b.done_at) <= cost.SCHED_LATENCY_NS
    assert max(a.done_at, b.done_at) >= 40_000_000
    invariants(eng)


def test_sync_ping_pong_across_llcs_is_pulled_onto_one_llc() -> None:
    eng = Engine(preset("zen3-2s-nps1"))
    x, y = PingPong(200), PingPong(200)
    px = eng.spawn("x", x, 0)
    py = eng.spawn("y", y, 64)
    x.partner, y.partner = py, px
    y.turn = True  # y starts by waiting: its first step wakes x... and it goes to sleep
    eng.run(50_000_000)
    assert eng.wakeups > 100 and eng.wakeups_affine > 0
    assert eng.st.sd.share_cache(px.cpu, py.cpu), "wake_affine pulled the pair together"
    invariants(eng)


def test_workload_programs_are_programs_and_others_still_run() -> None:
    # hackbench's tasks take Program's direct step (the speed path); a plain Behavior, as
    # Burn here, still runs through the Protocol
    eng = Engine(preset("bdw-1s-20"), seed=1)
    hb = Hackbench(groups=1, loops=3)
    hb.setup(eng, 0)
    b = Burn(50_000)
    eng.spawn("burn", b, 3)
    eng.run(1_000_000_000)
    assert hb.complete() and b.done_at > 0
    programs = [t for t in eng.st.tasks if isinstance(t.behavior, Program)]
    assert len(programs) == len(eng.st.tasks) - 1 == 1 + 2 * 20


class FirstStep:
    """Remember when the task first ran, then exit."""

    def __init__(self) -> None:
        self.at = -1

    def step(self, eng: Engine, p: Task) -> int:
        self.at = eng.env.now
        return EXIT


class ForkMidSlice:
    """Run 2 ms, start a task pinned to this CPU, run 40 ms more; remember when it first ran."""

    def __init__(self) -> None:
        self.stage = 0
        self.at = -1
        self.child = FirstStep()

    def step(self, eng: Engine, p: Task) -> int:
        self.stage += 1
        if self.stage == 1:
            self.at = eng.env.now
            return 2_000_000
        if self.stage == 2:
            q = eng.spawn("waiter", self.child, p.cpu)
            q.cpus_allowed = frozenset({p.cpu})
            return 40_000_000
        return EXIT


def test_a_waiter_shortens_the_running_tasks_slice_to_its_share_of_the_period() -> None:
    """check_preempt_tick(): picked alone, a task's slice is the whole latency period (24 ms); once
    a second task waits on its CPU its slice is half of it, so the waiter runs at the first tick
    after the running task has run 12 ms since it was picked (16 ms at HZ=250), not 24 ms; the
    switch follows the tick's softirq, 1 ns later."""
    eng = Engine(preset("bdw-1s-20"))
    a = ForkMidSlice()
    pa = eng.spawn("a", a, 3)
    pa.cpus_allowed = frozenset({3})
    eng.run(100_000_000)
    half = cost.SCHED_LATENCY_NS // 2
    tick = (a.at + half) // cost.TICK_NS * cost.TICK_NS + cost.TICK_NS
    assert a.child.at == tick + 1, (a.child.at, tick)
    invariants(eng)


def test_tally_counts_by_index() -> None:
    """The engine's counters by level and cause: add(i) counts at i, total() sums them all."""
    t = Tally()
    for i in (1, 4, 4, 0, 2, 4):
        t.add(i)
    assert [t.get(i) for i in range(5)] == [1, 1, 1, 0, 3]
    assert t.total() == 6
    with pytest.raises(IndexError):
        t.add(5)


def test_a_cpu_going_idle_after_a_run_of_short_idles_keeps_its_tick() -> None:
    """The governor's record (state.record_idle at each idle exit) and its choice on entering
    idle (state.governor_kept_ticks): a ping-pong pair's CPUs idle a few microseconds at a
    time, so when the pair is done each keeps its tick; an untouched CPU, long idle, does not."""
    eng = Engine(preset("zen3-2s-nps1"))
    x, y = PingPong(200), PingPong(200)
    px = eng.spawn("x", x, 0)
    py = eng.spawn("y", y, 1)
    px.cpus_allowed, py.cpus_allowed = frozenset({0}), frozenset({1})  # each idles between turns
    x.partner, y.partner = py, px
    y.turn = True
    eng.run(50_000_000)
    for cpu in (0, 1):
        rq = eng.st.rqs[cpu]
        assert all(v * 1000 < cost.TICK_NS for v in rq.idle_hist), rq.idle_hist
        assert governor_kept_ticks(rq) >= 1, (cpu, rq.idle_hist)
        assert rq.kept_ticks in {-1, governor_kept_ticks(rq)}, "decided from the record at idle entry"
    untouched = eng.st.rqs[100]
    assert untouched.kept_ticks == 0 and untouched.idle_hist == list(QUIET_IDLE_US)
    invariants(eng)


class NapOnce:
    """Work 1 us, sleep `nap_ns` (a timer wakes it), work 1 us, exit."""

    def __init__(self, nap_ns: int) -> None:
        self.nap_ns = nap_ns
        self.steps = 0

    def step(self, eng: Engine, p: Task) -> int:
        self.steps += 1
        if self.steps in (1, 3):
            return 1_000
        if self.steps == 2:
            eng.wake_at(eng.env.now + self.nap_ns, p)
            return SLEEP
        return EXIT


def test_an_idle_exit_predicts_half_the_cpus_average_idle_for_sis_prop() -> None:
    eng = Engine(preset("bdw-1s-20"))
    p = eng.spawn("nap", NapOnce(100_000), 3)
    p.cpus_allowed = frozenset({3})
    eng.run(10_000_000)
    rq = eng.st.rqs[3]
    assert rq.avg_idle < 1_000_000, "two idle exits, one after 100 us, averaged in"
    assert rq.wake_avg_idle == rq.avg_idle // 2


def test_the_waker_pays_for_the_cpus_its_wakeups_idle_scan_checked() -> None:
    eng = Engine(preset("zen3-2s-nps1"))
    llc2 = [*range(16, 24), *range(144, 152)]
    burners = {c: eng.spawn(f"b{c}", Burn(50_000_000), c) for c in llc2}
    for c, b in burners.items():
        b.cpus_allowed = frozenset({c})
    sleeper = eng.spawn_asleep("nap", NapOnce(10**9), 17)
    eng.run(1_000_000)
    st = eng.st
    st.has_idle_cores[st.sd.llc_id[16]] = False
    waker = burners[16]
    before = waker.wake_penalty_ns
    assert eng.wake(sleeper, waker, sync=True)
    assert st.scan_checked == 16, "all 16 CPUs of the busy LLC checked (the wrap ends on target), none idle"
    assert waker.wake_penalty_ns - before == 16 * cost.SIS_SCAN_COST_PER_CPU_NS


def test_a_timer_wakeup_names_the_task_its_cpu_runs_as_the_waking_s_current() -> None:
    """sched_waking names the current task of the CPU it runs on: for a wakeup without a waker (a
    timer), the task the timer found running there, not the idle task. A burner holds CPU 17; a
    napper beside it runs 1 us and sleeps 1 ms: its timer fires while the burner runs, and its
    waking names the burner; one napping alone on CPU 200 is woken on an idle CPU: pid 0."""
    log = EventLog()
    eng = Engine(preset("zen3-2s-nps1"), log=log)
    burner = eng.spawn("burner", Burn(50_000_000), 17)
    burner.cpus_allowed = frozenset({17})
    sleeper = eng.spawn("nap", NapOnce(1_000_000), 17)
    sleeper.cpus_allowed = frozenset({17})
    idle_napper = eng.spawn("far", NapOnce(1_000_000), 200)
    idle_napper.cpus_allowed = frozenset({200})
    eng.run(20_000_000)
    cols = log.columns()
    wakings = [
        (pid, cpu, cur)
        for kind, pid, cpu, cur in zip(cols["kind"], cols["pid"], cols["cpu"], cols["cur_pid"], strict=True)
        if kind == WAKING
    ]
    assert (sleeper.pid, 17, burner.pid) in wakings
    assert (idle_napper.pid, 200, 0) in wakings
