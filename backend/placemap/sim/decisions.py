"""How often each placement decision was taken, by its reason: the count behind every reason string
the policies return (wakeup: the wake_affine step and select_idle_sibling's pick; fork: the
find_idlest_group path and the CPU pick; balancing: each load_balance() outcome by domain, and
what each newly idle balance and STEAL did).

Opt-in (Engine.decisions is None unless a run asks): the counting is a dictionary update per
decision, which a plain run (the speed reference, the calibration) does not pay. The counts are
the run's own, so what-if twins compare reason by reason: "wakeups stacked on a busy CPU
because SIS_UTIL's budget was 0: 1,332 against 12".
"""

from __future__ import annotations

from typing import Any, Final

# balance kinds
PERIODIC: Final = "periodic"
NEWIDLE: Final = "newidle"
STEAL: Final = "steal"

# what a newly idle CPU did when it found no pull (policy/balance.newidle_balance returns no move)
NEWIDLE_SKIPPED: Final = (
    "not tried: no runqueue overloaded, or expected idle shorter than the first level's cost"
)
NEWIDLE_NOTHING: Final = "walked its domains, pulled nothing"


class DecisionCounts:
    """Counts of one run's decisions by reason (see the module docstring)."""

    def __init__(self) -> None:
        self.wakeup: dict[tuple[str, str], int] = {}
        self.fork: dict[tuple[str, str], int] = {}
        self.balance: dict[tuple[str, str, str], int] = {}

    def count_wakeup(self, via: str, pick: str) -> None:
        k = (via, pick)
        self.wakeup[k] = self.wakeup.get(k, 0) + 1

    def count_fork(self, path: str, pick: str) -> None:
        k = (path, pick)
        self.fork[k] = self.fork.get(k, 0) + 1

    def count_balance(self, kind: str, domain: str, outcome: str) -> None:
        k = (kind, domain, outcome)
        self.balance[k] = self.balance.get(k, 0) + 1

    def to_json(self) -> dict[str, list[dict[str, Any]]]:
        """Each kind's reasons, most frequent first (ties in text order: deterministic)."""
        return {
            "wakeup": [{"path": via, "pick": pick, "count": n} for (via, pick), n in _ordered(self.wakeup)],
            "fork": [{"path": path, "pick": pick, "count": n} for (path, pick), n in _ordered(self.fork)],
            "balance": [
                {"kind": kind, "domain": dom, "outcome": out, "count": n}
                for (kind, dom, out), n in _ordered(self.balance)
            ],
        }


def _ordered(d: dict[Any, int]) -> list[tuple[Any, int]]:
    return sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))
