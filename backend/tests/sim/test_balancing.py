"""The balancing tick end to end: CPU hogs started on one CPU spread out, one per core first
(SMT and MC levels), then over idle LLCs once NOHZ balancing is kicked by an LLC with more than
one busy CPU, running tasks moving by active balance after repeated failures."""

from __future__ import annotations

from collections import Counter

from placemap.sim.balancing import balance_interval_ns
from placemap.sim.engine import Engine
from placemap.sim.scenario import parse_scenario
from placemap.sim.state import LOAD_AVG_PERIOD_NS, Task, enter_idle
from placemap.sim.topology import preset
from placemap.sim.workloads import build
from tests.sim.scaffold import task


class Hog:
    def step(self, eng: Engine, p: Task) -> int:
        return 50_000_000


def test_hogs_started_on_cpu0_spread_one_per_core_then_over_llcs() -> None:
    eng = Engine(preset("zen3-2s-nps1"))
    hogs = [eng.spawn(f"hog{i}", Hog(), 0) for i in range(32)]
    topo = eng.st.topo
    eng.run(200_000_000)
    assert max(Counter(topo.core_of[t.cpu] for t in hogs).values()) <= 2, "off CPU 0's core"
    early = len({topo.llc_of[t.cpu] for t in hogs})
    # v6.0 leaves a core with two hogs beside a core with one in the same LLC (at MC the idle
    # CPU counts differ by 1); the idle LLCs take the extra hogs by active balance at PKG and
    # NUMA, one per cache_nice_tries + 3 failed balances of their (long) intervals
    eng.run(1_700_000_000)
    assert max(Counter(topo.core_of[t.cpu] for t in hogs).values()) == 1, "one hog per core"
    late = len({topo.llc_of[t.cpu] for t in hogs})
    assert late > early, f"idle LLCs pulled running hogs ({early} -> {late} LLCs)"
    assert eng.migrations_by_cause["balance"] > 32


def _tick(eng: Engine, now: int) -> None:
    """One balancing tick at `now` (the engine's clock set by hand; live tasks pretended)."""
    eng.env.now = now
    eng.live = 1
    eng.balancer._on_tick(None, None)


def test_a_cpu_that_is_not_the_balance_cpu_of_a_level_walks_no_higher() -> None:
    """rebalance_domains(): should_we_balance() failing clears continue_balancing, so the
    levels above are left as they were (last_balance, interval, nr_balance_failed): due again
    at the next tick rather than rescheduled an interval later."""
    eng = Engine(preset("zen3-2s-nps1"))
    st = eng.st
    task(st, 0)
    task(st, 128)  # core 0 = CPUs 0 and 128, both busy: CPU 0 balances the MC level, not 128
    bal = eng.balancer
    bal.failed[128][3] = 2
    _tick(eng, 4_000_000)
    smt, mc, pkg, numa = bal.last_balance[128]
    assert smt == mc == 4_000_000, "SMT balanced, MC tried (out_balanced)"
    assert pkg == numa == 0, "PKG and NUMA not walked"
    assert bal.due_busy[128][2] == bal.due_busy[128][3] == 0, "so still due"
    assert bal.failed[128][3] == 2
    assert bal.last_balance[0][2] == 4_000_000, "CPU 0, the MC balance CPU, went on to PKG"


def test_after_a_pull_the_levels_above_balance_as_a_busy_cpu() -> None:
    """rebalance_domains() reads the CPU's state again after load_balance() pulled: idle CPU 0
    pulls CPU 1's queued task at the MC level, and from then on is busy, so its PKG level,
    due for an idle CPU but not yet for a busy one (busy_factor times the interval), is left
    for later."""
    eng = Engine(preset("zen3-2s-nps1"))
    st = eng.st
    bal = eng.balancer
    task(st, 1)
    q = task(st, 1, state="queued")
    bal.due_busy[0][2] = 100_000_000
    _tick(eng, 4_000_000)
    assert q.cpu == 0
    assert bal.last_balance[0][1] == 4_000_000, "MC balanced (the pull)"
    assert bal.last_balance[0][2] == 0, "PKG not balanced: busy now, and not due for a busy CPU"


def test_an_idle_cpu_balances_a_level_at_the_idle_interval_whatever_its_state_then() -> None:
    """rebalance_domains() checks each level against sd->last_balance plus
    get_sd_balance_interval(sd, busy) with the CPU's busy state at the check, not at the last
    balance. CPU 0 balances PKG at 4 ms while LLC 0 is full (the first CPU balances a busy
    group); balanced, the interval doubles to max_interval, 256 ms: due again 256 ms later for
    an idle CPU but 4092 ms later for a busy one (256 x 16 = 1024 jiffies, one less). Its task
    goes to sleep: idle, CPU 0 balances PKG at 260 ms, not at 4096 ms."""
    eng = Engine(preset("zen3-2s-nps1"))
    st = eng.st
    bal = eng.balancer
    tasks = [task(st, c) for c in st.sd.llc_spans[0]]
    _tick(eng, 4_000_000)
    assert bal.last_balance[0][2] == 4_000_000
    assert bal.interval[0][2] == 256_000_000
    assert bal.due_idle[0][2] == 4_000_000 + 256_000_000
    assert bal.due_busy[0][2] == 4_000_000 + 4_092_000_000
    st.dequeue_sleep(tasks[0])
    st.set_curr(st.rqs[0], None)
    _tick(eng, 256_000_000)
    assert bal.last_balance[0][2] == 4_000_000, "not due yet"
    _tick(eng, 260_000_000)
    assert bal.last_balance[0][2] == 260_000_000, "balanced PKG at the idle interval"


def test_a_busy_cpus_balance_interval_is_in_jiffies_one_less() -> None:
    """get_sd_balance_interval(): a busy CPU's interval is balance_interval * busy_factor in
    jiffies, one jiffy less. CPU 0 runs alone: its SMT level balances at the first tick
    (balanced, 2 ms doubled to 4 ms), then again 4 * 16 = 64 ms -> 16 jiffies - 1 = 60 ms on."""
    eng = Engine(preset("zen3-2s-nps1"))
    task(eng.st, 0)
    _tick(eng, 4_000_000)
    assert eng.balancer.due_busy[0][0] == 4_000_000 + 60_000_000
    assert eng.balancer.due_idle[0][0] == 4_000_000 + 4_000_000, "were it idle: 4 ms, 1 jiffy"


def test_a_newly_idle_pull_resets_the_domains_balance_interval() -> None:
    """load_balance() resets balance_interval to min_interval after a balance that found an
    imbalance (moved, or failed), newly idle ones included ("We were unbalanced, so reset the
    balancing interval"; only out_balanced's tuning up is skipped for CPU_NEWLY_IDLE). CPU 0,
    going idle, pulls CPU 1's queued task at MC: its MC level, last balanced at 4 ms while idle
    with the interval at max_interval (32 ms: 8 jiffies), is due again min_interval (16 ms: 4
    jiffies) after 4 ms."""
    eng = Engine(preset("zen3-2s-nps1"))
    st = eng.st
    bal = eng.balancer
    mc = st.sd.per_cpu[0][1]
    bal.interval[0][1] = mc.max_interval_ms * 1_000_000
    st.rqs[0].lb_tuned |= 1 << 1  # as the tick leaves it with the interval above min_interval
    bal.last_balance[0][1] = 4_000_000
    bal.due_idle[0][1] = 4_000_000 + 32_000_000
    bal.due_busy[0][1] = 4_000_000 + 508_000_000
    task(st, 1)
    q = task(st, 1, state="queued")
    eng._schedule(st.rqs[0])
    assert q.cpu == 0
    assert bal.interval[0][1] == mc.min_interval_ms * 1_000_000 == 16_000_000
    assert not st.rqs[0].lb_tuned >> 1 & 1
    assert bal.due_idle[0][1] == 4_000_000 + 16_000_000
    assert bal.due_busy[0][1] == 4_000_000 + 252_000_000, "16 x 16 ms: 64 jiffies, one less"


def test_the_balance_tick_falls_on_jiffy_boundaries() -> None:
    """The kernel's scheduler_tick() raises SCHED_SOFTIRQ on every jiffy, multiples of TICK_NS
    (skew_tick=0), the grid check_preempt_tick() uses in the engine: a workload whose first
    task starts 1.5 ms into the run has its first balance at 4 ms, not 5.5 ms."""
    eng = Engine(preset("zen3-2s-nps1"))
    eng.env.now = 1_500_000
    eng.spawn("hog", Hog(), 0)
    eng.run(5_000_000)
    # CPU 0 busy alone: its SMT level balanced (2 ms doubled to 4 ms; busy: 16 jiffies - 1)
    assert eng.balancer.due_busy[0][0] == 4_000_000 + 60_000_000


def test_a_domain_at_min_interval_has_its_next_balance_within_it() -> None:
    """newidle_balance skips Balancer.newidle_unbalanced for a level whose interval is
    min_interval already, which is exact only while every writer keeps each due time <=
    last_balance + balance_interval_ns(min_interval, idle or busy) for such a level (the tick
    sets them together; the newly idle reset only lowers them), and newidle_balance
    calls it only for the levels Rq.lb_tuned marks, which must be those above min_interval.
    Checked on every CPU and level every millisecond of hackbench -g 8 on sockets, with the
    resets it causes."""
    sc = parse_scenario(
        {"topology": "zen3-2s-nps1", "workload": {"kind": "hackbench", "groups": 8, "loops": 20}, "seed": 1}
    )
    eng = Engine(sc.topology, sc.features, sc.seed)
    build(sc.workload_spec).setup(eng, sc.hints)
    bal = eng.balancer
    nr_cpus = len(eng.st.cpus)
    at_min = above = 0
    for ms in range(1, 41):
        eng.run(ms * 1_000_000)
        for cpu, doms in enumerate(eng.st.sd.per_cpu):
            for level, sd in enumerate(doms):
                iv = sd.min_interval_ms * 1_000_000
                tuned = bool(eng.st.rqs[cpu].lb_tuned >> level & 1)
                assert tuned == (bal.interval[cpu][level] != iv), (ms, cpu, level)
                if tuned:
                    above += 1
                    continue
                at_min += 1
                last = bal.last_balance[cpu][level]
                due = last + balance_interval_ns(iv, sd.busy_factor, False, nr_cpus)
                assert bal.due_idle[cpu][level] <= due, (ms, cpu, level)
                due = last + balance_interval_ns(iv, sd.busy_factor, True, nr_cpus)
                assert bal.due_busy[cpu][level] <= due, (ms, cpu, level)
    assert at_min > 0 and above > 0, "both kinds of level seen"


def test_idle_cpus_blocked_load_is_updated_by_stats_kicks_every_load_avg_period() -> None:
    """nohz_balancer_kick(): a busy CPU's tick asks for a NOHZ_STATS_KICK once nohz.next_blocked
    has passed (strictly, LOAD_AVG_PERIOD after the last update); without a busy CPU no tick
    kicks, and a balance kick (here: none, one busy CPU alone) updates nothing sooner."""
    eng = Engine(preset("zen3-2s-nps1"))
    st = eng.st
    task(st, 0)
    period = LOAD_AVG_PERIOD_NS
    assert period == 32_000_000
    _tick(eng, 4_000_000)
    assert st.blocked_ts == 4_000_000 and st.next_blocked == 4_000_000 + period
    for t in range(8_000_000, 4_000_000 + period + 1, 4_000_000):
        _tick(eng, t)
        assert st.blocked_ts == 4_000_000, f"tick at {t}: nohz.next_blocked not passed yet"
    _tick(eng, 8_000_000 + period)
    assert st.blocked_ts == 8_000_000 + period, "the first tick after nohz.next_blocked"
    st.dequeue_sleep(st.rqs[0].curr)  # type: ignore[arg-type]
    _tick(eng, 8_000_000 + 3 * period)
    assert st.blocked_ts == 8_000_000 + period, "every CPU idle: no tick kicks"


def test_a_balance_kick_updates_the_idle_cpus_blocked_load_with_it() -> None:
    """NOHZ_BALANCE_KICK comes with NOHZ_STATS_KICK: a tick that balances idle CPUs (a runqueue
    with a task waiting, an idle CPU due) updates their blocked load before nohz.next_blocked."""
    eng = Engine(preset("zen3-2s-nps1"))
    st = eng.st
    task(st, 0)
    _tick(eng, 4_000_000)
    assert st.blocked_ts == 4_000_000
    task(st, 0)  # a second task on CPU 0: it waits, so the busy CPU kicks idle balancing
    assert st.next_blocked > 8_000_000, "no stats kick due at 8 ms"
    _tick(eng, 8_000_000)
    assert st.blocked_ts == 8_000_000


def test_a_cpu_going_idle_for_a_while_updates_the_blocked_load_once_it_is_due() -> None:
    """nohz_newidle_balance(): a CPU entering idle with avg_idle of at least 500 us, once
    nohz.next_blocked has come (in jiffies), updates the idle CPUs' blocked load; with a short
    expected idle, or before nohz.next_blocked, it does not."""
    eng = Engine(preset("bdw-1s-20"))
    st = eng.st
    rq = st.rqs[0]
    st.now = eng.env.now = 10_000_000
    st.next_blocked = 8_000_000
    rq.avg_idle = 100_000  # "will wake up very soon"
    eng._schedule(rq)  # nothing queued, nothing to pull: idle
    assert st.blocked_ts == 0
    rq.avg_idle = 600_000
    eng._schedule(rq)
    # nohz.next_blocked = jiffies + msecs_to_jiffies(32): the jiffy of 8-12 ms, 8 later
    assert st.blocked_ts == 10_000_000 and st.next_blocked == 8_000_000 + LOAD_AVG_PERIOD_NS
    st.now = eng.env.now = 8_000_000 + LOAD_AVG_PERIOD_NS - 1  # a jiffy short
    eng._schedule(rq)
    assert st.blocked_ts == 10_000_000
    st.now = eng.env.now = st.now + 1
    eng._schedule(rq)
    assert st.blocked_ts == st.now


def test_an_idle_cpu_that_kept_its_tick_balances_itself_at_those_ticks_only() -> None:
    """Without a NOHZ kick (one busy CPU, nothing waiting) an idle CPU is balanced only at the
    ticks its governor keeps: CPU 5 (two kept) at the first two ticks after it went idle, not
    at the third; CPU 6 (tick stopped on entering idle) never."""
    eng = Engine(preset("zen3-2s-nps1"))
    st = eng.st
    task(st, 0)
    for cpu, kept in ((5, 2), (6, 0)):
        enter_idle(st.rqs[cpu], 5_000_000)
        st.rqs[cpu].kept_ticks = kept
    bal = eng.balancer
    _tick(eng, 8_000_000)
    assert bal.last_balance[5][0] == 8_000_000, "CPU 5's first kept tick: its own idle balance"
    assert bal.last_balance[6][0] == 0, "CPU 6 stopped its tick: no kick, no balance"
    _tick(eng, 12_000_000)
    assert bal.last_balance[5][0] == 12_000_000, "its second kept tick"
    _tick(eng, 16_000_000)
    assert bal.last_balance[5][0] == 12_000_000, "the tick stopped after the second"
