"""Recordings: upload (raw body streamed to a spool file, then the Go importer in the background),
list, get (with progress), delete, topology; a simulated run's scenario, and a job working out its
placement reasons when it was saved without them."""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from placemap.api import convert
from placemap.api.deps import ImportsDep, SettingsDep, StoreDep, recording_or_404
from placemap.api.errors import ApiError, not_found
from placemap.api.models import SchedDomain, SchedDomains
from placemap.api.routes.sim import JobsDep, SimJobCreated
from placemap.domains_text import dmesg_text, domain_params, params_text
from placemap.importer.machine import llc_index_problem, preset_topology
from placemap.schema.models.recording_schema import Recording
from placemap.schema.models.topology_schema import Topology
from placemap.sim.domains import SchedDomains as BuiltDomains
from placemap.sim.errors import ScenarioError
from placemap.sim.topology import PRESETS
from placemap.sim.topology import load as load_topology
from placemap.sim_backfill import ReasonsUnavailableError
from placemap.sim_backfill import check as reasons_check
from placemap.sim_jobs import QueueFullError
from placemap.sim_profile import for_meta
from placemap.sim_saved import ScenarioUnavailableError, file_text, saved_scenario
from placemap.store import Store

router = APIRouter(prefix="/api/recordings")

FORMATS = ("auto", "ftrace", "tracecmd", "perf", "tracefs-raw", "tracedat", "perfdata")


def _too_large(limit: int) -> ApiError:
    return ApiError(
        413,
        "upload_too_large",
        f"the upload is larger than the limit of {limit} bytes; import it with"
        " `bin/placemap admin import FILE` or raise max_upload_bytes",
    )


@router.post(
    "",
    status_code=202,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
)
async def upload(  # noqa: PLR0917 - FastAPI injects each parameter by name
    request: Request,
    store: StoreDep,
    settings: SettingsDep,
    imports: ImportsDep,
    name: str | None = None,
    format: Annotated[str, Query(description=f"one of {', '.join(FORMATS)}")] = "auto",
    topology_id: Annotated[
        str | None,
        Query(description="the machine it was recorded on: a stored topology (POST /api/topologies)"),
    ] = None,
    preset: Annotated[
        str | None,
        Query(description="the machine it was recorded on: a simulator preset (GET /api/sim/options)"),
    ] = None,
) -> Recording:
    """Upload a trace file as the raw request body (gzip ok); the import runs in the background.
    Without a machine its topology is inferred from the trace (one LLC); with one, every CPU the
    trace names must be one of the machine's, or the import fails naming them."""
    limit = settings.max_upload_bytes
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise _too_large(limit)
    if format not in FORMATS:
        raise ApiError(422, "unknown_format", f"format must be one of {', '.join(FORMATS)}")
    if preset is not None and topology_id is not None:
        raise ApiError(422, "two_machines", "give the machine as preset or as topology_id, not both")
    if preset is not None:
        if preset not in PRESETS:
            raise ApiError(422, "unknown_preset", f"preset must be one of {', '.join(PRESETS)}")
        topology_id = store.put_topology(preset_topology(preset))
    topology: Topology | None = None
    if topology_id is not None:
        body: dict[str, Any] | None = store.get_topology(topology_id)
        if body is None:
            raise not_found("topology", topology_id)
        topology = Topology.model_validate(body)
        # (a topology stored before the gate at POST /api/topologies could number its LLCs otherwise)
        problem = llc_index_problem(topology)
        if problem is not None:
            raise ApiError(422, "bad_topology", f"topology {topology_id}: {problem}")
    settings.upload_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="upload-", dir=settings.upload_dir)
    path = Path(tmp)
    size = 0
    try:
        with os.fdopen(fd, "wb") as fh:
            async for part in request.stream():
                size += len(part)
                if size > limit:
                    raise _too_large(limit)
                fh.write(part)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    if size == 0:
        path.unlink(missing_ok=True)
        raise ApiError(
            400, "empty_upload", "the request body is empty: send the trace file's bytes as the body"
        )
    label = name or f"upload {datetime.now(UTC):%Y-%m-%d %H:%M:%S}"
    rid = store.create_recording(label, source="imported", topology_id=topology_id)
    imports.start(rid, path, format, topology, machine=label)
    row = store.get_recording(rid)
    assert row is not None
    return convert.recording(row, store)


@router.get("")
def list_recordings(store: StoreDep) -> list[Recording]:
    return [convert.recording(r, store) for r in store.list_recordings()]


@router.get("/{rid}")
def get_recording(store: StoreDep, rid: str) -> Recording:
    return convert.recording(recording_or_404(store, rid), store)


@router.delete("/{rid}", status_code=204, response_class=Response)
def delete_recording(store: StoreDep, imports: ImportsDep, rid: str) -> Response:
    recording_or_404(store, rid)
    imports.cancel(rid)
    store.delete_recording(rid)
    return Response(status_code=204)


def _topology_body(store: Store, rid: str) -> dict[str, Any]:
    """The recording's stored topology; 409 topology_not_ready while it has none."""
    rec = recording_or_404(store, rid)
    body = None if rec.topology_id is None else store.get_topology(rec.topology_id)
    if body is None:
        raise ApiError(409, "topology_not_ready", "the recording has no topology yet; wait until it is ready")
    return body


@router.get("/{rid}/topology")
def recording_topology(store: StoreDep, rid: str) -> Topology:
    return Topology.model_validate(_topology_body(store, rid))


@router.get("/{rid}/domains")
def recording_domains(
    store: StoreDep, rid: str, cpu: Annotated[int, Query(ge=0, le=8191)] = 0
) -> SchedDomains:
    """The sched domains the simulator builds for the recording's topology, for one CPU: as the
    kernel prints its own at boot (sched_verbose) and as data."""
    try:
        topo = load_topology(_topology_body(store, rid))
    except ScenarioError as exc:
        raise ApiError(409, "topology_unusable", f"the simulator cannot use this topology: {exc}") from exc
    if cpu >= topo.nr_cpus or not topo.online[cpu]:
        raise ApiError(422, "cpu_not_online", f"cpu {cpu}: not an online CPU of {topo.name}")
    sd = BuiltDomains(topo)
    return SchedDomains(
        machine=topo.name,
        cpu=cpu,
        dmesg=dmesg_text(sd, cpu),
        params=params_text(sd, cpu),
        domains=[SchedDomain.model_validate(domain_params(d)) for d in sd.per_cpu[cpu]],
    )


@router.get(
    "/{rid}/scenario",
    response_class=Response,
    responses={200: {"content": {"application/json": {}}, "description": "scenario.json"}},
)
def recording_scenario(store: StoreDep, rid: str) -> Response:
    """A simulated run's whole scenario as a scenario.json download, which `placemap sim` reruns
    without this server's database: a replay's profile and the topology inline (the recording's
    metadata keeps the profile shortened). 409 not_simulated for an import or a live recording,
    scenario_unavailable when a replay saved before runs kept it cannot be rebuilt (the reason)."""
    rec = recording_or_404(store, rid)
    try:
        scenario = saved_scenario(store, rec)
    except ScenarioUnavailableError as exc:
        raise ApiError(409, exc.code, f"recording {rid}: {exc}") from exc
    return Response(
        file_text(scenario),
        media_type="application/json",
        headers={"Content-Disposition": 'attachment; filename="scenario.json"'},
    )


REASONS_STATUS = {"not_found": 404, "not_simulated": 409, "already_kept": 409, "scenario_unavailable": 409}


@router.post("/{rid}/reasons", status_code=202)
def work_out_reasons(store: StoreDep, jobs: JobsDep, rid: str) -> SimJobCreated:
    """For a simulated run saved before runs kept their placement reasons: a job (kind "reasons";
    poll GET /api/sim/jobs/{id}) that reruns its saved scenario, checks that the rerun is the saved
    run (its events by kind, counters and metric) and stores the reasons, which
    GET tasks/{pid}/path then gives. 409 not_simulated, already_kept or scenario_unavailable (why);
    a rerun that differs (the simulator changed since) fails the job, naming what differs."""
    try:
        _rec, scenario = reasons_check(store, rid)
    except ReasonsUnavailableError as exc:
        raise ApiError(REASONS_STATUS.get(exc.code, 409), exc.code, f"recording {rid}: {exc}") from exc
    try:
        job = jobs.submit(for_meta(scenario), False, reasons_for=rid)
    except QueueFullError as exc:
        raise ApiError(429, "too_many_jobs", str(exc)) from exc
    return SimJobCreated(job_id=job.id, status="running" if job.status == "running" else "queued")
