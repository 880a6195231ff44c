"""A latency metric's distribution (schbench's p99 wakeup latency): the percentiles schbench
prints beside its p99, how many wakeups they are read from, and, when there are too few for
the p99 to be more than one of the very largest of them, a note that says so. And every run's
run-queue delays after wakeups (DelayHistogram), as the store measures a recording's.

A percentile is the sample at index floor(permille * (n - 1) / 1000) of the sorted samples,
the rule the schbench workload's metric has always used for its p99."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from mypy_extensions import i64  # compiled, native ints (see core.py); annotations only

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


# --- run-queue delay after a wakeup --------------------------------------------------------------
# The histogram the store keeps of a recording's delays (placemap.replay.kernel.delay_bucket, a
# numba kernel), kept by the engine for every run, so that a simulated run's counters and the
# metrics of its saved recording give the same figures: below SUB_BUCKETS ns a bucket per ns;
# above, each power of two cut in SUB_BUCKETS equal parts (a bucket's lower bound within 1/16 below
# any delay in it).
SUB_BITS: Final = 4
SUB_BUCKETS: Final = 1 << SUB_BITS
DELAY_BUCKETS: Final = SUB_BUCKETS + (64 - SUB_BITS) * SUB_BUCKETS


def delay_bucket(v: i64) -> i64:
    """The bucket of a delay of v >= 0 ns (compiled: native 64-bit arithmetic, floor(log2 v) by
    halving the range; int.bit_length() would be a generic method call per wakeup)."""
    if v < SUB_BUCKETS:
        return v
    e: i64 = 0
    x: i64 = v
    if x >= 1 << 32:
        x >>= 32
        e += 32
    if x >= 1 << 16:
        x >>= 16
        e += 16
    if x >= 1 << 8:
        x >>= 8
        e += 8
    if x >= 1 << 4:
        x >>= 4
        e += 4
    if x >= 1 << 2:
        x >>= 2
        e += 2
    if x >= 2:
        e += 1
    return SUB_BUCKETS + (e - SUB_BITS) * SUB_BUCKETS + ((v >> (e - SUB_BITS)) & (SUB_BUCKETS - 1))


def delay_bucket_low(b: int) -> int:
    """The smallest delay (ns) of bucket b."""
    if b < SUB_BUCKETS:
        return b
    e = (b - SUB_BUCKETS) // SUB_BUCKETS + SUB_BITS
    return (1 << e) + (((b - SUB_BUCKETS) % SUB_BUCKETS) << (e - SUB_BITS))


class DelayHistogram:
    """Run-queue delays after wakeups: from a task's wakeup (or a new task's wakeup_new) to the
    switch that runs it."""

    __slots__ = ("counts", "n", "top")

    def __init__(self) -> None:
        self.counts = [0] * DELAY_BUCKETS
        self.n: i64 = 0
        self.top: i64 = 0

    def add(self, d: i64) -> None:
        self.counts[delay_bucket(d)] += 1
        self.n += 1
        if d > self.top:  # noqa: PLR1730 - compiled, max() of i64s boxes them
            self.top = d

    def summary(self) -> dict[str, int] | None:
        """delay_summary() of this run's delays."""
        return delay_summary(self.counts, self.n, self.top)


def delay_summary(counts: Sequence[int], n: int, top: int) -> dict[str, int] | None:
    """{"samples", "p50_ns", "p90_ns", "p99_ns", "max_ns"} of n delays counted by bucket, the
    largest `top`: each percentile the sample at floor(q (n - 1)), as its bucket's lower bound; None
    without a delay. A simulated run's result and a recording's metrics (the store's histogram) both
    read theirs here."""
    if n == 0:
        return None
    out: dict[str, int] = {"samples": n}
    for key, permille in (("p50_ns", 500), ("p90_ns", 900), ("p99_ns", 990)):
        rank = (permille * (n - 1)) // 1000
        seen = 0
        for b, c in enumerate(counts):
            seen += c
            if seen > rank:
                out[key] = delay_bucket_low(b)
                break
    out["max_ns"] = top
    return out
