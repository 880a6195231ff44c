"""Live routes: the collectors' ingest websocket, the viewers' live websocket, and ending a live recording."""

from __future__ import annotations

import asyncio
import contextlib

from fastapi import APIRouter, Request, Response, WebSocket
from starlette.websockets import WebSocketDisconnect

from placemap.api.deps import StoreDep
from placemap.api.errors import ApiError, not_found
from placemap.live.ingest import serve_collector
from placemap.live.service import LiveService, status_of

router = APIRouter(prefix="/api")


def _svc(app_state: object) -> LiveService:
    svc: LiveService = app_state.live  # type: ignore[attr-defined]
    return svc


@router.websocket("/ingest")
async def ingest(ws: WebSocket) -> None:
    await serve_collector(ws, _svc(ws.app.state))


@router.websocket("/recordings/{recording_id}/live")
async def live_view(ws: WebSocket, recording_id: str) -> None:
    """Binary frames: Arrow IPC streams of new events; text frames: JSON status (see docs/api.md)."""
    svc = _svc(ws.app.state)
    await ws.accept()
    rec = await asyncio.to_thread(svc.store.get_recording, recording_id)
    if rec is None:
        await ws.send_json({"type": "error", "code": "recording_not_found", "message": recording_id})
        await ws.close(1008)
        return
    viewer = svc.hub.subscribe(recording_id)
    await ws.send_json(
        {
            "type": "status",
            "skipped": 0,
            **status_of(rec.status, rec.event_count, rec.lost_events, rec.t_end_ns),
        }
    )

    main = asyncio.current_task()
    assert main is not None
    gone = False

    async def watch() -> None:  # the viewer sends nothing; this notices it leaving
        nonlocal gone
        with contextlib.suppress(WebSocketDisconnect):
            while (await ws.receive())["type"] != "websocket.disconnect":
                pass
        gone = True
        main.cancel()

    watcher = asyncio.create_task(watch())
    try:
        # One await per frame (no task per frame): a published frame is sent at the loop's next turn.
        while rec.status == "live":
            frame = await viewer.queue.get()
            if isinstance(frame, bytes):
                await ws.send_bytes(frame)
                svc.timing.view_sent(frame)
            else:
                await ws.send_text(frame)
                if '"status": "live"' not in frame:
                    break
        await ws.close(1000)
    except asyncio.CancelledError:
        if not gone:
            raise
        main.uncancel()
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        watcher.cancel()
        svc.hub.unsubscribe(recording_id, viewer)


@router.post("/recordings/{recording_id}/end", status_code=204)
async def end_live(request: Request, store: StoreDep, recording_id: str) -> Response:
    """End a live recording whose collector is gone (it becomes ready without waiting for the timeout)."""
    svc = _svc(request.app.state)
    rec = await asyncio.to_thread(store.get_recording, recording_id)
    if rec is None:
        raise not_found("recording", recording_id)
    if rec.status != "live":
        raise ApiError(409, "recording_not_live", f"recording {recording_id} is {rec.status}, not live")
    if svc.is_connected(recording_id):
        raise ApiError(
            409, "collector_connected", "a collector is still sending; stop it (SIGINT) to end the run"
        )
    await svc.end(recording_id)
    return Response(status_code=204)
