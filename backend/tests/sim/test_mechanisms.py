"""The mechanisms behind the calibration (docs/calibration.md), each on a small hand-built
case: why a wakeup onto a sleeping LLC is slow, and what a new task's utilization is."""

from __future__ import annotations

from placemap.sim import cost
from placemap.sim.engine import EXIT, SLEEP, Engine
from placemap.sim.state import Task
from placemap.sim.topology import preset


class Spin:
    """Run forever in long bursts (keeps its CPU, and so its LLC, awake)."""

    def step(self, eng: Engine, p: Task) -> int:
        return 1_000_000_000


class Sleeper:
    """Sleep at once; once woken, remember the wakeup latency and exit."""

    def __init__(self) -> None:
        self.woken = False
        self.latency = -1

    def step(self, eng: Engine, p: Task) -> int:
        if not self.woken:
            self.woken = True
            return SLEEP
        return EXIT


def _wake_latency(sleeper_cpu: int, topology: str = "zen3-2s-nps1") -> int:
    """A spinning task on CPU 0 (LLC 0) wakes nobody; a timer wakes a task that slept 10 ms
    on sleeper_cpu; the latency from the wakeup to it running."""
    eng = Engine(preset(topology), seed=1)
    eng.spawn("spin", Spin(), 0)
    s = eng.spawn("sleeper", Sleeper(), sleeper_cpu, group=7)
    eng.track_latency(7)
    eng.run(1_000_000)
    eng.wake_at(10_000_000, s)
    eng.run(20_000_000)
    (lat,) = eng.wake_latency[7]
    return lat


def test_a_wakeup_onto_an_llc_asleep_for_long_pays_its_power_up_and_cold_cache() -> None:
    # CPU 1 shares LLC 0 with the spinning CPU 0: only the core was in deep idle. CPU 16 is in
    # LLC 1, idle throughout: the whole CCX was power-gated and its L3 flushed.
    same_llc, asleep_llc = _wake_latency(1), _wake_latency(16)
    assert same_llc == cost.IDLE_EXIT_DEEP_NS
    assert asleep_llc == cost.IDLE_EXIT_DEEP_NS + cost.LLC_WAKE_NS


def test_a_unified_llc_is_the_sockets_and_has_no_power_gating_of_its_own() -> None:
    # icx-2s: a CPU of the other socket, whose LLC is the whole socket (package C6 only)
    topo = preset("icx-2s")
    far = next(c for c in topo.cpus if topo.package_of[c] != topo.package_of[0])
    assert _wake_latency(far, "icx-2s") == cost.IDLE_EXIT_DEEP_NS
    assert cost.llc_wake_ns(16, 128) == cost.LLC_WAKE_NS and cost.llc_wake_ns(64, 64) == 0


def test_a_new_task_starts_with_half_the_spare_capacity_of_the_cpu_it_lands_on() -> None:
    # post_init_entity_util_avg on the destination CPU: an idle CPU gives 512, a busy one its
    # share by weight capped at half of what is left
    assert cost.initial_util(0.0, 0.0) == 512.0
    assert cost.initial_util(1024.0, 1024.0) == 0.0
    assert cost.initial_util(400.0, 2048.0) < cost.initial_util(400.0, 1024.0) <= (1024 - 400) / 2


def test_children_that_sleep_at_once_leave_utilization_that_the_next_fork_avoids() -> None:
    # 8 children forked in a row that sleep at once: with the fork tie-break by utilization
    # (update_pick_idlest, and fork_spread) they land on different LLCs, not all on the
    # parent's most recently idled CPU
    eng = Engine(preset("zen3-2s-nps1"), seed=1)

    class Parent:
        n = 0

        def step(self, eng: Engine, p: Task) -> int:
            if self.n < 8:
                self.n += 1
                eng.fork(p, "child", Sleeper())
                return 20_000
            return SLEEP

    eng.spawn("parent", Parent(), 0)
    eng.run(5_000_000)
    llcs = {eng.st.sd.llc_id[t.cpu] for t in eng.st.tasks if t.name == "child"}
    assert len(llcs) >= 6
