"""The calibration runs hackbench as the RFC's author runs it: `perf bench sched messaging -p
-t -l 100000 -g G` (pipes, threads; his LKML test reports give that command line), with the
loops scaled down."""

from __future__ import annotations

from placemap.sim.calibration import HACKBENCH_LOOPS, scenario_for
from placemap.sim.scenario import parse_scenario


def test_calibration_hackbench_is_threads_over_pipes() -> None:
    for preset in ("zen3-2s-nps1", "icx-2s"):
        sc = scenario_for((preset, "hackbench", 4, ("wake_affine",)), 1)
        wl = sc["workload"]
        assert (wl["mode"], wl["ipc"], wl["groups"]) == ("thread", "pipe", 4)
        assert 0 < wl["loops"] == HACKBENCH_LOOPS < 100_000, "scaled down from the published 100000"
        parse_scenario(sc)  # a valid scenario
