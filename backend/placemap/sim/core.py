"""The discrete-event loop: events run in (time_ns, priority, sequence) order.

Ordering by (time, priority, sequence) makes every run with the same inputs replay the same
events in the same order (SimPy's rule). Callbacks take two ints (or objects) so that no
per-event closure or object is built; stale events are dropped by their owners (a CPU's
generation counter) rather than removed from the queue. No wall clock here: live pacing, if
ever needed, belongs in a wrapper outside the core.

Interpreted (the pure-Python build), for speed, the heap holds plain ints (ints compare several
times faster than tuples), key = ((time_ns * 2 + priority) << SEQ_BITS) | seq, and an event's
callback and arguments wait in three lists at index seq (no per-event allocation, no
dictionary). seq counts events in scheduling order; when it reaches the lists' length, the
pending events are renumbered 0..n-1 in their order (the lists double when more than half are
pending), so seq stays below 2**SEQ_BITS and the keys within machine ints.

Compiled, the queue is a heap of Event objects instead (Environment.objects): an event's
time and priority (tk = time_ns * 2 + priority) and its seq are native int fields, so that
comparing two in a sift reads two machine words instead of unboxing two 3-digit ints, and a
post stores into a reused object (the event that just ran, or one from a free list) instead of
allocating an int of the key. seq then counts posts without renumbering. Same order: by
(tk, seq), which the int key encodes too; keys are unique, so both layouts pop the same events
in the same order. Interpreted, heapq's C sifts on ints are the faster ones and stay.

The engine's own events (a CPU's burst end, idle exit, resched, timers) are posted as small
ints to a Handler instead of callables: compiled, the loop then calls the handler's method
directly rather than through a Python-level bound-method call with its argument parsing.
Both kinds share the queue and its order.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    # i64: compiled, a native 64-bit int (no tag test, no overflow path in a compare);
    # interpreted, annotations only (mypy_extensions is a dev dependency, never imported at run time)
    from mypy_extensions import i64

URGENT: Final = 0  # before anything else at the same instant (a CPU's own events)
NORMAL: Final = 1  # timers, ticks

Callback = Callable[[Any, Any], None]

SEQ_BITS: Final = 20  # at most 2**20 pending events; keys stay below 2**62 for 600 s runs
SEQ_MASK: Final = (1 << SEQ_BITS) - 1
FIRST_SLOTS: Final = 4096


# Two layouts of one queue, chosen by Environment.objects: interpreted (the pure-Python build),
# a heap of int keys through heapq's C sifts; compiled, a heap of Event objects with native
# fields and the sifts below. Keys are unique (seq is), so both pop the same events in the same
# order: the run does not depend on the layout.
_INTERPRETED: Final = __file__.endswith(".py")


class Event:
    """A posted event, for the heap of objects (compiled): it runs before another with a
    smaller (tk, seq)."""

    __slots__ = ("a", "b", "g", "kind", "pos", "seq", "tk")

    def __init__(self) -> None:
        # i64 (compiled: unboxed machine words, compared in a sift without a tag test); a
        # 600 s run's tk is below 2**41 and seq counts posts, far below 2**63
        self.tk: i64 = 0  # time_ns * 2 + priority
        self.seq: i64 = 0  # post number
        self.kind: Any = None  # the handler's event kind (an int) or a callback
        self.a: Any = None
        self.b: Any = None
        # post_gen's int argument, unboxed (-1: a post's event, whose arguments are a and b)
        self.g: i64 = -1
        # its index in the heap, kept by every sift (-1: not on the heap), so that
        # Environment.post_gen_over can move it in place
        self.pos: i64 = -1


def _ev_sift_up(heap: list[Event], pos: i64, ev: Event) -> None:
    """Put ev at pos, or higher while its parent runs after it (heapq's _siftdown; positions
    as i64: compiled, native index arithmetic)."""
    tk = ev.tk
    seq = ev.seq
    parent: i64
    while pos > 0:
        parent = (pos - 1) >> 1
        q = heap[parent]
        qk = q.tk
        if qk < tk or (qk == tk and q.seq < seq):
            break
        heap[pos] = q
        q.pos = pos
        pos = parent
    heap[pos] = ev
    ev.pos = pos


def _ev_push(heap: list[Event], ev: Event) -> None:
    """heapq.heappush."""
    heap.append(ev)
    _ev_sift_up(heap, len(heap) - 1, ev)


def _ev_replace(heap: list[Event], ev: Event) -> None:
    """heapq.heapreplace less its result: ev replaces the smallest."""
    _ev_sift_down(heap, 0, ev)


def _ev_sift_down(heap: list[Event], pos: i64, ev: Event) -> None:
    """ev replaces the event at pos, where it runs after the parent: it goes down while the
    earlier of its children runs before it. Not heapq's _siftup (the hole down to a leaf
    along the earlier children, then ev rising from there: fewer comparisons, but every level
    loads two Events, and the sifts are bound by those loads, not by the comparisons): on
    bench.REFERENCE the sifts read 548k heap items per run instead of 835k. The heap may
    take another shape than heapq's would; keys are unique, so the events pop in the same
    order."""
    n: i64 = len(heap)
    tk = ev.tk
    seq = ev.seq
    child: i64 = 2 * pos + 1
    right: i64
    while child < n:
        c = heap[child]
        ck = c.tk
        right = child + 1
        if right < n:
            r = heap[right]
            rk = r.tk
            if rk < ck or (rk == ck and r.seq < c.seq):
                child = right
                c = r
                ck = rk
        if tk < ck or (tk == ck and seq < c.seq):
            break
        heap[pos] = c
        c.pos = pos
        pos = child
        child = 2 * pos + 1
    heap[pos] = ev
    ev.pos = pos


def _ev_pop(heap: list[Event]) -> Event:
    """heapq.heappop: removes and returns the smallest."""
    first = heap[0]
    last = heap.pop()
    if heap:
        _ev_replace(heap, last)
    first.pos = -1
    return first


class Handler:
    """Receives the events posted with Environment.post (subclassed by the engine)."""

    def handle(self, kind: int, a: Any, b: Any) -> None:
        raise NotImplementedError

    def handle_gen(self, kind: int, a: Any, g: i64) -> None:
        """An event posted with Environment.post_gen (compiled; interpreted, handle(kind, a, g))."""
        raise NotImplementedError


class Environment:
    """Simulated time in ns and the queue of future events."""

    __slots__ = (
        "_a",
        "_b",
        "_evheap",
        "_fn",
        "_free",
        "_heap",
        "_pending",
        "_seq",
        "_spent",
        "events",
        "handler",
        "now",
        "objects",
        "stopped",
    )

    def __init__(self, handler: Handler | None = None, *, objects: bool | None = None) -> None:
        self.handler = handler
        self.now = 0
        # the heap of Events (compiled) or of int keys (interpreted); tests choose either
        self.objects = not _INTERPRETED if objects is None else objects
        self._evheap: list[Event] = []
        self._free: list[Event] = []  # Events popped unused, for the next posts
        self._heap: list[Any] = []  # ints: ((time_ns * 2 + priority) << SEQ_BITS) | seq
        # by seq: the callback (or the handler's event kind) and its two arguments
        # (the heap of int keys only: on the heap of Events they stay empty, 96 KiB less for a
        # run to fault in)
        slots = 0 if self.objects else FIRST_SLOTS
        self._fn: list[Any] = [None] * slots
        self._a: list[Any] = [None] * slots
        self._b: list[Any] = [None] * slots
        self._seq = 0
        # heap[0] has run but is still on the heap: the next post replaces it (one sift
        # instead of a pop and a push: most events post the next one), else run() pops it
        self._spent = False
        self._pending = 0
        self.events = 0
        self.stopped = False

    def schedule(self, time_ns: int, priority: int, fn: Callback, a: Any = None, b: Any = None) -> None:
        """Call fn(a, b) at time_ns (never in the past)."""
        self.post(time_ns, priority, fn, a, b)

    def post_gen(self, time_ns: int, priority: int, kind: int, a: Any, g: i64) -> None:
        """post(time_ns, priority, kind, a, g) for a non-negative int g (a CPU's generation):
        on the heap of Events, g waits in the Event's native field and the handler gets it as
        handle_gen(kind, a, g), so that no int object is made and freed per event; same order."""
        if self.objects:
            self._post_event(time_ns, priority, kind, a, None, g)
            return
        self.post(time_ns, priority, kind, a, g)

    def post_gen_over(  # noqa: PLR0917 - post_gen()'s arguments and old
        self, old: Event | None, time_ns: int, priority: int, kind: int, a: Any, g: i64
    ) -> Event | None:
        """post_gen, by a caller for whom `old` (an Event this method returned before, or None)
        is stale if still pending: its handler will do nothing (a CPU's event of an older
        generation). On the heap of Events, when old is still on the heap (and not the event
        running now), old becomes the new event where it is and moves to the new event's place:
        the pending events and their order are the same as after a post that leaves old to
        be popped and ignored, less old. Returns the Event posted (None interpreted)."""
        if not self.objects:
            self.post(time_ns, priority, kind, a, g)
            return None
        if old is None or old.pos < 0 or (old.pos == 0 and self._spent):
            return self._post_event(time_ns, priority, kind, a, None, g)
        seq = self._seq
        self._seq = seq + 1
        now = self.now
        old.tk = (time_ns if time_ns > now else now) * 2 + priority
        old.seq = seq
        old.kind = kind
        old.a = a
        old.b = None
        old.g = g
        heap = self._evheap
        pos = old.pos
        if pos > 0:
            q = heap[(pos - 1) >> 1]
            qk = q.tk
            if old.tk < qk or (old.tk == qk and seq < q.seq):
                _ev_sift_up(heap, pos, old)
                return old
        _ev_sift_down(heap, pos, old)
        return old

    def post(self, time_ns: int, priority: int, kind: Any, a: Any, b: Any) -> None:
        """Call handler.handle(kind, a, b) at time_ns (never in the past) when kind is an int,
        else kind(a, b); same order as schedule."""
        if self.objects:
            self._post_event(time_ns, priority, kind, a, b, -1)
            return
        seq = self._seq
        if seq == len(self._fn):
            seq = self._renumber()
        self._seq = seq + 1
        now = self.now
        self._fn[seq] = kind
        self._a[seq] = a
        self._b[seq] = b
        key = (((time_ns if time_ns > now else now) * 2 + priority) << SEQ_BITS) | seq
        if self._spent:
            self._spent = False
            heapq.heapreplace(self._heap, key)
        else:
            heapq.heappush(self._heap, key)
        self._pending += 1

    def _post_event(self, time_ns: int, priority: int, kind: Any, a: Any, b: Any, g: i64) -> Event:  # noqa: PLR0917 - post()'s arguments and g
        """post() on the heap of Events (g: post_gen's int, else -1)."""
        seq = self._seq
        self._seq = seq + 1
        now = self.now
        tk = (time_ns if time_ns > now else now) * 2 + priority
        evheap = self._evheap
        # the event that just ran is still at the root: reuse it in its place
        spent = self._spent
        if spent:
            self._spent = False
            ev = evheap[0]
        else:
            free = self._free
            ev = free.pop() if free else Event()
        ev.tk = tk
        ev.seq = seq
        ev.kind = kind
        ev.a = a
        ev.b = b
        ev.g = g
        if spent:
            _ev_replace(evheap, ev)
        else:
            _ev_push(evheap, ev)
        self._pending += 1
        return ev

    def _renumber(self) -> int:
        """Give the pending events seq 0..n-1 in their order (a sorted list is a heap); the
        lists grow (in place: run() holds them) when more than half would be in use."""
        heap: list[int] = self._heap
        if self._spent:
            self._spent = False
            heapq.heappop(self._heap)
        heap.sort()
        fn, a, b = self._fn, self._a, self._b
        moved = [(fn[k & SEQ_MASK], a[k & SEQ_MASK], b[k & SEQ_MASK]) for k in heap]
        n = len(heap)
        size = len(fn)
        if 2 * n > size:
            if 2 * size > SEQ_MASK + 1:
                raise RuntimeError(f"more than {(SEQ_MASK + 1) // 2} pending events")
            fn.extend([None] * size)
            a.extend([None] * size)
            b.extend([None] * size)
        for i in range(n):
            heap[i] = ((heap[i] >> SEQ_BITS) << SEQ_BITS) | i
            fn[i], a[i], b[i] = moved[i]
        return n

    def stop(self) -> None:
        """End run() after the current event."""
        self.stopped = True

    def run(self, until_ns: int) -> None:
        """Process events up to and including until_ns, or until stop()."""
        if self.objects:
            self._run_objects(until_ns)
            return
        heap = self._heap
        fns, args_a, args_b = self._fn, self._a, self._b
        handler = self.handler
        end = (until_ns * 2 + 2) << SEQ_BITS  # keys below: at or before until_ns
        n = 0
        while True:
            if self._spent:
                self._spent = False
                heapq.heappop(heap)
            if not heap or self.stopped:
                break
            key: int = heap[0]
            if key >= end:
                break
            self._spent = True
            s = key & SEQ_MASK
            fn = fns[s]
            a = args_a[s]
            b = args_b[s]
            self._pending -= 1
            self.now = key >> (SEQ_BITS + 1)
            n += 1
            if isinstance(fn, int):
                assert handler is not None
                handler.handle(fn, a, b)
            else:
                fn(a, b)
        self.events += n
        if not self.stopped:
            self.now = max(self.now, until_ns)

    def _run_objects(self, until_ns: int) -> None:
        """run() on the heap of Events."""
        heap = self._evheap
        free = self._free
        handler = self.handler
        end = until_ns * 2 + 2  # tk below: at or before until_ns
        n = 0
        while True:
            if self._spent:
                self._spent = False
                ev = _ev_pop(heap)
                ev.a = ev.b = None
                free.append(ev)
            if not heap or self.stopped:
                break
            ev = heap[0]
            tk = ev.tk
            if tk >= end:
                break
            self._spent = True
            fn = ev.kind
            a = ev.a
            b = ev.b
            g = ev.g
            self._pending -= 1
            self.now = tk >> 1
            n += 1
            if isinstance(fn, int):
                assert handler is not None
                if g >= 0:
                    handler.handle_gen(fn, a, g)
                else:
                    handler.handle(fn, a, b)
            else:
                fn(a, b)
        self.events += n
        if not self.stopped:
            self.now = max(self.now, until_ns)

    def __len__(self) -> int:
        return self._pending
