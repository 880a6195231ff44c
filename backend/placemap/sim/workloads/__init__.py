"""Parametric workload generators (placement-model.md section 5): each module builds the
workload's tasks on an Engine and reads its metric back. `build` maps a scenario's
`workload` object to an instance."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from placemap.sim.errors import ScenarioError
from placemap.sim.workloads.hackbench import Hackbench
from placemap.sim.workloads.pairs import Pairs
from placemap.sim.workloads.params import Workload
from placemap.sim.workloads.replay import TraceReplay
from placemap.sim.workloads.schbench import Schbench
from placemap.sim.workloads.stream import Stream

WORKLOADS: Final[dict[str, Any]] = {
    "hackbench": Hackbench,
    "schbench": Schbench,
    "tbench": Pairs,
    "ctxswitch": Pairs,
    "netperf": Pairs,
    "stream": Stream,
    "trace": TraceReplay,
}


def build(spec: Any, field: str = "workload") -> Workload:
    """A workload from its scenario object; ScenarioError naming the field when bad."""
    if not isinstance(spec, Mapping):
        raise ScenarioError(field, "expected an object with a kind")
    kind = spec.get("kind")
    if kind not in WORKLOADS:
        raise ScenarioError(f"{field}.kind", f"unknown workload {kind!r}; known: {', '.join(WORKLOADS)}")
    w: Workload = WORKLOADS[kind].from_spec(spec, field)
    return w
