"""Event data of a ready recording: chunks (zstd Arrow IPC as stored), windows as Arrow, the state
at a time, overview histogram, metrics, task search and task paths."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal

import pyarrow as pa
from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse

from placemap.api import convert
from placemap.api.deps import StoreDep, recording_or_404
from placemap.api.errors import ApiError
from placemap.api.models import (
    ChunkInfo,
    LlcPairTask,
    LlcPairTasks,
    Metrics,
    Overview,
    PathPlacement,
    PlacementState,
    SimDecisions,
    TaskInfo,
    TaskPath,
)
from placemap.replay import ftrace_text, queries
from placemap.replay.delays import METRICS, StoredChunkError, fill_wakeup_latency
from placemap.replay.lane_busy import lane_busy
from placemap.replay.lanes import WindowTooWideError, cpu_lanes
from placemap.replay.pair_tasks import PairsUncountedError, cell_tasks, llc_out_of_range
from placemap.replay.seek import state_at
from placemap.replay.topo import LevelMap
from placemap.replay.waker_refill import fill_by_waker, fill_overview, fill_placements, fill_tasks
from placemap.schema.events import EVENT_SCHEMA
from placemap.schema.models.topology_schema import Topology
from placemap.sim_reasons import annotate
from placemap.store import RecordingRow, Store

router = APIRouter(prefix="/api/recordings/{rid}")

ARROW_STREAM = "application/vnd.apache.arrow.stream"
IMMUTABLE = "public, max-age=31536000, immutable"


def _topology(store: Store, rec: RecordingRow) -> Topology | None:
    body = None if rec.topology_id is None else store.get_topology(rec.topology_id)
    return None if body is None else Topology.model_validate(body)


# a time bound: within the store's int64 (SQLite's integers; a larger one is a 422, not a 500)
TsNs = Annotated[int | None, Query(ge=-(2**63), le=2**63 - 1)]


@router.get("/chunks")
def list_chunks(store: StoreDep, rid: str, t0_ns: TsNs = None, t1_ns: TsNs = None) -> list[ChunkInfo]:
    recording_or_404(store, rid, ready=True)
    return [
        ChunkInfo(
            seq=c.seq,
            t_start_ns=c.t_start_ns,
            t_end_ns=c.t_end_ns,
            first_row=c.first_row,
            rows=c.rows,
            bytes=c.bytes,
        )
        for c in store.list_chunks(rid, t0_ns, t1_ns)
    ]


def _accepts_zstd(request: Request) -> bool:
    for part in request.headers.get("accept-encoding", "").split(","):
        token, _, params = part.strip().partition(";")
        if token.strip().lower() == "zstd":
            return params.replace(" ", "") not in ("q=0", "q=0.0")
    return False


@router.get(
    "/chunks/{seq}",
    response_class=Response,
    responses={200: {"content": {ARROW_STREAM: {"schema": {"type": "string", "format": "binary"}}}}},
)
def get_chunk(request: Request, store: StoreDep, rid: str, seq: int) -> Response:
    """One chunk as an Arrow IPC stream, sent zstd-encoded as stored when the client accepts zstd."""
    rec = recording_or_404(store, rid, ready=True)
    got = store.chunk_data(rid, seq)
    if got is None:
        raise ApiError(404, "chunk_not_found", f"recording {rid} has no chunk {seq}; list its chunks first")
    data, raw_bytes = got
    # a live recording's chunks are rebuilt in the rare case its chunking broke (live/chunker.py)
    cache = IMMUTABLE if rec.status == "ready" else "no-cache"
    headers = {"Cache-Control": cache, "Vary": "Accept-Encoding"}
    if _accepts_zstd(request):
        headers["Content-Encoding"] = "zstd"
        return Response(content=data, media_type=ARROW_STREAM, headers=headers)
    raw = pa.decompress(data, decompressed_size=raw_bytes, codec="zstd", asbytes=True)
    return Response(content=raw, media_type=ARROW_STREAM, headers=headers)


@router.get(
    "/events.arrow",
    response_class=StreamingResponse,
    responses={200: {"content": {ARROW_STREAM: {"schema": {"type": "string", "format": "binary"}}}}},
)
def events_arrow(store: StoreDep, rid: str, t0_ns: TsNs = None, t1_ns: TsNs = None) -> StreamingResponse:
    """The events of [t0_ns, t1_ns] as one Arrow IPC stream (plain strings), written chunk by chunk."""
    recording_or_404(store, rid, ready=True)

    def stream() -> Iterator[bytes]:
        buf = io.BytesIO()
        with pa.ipc.new_stream(buf, EVENT_SCHEMA) as writer:
            for batch in queries.window_batches(store, rid, t0_ns, t1_ns):
                writer.write_batch(batch)
                yield buf.getvalue()
                buf.seek(0)
                buf.truncate()
        yield buf.getvalue()

    return StreamingResponse(stream(), media_type=ARROW_STREAM)


# a window's context switches at most, by default and when asked (each one a span of CPU lanes;
# summed per part, more: the parts' rows do not grow with them, and a long window is read a run of
# parts at a time (replay.lane_busy), so what grows is its time: about 1 s per million switches here)
LANES_LIMIT = 100_000
LANES_LIMIT_MAX = 1_000_000
BUSY_LIMIT = 10_000_000
BUSY_LIMIT_MAX = 100_000_000
BUSY_PARTS_MAX = 8_000


def _lanes(
    store: Store, rid: str, t0_ns: int, t1_ns: int, build: Callable[[int, int, bool], pa.Table]
) -> tuple[bytes, dict[str, str]]:
    """Arrow IPC of build(t0, t1, ready) over [t0_ns, t1_ns] clipped to the recording (a task runs on
    past its last switch only as far as the recording goes; while live, as far as its stored chunks
    go; `ready`: its chunks never change), and the headers that say the window answered
    (X-Lanes-T0-Ns, X-Lanes-T1-Ns); its errors as the API's."""
    rec = recording_or_404(store, rid, ready=True)
    if t1_ns < t0_ns:
        raise ApiError(422, "bad_window", f"t1_ns {t1_ns} is before t0_ns {t0_ns}")
    if rec.t_start_ns is not None:
        t0_ns = max(t0_ns, rec.t_start_ns)
    if rec.t_end_ns is not None and rec.status == "ready":
        t1_ns = min(t1_ns, rec.t_end_ns)
    elif rec.status == "live":
        # (what the live chunker has written: the events after it are still held back or batched)
        last = store.chunk_at(rid, 2**63 - 1)
        t1_ns = min(t1_ns, t0_ns if last is None else last.t_end_ns)
    t1_ns = max(t0_ns, t1_ns)
    try:
        table = build(t0_ns, t1_ns, rec.status == "ready")
    except WindowTooWideError as exc:
        raise ApiError(422, "window_too_wide", str(exc)) from exc
    except StoredChunkError as exc:
        raise ApiError(409, "chunk_unreadable", f"recording {rid}: {exc}") from exc
    except (pa.ArrowException, OSError, ValueError, KeyError) as exc:  # (the state at t0_ns's chunk)
        raise ApiError(
            409, "chunk_unreadable", f"recording {rid}: a stored chunk cannot be read: {exc}"
        ) from exc
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes()), {"X-Lanes-T0-Ns": str(t0_ns), "X-Lanes-T1-Ns": str(t1_ns)}


@router.get(
    "/lanes.arrow",
    response_class=Response,
    responses={200: {"content": {ARROW_STREAM: {"schema": {"type": "string", "format": "binary"}}}}},
)
def lanes_arrow(
    store: StoreDep,
    rid: str,
    t0_ns: Annotated[int, Query(ge=-(2**63), le=2**63 - 1)],
    t1_ns: Annotated[int, Query(ge=-(2**63), le=2**63 - 1)],
    limit: Annotated[int, Query(ge=1, le=LANES_LIMIT_MAX)] = LANES_LIMIT,
) -> Response:
    """CPU lanes: who ran on each CPU over [t0_ns, t1_ns] (within the recording), as spans between
    its context switches (replay.lanes), one Arrow IPC stream (cpu, start_ns, end_ns, pid, comm,
    tgid, lost), by CPU then time; the window answered in X-Lanes-T0-Ns and X-Lanes-T1-Ns (a live
    recording's ends where its stored chunks do); 422 window_too_wide past `limit` switches."""
    body, window = _lanes(
        store, rid, t0_ns, t1_ns, lambda t0, t1, _ready: cpu_lanes(store, rid, t0, t1, limit=limit)
    )
    return Response(content=body, media_type=ARROW_STREAM, headers=window)


@router.get(
    "/lanes_busy.arrow",
    response_class=Response,
    responses={200: {"content": {ARROW_STREAM: {"schema": {"type": "string", "format": "binary"}}}}},
)
def lanes_busy_arrow(  # noqa: PLR0917 - FastAPI injects each parameter by name
    request: Request,
    store: StoreDep,
    rid: str,
    t0_ns: Annotated[int, Query(ge=-(2**63), le=2**63 - 1)],
    t1_ns: Annotated[int, Query(ge=-(2**63), le=2**63 - 1)],
    parts: Annotated[int, Query(ge=1, le=BUSY_PARTS_MAX)] = 1_000,
    limit: Annotated[int, Query(ge=1, le=BUSY_LIMIT_MAX)] = BUSY_LIMIT,
    pid: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
) -> Response:
    """CPU lanes summed per part, for a window too busy to draw span by span: [t0_ns, t1_ns] (within
    the recording) cut in `parts` equal parts (whole ns), and per CPU and part how much of it some
    task ran, the task that ran most of it and how much, how many spans touched it and whether one
    lost events (replay.lane_busy); one Arrow IPC stream (cpu, start_ns, end_ns, pid, comm, tgid,
    lost, busy, share, spans, mine: the share the task the query's `pid` names ran, 0 without one),
    by CPU then time, zstd-encoded when the client accepts it; the window answered in X-Lanes-T0-Ns
    and X-Lanes-T1-Ns as lanes.arrow's; 422 window_too_wide past `limit` switches."""
    body, window = _lanes(
        store,
        rid,
        t0_ns,
        t1_ns,
        lambda t0, t1, ready: lane_busy(store, rid, t0, t1, parts=parts, limit=limit, pid=pid, keep=ready),
    )
    if _accepts_zstd(request):
        packed = pa.Codec("zstd", compression_level=3).compress(body, asbytes=True)
        return Response(
            content=packed,
            media_type=ARROW_STREAM,
            headers={**window, "Content-Encoding": "zstd", "Vary": "Accept-Encoding"},
        )
    return Response(content=body, media_type=ARROW_STREAM, headers={**window, "Vary": "Accept-Encoding"})


@router.get(
    "/trace.txt",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string", "format": "binary"}}}}},
)
def trace_text(store: StoreDep, rid: str, t0_ns: TsNs = None, t1_ns: TsNs = None) -> StreamingResponse:
    """The events of [t0_ns, t1_ns] (all by default) as ftrace text, as `cat trace` prints them, written
    chunk by chunk, whatever the recording's source; the importer reads it back to the same events
    (placemap.replay.ftrace_text says what a stored event lacks for a trace line, and how it is written)."""
    rec = recording_or_404(store, rid, ready=True)
    return StreamingResponse(
        ftrace_text.recording_text(store, rec, t0_ns, t1_ns),
        media_type="text/plain",
        headers={"Content-Disposition": f'attachment; filename="{ftrace_text.file_name(rec)}"'},
    )


@router.get("/state")
def get_state(
    store: StoreDep,
    rid: str,
    t_ns: int,
    include_dead: Annotated[
        bool, Query(description="List dead tasks too (by default only counted in dead_tasks).")
    ] = False,
) -> PlacementState:
    rec = recording_or_404(store, rid, ready=True)
    topology = _topology(store, rec)
    cpus = [] if topology is None else [c.cpu for c in topology.cpus]
    # FastAPI takes the model instance as is (no revalidation) and dumps it in pydantic-core
    return convert.placement_state(state_at(store, rid, t_ns), LevelMap(topology), cpus, include_dead)


@router.get("/overview")
def get_overview(store: StoreDep, rid: str, bins: Annotated[int, Query(ge=1, le=100_000)] = 1000) -> Overview:
    rec = recording_or_404(store, rid, ready=True)
    if rec.t_start_ns is None or rec.t_end_ns is None:
        raise ApiError(409, "recording_empty", "the recording has no events")
    ov = queries.overview(store, rid, rec.t_start_ns, rec.t_end_ns, bins)
    # stored before the wakeup rows were binned: read them from its chunks, once (the stored
    # overview is read again only then)
    if (
        ov is not None
        and ov.wakeups_by_waker is None
        and fill_overview(store, rid, lambda: _topology(store, rec))
    ):
        ov = queries.overview(store, rid, rec.t_start_ns, rec.t_end_ns, bins)
    if ov is None:
        recording_or_404(store, rid, ready=True)  # (deleted while its rows were filled: gone, not broken)
        raise ApiError(409, "overview_missing", "this recording has no overview; import it again")
    return Overview.model_validate(ov.__dict__)


@router.get("/metrics")
def get_metrics(store: StoreDep, rid: str) -> Metrics:
    rec = recording_or_404(store, rid, ready=True)
    blob = store.derived(rid, METRICS)
    if blob is None:
        raise ApiError(409, "metrics_missing", "this recording has no metrics; import it again")
    body: dict[str, Any] = json.loads(blob)
    # stored before the run-queue delays or the wakeups by their waker were counted: read them
    # from its chunks, once
    body = fill_wakeup_latency(store, rid, body)
    body = fill_by_waker(store, rid, body, lambda: _topology(store, rec))
    recording_or_404(store, rid, ready=True)  # (deleted while its counts were filled: gone)
    return Metrics.model_validate(body)


@router.get("/decisions")
def get_decisions(store: StoreDep, rid: str) -> SimDecisions:
    """A simulated run's placement decisions counted by reason (the simulator's own; a captured
    trace has none: the kernel does not say why)."""
    rec = recording_or_404(store, rid, ready=True)
    result = rec.meta.get("sim_result")
    dec = result.get("decisions") if isinstance(result, dict) else None
    if dec is None:
        why = "not a simulated run" if rec.source != "simulated" else "simulated before they were kept"
        raise ApiError(404, "decisions_missing", f"recording {rid} has no decisions by reason: {why}")
    return SimDecisions.model_validate(dec)


@router.get("/tasks")
def search_tasks(
    store: StoreDep,
    rid: str,
    q: str | None = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
    order: Literal["events", "cross_llc"] = "events",
) -> list[TaskInfo]:
    """Tasks by pid or comm, busiest first, or (order=cross_llc) most often woken from another LLC
    than the one they last ran in first: the tasks a wake hint would move. A recording stored
    before the tasks' wakeups were counted gets them from its stored chunks, once (waker_refill)."""
    rec = recording_or_404(store, rid, ready=True)
    if rec.status == "ready":  # (a live recording's tasks are written when it ends)
        fill_tasks(store, rid, lambda: _topology(store, rec))
    return [TaskInfo.model_validate(t.__dict__) for t in store.tasks(rid, q, limit, order)]


@router.get("/llc-pairs/{waker_llc}/{llc}/tasks")
def llc_pair_tasks(
    store: StoreDep,
    rid: str,
    waker_llc: int,
    llc: int,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 50,
) -> LlcPairTasks:
    """The tasks woken in LLC `llc` by a waker in LLC `waker_llc` (a cell of GET metrics'
    wakeups.llc_pairs), most often first: who crosses the machine between those two LLCs."""
    rec = recording_or_404(store, rid, ready=True)
    if rec.status != "ready":  # (a live recording's tasks are written when it ends)
        raise ApiError(409, "recording_live", f"recording {rid} is live: its tasks are listed once it ends")
    topology = _topology(store, rec)
    levels = LevelMap(topology)
    out_of_range = llc_out_of_range(levels, waker_llc, llc)
    if out_of_range is not None:
        raise ApiError(422, "llc_out_of_range", out_of_range)
    try:
        wakeups, found = cell_tasks(store, rid, topology, waker_llc, llc, limit=limit)
    except PairsUncountedError as exc:
        raise ApiError(409, "pairs_uncounted", f"recording {rid}: {exc}") from exc
    recording_or_404(store, rid)  # (deleted while its placements were rebuilt: not an empty cell)
    return LlcPairTasks(
        waker_llc=waker_llc,
        llc=llc,
        wakeups=wakeups,
        tasks=[LlcPairTask.model_validate(t.__dict__) for t in found],
    )


@router.get("/tasks/{pid}/path")
def task_path(store: StoreDep, rid: str, pid: int) -> TaskPath:
    rec = recording_or_404(store, rid, ready=True)
    task = store.task(rid, pid)
    if task is None:
        raise ApiError(
            404, "task_not_found", f"no task with pid {pid} in recording {rid}; search tasks first"
        )
    topology = _topology(store, rec)
    levels = LevelMap(topology)
    # (a live recording's placements are written with their wakers, and its chunks may still move:
    # nothing to rebuild)
    fill = None if rec.status != "ready" else lambda: fill_placements(store, rid, lambda: topology)
    try:
        path = queries.task_path(store, rid, pid, levels, fill)
    except queries.PlacementsUnreadError as exc:
        raise ApiError(409, "placements_unreadable", f"recording {rid}: {exc}") from exc
    recording_or_404(store, rid)  # (deleted while its placements were rebuilt: not an empty path)
    rows = [dict(p.__dict__) for p in path]
    names: dict[int, str | None] = {}  # the wakers' names, each looked up once
    for r in rows:
        wpid = r["waker_pid"]
        if wpid:
            if wpid not in names:
                waker = store.task(rid, wpid)
                names[wpid] = None if waker is None else waker.comm
            r["waker_comm"] = names[wpid]
    annotate(store, rid, pid, rows)  # a simulated run's reasons (sim_reasons)
    placements = [PathPlacement.model_validate(p) for p in rows]
    return TaskPath(pid=pid, comm=task.comm, placements=placements)
