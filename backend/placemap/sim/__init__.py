"""The placement simulator: Linux's CFS task placement (fork, wakeup, load balancing) on any
topology, with the what-if toggles of placement-model.md. Pure: no I/O, no wall clock inside
the core (scenario.py reads it for `sim.wall_s` only), seeded and deterministic.

Entry points:
- scenario.run_scenario(dict, wall_clock=True) -> result dict (issue 3 section 5);
  scenario.parse_scenario / simulate(Scenario, log=EventLog()) for finer control.
- trace.EventLog: the simulated events in the event schema's columns (for --save).
- calibration.calibrate(rows) / plan / report: agreement with published tables.
- topology.preset / from_dict / PRESETS, domains.SchedDomains: machines and sched domains.

Layers (imports point down only): topology -> domains -> state -> policy/* -> core, cost,
speed -> engine, balancing -> workloads/* -> scenario, calibration.
"""

# Run the compiled build (scripts/build-sim) when it matches these sources; see _native.py.
from placemap.sim import _native

_native.activate(__path__)
