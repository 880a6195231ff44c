"""Live chunking: a live recording's committed batches become chunks, keyframes and placement tables
while it grows, through the import's own Ingestor, so the chunk, state and window routes answer on a live
recording whose time range grows.

- A full chunk (BATCH_ROWS events) is written as soon as it fills.
- A partial head chunk is written once events have waited HEAD_FLUSH_S unchunked (a quiet host fills a
  chunk slowly), so live chunks may hold fewer rows. Every chunk is final once written.
- Events are held back REORDER_NS (trace time) behind the newest one seen and sorted in (stable), so a
  batch that starts a little before its predecessor's end still lands in order. An event older than one
  already handed to the Ingestor marks the chunker broken: it stops, and finalising rebuilds from the
  batches instead.
- After a server restart the chunks are rebuilt from the batches and cut at the same row counts as
  before, so a chunk a client has already read is the same chunk.

One worker thread per live recording; batches are offered in commit order (commits hold `lock`).
Chunking yields to the live feed: while the service reports batches in flight (validated, committed and
sent to viewers on the event loop's worker threads), the chunker waits, up to DEFER_BATCHES queued batches
or DEFER_S, so a host short of CPU spends it on the viewers' latency first and chunks in the gaps.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from placemap.replay.ingest import Ingestor
from placemap.schema.models.topology_schema import Topology
from placemap.store import Store
from placemap.store.live import LiveChunkStore, LiveStore

log = logging.getLogger("placemap.live")

HEAD_FLUSH_S = 2.0  # wall time an unchunked event may wait before a partial head chunk is written
REORDER_NS = 500_000_000  # trace time events are held back behind the newest one, for late batches
QUEUE_BATCHES = 256  # offers beyond this wait (back-pressure on ingest) instead of growing memory
IDLE_POLL_S = 0.25
DEFER_BATCHES = 128  # chunk at once beyond this many waiting batches, busy or not
DEFER_S = 10.0  # ... or once the oldest waiting batch has waited this long
BUSY_POLL_S = 0.01


class Chunker(Protocol):
    """What the ingest, service and finalisation need of a recording's chunker (LiveChunker here, or
    chunkproc.ProcChunker in its own process)."""

    lock: threading.Lock

    def offer(self, table: pa.Table) -> None: ...
    def finish(self) -> None: ...
    def close(self) -> None: ...


class ChunkingBrokenError(Exception):
    """Live chunking stopped (an event arrived older than what was chunked, or a chunk failed)."""


@dataclass(frozen=True)
class _Finish:
    done: Future[None]


class LiveChunker:
    """Chunks one live recording as its batches commit."""

    def __init__(
        self,
        store: Store,
        rid: str,
        topology: Topology | None,
        *,
        resume_through: int | None = None,
        head_flush_s: float = HEAD_FLUSH_S,
        busy: Callable[[], bool] | None = None,
    ) -> None:
        """resume_through: after a restart, rebuild from the committed batches with seq <= it first."""
        self.rid = rid
        self.lock = threading.Lock()  # a commit holds it across its transaction and its offer
        self.broken: str | None = None
        self.head_flush_s = head_flush_s
        self._busy = busy
        self._store = LiveChunkStore(store.path)
        self._live = LiveStore(self._store)
        self._topology = topology
        self._ing = Ingestor(self._store, rid, topology)
        self._held: pa.Table | None = None  # sorted, not yet handed to the Ingestor
        self._newest: int | None = None
        self._fed_max: int | None = None
        self._fed = 0  # rows handed to the Ingestor
        self._plan: deque[int] = deque()  # row counts of chunks to cut again (restart)
        self._head_since: float | None = None  # when the oldest unchunked event was handed over
        self._seen_seq = 0
        self._q: queue.Queue[pa.Table | _Finish | None] = queue.Queue(QUEUE_BATCHES)
        self._thread = threading.Thread(target=self._run, args=(resume_through,), daemon=True,
                                        name=f"live-chunker-{rid}")  # fmt: skip
        self._thread.start()

    # --- called from ingest threads / the event loop ------------------------------------------
    def offer(self, table: pa.Table) -> None:
        """A committed batch (call with `lock` held, in commit order)."""
        if self.broken is None and table.num_rows:
            self._q.put(table)

    def finish(self) -> None:
        """Chunk everything offered, write the derived data; the recording becomes ready.
        Raises ChunkingBrokenError when live chunking stopped (the caller rebuilds from the batches)."""
        if not self._thread.is_alive():
            raise ChunkingBrokenError("the chunker has stopped")
        done: Future[None] = Future()
        self._q.put(_Finish(done))
        try:
            done.result()
        finally:
            self._thread.join()  # its chunk writer has stopped too: nothing writes after this

    def close(self) -> None:
        """Stop without finishing (server stop, or a rebuild takes over)."""
        if self._thread.is_alive():
            self._q.put(None)
            self._thread.join()

    @property
    def chunked_rows(self) -> int:
        return self._ing.rows

    # --- worker thread ------------------------------------------------------------------------
    def _run(self, resume_through: int | None) -> None:
        try:
            if resume_through is not None:
                self._resume(resume_through)
            while True:
                try:
                    item = self._q.get(timeout=IDLE_POLL_S)
                except queue.Empty:
                    self._guard(self._head_flush)
                    continue
                if item is None:
                    return
                if isinstance(item, _Finish):
                    self._finish(item.done)
                    return
                self._yield_to_feed()
                self._guard(functools.partial(self._add, item))
                self._guard(self._head_flush)
        finally:
            with contextlib.suppress(Exception):
                self._ing.close()
            self._store.close()

    def _yield_to_feed(self) -> None:
        """Wait while batches are in flight (bounded: DEFER_BATCHES waiting, or DEFER_S)."""
        if self._busy is None:
            return
        until = time.monotonic() + DEFER_S
        while self._busy() and self._q.qsize() < DEFER_BATCHES and time.monotonic() < until:
            time.sleep(BUSY_POLL_S)

    def _guard(self, fn: Callable[[], None]) -> None:
        if self.broken is not None:
            return
        try:
            fn()
        except ChunkingBrokenError as exc:
            log.warning("live %s: chunking stopped: %s", self.rid, exc)
            self.broken = str(exc)
        except Exception as exc:
            log.exception("live %s: chunking stopped", self.rid)
            self.broken = f"{type(exc).__name__}: {exc}"

    def _finish(self, done: Future[None]) -> None:
        if self.broken is None:
            try:
                if self._held is not None:
                    self._feed(self._held)
                    self._held = None
                self._ing.finish(None)
                done.set_result(None)
                return
            except Exception as exc:
                log.exception("live %s: finishing the live chunks failed", self.rid)
                self.broken = f"{type(exc).__name__}: {exc}"
        done.set_exception(ChunkingBrokenError(self.broken or "stopped"))

    def _resume(self, through: int) -> None:
        self._plan = deque(self._live.chunk_plan(self.rid))
        self._live.reset_chunks(self.rid)
        for data in self._live.iter_batches(self.rid, max_seq=through):
            self._guard(functools.partial(self._add_ipc, data))
        self._plan.clear()  # batches past the plan (or missing) chunk as usual from here
        self._note_head()

    def _add_ipc(self, data: bytes) -> None:
        self._add(pa.ipc.open_stream(pa.py_buffer(data)).read_all())

    def _add(self, table: pa.Table) -> None:
        ts = table.column("ts_ns")
        first, last = pc.min_max(ts).values()
        t0, t1 = int(first.as_py()), int(last.as_py())
        if self._fed_max is not None and t0 < self._fed_max:
            raise ChunkingBrokenError(
                f"an event at {t0} arrived after events up to {self._fed_max} were chunked"
            )
        held = self._held
        if held is None:
            held = table
        else:
            held = pa.concat_tables([held, table])
            if self._newest is not None and t0 < self._newest:
                held = held.take(pc.sort_indices(held, sort_keys=[("ts_ns", "ascending")]))
        self._newest = t1 if self._newest is None else max(self._newest, t1)
        cut = int(np.searchsorted(held.column("ts_ns").to_numpy(), self._newest - REORDER_NS, side="right"))
        if cut:
            self._feed(held.slice(0, cut))
        self._held = held.slice(cut) if cut < held.num_rows else None

    def _feed(self, t: pa.Table) -> None:
        if not t.num_rows:
            return
        self._fed_max = int(pc.max(t.column("ts_ns")).as_py())
        while t.num_rows:
            seq = self._ing.seq
            if not self._plan:
                self._ing.add(t)
                self._fed += t.num_rows
                break
            room = self._plan[0] - (self._fed - self._ing.rows)
            part, t = t.slice(0, room), t.slice(room)
            self._ing.add(part)
            self._fed += part.num_rows
            if self._ing.seq == seq and self._fed - self._ing.rows == self._plan[0]:
                self._ing.flush()
            if self._ing.seq > seq:
                self._plan.popleft()
        self._note_head()

    def _note_head(self) -> None:
        """When the unchunked head began waiting: at the first feed after a cut."""
        if self._fed == self._ing.rows:
            self._head_since = None
        elif self._ing.seq != self._seen_seq or self._head_since is None:
            self._head_since = time.monotonic()
        self._seen_seq = self._ing.seq

    def _head_flush(self) -> None:
        if self._plan or self._head_since is None:
            return
        if time.monotonic() - self._head_since >= self.head_flush_s:
            self._ing.flush()
            self._note_head()
