"""Placement decisions, one module per decision point: fork (slow path), wakeup (fast path)
and balance (periodic, newly idle, steal). Each decision is a small named function of the
State (which carries the Features) and the task, returning a Decision: the chosen CPU and a
fixed reason string (no formatting on the hot path; `Decision.explain()` builds sentences)."""

from __future__ import annotations

from typing import Final

# What caused a migration (the engine's counters by cause), by index
CAUSES: Final = ("wakeup", "balance", "fork")
CAUSE_WAKEUP: Final = 0
CAUSE_BALANCE: Final = 1
CAUSE_FORK: Final = 2


class Decision:
    """A placement: the CPU, why (the deciding step), and the step before it when any.

    A plain class rather than a NamedTuple: compiled, a NamedTuple is built by a call into
    its interpreted __new__ (one per wakeup), a native class directly."""

    __slots__ = ("affine", "cpu", "reason", "via")

    def __init__(self, cpu: int, reason: str, via: str = "", affine: bool = False) -> None:
        self.cpu = cpu
        self.reason = reason
        self.via = via
        self.affine = affine  # wake_affine() moved the target to the waker's CPU

    def explain(self) -> str:
        tail = f" ({self.via})" if self.via else ""
        return f"CPU {self.cpu}: {self.reason}{tail}"

    def __repr__(self) -> str:
        return f"Decision(cpu={self.cpu}, reason={self.reason!r}, via={self.via!r}, affine={self.affine})"
