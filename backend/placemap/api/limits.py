"""The size limit of the JSON request bodies (a simulator job's scenario, a topology): a body
over MAX_JSON_BYTES is refused with 413 `body_too_large` before it is parsed, whether it states
its length or streams it in chunks, so that an oversized scenario (a trace workload's inline
profile) cannot fill the server's memory. Trace uploads have their own limit (recordings)."""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_JSON_BYTES = 16 * 1024 * 1024
LIMITED_PATHS = ("/api/sim/jobs", "/api/topologies")


class JsonBodyLimit:
    """ASGI middleware: POST bodies of LIMITED_PATHS up to `limit` bytes."""

    def __init__(self, app: ASGIApp, limit: int = MAX_JSON_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in LIMITED_PATHS:
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            await self._refuse(scope, receive, send)
            return
        # read the body first (at most the limit, kept), then hand it on: a body cut off at the
        # limit inside the app would reach FastAPI's parser as a read error (400), not a 413
        chunks: list[bytes] = []
        seen = 0
        while True:
            msg = await receive()
            if msg["type"] != "http.request":
                return  # the client went away
            chunk = msg.get("body", b"")
            seen += len(chunk)
            if seen > self.limit:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            if not msg.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()  # after the body: the disconnect, when it comes
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = {
            "detail": {
                "code": "body_too_large",
                "message": f"the request body is larger than {self.limit} bytes; a trace workload names a "
                "stored recording instead of carrying its profile",
            }
        }
        await JSONResponse(body, status_code=413)(scope, receive, send)
