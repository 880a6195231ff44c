"""The built frontend (frontend/dist) at /, index.html for unknown non-/api paths."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

from placemap.api.errors import ApiError


def router(dist: Path) -> APIRouter:
    r = APIRouter()
    root = dist.resolve()

    @r.get("/{path:path}", include_in_schema=False)
    def frontend(path: str) -> FileResponse:
        if path == "api" or path.startswith("api/"):
            raise ApiError(404, "not_found", f"no API route /{path}; see docs/api.md")
        index = root / "index.html"
        if not index.is_file():
            raise ApiError(
                404, "frontend_not_built", "the frontend is not built: run `cd frontend && npm run build`"
            )
        target = (root / path).resolve()
        if path and target.is_file() and target.is_relative_to(root):
            return FileResponse(target)
        return FileResponse(index)

    return r
