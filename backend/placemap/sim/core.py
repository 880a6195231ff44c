"""The discrete-event loop: a heap of (time_ns, priority, sequence, callback, a, b).

Ordering by (time, priority, sequence) makes every run with the same inputs replay the same
events in the same order (SimPy's rule). Callbacks take two ints (or objects) so that no
per-event closure or object is built; stale events are dropped by their owners (a CPU's
generation counter) rather than removed from the heap. No wall clock here: live pacing, if
ever needed, belongs in a wrapper outside the core.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any, Final

URGENT: Final = 0  # before anything else at the same instant (a CPU's own events)
NORMAL: Final = 1  # timers, ticks

Callback = Callable[[Any, Any], None]
# Final: compiled code calls them without a module attribute lookup per event
_push: Final = heapq.heappush
_pop: Final = heapq.heappop


class Environment:
    """Simulated time in ns and the queue of future events."""

    __slots__ = ("_heap", "_seq", "events", "now", "stopped")

    def __init__(self) -> None:
        self.now = 0
        self._heap: list[tuple[int, int, int, Callback, Any, Any]] = []
        self._seq = 0
        self.events = 0
        self.stopped = False

    def schedule(self, time_ns: int, priority: int, fn: Callback, a: Any = None, b: Any = None) -> None:
        """Call fn(a, b) at time_ns (never in the past)."""
        time_ns = max(time_ns, self.now)
        seq = self._seq = self._seq + 1
        _push(self._heap, (time_ns, priority, seq, fn, a, b))

    def stop(self) -> None:
        """End run() after the current event."""
        self.stopped = True

    def run(self, until_ns: int) -> None:
        """Process events up to and including until_ns, or until stop()."""
        heap = self._heap
        pop = _pop
        n = 0
        while heap and heap[0][0] <= until_ns and not self.stopped:
            t, _prio, _seq, fn, a, b = pop(heap)
            self.now = t
            n += 1
            fn(a, b)
        self.events += n
        if not self.stopped:
            self.now = max(self.now, until_ns)

    def __len__(self) -> int:
        return len(self._heap)
