"""The balancing tick end to end: CPU hogs started on one CPU spread out, one per core first
(SMT and MC levels), then over idle LLCs once NOHZ balancing is kicked by an LLC with more than
one busy CPU, running tasks moving by active balance after repeated failures."""

from __future__ import annotations

from collections import Counter

from placemap.sim.engine import Engine
from placemap.sim.state import Task
from placemap.sim.topology import preset


class Hog:
    def step(self, eng: Engine, p: Task) -> int:
        return 50_000_000


def test_hogs_started_on_cpu0_spread_one_per_core_then_over_llcs() -> None:
    eng = Engine(preset("zen3-2s-nps1"))
    hogs = [eng.spawn(f"hog{i}", Hog(), 0) for i in range(32)]
    topo = eng.st.topo
    eng.run(200_000_000)
    assert max(Counter(topo.core_of[t.cpu] for t in hogs).values()) == 1, "one hog per core"
    early = len({topo.llc_of[t.cpu] for t in hogs})
    eng.run(1_500_000_000)
    late = len({topo.llc_of[t.cpu] for t in hogs})
    assert late > early, f"idle LLCs pulled running hogs ({early} -> {late} LLCs)"
    assert eng.migrations_by_cause["balance"] > 32
