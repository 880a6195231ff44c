"""The what-if toggles of placement-model.md section 3, named exactly as there.

Hints (Userspace Hinting RFC) are per task group, inherited by children, one per category:
- fork category: `fork_affine`, `fork_spread` (initial placement, find_idlest_group)
- wake category: `wake_affine`, `wake_hold` (which LLC a wakeup targets)
- wake-search category: `wake_wide` (the RFC's proposed hint: search the parent domain when
  the targeted LLC has no idle CPU). It is its own category because it acts after the LLC
  has been chosen and combines with either wake hint.

Features are scheduler-wide (sched_feat style): SIS_UTIL (default on), SIS_SHORT,
UTIL_FITS_CAPACITY, SELECT_BIAS_PREV, STEAL (+ steal_node_limit, default 2), MM_FOOTPRINT,
NUMA_IMB_LEGACY, NO_MC. Which decision each one changes is listed in FEATURE_DECISIONS.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Final

from placemap.sim.errors import ScenarioError

HINT_FORK_AFFINE: Final = 1 << 0
HINT_FORK_SPREAD: Final = 1 << 1
HINT_WAKE_AFFINE: Final = 1 << 2
HINT_WAKE_HOLD: Final = 1 << 3
HINT_WAKE_WIDE: Final = 1 << 4

HINTS: Final[dict[str, int]] = {
    "fork_affine": HINT_FORK_AFFINE,
    "fork_spread": HINT_FORK_SPREAD,
    "wake_affine": HINT_WAKE_AFFINE,
    "wake_hold": HINT_WAKE_HOLD,
    "wake_wide": HINT_WAKE_WIDE,
}
HINT_CATEGORIES: Final[dict[str, tuple[str, ...]]] = {
    "fork": ("fork_affine", "fork_spread"),
    "wake": ("wake_affine", "wake_hold"),
    "wake_search": ("wake_wide",),
}


def parse_hints(value: Any, field: str = "hints") -> int:
    """A list of hint names -> bitmask; ScenarioError for unknown names or two of a category."""
    if value is None:
        return 0
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ScenarioError(field, "expected a list of hint names")
    mask = 0
    names = list(value)
    for i, name in enumerate(names):
        if not isinstance(name, str) or name not in HINTS:
            raise ScenarioError(f"{field}[{i}]", f"unknown hint {name!r}; known: {', '.join(HINTS)}")
        mask |= HINTS[name]
    for cat, members in HINT_CATEGORIES.items():
        chosen = [m for m in members if m in names]
        if len(chosen) > 1:
            raise ScenarioError(field, f"only one {cat} hint at a time, got {' and '.join(chosen)}")
    return mask


def hint_names(mask: int) -> list[str]:
    return [n for n, bit in HINTS.items() if mask & bit]


@dataclass(frozen=True, slots=True)
class Features:
    """Scheduler feature switches (upper case, as sched_feat names them)."""

    SIS_UTIL: bool = True
    SIS_SHORT: bool = False
    UTIL_FITS_CAPACITY: bool = False
    SELECT_BIAS_PREV: bool = False
    STEAL: bool = False
    steal_node_limit: int = 2
    MM_FOOTPRINT: bool = False
    NUMA_IMB_LEGACY: bool = False
    NO_MC: bool = False


FEATURE_NAMES: Final = tuple(f.name for f in fields(Features))

# Where each toggle is read (module.function, the module without its package): the only places
# it can change a decision (the kernel's decision point beside it where the names differ). A
# test walks the simulator's sources and holds every read of a feature switch or hint bit to it.
FEATURE_DECISIONS: Final[dict[str, tuple[str, ...]]] = {
    # select_idle_cpu()'s scan budget; load_balance() of the LLC domain refreshes the budget
    # (update_idle_cpu_scan() from update_sd_lb_stats()) and decides nothing by it
    "SIS_UTIL": ("wakeup.select_idle_cpu", "balance.load_balance"),
    "SIS_SHORT": ("wakeup.wake_affine_idle", "wakeup.select_idle_cpu"),
    "UTIL_FITS_CAPACITY": ("wakeup.select_idle_sibling",),
    "SELECT_BIAS_PREV": ("wakeup.select_idle_sibling",),
    "STEAL": ("balance.steal_enabled",),  # try_steal()'s gate, with steal_node_limit
    "steal_node_limit": ("balance.steal_enabled",),
    "MM_FOOTPRINT": ("fork.find_idlest_group",),
    "NUMA_IMB_LEGACY": ("fork.find_idlest_group", "balance.calculate_imbalance"),
    "NO_MC": ("state.State.__init__",),  # the sched domains built without MC (domains.SchedDomains)
    "fork_affine": ("fork.find_idlest_group",),
    "fork_spread": ("fork.find_idlest_group",),
    # select_task_rq_fair()'s wakeup path, and can_migrate_task()'s hint test
    "wake_affine": ("wakeup.wake_target", "balance.hint_holds"),
    "wake_hold": ("wakeup.wake_target", "balance.hint_holds"),
    "wake_wide": ("wakeup.select_idle_sibling",),
}


def parse_features(value: Any, field: str = "features") -> Features:
    """A {name: bool | int} mapping -> Features; unknown names and wrong types name the field."""
    if value is None:
        return Features()
    if not isinstance(value, Mapping):
        raise ScenarioError(field, "expected an object of feature switches")
    kw: dict[str, Any] = {}
    for name, v in value.items():
        if name not in FEATURE_NAMES:
            raise ScenarioError(f"{field}.{name}", f"unknown feature; known: {', '.join(FEATURE_NAMES)}")
        if name == "steal_node_limit":
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ScenarioError(f"{field}.{name}", "expected an integer >= 1")
        elif not isinstance(v, bool):
            raise ScenarioError(f"{field}.{name}", "expected true or false")
        kw[name] = v
    return Features(**kw)
