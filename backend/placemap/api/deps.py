"""Request-scoped access to the app's services (settings, store, import service)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from placemap.api.errors import ApiError, not_found
from placemap.api.imports import ImportService
from placemap.settings import Settings
from placemap.store import RecordingRow, Store


def get_store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_imports(request: Request) -> ImportService:
    imports: ImportService = request.app.state.imports
    return imports


StoreDep = Annotated[Store, Depends(get_store)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
ImportsDep = Annotated[ImportService, Depends(get_imports)]


def recording_or_404(store: Store, rid: str, *, ready: bool = False) -> RecordingRow:
    rec = store.get_recording(rid)
    if rec is None:
        raise not_found("recording", rid)
    if ready and rec.status not in ("ready", "live"):
        if rec.status == "failed":
            raise ApiError(409, "recording_failed", f"recording {rid} failed to import: {rec.error}")
        raise ApiError(409, "recording_not_ready", f"recording {rid} is still importing; poll it until ready")
    return rec
