"""Per-batch stage timestamps for benchmarks: with PLACEMAP_LIVE_TIMING=FILE set, the ingest appends one
JSON line per batch (seq, rows, first event ts, when the server received the frame, published it to the
viewers, committed it, acknowledged it; CLOCK_MONOTONIC ns, the collector's trace clock) so
bench/live_bench.py can split event-to-viewer latency into stages. Unset (the default), nothing is
written and nothing is timed beyond one clock read per batch. The viewer route adds a line per frame when
it has sent it to the first viewer (view_sent_ns)."""

from __future__ import annotations

import json
import os
import threading
import time
from typing import IO

ENV = "PLACEMAP_LIVE_TIMING"


class Timing:
    """Appends lines to the file named by $PLACEMAP_LIVE_TIMING (a no-op when unset)."""

    def __init__(self, path: str | None = None) -> None:
        path = os.environ.get(ENV) if path is None else path
        self._f: IO[str] | None = open(path, "a", buffering=1) if path else None  # noqa: SIM115
        self._lock = threading.Lock()
        self._frames: dict[int, tuple[str, int]] = {}  # id of a published frame -> (rid, seq)

    @property
    def on(self) -> bool:
        return self._f is not None

    def write(self, **fields: int | str | None) -> None:
        if self._f is None:
            return
        with self._lock:
            self._f.write(json.dumps(fields) + "\n")

    def published(self, rid: str, seq: int, frame: bytes) -> None:
        """A frame went to the hub (the first viewer that sends it writes a line: view_sent)."""
        if self._f is not None:
            if len(self._frames) > 10_000:  # frames no viewer sent (skipped): forget them
                self._frames.clear()
            self._frames[id(frame)] = (rid, seq)

    def view_sent(self, frame: bytes) -> None:
        if self._f is not None and (key := self._frames.pop(id(frame), None)) is not None:
            self.write(rid=key[0], seq=key[1], view_sent_ns=time.monotonic_ns())

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None
