"""Per-LLC utilization over simulated time, one of a run's outputs (placement-model.md section 5:
"per-LLC utilization over time"): each LLC's busy fraction, the CPU time its online CPUs ran a
task over the CPU time they had, in bins of simulated time and over the whole run.

Owns the sampling. Engine.run stops the event loop at every bin boundary and calls sample(): a
stop between two events adds no event and accounts nothing, so the run is the one it would be
without sampling (a test holds every counter to it). A runqueue's busy time is Rq.busy_ns (what
Engine._account added) plus the running task's time since its last account. The bins start at
START_BIN_NS and double, adjacent pairs merged, whenever MAX_BINS are full, so that a run of any
length ends with MAX_BINS / 2 to MAX_BINS bins (the last one partial) and the sampling costs
O(stops x CPUs) whatever the number of events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from placemap.sim.state import Rq, State

if TYPE_CHECKING:
    from mypy_extensions import i64  # compiled, native ints (see core.py); annotations only

# 1 ms: a run of 50 ms or more gets 50-100 bins, a shorter one a bin per ms. Each stop reads every
# runqueue: at 100 us the reference hackbench (39 ms simulated, bench.REFERENCE) stopped ~200 times
# and ran 3.5% slower; at 1 ms, 39 times.
START_BIN_NS: Final = 1_000_000
MAX_BINS: Final = 100


class LlcSampler:
    """Busy time per LLC in bins of simulated time from 0; see the module docstring."""

    def __init__(self, st: State) -> None:
        self.st = st
        llc_of = st.topo.llc_of
        # the LLCs of the online CPUs, in the topology's LLC order, and each CPU's position
        self.llcs: list[int] = sorted({llc_of[c] for c in st.cpus})
        pos = {llc: i for i, llc in enumerate(self.llcs)}
        self.rq_pos: list[tuple[Rq, int]] = [(st.rqs[c], pos[llc_of[c]]) for c in st.cpus]
        self.ncpus: list[int] = [0] * len(self.llcs)
        for _rq, i in self.rq_pos:
            self.ncpus[i] += 1
        self.width: i64 = START_BIN_NS
        # per bin, per LLC: busy ns within the bin
        self.bins: list[list[int]] = []
        self.last_at: i64 = 0  # the boundary of the last full bin
        self.last_busy: list[int] = [0] * len(self.llcs)  # cumulative busy ns per LLC at last_at
        self.tail: list[int] = [0] * len(self.llcs)  # busy ns since last_at, at the run's end
        self.end: i64 = 0

    def next_boundary(self) -> int:
        return self.last_at + self.width

    def busy(self, t: int) -> list[int]:
        """Cumulative busy ns per LLC at simulated time t (no event pending before t)."""
        out = [0] * len(self.llcs)
        for rq, i in self.rq_pos:
            b: i64 = rq.busy_ns
            if rq.curr is not None and t > rq.run_start:
                b += t - rq.run_start
            out[i] += b
        return out

    def sample(self, t: int) -> None:
        """The loop stopped at boundary t (next_boundary()): close the bin ending there."""
        now = self.busy(t)
        last = self.last_busy
        self.bins.append([now[i] - last[i] for i in range(len(now))])
        self.last_busy = now
        self.last_at = t
        if len(self.bins) == MAX_BINS:
            self.bins = [
                [a + b for a, b in zip(self.bins[k], self.bins[k + 1], strict=True)]
                for k in range(0, MAX_BINS, 2)
            ]
            self.width *= 2

    def finish(self, end: int) -> None:
        """The run stopped at `end` (at or after last_at): the partial bin since the last boundary."""
        self.end = end
        now = self.busy(end)
        self.tail = [now[i] - self.last_busy[i] for i in range(len(now))]

    def summary(self) -> dict[str, Any]:
        """{bin_ns, t_start_ns, end_ns, series: [{llc, cpus, mean, util: [per bin]}]}: the store's
        llc_util metrics shape (bin_ns, t_start_ns, series of {llc, util}) plus each LLC's CPU
        count and its mean over the run; the last bin covers end_ns - its start only."""
        w = self.width
        tail_span = self.end - self.last_at
        series = []
        for i, llc in enumerate(self.llcs):
            n = self.ncpus[i]
            util = [round(b[i] / (w * n), 4) for b in self.bins]
            if tail_span > 0:
                util.append(round(self.tail[i] / (tail_span * n), 4))
            total = self.last_busy[i] + self.tail[i]
            mean = round(total / (self.end * n), 4) if self.end > 0 else 0.0
            series.append({"llc": llc, "cpus": n, "mean": mean, "util": util})
        return {"bin_ns": w, "t_start_ns": 0, "end_ns": self.end, "series": series}
