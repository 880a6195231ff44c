"""One collector connection on /api/ingest (schemas/jsonschema/wire.schema.json): hello -> welcome, then
batch header + binary Arrow IPC frame -> ack after commit (or reject with a reason), heartbeats answered.

The live feed waits for nothing it does not need: a batch is validated and fanned out to the viewers as
it arrives, on the event loop, and then queued to the connection's committer, which commits it (SQLite,
in a worker thread) and acknowledges it, in seq order. A viewer may see a batch whose commit then fails:
it is not acknowledged, the collector resends it and the (session, seq) dedup keeps the store right; a
batch is shown to the viewers once per server process (the session's highest published seq).

A batch at or below the session's committed last_seq is acknowledged as a duplicate and not stored again;
a batch for a session that finalising has closed is refused with session_ended (never acknowledged);
a seq not above the previous one on this connection is rejected; a bad batch is rejected and the
connection carries on. The collector closing with 1000 "end" ends the recording at once; any other
disconnect leaves it live until the service's timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from starlette.websockets import WebSocket, WebSocketDisconnect

from placemap.importer.machine import llc_index_problem
from placemap.live.chunker import Chunker
from placemap.live.hub import browser_frame
from placemap.live.service import LiveService, status_of
from placemap.live.validate import BatchRejectedError, BatchValidator, CheckedBatch
from placemap.schema.events import EVENT_SCHEMA
from placemap.schema.models.wire_schema import BatchHeader, Hello
from placemap.store.live import BatchCommit, SessionEndedError

log = logging.getLogger("placemap.live")

HELLO_TIMEOUT_S = 15.0
POLICY_VIOLATION = 1008


class _ClosedError(Exception):
    """The collector went away."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(code, reason)
        self.code = code
        self.reason = reason


async def _send(ws: WebSocket, msg: dict[str, Any]) -> None:
    await ws.send_text(json.dumps(msg))


async def _receive(ws: WebSocket) -> str | bytes:
    msg = await ws.receive()
    if msg["type"] == "websocket.disconnect":
        raise _ClosedError(int(msg.get("code", 1006)), str(msg.get("reason") or ""))
    if msg.get("text") is not None:
        text: str = msg["text"]
        return text
    data: bytes = msg.get("bytes") or b""
    return data


async def _error(ws: WebSocket, code: str, message: str) -> None:
    await _send(ws, {"type": "error", "code": code, "message": message})


async def _reject(ws: WebSocket, seq: int, reason: str) -> None:
    await _send(ws, {"type": "reject", "seq": seq, "reason": reason})


async def _refuse(ws: WebSocket, code: str, message: str) -> None:
    await _error(ws, code, message)
    await ws.close(POLICY_VIOLATION, code)


async def serve_collector(ws: WebSocket, svc: LiveService) -> None:
    """Run one collector connection to its end."""
    await ws.accept()
    try:
        first = await asyncio.wait_for(_receive(ws), HELLO_TIMEOUT_S)
        hello = Hello.model_validate_json(first)
    except (TimeoutError, ValidationError, ValueError) as exc:
        await _refuse(ws, "bad_hello", f"the first message must be a hello (wire.schema.json): {exc}")
        return
    except (_ClosedError, WebSocketDisconnect):
        return
    token_id = await asyncio.to_thread(svc.live.check_token, hello.token)
    if token_id is None:
        await _refuse(
            ws, "unauthorized", "unknown or revoked token: create one with `bin/placemap token create`"
        )
        return
    problem = llc_index_problem(hello.topology)
    if problem is not None:
        await _refuse(ws, "bad_hello", f"the hello's topology: {problem}")
        return
    known = await asyncio.to_thread(svc.live.session, hello.session_id)
    if known is None:
        topo = hello.topology.model_dump(mode="json", exclude_none=True)
        tid = await asyncio.to_thread(svc.store.put_topology, topo)
        meta = {
            "host": hello.host,
            "kernel_release": hello.kernel_release,
            "collector": hello.collector_version,
            "events": hello.events,
        }
        rid = await asyncio.to_thread(
            svc.live.start_session, hello.session_id, token_id, hello.host, tid, meta
        )
        last_seq = -1
    else:
        rid, last_seq, closed = known
        rec = await asyncio.to_thread(svc.store.get_recording, rid)
        if closed or rec is None or rec.status != "live" or svc.is_finalizing(rid):
            await _refuse(ws, "session_ended", f"the recording of session {hello.session_id} has ended")
            return
    conn = _Conn(ws, svc, rid, hello.session_id, BatchValidator(hello.topology))
    svc.connected(rid, conn)
    if svc.is_finalizing(rid):  # the end timer fired while this hello was being checked
        svc.disconnected(rid, conn)
        await _refuse(ws, "session_ended", f"the recording of session {hello.session_id} has ended")
        return
    await _send(ws, {"type": "welcome", "recording_id": rid, "last_seq": last_seq})
    ended = False
    try:
        await conn.loop()
    except _ClosedError as c:
        ended = c.code == 1000 and c.reason == "end"
    except WebSocketDisconnect as d:
        ended = d.code == 1000 and d.reason == "end"
    finally:
        svc.disconnected(rid, conn, ended=ended)


# Bytes of validated batches (wire + decoded) waiting for their commit; beyond, the connection stops reading.
# Large, so a slow commit (a loaded host, the chunk worker holding SQLite's write lock) delays acks, not the
# viewers' feed; bounded, so a stalled store cannot grow the server without end.
COMMIT_BYTES = 64 << 20
_EMPTY = EVENT_SCHEMA.empty_table()


@dataclass(frozen=True)
class _Pending:
    """A validated (and published) batch on its way to the store."""

    h: BatchHeader
    checked: CheckedBatch  # its table only when an in-process chunker takes it (else an empty one)
    data: bytes
    recv_ns: int
    pub_ns: int
    size: int  # wire bytes + the table's (summing a table's buffers is not free: once, here)


@dataclass
class _Conn:
    """A collector connection after its welcome: the receive loop (validate, publish) and its committer
    (commit, ack), joined by a bounded queue."""

    ws: WebSocket
    svc: LiveService
    rid: str
    session_id: str
    validator: BatchValidator
    _pending: asyncio.Queue[_Pending | None] = field(default_factory=asyncio.Queue)
    _pending_bytes: int = 0
    _room: asyncio.Event = field(default_factory=asyncio.Event)
    _failure: BaseException | None = None

    async def loop(self) -> None:
        main = asyncio.current_task()
        assert main is not None
        committer = asyncio.create_task(self._commit_loop(main))
        try:
            await self._receive_loop()
        except asyncio.CancelledError:
            if self._failure is None:
                raise
            main.uncancel()
            raise self._failure from None
        finally:
            # Batches not committed yet are not acknowledged: the collector resends them.
            while not self._pending.empty():
                self._pending.get_nowait()
            self._pending.put_nowait(None)
            with contextlib.suppress(BaseException):
                await committer

    async def _receive_loop(self) -> None:
        ws = self.ws
        prev_seq = -1
        header: BatchHeader | None = None
        while True:
            msg = await _receive(ws)
            if isinstance(msg, bytes):
                if header is None:
                    await _error(ws, "unexpected_frame", "a binary frame must follow a batch header")
                    continue
                h, header = header, None
                if h.seq <= prev_seq:
                    await _reject(ws, h.seq, f"seq {h.seq} after {prev_seq}: sequence numbers must increase")
                    continue
                prev_seq = h.seq
                await self.batch(h, msg)
                continue
            try:
                kind = json.loads(msg).get("type")
            except (ValueError, AttributeError):
                kind = None
            if kind == "batch":
                try:
                    header = BatchHeader.model_validate_json(msg)
                except ValidationError as exc:
                    await _error(ws, "bad_message", str(exc))
            elif kind == "heartbeat":
                await _send(ws, {"type": "heartbeat", "ts_ns": time.monotonic_ns()})
            else:
                await _error(ws, "bad_message", f"unexpected message {kind!r}")

    async def batch(self, h: BatchHeader, data: bytes) -> None:
        """Validate and publish now (on the loop: a thread hop waits for the scheduler on a loaded host),
        then queue the commit."""
        recv_ns = time.monotonic_ns()
        ws, svc, rid = self.ws, self.svc, self.rid
        if len(data) != h.bytes:
            await _reject(ws, h.seq, f"frame is {len(data)} bytes, header said {h.bytes}")
            return
        svc.inflight += 1
        try:
            try:
                checked = self.validator.check(data, h.rows)
            except BatchRejectedError as exc:
                log.warning("live %s: batch %d rejected: %s", rid, h.seq, exc)
                await _reject(ws, h.seq, str(exc))
                return
            if checked.rows and svc.first_publish(self.session_id, h.seq) and svc.hub.has_viewers(rid):
                frame = browser_frame(checked.table)
                svc.timing.published(rid, h.seq, frame)
                svc.hub.publish(rid, frame)
        finally:
            svc.inflight -= 1
        if not svc.chunker_takes_tables:  # the chunk worker reads the committed bytes: hold only those
            checked = dataclasses.replace(checked, table=_EMPTY)
        size = len(data) + (0 if checked.table is _EMPTY else int(checked.table.nbytes))
        p = _Pending(h, checked, data, recv_ns, time.monotonic_ns(), size)
        self._pending.put_nowait(p)
        self._pending_bytes += p.size
        # Let the viewers' senders run now: with frames already buffered, receiving the next one does not
        # yield to the loop, and a backlog would hold every viewer's frame until it was drained.
        await asyncio.sleep(0)
        if self._pending_bytes > COMMIT_BYTES:
            self._room.clear()
            await self._room.wait()

    async def _commit_loop(self, main: asyncio.Task[None]) -> None:
        """Commit and acknowledge queued batches in order; a failure ends the connection (via main)."""
        ws, svc, rid = self.ws, self.svc, self.rid
        try:
            chunker = await svc.chunker(rid)
            while (p := await self._pending.get()) is not None:
                try:
                    out = await asyncio.to_thread(self._commit, p, chunker, svc.hub.has_viewers(rid))
                except SessionEndedError as exc:
                    # Finalising began (the store refused the commit): no ack, the collector keeps the batch.
                    await _refuse(ws, "session_ended", str(exc))
                    raise _ClosedError(POLICY_VIOLATION, "session_ended") from exc
                self._pending_bytes -= p.size
                if self._pending_bytes <= COMMIT_BYTES:
                    self._room.set()
                ack: dict[str, Any] = {"type": "ack", "seq": p.h.seq}
                if not out.stored:
                    ack["duplicate"] = True
                await _send(ws, ack)
                if out.status is not None:
                    svc.hub.status(rid, out.status)
                if svc.timing.on:
                    svc.timing.write(
                        rid=rid, seq=p.h.seq, rows=p.checked.rows, first_ts=p.checked.t_start_ns,
                        recv_ns=p.recv_ns, pub_ns=p.pub_ns, commit_ns=out.commit_ns,
                        ack_ns=time.monotonic_ns(),
                    )  # fmt: skip
        except BaseException as exc:
            if not isinstance(exc, asyncio.CancelledError):
                self._failure = exc
                main.cancel()
            raise

    def _commit(self, p: _Pending, chunker: Chunker, viewers: bool) -> _Outcome:
        checked = p.checked
        with chunker.lock:  # commit order is offer order; finalising waits for the lock
            stored = self.svc.live.commit_batch(
                self.session_id,
                self.rid,
                BatchCommit(
                    seq=p.h.seq, rows=checked.rows, t_start_ns=checked.t_start_ns, t_end_ns=checked.t_end_ns,
                    lost_events=checked.lost_events, by_kind=checked.by_kind, data=p.data,
                ),
            )  # fmt: skip
            if stored:
                chunker.offer(checked.table)
        commit_ns = time.monotonic_ns()
        if not (stored and viewers and checked.rows):
            return _Outcome(stored, commit_ns)
        rec = self.svc.store.get_recording(self.rid)
        status = (
            None if rec is None else status_of(rec.status, rec.event_count, rec.lost_events, rec.t_end_ns)
        )
        return _Outcome(stored, commit_ns, status)


@dataclass(frozen=True)
class _Outcome:
    """What one commit did: stored (False for a duplicate), when, and the status its viewers get."""

    stored: bool
    commit_ns: int
    status: dict[str, Any] | None = None
