"""Simulation jobs over HTTP: submit a scenario (validated at once), poll its progress and result,
list, cancel. The jobs themselves run in worker processes (placemap.sim_jobs). Beside them, the
published cells a scenario's pair can be read against (placemap.sim_published)."""

from __future__ import annotations

import csv
from dataclasses import asdict, fields
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import BaseModel, Field

from placemap.api.deps import SettingsDep, StoreDep
from placemap.api.errors import ApiError, not_found
from placemap.api.models import SimDecisions, WakerCounts, WakeupLatency
from placemap.api.sweep_models import SavedSweep, SimSweepResult, SimSweepSpec, SweepList, SweepSummary
from placemap.sim.calibration import BENCHMARKS, CsvError
from placemap.sim.errors import ScenarioError
from placemap.sim.features import HINT_CATEGORIES, Features
from placemap.sim.scenario import MAX_DURATION_MS
from placemap.sim.topology import PRESETS
from placemap.sim.workloads.catalog import CATALOG, IntParam, Param
from placemap.sim_jobs import Job, QueueFullError, SimJobs
from placemap.sim_profile import validate
from placemap.sim_published import X_PARAM
from placemap.sim_published import lookup as lookup_published
from placemap.sim_sweep import distinct, parse_sweep
from placemap.sim_sweep import scenarios as sweep_scenarios
from placemap.sim_toggle import ALL_TOGGLES

router = APIRouter(prefix="/api/sim")


def get_jobs(request: Request) -> SimJobs:
    jobs: SimJobs = request.app.state.sim_jobs
    return jobs


JobsDep = Annotated[SimJobs, Depends(get_jobs)]


class SimJobRequest(BaseModel):
    """A scenario to simulate, as `placemap sim SCENARIO.json` reads it."""

    scenario: dict[str, Any] = Field(
        description="topology (preset name or topology object), workload {kind, ...}, hints, features, "
        "seed, duration_ms; see README (The placement simulator)"
    )
    save: bool = Field(default=False, description="also store the run as a recording (source simulated)")
    sweep: SimSweepSpec | None = Field(
        default=None,
        description="run the scenario at each of these values of one workload parameter instead (a "
        "job of kind sweep, unsaved)",
    )


class SimMetric(BaseModel):
    name: str
    value: float
    better: Literal["lower", "higher"]


class SimMigrations(BaseModel):
    total: int
    by_level: dict[str, int]
    by_cause: dict[str, int]


class SimWakeups(BaseModel):
    total: int
    affine: int
    by_level: dict[str, int]
    by_waker: WakerCounts | None = Field(
        default=None,
        description="by where the waker ran, counted as the model decides, as a recording's metrics "
        "count them from its events; null in a result stored before they were counted",
    )


class SimCounters(BaseModel):
    migrations: SimMigrations
    wakeups: SimWakeups
    context_switches: int
    cpu_utilization: float
    avg_wait_us: float


class SimLatency(BaseModel):
    """A latency metric's distribution (placemap.sim.latency): percentiles in us over `samples`
    wakeups, null when there are none; the metric is its p99."""

    samples: int
    p50: float | None
    p90: float | None
    p99: float | None
    p99_9: float | None
    max: float | None
    note: str | None = Field(
        description="when too few samples for the p99 to be more than one of the largest: what it is"
    )


class SimCpuTime(BaseModel):
    """schedstat's sums over every task of the run."""

    run_ms: float = Field(description="time the tasks ran on a CPU")
    wait_ms: float = Field(description="time the tasks waited runnable on a runqueue (run_delay)")
    waits: int = Field(description="the waits counted (each switch-in of a task)")


class SimLlcSeries(BaseModel):
    llc: int = Field(description="the LLC's index in the simulated topology")
    cpus: int = Field(description="its online CPUs")
    mean: float = Field(description="busy fraction 0..1 of its CPUs over the whole run")
    util: list[float] = Field(description="busy fraction 0..1 of its CPUs per bin")


class SimLlcUtil(BaseModel):
    """Each LLC's utilization over simulated time (placemap.sim.utilization): bins of bin_ns from
    t_start_ns, the last one ending at end_ns (it may be shorter)."""

    bin_ns: int
    t_start_ns: int
    end_ns: int
    series: list[SimLlcSeries]


class SimRun(BaseModel):
    events: int = Field(description="scheduler events simulated: wakeups + context switches + migrations")
    wall_s: float
    simulated_ms: float
    complete: bool = Field(
        description="the workload finished its work within duration_ms (schbench: woke workers after "
        "its 100 ms warmup, so its p99 has samples)"
    )
    incomplete: str | None = Field(
        default=None,
        description="when not complete, what the metric's value is: a runtime is a lower bound (the "
        "time simulated since the workload started), any other metric measured nothing and its 0 is "
        "no result",
    )


class SimResult(BaseModel):
    """The result JSON `placemap sim --json` prints (with `--save`, plus recording_id; with
    `--decisions`, a saved run or a job: plus the decisions by reason)."""

    metric: SimMetric
    counters: SimCounters
    latency_us: SimLatency | None = Field(
        default=None, description="a latency metric's distribution (schbench), else null"
    )
    wakeup_latency: WakeupLatency | None = Field(
        default=None,
        description="every task's run-queue delay after a wakeup, as the saved run's recording "
        "metrics give it (null without any)",
    )
    cpu_time: SimCpuTime | None = Field(
        default=None, description="the tasks' total run and wait time (null in runs saved before it was kept)"
    )
    llc_util: SimLlcUtil | None = Field(
        default=None, description="per-LLC utilization over time (null in runs saved before it was kept)"
    )
    sim: SimRun
    decisions: SimDecisions | None = None
    recording_id: str | None = None


class SimJobError(BaseModel):
    field: str | None = Field(description="the scenario field at fault, when the scenario was the cause")
    message: str


class SimJob(BaseModel):
    """One simulation job."""

    id: str
    kind: Literal["run", "reasons", "sweep"] = Field(
        description="run: the scenario; reasons: a saved run rerun for its placement reasons "
        "(POST /api/recordings/{id}/reasons), its recording_id that run once done; sweep: the "
        "scenario at each value of `sweep` (its result in sweep_result)"
    )
    status: Literal["queued", "running", "done", "failed", "cancelled"]
    progress: float = Field(ge=0, le=1, description="simulated time / duration_ms")
    save: bool
    scenario: dict[str, Any]
    created_at: str
    started_at: str | None
    finished_at: str | None
    result: SimResult | None = Field(description="for status done (kinds run and reasons)")
    sweep: SimSweepSpec | None = Field(default=None, description="a sweep job's values")
    sweep_result: SimSweepResult | None = Field(default=None, description="a sweep job's, for status done")
    sweep_id: str | None = Field(
        default=None, description="a sweep job's stored result, for status done (GET /api/sim/sweeps/{id})"
    )
    recording_id: str | None = Field(description="the saved recording (save: true, status done)")
    error: SimJobError | None = Field(description="for status failed")


class SimJobCreated(BaseModel):
    job_id: str
    status: Literal["queued", "running"]


class SimJobList(BaseModel):
    jobs: list[SimJob]


def _model(job: Job) -> SimJob:
    return SimJob(
        id=job.id,
        kind=job.kind,
        status=job.status,
        progress=round(job.progress, 4),
        save=job.save,
        scenario=job.scenario,
        created_at=job.created_at,
        started_at=job.started_at,
        finished_at=job.finished_at,
        result=None if job.result is None or job.kind == "sweep" else SimResult.model_validate(job.result),
        sweep=None if job.sweep is None else SimSweepSpec.model_validate(job.sweep),
        sweep_result=None
        if job.result is None or job.kind != "sweep"
        else SimSweepResult.model_validate(job.result),
        recording_id=job.recording_id,
        sweep_id=job.sweep_id,
        error=None if job.error is None else SimJobError(field=job.error.field, message=job.error.message),
    )


class WorkloadParam(BaseModel):
    """One parameter of a parametric workload: an integer in [min, max] or one of `choices`."""

    name: str
    type: Literal["int", "choice"]
    default: int | str
    min: int | None = None
    max: int | None = None
    choices: list[str] | None = None
    help: str


class SimOptions(BaseModel):
    """What a scenario can name: the topology presets, the hints by category (one per category
    at a time), the feature switches with their defaults, and each parametric workload's
    parameters (the trace workload names a recording instead)."""

    presets: list[str]
    hint_categories: dict[str, list[str]]
    features: dict[str, bool | int]
    workloads: dict[str, list[WorkloadParam]]
    max_duration_ms: int
    sweep_toggles: list[str] = Field(
        description="every toggle on its own, as a toggle sweep's `all` runs them: each hint, then each "
        "feature switched away from its default (NO_SIS_UTIL turns SIS_UTIL off)"
    )
    sweep_calibrated: dict[str, str] = Field(
        description="the workloads placemap calibrate runs, each with the parameter the published tables "
        "vary: a sweep along it can run each point as calibrate runs its cell (`calibrated`)"
    )


def _param(p: Param) -> WorkloadParam:
    if isinstance(p, IntParam):
        return WorkloadParam(name=p.name, type="int", default=p.default, min=p.lo, max=p.hi, help=p.help)
    return WorkloadParam(name=p.name, type="choice", default=p.default, choices=list(p.choices), help=p.help)


@router.get("/options")
def options() -> SimOptions:
    """The simulator's presets, hints, features and workloads, for the simulate and what-if forms."""
    return SimOptions(
        presets=list(PRESETS),
        hint_categories={k: list(v) for k, v in HINT_CATEGORIES.items()},
        features={f.name: getattr(Features(), f.name) for f in fields(Features)},
        workloads={kind: [_param(p) for p in params] for kind, params in CATALOG.items()},
        max_duration_ms=MAX_DURATION_MS,
        sweep_toggles=list(ALL_TOGGLES),
        sweep_calibrated={k: X_PARAM[k] for k in BENCHMARKS},
    )


@router.post("/jobs", status_code=202)
def submit(jobs: JobsDep, store: StoreDep, body: SimJobRequest) -> SimJobCreated:
    """Validate the scenario (422 naming the field when bad) and queue it; poll GET /api/sim/jobs/{id}.
    A trace workload names a stored recording ({"kind": "trace", "recording": ID}; topology
    "recorded" for the recording's own host): the job builds its profile."""
    sweep = None if body.sweep is None else body.sweep.model_dump(exclude_none=True)
    try:
        validate(body.scenario, store)
        if sweep is not None:
            if body.save:
                raise ScenarioError(
                    "save", "a sweep's runs are not saved; save one point as a run of its own"
                )
            parsed = parse_sweep(body.scenario, sweep)
            for sc in distinct(sweep_scenarios(body.scenario, parsed))[0]:  # each named before any runs
                validate(sc, store)
    except ScenarioError as exc:
        raise ApiError(422, "bad_scenario", str(exc)) from exc
    try:
        job = jobs.submit(body.scenario, body.save, sweep=sweep)
    except QueueFullError as exc:
        raise ApiError(429, "too_many_jobs", str(exc)) from exc
    status: Literal["queued", "running"] = "running" if job.status == "running" else "queued"
    return SimJobCreated(job_id=job.id, status=status)


@router.get("/jobs")
def list_jobs(jobs: JobsDep) -> SimJobList:
    """The jobs this server remembers (the last 200 finished ones and every open one), newest first."""
    return SimJobList(jobs=[_model(j) for j in jobs.list()])


@router.get("/jobs/{job_id}")
def get_job(jobs: JobsDep, job_id: str) -> SimJob:
    job = jobs.get(job_id)
    if job is None:
        raise not_found("sim_job", job_id)
    return _model(job)


@router.delete("/jobs/{job_id}")
def cancel_job(jobs: JobsDep, job_id: str) -> SimJob:
    """Cancel a queued or running job (its half-stored recording is deleted); a finished job is
    returned unchanged."""
    job = jobs.cancel(job_id)
    if job is None:
        raise not_found("sim_job", job_id)
    return _model(job)


class SimPublishedRequest(BaseModel):
    """A scenario, as POST /api/sim/jobs takes it."""

    scenario: dict[str, Any]


class PublishedDifference(BaseModel):
    field: str = Field(description="a scenario field, e.g. workload.loops or duration_ms")
    calibration: int | str = Field(description="its value in the run `placemap calibrate` makes of the cell")
    yours: int | str


class PublishedCell(BaseModel):
    """One published measurement: a hint configuration against tip on the real machine (the
    tables), or a feature change against the default kernel (the features' own checks)."""

    source: str
    section: str = Field(description="the table, e.g. 'schbench Wakeup Hint', or the check's load")
    machine: str = Field(description="the measured machine, or the preset modelling it")
    benchmark: str
    metric: str
    better: Literal["lower", "higher"]
    x_name: str
    x: int
    config: str = Field(description="the hints (fork_affine+wake_affine) or the features changed")
    value: float | None
    tip_value: float | None
    published_pct: float = Field(
        description="percent better than the baseline, as published (positive: better)"
    )
    significant: bool = Field(description="beyond the 5% from which the calibration counts a direction")
    uncertain: bool = Field(description="the file marks the cell's reading as uncertain")
    differs: list[PublishedDifference] = Field(
        description="where the scenario differs from the model's own run of this cell (compared_by)"
    )
    reference: str = Field(
        description="where it was published: the tables' file, an LKML message or a commit"
    )
    compared_by: str = Field(
        description="what runs the model's side: placemap calibrate, scripts/bench simfeatures"
    )
    model_workload: dict[str, int | str] = Field(description="that run's workload, every parameter")
    model_duration_ms: int = Field(description="that run's duration_ms")


class PublishedTables(BaseModel):
    file: str
    skipped_rows: int = Field(description="rows of the file that could not be read")


class SimPublished(BaseModel):
    cells: list[PublishedCell]
    reason: str | None = Field(description="why no cell matches, when there is something to say")
    tables: PublishedTables | None = Field(
        description="the published tables (PLACEMAP_CALIBRATION_CSV), when they were read for a hint's pair"
    )


@router.post("/published")
def published(settings: SettingsDep, store: StoreDep, body: SimPublishedRequest) -> SimPublished:
    """The published measurements the scenario, run beside its baseline (no hints, default
    features), reproduces: a hint's pair against the tables (same preset machine, benchmark, x and
    hints, default features), a feature change's pair against the features' own published effects
    (422 naming the field for a bad scenario). A tables file it cannot read is a 500 naming it."""
    try:
        validate(body.scenario, store)
    except ScenarioError as exc:
        raise ApiError(422, "bad_scenario", str(exc)) from exc
    path = settings.calibration_csv
    try:
        cells, reason, index = lookup_published(path, body.scenario)
    except (OSError, UnicodeDecodeError, csv.Error, CsvError) as exc:
        raise ApiError(500, "published_unreadable", f"{path.name}: {exc}") from exc
    tables = None if index is None else PublishedTables(file=path.name, skipped_rows=index.skipped_rows)
    return SimPublished(
        cells=[PublishedCell.model_validate(asdict(c)) for c in cells], reason=reason, tables=tables
    )


@router.get("/sweeps")
def list_sweeps(store: StoreDep, limit: Annotated[int, Query(ge=1, le=200)] = 20) -> SweepList:
    """The stored sweeps, newest first: what each ran and along what, to open by id."""
    out: list[SweepSummary] = []
    for s in store.list_sweeps(limit):
        sc, r = s["scenario"], s["result"]
        topology = sc.get("topology")
        workload = sc.get("workload")
        out.append(
            SweepSummary(
                id=s["id"],
                created_at=s["created_at"],
                topology=topology if isinstance(topology, str) else "host",
                workload=str(workload.get("kind")) if isinstance(workload, dict) else "?",
                hints=[str(h) for h in sc.get("hints") or []],
                features=dict(sc.get("features") or {}),
                param=r["param"],
                values=r["values"],
                metric=r["metric"]["name"],
                baseline=r["baseline"],
                calibrated=bool(r.get("calibrated", False)),
                across=list(r.get("across") or []),
            )
        )
    return SweepList(sweeps=out)


@router.get("/sweeps/{sweep_id}")
def get_sweep(store: StoreDep, sweep_id: str) -> SavedSweep:
    """A finished sweep job's result as it was stored: its scenario, the sweep and the result."""
    got = store.get_sweep(sweep_id)
    if got is None:
        raise not_found("sweep", sweep_id)
    return SavedSweep.model_validate(got)


@router.delete("/sweeps/{sweep_id}", status_code=204, response_class=Response)
def delete_sweep(store: StoreDep, sweep_id: str) -> Response:
    """Forget a stored sweep: its link then opens nothing. 404 when there is none."""
    if not store.delete_sweep(sweep_id):
        raise not_found("sweep", sweep_id)
    return Response(status_code=204)
