"""One lock per recording for the refills that complete its stored derived documents (the metrics'
run-queue delays, wakeups by their waker and by LLC pair, the overview's wakeup rows, the tasks'
wakeup counts): each reads a document, scans the recording's chunks and writes the document back,
and the page asks for a recording's metrics, overview and tasks at once. Under the lock, the second
request finds what the first stored instead of scanning again, and no refill writes over another's
field. Within one server process
(the requests' threads); a lock lives while some request holds or waits for it."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager


class _Lock:
    """A lock that a weak dictionary can hold (a bare threading.Lock takes no weak reference)."""

    __slots__ = ("__weakref__", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()


_guard = threading.Lock()
_locks: weakref.WeakValueDictionary[str, _Lock] = weakref.WeakValueDictionary()


@contextmanager
def refill_lock(rid: str) -> Iterator[None]:
    """Hold recording `rid`'s refill lock for the block."""
    with _guard:
        held = _locks.get(rid)
        if held is None:
            held = _locks[rid] = _Lock()
    with held.lock:
        yield
