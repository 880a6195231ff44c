"""The workload protocol and the scenario-parameter readers every workload uses (errors name
the field, e.g. `workload.groups`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from placemap.sim.errors import ScenarioError

if TYPE_CHECKING:
    from placemap.sim.engine import Engine


class Workload(Protocol):
    """A workload instance built from its scenario parameters."""

    metric_name: str
    better: str

    def setup(self, eng: Engine, hints: int) -> None:
        """Create the first task(s); `hints` go to the workload's task group."""
        ...

    def metric(self, eng: Engine, duration_ns: int) -> float:
        """The workload's metric after the run."""
        ...

    def complete(self) -> bool:
        """Whether the workload ran to its end (runtime metrics need it)."""
        ...


def int_param(spec: Mapping[str, Any], name: str, default: int, lo: int, hi: int, *, field: str) -> int:
    """An integer parameter within [lo, hi]."""
    v = spec.get(name, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ScenarioError(f"{field}.{name}", f"expected an integer in {lo}..{hi}, got {v!r}")
    return v


def choice_param(
    spec: Mapping[str, Any], name: str, default: str, choices: tuple[str, ...], field: str
) -> str:
    """One of a fixed set of strings."""
    v = spec.get(name, default)
    if v not in choices:
        raise ScenarioError(f"{field}.{name}", f"expected one of {', '.join(choices)}, got {v!r}")
    return str(v)


def check_keys(spec: Mapping[str, Any], allowed: tuple[str, ...], field: str) -> None:
    """Refuse parameters the workload does not know."""
    for k in spec:
        if k != "kind" and k not in allowed:
            raise ScenarioError(f"{field}.{k}", f"unknown parameter; known: {', '.join(allowed)}")
