"""A latency metric's distribution (schbench's p99 wakeup latency): the percentiles schbench
prints beside its p99, how many wakeups they are read from, and, when there are too few for
the p99 to be more than one of the very largest of them, a note that says so.

A percentile is the sample at index floor(permille * (n - 1) / 1000) of the sorted samples,
the rule the schbench workload's metric has always used for its p99."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

# the percentiles reported, in per mille (p50, p90, p99, p99.9); 990 is the metric
PERMILLE: Final = (500, 900, 990, 999)
P99: Final = 990
# a p99 wants at least one sample per percent; below that it is one of the two largest samples
# (its rank from the top, n - 1 - floor(0.99 (n - 1)), is 0 or 1 for every n up to 100), so a
# single wakeup moves it
FEW_SAMPLES: Final = 100


def percentile(sorted_samples: Sequence[int], permille: int) -> int:
    """The sample at `permille` of the sorted samples (not empty)."""
    return sorted_samples[(permille * (len(sorted_samples) - 1)) // 1000]


def rank_from_top(n: int, permille: int) -> int:
    """How many samples are larger than the one `percentile` picks (ties apart): 0 is the
    largest."""
    return n - 1 - (permille * (n - 1)) // 1000


def _key(permille: int) -> str:
    whole, tenth = divmod(permille, 10)
    return f"p{whole}" if tenth == 0 else f"p{whole}_{tenth}"


def few_samples_note(n: int) -> str | None:
    """What a p99 of n samples is, when n is too small for it to be a percentile worth
    comparing; None when there are enough (or none: the run is incomplete, said elsewhere)."""
    if n == 0 or n >= FEW_SAMPLES:
        return None
    rank = rank_from_top(n, P99)
    which = "the largest" if rank == 0 else f"the {_ordinal(rank + 1)} largest"
    return (
        f"few samples: the p99 of {n} wakeups is {which} of them, so one wakeup moves it; "
        f"run longer (duration_ms) for {FEW_SAMPLES} or more"
    )


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def summary(samples_ns: Sequence[int]) -> dict[str, Any]:
    """{"samples": n, "p50": us, "p90": us, "p99": us, "p99_9": us, "max": us, "note": str|null};
    the values null when there are no samples."""
    s = sorted(samples_ns)
    out: dict[str, Any] = {"samples": len(s)}
    for pm in PERMILLE:
        out[_key(pm)] = round(percentile(s, pm) / 1000, 3) if s else None
    out["max"] = round(s[-1] / 1000, 3) if s else None
    out["note"] = few_samples_note(len(s))
    return out
