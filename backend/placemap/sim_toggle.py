"""A toggle, as a sweep over toggles names one (sim_sweep): hints and feature changes joined by '+'
(`fork_affine+wake_affine`, `NO_SIS_UTIL`, `STEAL+steal_node_limit=8`), each away from the default,
and the feature table's rows: every toggle of placement-model.md section 3 on its own.

Owns the text of a toggle and its errors (naming `sweep.values`); the hints and features themselves
are the simulator's (sim.features).
"""

from __future__ import annotations

from placemap.sim.errors import ScenarioError
from placemap.sim.features import FEATURE_NAMES, HINT_CATEGORIES, HINTS, Features, parse_features, parse_hints

_DEFAULTS = Features()
_SWITCHES = tuple(f for f in FEATURE_NAMES if isinstance(getattr(_DEFAULTS, f), bool))
# every toggle on its own, as `toggle=all` runs them: the hints, then each feature switch away from
# its default (NO_SIS_UTIL: SIS_UTIL is on by default)
ALL_TOGGLES: tuple[str, ...] = (
    *(h for members in HINT_CATEGORIES.values() for h in members),
    *(f"NO_{f}" if getattr(_DEFAULTS, f) else f for f in _SWITCHES),
)
MAX_TOGGLES = len(ALL_TOGGLES) + 3  # the feature table and a few combinations


def toggle(text: str) -> tuple[list[str], dict[str, bool | int]]:
    """One toggle value: hints and feature changes joined by '+' (`fork_affine+wake_affine`,
    `STEAL+steal_node_limit=8`): a hint by its name, a feature switched on by its name and off by
    NO_ and its name (as /sys/kernel/debug/sched/features takes them), an integer feature by
    name=value; each away from the default. The hints and the features, or a ScenarioError naming
    `sweep.values`."""
    hints: list[str] = []
    features: dict[str, bool | int] = {}
    for raw in text.split("+"):
        part = raw.strip()
        at = repr(part) if part == text else f"{part!r} in {text!r}"
        name, eq, val = part.partition("=")
        if name in HINTS and not eq:
            hints.append(name)
            continue
        value: bool | int
        if name in _SWITCHES and not eq:
            feature, value = name, True
        elif name.startswith("NO_") and name[3:] in _SWITCHES and not eq:
            feature, value = name[3:], False
        elif name in FEATURE_NAMES and name not in _SWITCHES and eq and val.strip().isdigit():
            feature, value = name, int(val)
        else:
            raise ScenarioError(
                "sweep.values",
                f"{at} is no toggle: a hint ({', '.join(HINTS)}), a feature "
                f"switched on (SIS_SHORT) or off (NO_SIS_UTIL), or an integer feature (steal_node_limit=8)",
            )
        if getattr(_DEFAULTS, feature) == value:
            raise ScenarioError("sweep.values", f"{at} is the default: it changes nothing")
        features[feature] = value
    try:
        parse_hints(hints, "sweep.values")
        parse_features(features, "sweep.values")
    except ScenarioError as exc:
        raise ScenarioError("sweep.values", f"{text!r}: {exc.message}") from exc
    return hints, features
