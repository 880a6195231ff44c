"""A scenario beside its baseline, for `placemap sim --baseline`: the same scenario without its hints
and feature changes (the dashboard's Simulate form runs the same pair), the metric's change read by
its direction, the decisions whose share moved most between the two runs, and, for `--seeds N`, the
same pair on several seeds and whether the change keeps its sign on all of them.

Pure functions of the scenarios and the result JSONs (placemap.sim.scenario.run_scenario with
decisions); the command line prints them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import median
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


def with_seeds(scenario: Mapping[str, Any], n: int) -> list[dict[str, Any]]:
    """The scenario on n seeds: its own (0 when it sets none, as the simulator does) and the
    n - 1 after it."""
    first = scenario.get("seed", 0)
    return [{**scenario, "seed": first + i} for i in range(n)]


def seed_summary(changes: Sequence[float | None]) -> dict[str, Any]:
    """How one change spreads over seeds (each seed's change_pct; None where it was not measured:
    a run that did not complete, or a baseline of 0): how many seeds it is better, worse and the
    same on, the median and range of the measured ones, whether they are all the same change,
    and the verdict: one sign on every measured seed, or "the seed decides" (a what-if whose sign
    a seed flips is the model's noise, not an effect)."""
    got = [c for c in changes if c is not None]
    better = sum(c > 0 for c in got)
    worse = sum(c < 0 for c in got)
    same = len(got) - better - worse
    if not got:
        verdict = "no seed measured a change"
    elif better == len(got):
        verdict = "better on every seed"
    elif worse == len(got):
        verdict = "worse on every seed"
    elif same == len(got):
        verdict = "the same on every seed"
    else:
        verdict = f"the seed decides: better on {better}, worse on {worse}, the same on {same}"
    return {
        "seeds": len(changes),
        "measured": len(got),
        "better": better,
        "worse": worse,
        "same": same,
        "median_pct": median(got) if got else None,
        "min_pct": min(got) if got else None,
        "max_pct": max(got) if got else None,
        "stable": bool(got) and (better == len(got) or worse == len(got) or same == len(got)),
        # every measured seed gave the very same change: the seeds moved nothing (a seed picks
        # only the CPU the workload starts on and its own jitter), which says nothing of noise
        "identical": len(got) > 1 and min(got) == max(got),
        "verdict": verdict,
    }


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
