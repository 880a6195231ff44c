"""A scenario beside its baseline, for `placemap sim --baseline`: the same scenario without its hints
and feature changes (the dashboard's Simulate form runs the same pair), the metric's change read by
its direction, and the decisions whose share moved most between the two runs.

Pure functions of the scenarios and the result JSONs (placemap.sim.scenario.run_scenario with
decisions); the command line prints them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KINDS = ("wakeup", "fork")  # the decisions hints and features act on; balancing follows from them


def baseline_of(scenario: Mapping[str, Any]) -> dict[str, Any] | None:
    """The scenario without hints and with every feature at its default, or None when it has
    neither (nothing to compare)."""
    if not scenario.get("hints") and not scenario.get("features"):
        return None
    return {k: v for k, v in scenario.items() if k not in ("hints", "features")}


def change_pct(better: str, base: float, value: float) -> float | None:
    """The change against the baseline in %, positive when better by the metric's direction
    (the calibration's convention); None when the baseline is 0."""
    if base == 0:
        return None
    return 100.0 * ((base - value) / base if better == "lower" else (value - base) / base)


def _key(kind: str, row: Mapping[str, Any]) -> str:
    return f"{row['path']} -> {row['pick']}" if kind in KINDS else str(row)


def shifts(base: Mapping[str, Any], run: Mapping[str, Any], top: int = 5) -> list[dict[str, Any]]:
    """The `top` wakeup and fork reasons whose share of their kind moved most from `base` to
    `run` (the decisions of two results), largest first: kind, reason, both shares (0..1)."""
    out: list[dict[str, Any]] = []
    for kind in KINDS:
        rows_a, rows_b = base.get(kind, []), run.get(kind, [])
        ta = sum(r["count"] for r in rows_a) or 1
        tb = sum(r["count"] for r in rows_b) or 1
        shares: dict[str, list[float]] = {}
        for r in rows_a:
            shares.setdefault(_key(kind, r), [0.0, 0.0])[0] = r["count"] / ta
        for r in rows_b:
            shares.setdefault(_key(kind, r), [0.0, 0.0])[1] = r["count"] / tb
        out += [
            {"kind": kind, "reason": k, "baseline_share": a, "share": b}
            for k, (a, b) in shares.items()
            if a != b
        ]
    out.sort(key=lambda x: (-abs(x["share"] - x["baseline_share"]), x["kind"], x["reason"]))
    return out[:top]
