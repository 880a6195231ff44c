"""The live service: which collector session is connected to which live recording, the end-of-recording
timers, each live recording's chunker, and finalisation off the event loop. One per app; used from the
event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from typing import Any

from placemap.live.chunker import Chunker, LiveChunker
from placemap.live.chunkproc import ProcChunker, in_process, start_spare, stop_spares
from placemap.live.finalize import finalize
from placemap.live.hub import Hub
from placemap.live.timing import Timing
from placemap.schema.models.topology_schema import Topology
from placemap.store import Store
from placemap.store.live import LiveStore

log = logging.getLogger("placemap.live")

RESTART_GRACE_S = 30.0
LOOP_NICE_ENV = "PLACEMAP_LIVE_LOOP_NICE"


class LiveService:
    """Tracks connected sessions; a recording whose collector went away ends after `end_timeout_s`."""

    def __init__(self, store: Store, end_timeout_s: float) -> None:
        self.store = store
        self.live = LiveStore(store)
        self.hub = Hub()
        self.end_timeout_s = end_timeout_s
        self._connected: dict[str, object] = {}  # recording id -> the connection that owns it now
        self._timers: dict[str, asyncio.Task[None]] = {}
        self._finalizing: dict[str, asyncio.Task[None]] = {}
        self._chunkers: dict[str, Chunker] = {}
        self.inflight = 0  # batches between receipt and fan-out (chunkers yield to them)
        self._published: dict[str, int] = {}  # session id -> the highest seq shown to viewers
        self.timing = Timing()
        self.chunker_takes_tables = in_process()  # LiveChunker.offer takes tables; the worker reads the db

    def _new_chunker(self, rid: str, resume: bool) -> Chunker:
        if not in_process():
            return ProcChunker(self.store, rid, resume=resume)
        rec = self.store.get_recording(rid)
        body = None if rec is None or rec.topology_id is None else self.store.get_topology(rec.topology_id)
        topology = None if body is None else Topology.model_validate(body)
        through = self.live.last_seq(rid) if resume else None
        return LiveChunker(self.store, rid, topology, resume_through=through, busy=self.busy)

    def first_publish(self, session_id: str, seq: int) -> bool:
        """True once per (session, seq) in this process: a batch resent after a reconnect (published,
        not yet committed when the connection dropped) is not shown to the viewers twice."""
        if seq <= self._published.get(session_id, -1):
            return False
        self._published[session_id] = seq
        return True

    def busy(self) -> bool:
        """Batches are in flight (read from chunker threads: an int read is atomic)."""
        return self.inflight > 0

    async def chunker(self, rid: str) -> Chunker:
        """rid's chunker (a new recording's, created at its first session)."""
        ch = self._chunkers.get(rid)
        if ch is None:
            ch = await asyncio.to_thread(self._new_chunker, rid, False)
            ch = self._chunkers.setdefault(rid, ch)
        return ch

    async def start(self) -> None:
        """At server start: live recordings left by a previous run wait for their collector again; their
        chunks are rebuilt from the committed batches (cut where they were cut) in the background."""
        if nice := os.environ.get(LOOP_NICE_ENV):
            # Opt-in (root): the event loop thread, which carries the live feed, at this nice value.
            # Threads it starts later inherit it, so it is off by default.
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), int(nice))
            except (OSError, ValueError) as exc:
                log.warning("%s=%s: %s", LOOP_NICE_ENV, nice, exc)
        await asyncio.to_thread(self.live.drop_finished_batches)
        if not in_process():
            await asyncio.to_thread(start_spare, self.store)
        for rid in await asyncio.to_thread(self.live.live_recordings):
            self._chunkers[rid] = await asyncio.to_thread(self._new_chunker, rid, True)
            # collectors back off while the server was away: give them at least RESTART_GRACE_S to find it
            self._timers[rid] = asyncio.create_task(
                self._end_after(rid, max(self.end_timeout_s, RESTART_GRACE_S))
            )

    async def stop(self) -> None:
        for t in [*self._timers.values(), *self._finalizing.values()]:
            t.cancel()
        for t in [*self._timers.values(), *self._finalizing.values()]:
            with contextlib.suppress(BaseException):
                await t
        for ch in self._chunkers.values():
            await asyncio.to_thread(ch.close)
        self._chunkers.clear()
        await asyncio.to_thread(stop_spares)
        self.timing.close()

    def connected(self, rid: str, conn: object) -> None:
        """conn now feeds rid (a reconnect replaces an older connection of the same session)."""
        timer = self._timers.pop(rid, None)
        if timer is not None:
            timer.cancel()
        self._connected[rid] = conn

    def is_finalizing(self, rid: str) -> bool:
        """A collector must not join a recording being finalised: its batches would never be chunked."""
        return rid in self._finalizing

    def is_connected(self, rid: str) -> bool:
        return rid in self._connected

    def owns(self, rid: str, conn: object) -> bool:
        return self._connected.get(rid) is conn

    def disconnected(self, rid: str, conn: object | None, *, ended: bool = False) -> None:
        """The collector left: end now (it said so) or after the timeout, unless it comes back."""
        if conn is not None and not self.owns(rid, conn):
            return  # an older connection of a session that has reconnected since
        self._connected.pop(rid, None)
        old = self._timers.pop(rid, None)
        if old is not None:
            old.cancel()
        self._timers[rid] = asyncio.create_task(self._end_after(rid, 0.0 if ended else self.end_timeout_s))

    async def _end_after(self, rid: str, delay: float) -> None:
        await asyncio.sleep(delay)
        self._timers.pop(rid, None)
        await self.end(rid)

    async def end(self, rid: str) -> None:
        """Finalise rid now (idempotent); viewers get a last status frame."""
        if rid in self._connected or rid in self._finalizing:
            if rid in self._finalizing:
                await self._finalizing[rid]
            return
        task = asyncio.create_task(
            asyncio.to_thread(finalize, self.store, rid, self._chunkers.pop(rid, None))
        )
        self._finalizing[rid] = task
        try:
            await task
        except Exception:
            log.exception("finalising live recording %s failed", rid)
            await asyncio.to_thread(self.store.fail_recording, rid, "finalising the live recording failed")
        finally:
            self._finalizing.pop(rid, None)
        leftover = self._chunkers.pop(rid, None)  # made by a batch that the fence then refused
        if leftover is not None:
            await asyncio.to_thread(leftover.close)
        self.publish_status(rid)

    def publish_status(self, rid: str) -> None:
        if not self.hub.has_viewers(rid):
            return
        rec = self.store.get_recording(rid)
        if rec is not None:
            self.hub.status(rid, status_of(rec.status, rec.event_count, rec.lost_events, rec.t_end_ns))


def status_of(status: str, events: int, lost: int, t_end_ns: int | None) -> dict[str, Any]:
    return {"status": status, "event_count": events, "lost_events": lost, "t_end_ns": t_end_ns}
