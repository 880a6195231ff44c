"""The discrete-event loop: events run in (time_ns, priority, sequence) order.

Ordering by (time, priority, sequence) makes every run with the same inputs replay the same
events in the same order (SimPy's rule). Callbacks take two ints (or objects) so that no
per-event closure or object is built; stale events are dropped by their owners (a CPU's
generation counter) rather than removed from the queue. No wall clock here: live pacing, if
ever needed, belongs in a wrapper outside the core.

Layout, for speed: the heap holds plain ints, key = time_ns * 2 + priority (one per distinct
key; ints compare several times faster than tuples), and each key's events wait in a bucket,
[next, fn, a, b, fn, a, b, ...] in scheduling order (next: the index of the first event not yet
run), which gives the sequence order without storing a sequence number. An event scheduled at
a smaller key while a bucket is being drained (an URGENT one at the current time) goes on the
heap and runs next, as with (time, prio, seq).

The engine's own events (a CPU's burst end, idle exit, resched, timers) are posted as small
ints to a Handler instead of callables: compiled, the loop then calls the handler's method
directly rather than through a Python-level bound-method call with its argument parsing.
Both kinds share the queue and its order.
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


class Handler:
    """Receives the events posted with Environment.post (subclassed by the engine)."""

    def handle(self, kind: int, a: Any, b: Any) -> None:
        raise NotImplementedError


class Environment:
    """Simulated time in ns and the queue of future events."""

    __slots__ = ("_buckets", "_heap", "_pending", "events", "handler", "now", "stopped")

    def __init__(self, handler: Handler | None = None) -> None:
        self.handler = handler
        self.now = 0
        self._heap: list[int] = []  # distinct keys, time_ns * 2 + priority
        self._buckets: dict[int, list[Any]] = {}  # key -> [fn, a, b, ...] in scheduling order
        self._pending = 0
        self.events = 0
        self.stopped = False

    def schedule(self, time_ns: int, priority: int, fn: Callback, a: Any = None, b: Any = None) -> None:
        """Call fn(a, b) at time_ns (never in the past)."""
        key = max(time_ns, self.now) * 2 + priority
        bucket = self._buckets.get(key)
        if bucket is None:
            self._buckets[key] = [1, fn, a, b]
            _push(self._heap, key)
        else:
            bucket.append(fn)
            bucket.append(a)
            bucket.append(b)
        self._pending += 1

    def post(self, time_ns: int, priority: int, kind: int, a: Any, b: Any) -> None:
        """Call handler.handle(kind, a, b) at time_ns (never in the past); same order as schedule."""
        now = self.now
        key = (time_ns if time_ns > now else now) * 2 + priority
        bucket = self._buckets.get(key)
        if bucket is None:
            self._buckets[key] = [1, kind, a, b]
            _push(self._heap, key)
        else:
            bucket.append(kind)
            bucket.append(a)
            bucket.append(b)
        self._pending += 1

    def stop(self) -> None:
        """End run() after the current event."""
        self.stopped = True

    def run(self, until_ns: int) -> None:
        """Process events up to and including until_ns, or until stop()."""
        heap = self._heap
        buckets = self._buckets
        handler = self.handler
        last = until_ns * 2 + 1  # the largest key at or before until_ns
        n = 0
        while heap and heap[0] <= last and not self.stopped:
            key = heap[0]
            bucket = buckets[key]
            i: int = bucket[0]
            fn = bucket[i]
            a = bucket[i + 1]
            b = bucket[i + 2]
            if i + 3 == len(bucket):
                del buckets[key]
                _pop(heap)
            else:
                bucket[0] = i + 3
            self._pending -= 1
            self.now = key >> 1
            n += 1
            if isinstance(fn, int):
                assert handler is not None
                handler.handle(fn, a, b)
            else:
                fn(a, b)
        self.events += n
        if not self.stopped:
            self.now = max(self.now, until_ns)

    def __len__(self) -> int:
        return self._pending
