"""Placement decisions, one module per decision point: fork (slow path), wakeup (fast path)
and balance (periodic, newly idle, steal). Each decision is a small named function of the
State (which carries the Features) and the task, returning a Decision: the chosen CPU and a
fixed reason string (no formatting on the hot path; `Decision.explain()` builds sentences)."""

from __future__ import annotations

from typing import NamedTuple


class Decision(NamedTuple):
    """A placement: the CPU, why (the deciding step), and the step before it when any."""

    cpu: int
    reason: str
    via: str = ""
    affine: bool = False  # wake_affine() moved the target to the waker's CPU

    def explain(self) -> str:
        tail = f" ({self.via})" if self.via else ""
        return f"CPU {self.cpu}: {self.reason}{tail}"
