"""Speed of the simulator itself, for bench/: simulated scheduler events (wakeups + context
switches + migrations) per second of CPU time for one scenario, the page faults in the same
window, and where that time goes (a cProfile summary). Uses process CPU time so that figures
from a shared machine stay comparable; wall time is reported beside it.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import resource
import time
from collections.abc import Mapping
from typing import Any

from placemap.sim.scenario import parse_scenario, simulate

# The reference run: `hackbench -g 8` on the split-LLC Zen3 in NPS1, hackbench's defaults
# otherwise (processes, unix sockets, 100 loops), spelled out so that it stays this run.
REFERENCE = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "hackbench", "groups": 8, "mode": "process", "ipc": "socket", "loops": 100},
    "seed": 1,
    "duration_ms": 60_000,
}
# The reference until session 9, `hackbench -g 8 -p -l 200` (pipes, 200 loops): still measured
# beside it, since the sessions' figures before the change are on this run.
PIPE_REFERENCE = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "hackbench", "groups": 8, "mode": "process", "ipc": "pipe", "loops": 200},
    "seed": 1,
    "duration_ms": 60_000,
}


def measure(
    scenario: Mapping[str, Any] = REFERENCE, *, profile: bool = False, top: int = 12
) -> dict[str, Any]:
    """Run the scenario once; events per CPU second, and with `profile` the `top` functions by
    own time (the profiler slows the run, so its rates are not the headline figure)."""
    sc = parse_scenario(scenario)
    prof = cProfile.Profile() if profile else None
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    c0, w0 = time.process_time(), time.perf_counter()
    if prof is not None:
        prof.enable()
    eng, _wl = simulate(sc)
    if prof is not None:
        prof.disable()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    # memory the run touched first (a process's first run: its heap grows), in the timed window
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
    events = eng.sched_events()
    out: dict[str, Any] = {
        "sched_events": events,
        "loop_events": eng.env.events,
        "simulated_ms": eng.env.now / 1e6,
        "cpu_s": round(cpu, 3),
        "wall_s": round(wall, 3),
        "events_per_cpu_s": round(events / cpu) if cpu > 0 else 0,
        "page_faults": faults,
    }
    if prof is not None:
        buf = io.StringIO()
        stats = pstats.Stats(prof, stream=buf)
        rows = []
        for (file, line, fn), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
            rows.append(
                {"function": f"{file.rsplit('/', 1)[-1]}:{line}({fn})", "calls": nc, "own_s": tt, "cum_s": ct}
            )
        rows.sort(key=lambda r: -r["own_s"])
        total = sum(r["own_s"] for r in rows) or 1.0
        out["profile"] = [
            {
                **r,
                "own_s": round(r["own_s"], 3),
                "cum_s": round(r["cum_s"], 3),
                "share": round(r["own_s"] / total, 3),
            }
            for r in rows[:top]
        ]
    return out
