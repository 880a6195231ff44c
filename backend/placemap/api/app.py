"""The app factory: settings -> store, import service, routers, error handlers, frontend."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version

from fastapi import FastAPI
from starlette.middleware.gzip import GZipMiddleware

from placemap.api import errors
from placemap.api.imports import ImportService
from placemap.api.limits import JsonBodyLimit
from placemap.api.models import ErrorResponse
from placemap.api.routes import data, frontend, ingest, meta, recordings, sim
from placemap.api.routes.data import ARROW_STREAM
from placemap.live.service import LiveService
from placemap.realtime import realtime_executor
from placemap.replay.warmup import warm_kernels
from placemap.settings import Settings
from placemap.sim_jobs import SimJobs
from placemap.store import Store


def create_app(settings: Settings | None = None) -> FastAPI:
    """A FastAPI app serving docs/api.md over the store at settings.db_path."""
    settings = settings or Settings.from_env()
    store = Store(settings.db_path)
    store.fail_interrupted()
    imports = ImportService(store, settings.collector)
    live = LiveService(store, settings.live_end_timeout_s)
    sim_jobs = SimJobs(store, settings.sim_workers, settings.sim_max_saved_events, settings.calibration_csv)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if settings.realtime_priority is not None:  # `placemap serve --realtime`: see placemap.realtime
            asyncio.get_running_loop().set_default_executor(realtime_executor(settings.realtime_priority))
        threading.Thread(target=warm_kernels, name="warm-kernels", daemon=True).start()
        await live.start()
        yield
        await live.stop()
        imports.shutdown()
        sim_jobs.shutdown()

    app = FastAPI(
        title="placemap",
        version=version("placemap"),
        lifespan=lifespan,
        responses={
            404: {"model": ErrorResponse, "description": "Unknown id"},
            409: {"model": ErrorResponse, "description": "Not ready"},
            422: {"model": ErrorResponse, "description": "Invalid request"},
        },
    )
    app.state.settings = settings
    app.state.store = store
    app.state.imports = imports
    app.state.live = live
    app.state.sim_jobs = sim_jobs
    # JSON (state, metrics, lists) compresses well; Arrow goes out zstd as stored, or as asked
    app.add_middleware(
        GZipMiddleware,
        minimum_size=2048,
        compresslevel=5,
        exclude_content_types=(ARROW_STREAM, "text/event-stream"),
    )
    app.add_middleware(JsonBodyLimit)
    errors.install(app)
    app.include_router(meta.router)
    app.include_router(recordings.router)
    app.include_router(data.router)
    app.include_router(ingest.router)
    app.include_router(sim.router)
    app.include_router(frontend.router(settings.frontend_dist))
    return app
