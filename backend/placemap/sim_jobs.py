"""Simulation jobs: scenarios run off the server's event loop, each in its own worker process.

Owns the job table (in memory: jobs do not survive a server restart; their saved recordings do),
the queue, and the worker processes. The simulator is CPU-bound pure Python, so a job runs in a
separate, lowered-priority process (spawned, not forked: the server has threads) and at most
`workers` run at once; the rest wait in order. A worker reports over a pipe: progress (simulated
time / duration), the id of the recording it is storing, then its result or its error. Cancelling
kills the worker and deletes the half-stored recording it named. A "reasons" job reruns a saved
run for its placement reasons (sim_backfill) and names no recording until done. A "sweep" job runs
its scenario at each value of one workload parameter, machine or toggle (sim_sweep; a trace
replay's recording made its profile once, first), its runs unsaved, one after another, and stores
the sweep's result once done (Store.put_sweep: its link).

No FastAPI here: api/routes/sim.py maps these jobs to HTTP.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, Literal

from placemap.settings import SIM_MAX_SAVED_EVENTS
from placemap.sim.errors import ScenarioError
from placemap.sim_backfill import ReasonsUnavailableError, backfill
from placemap.sim_profile import recorded_host, resolve
from placemap.sim_record import run
from placemap.sim_sweep import needs_host, parse_sweep, with_host
from placemap.sim_sweep import run as run_sweep
from placemap.store import Store
from placemap.store.store import new_id

JobStatus = Literal["queued", "running", "done", "failed", "cancelled"]
FINISHED: tuple[JobStatus, ...] = ("done", "failed", "cancelled")

MAX_QUEUED = 32  # a client flooding the queue gets an error, not hours of backlog
KEEP_FINISHED = 200  # finished jobs remembered for GET; older ones are forgotten first
WORKER_NICE = 10  # below the server, so the API stays responsive on a small machine


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class QueueFullError(Exception):
    """Too many jobs are waiting already."""


@dataclass
class JobError:
    """Why a job failed: the scenario field at fault when there is one."""

    message: str
    field: str | None = None


@dataclass
class Job:
    """One simulation job as the API reports it."""

    id: str
    scenario: dict[str, Any]
    save: bool
    # "reasons": a saved run rerun for its placement reasons (sim_backfill), `target` its recording;
    # "sweep": the scenario at each of `sweep`'s values (sim_sweep), its result the sweep's
    kind: Literal["run", "reasons", "sweep"] = "run"
    target: str | None = None
    sweep: dict[str, Any] | None = None
    status: JobStatus = "queued"
    progress: float = 0.0
    created_at: str = field(default_factory=_now)
    started_at: str | None = None
    finished_at: str | None = None
    result: dict[str, Any] | None = None
    recording_id: str | None = None
    sweep_id: str | None = None  # a sweep job's stored result (Store.get_sweep)
    error: JobError | None = None
    # runtime, not reported
    proc: BaseProcess | None = field(default=None, repr=False)
    cancel_requested: bool = field(default=False, repr=False)
    finished: threading.Event = field(default_factory=threading.Event, repr=False)


def worker_main(
    db_path: str,
    scenario: dict[str, Any],
    save: bool,
    conn: Connection,
    max_saved_events: int,
    *,
    reasons_for: str | None = None,
    sweep: dict[str, Any] | None = None,
    calibration_csv: str | None = None,
) -> None:
    """The worker process: run one scenario, or rerun saved run `reasons_for` for its placement
    reasons (never naming it as its recording: a cancel must not delete it), or run the scenario's
    `sweep` (the published cells read from `calibration_csv`), reporting over `conn`."""
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICE)
    store = Store(Path(db_path))
    try:
        if reasons_for is not None:
            result = backfill(store, reasons_for, on_progress=lambda f: conn.send(("progress", f)))
            conn.send(("done", result))
            return
        if sweep is not None:
            # a trace replay's recording becomes its profile once, for every run of the sweep
            parsed = parse_sweep(scenario, sweep)
            if needs_host(parsed):  # and its host topology, to run there beside presets
                parsed = with_host(parsed, recorded_host(scenario, store))
            result = run_sweep(
                resolve(scenario, store),
                parsed,
                lambda sc, progress: run(sc, wall_clock=False, on_progress=progress, decisions=False),
                None if calibration_csv is None else Path(calibration_csv),
                on_progress=lambda f: conn.send(("progress", f)),
            )
            conn.send(("sweep", store.put_sweep(scenario, sweep, result)))
            conn.send(("done", result))
            return
        # a trace workload's recording becomes its profile here, off the server's threads
        scenario = resolve(scenario, store)
        result = run(
            scenario,
            store=store if save else None,
            on_progress=lambda f: conn.send(("progress", f)),
            on_recording=lambda rid: conn.send(("recording", rid)),
            max_events=max_saved_events,
        )
        conn.send(("done", result))
    except ScenarioError as exc:
        conn.send(("failed", exc.field, str(exc)))
    except ReasonsUnavailableError as exc:
        conn.send(("failed", None, str(exc)))
    except Exception as exc:
        conn.send(("failed", None, f"{type(exc).__name__}: {exc}"))
    finally:
        store.close()
        conn.close()


class SimJobs:
    """The job table and its workers. Thread-safe; every method returns quickly."""

    def __init__(
        self,
        store: Store,
        workers: int = 1,
        max_saved_events: int = SIM_MAX_SAVED_EVENTS,
        calibration_csv: Path | None = None,
    ) -> None:
        self.store = store
        self.calibration_csv = calibration_csv  # a sweep's published cells
        self.workers = max(1, workers)
        self.max_saved_events = max_saved_events
        self._ctx = multiprocessing.get_context("spawn")
        self._lock = threading.Lock()
        self._jobs: dict[str, Job] = {}
        self._queue: deque[str] = deque()
        self._running = 0
        self._monitors: set[threading.Thread] = set()
        self._closed = False

    # --- API -----------------------------------------------------------------------------------
    def submit(
        self,
        scenario: dict[str, Any],
        save: bool,
        *,
        reasons_for: str | None = None,
        sweep: dict[str, Any] | None = None,
    ) -> Job:
        """Queue a scenario (validated by the caller) and start it if a worker is free; with
        `reasons_for`, a rerun of that saved run (checked by the caller: sim_backfill.check) whose
        outcome is its placement reasons, `scenario` only what the job reports; with `sweep` (checked
        by the caller: sim_sweep.parse_sweep), the scenario swept, unsaved."""
        with self._lock:
            if len(self._queue) >= MAX_QUEUED:
                raise QueueFullError(f"{len(self._queue)} jobs are waiting already; try again later")
            if reasons_for is not None:
                job = Job(id=new_id(), scenario=scenario, save=False, kind="reasons", target=reasons_for)
            elif sweep is not None:
                job = Job(id=new_id(), scenario=scenario, save=False, kind="sweep", sweep=sweep)
            else:
                job = Job(id=new_id(), scenario=scenario, save=save)
            self._jobs[job.id] = job
            self._queue.append(job.id)
            self._forget_old()
            self._start_next()
        return job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def list(self) -> list[Job]:
        """Every remembered job, newest first."""
        with self._lock:
            return sorted(self._jobs.values(), key=lambda j: j.created_at, reverse=True)

    def cancel(self, job_id: str, wait_s: float = 30.0) -> Job | None:
        """Cancel a queued or running job (a finished one stays as it is); None if unknown.
        Waits up to `wait_s` for a killed worker's cleanup, so the job is reported finished."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.status in FINISHED:
                return job
            if job.status == "queued":
                self._queue.remove(job_id)
                self._finish(job, "cancelled")
                return job
            job.cancel_requested = True
            proc = job.proc
        if proc is not None:
            proc.kill()  # the monitor sees the pipe close, marks it cancelled and cleans up
        job.finished.wait(wait_s)
        return job

    def shutdown(self) -> None:
        """Kill every worker and wait for their monitors (server stop)."""
        with self._lock:
            self._closed = True
            for jid in list(self._queue):
                self._finish(self._jobs[jid], "cancelled")
            self._queue.clear()
            running = [j for j in self._jobs.values() if j.status == "running"]
            for j in running:
                j.cancel_requested = True
            monitors = list(self._monitors)
        for j in running:
            if j.proc is not None:
                j.proc.kill()
        for t in monitors:
            t.join(timeout=30)

    # --- internals (called with the lock held unless said otherwise) ---------------------------
    def _start_next(self) -> None:
        while not self._closed and self._running < self.workers and self._queue:
            job = self._jobs[self._queue.popleft()]
            recv, send = self._ctx.Pipe(duplex=False)
            proc = self._ctx.Process(
                target=worker_main,
                args=(str(self.store.path), job.scenario, job.save, send, self.max_saved_events),
                kwargs={
                    "reasons_for": job.target,
                    "sweep": job.sweep,
                    "calibration_csv": None if self.calibration_csv is None else str(self.calibration_csv),
                },
                name=f"sim-job-{job.id}",
                daemon=True,
            )
            proc.start()
            send.close()  # only the worker holds the sending end: its exit closes the pipe
            job.proc = proc
            job.status = "running"
            job.started_at = _now()
            self._running += 1
            t = threading.Thread(
                target=self._monitor, args=(job, recv), name=f"sim-job-{job.id}", daemon=True
            )
            self._monitors.add(t)
            t.start()

    def _monitor(self, job: Job, conn: Connection) -> None:
        """Runs without the lock: reads the worker's reports until its pipe closes."""
        outcome: tuple[Any, ...] | None = None
        with conn:
            while True:
                try:
                    msg = conn.recv()
                except (EOFError, OSError):
                    break
                if msg[0] == "progress":
                    with self._lock:
                        job.progress = max(job.progress, min(float(msg[1]), 1.0))
                elif msg[0] == "recording":
                    with self._lock:
                        job.recording_id = str(msg[1])
                elif msg[0] == "sweep":
                    with self._lock:
                        job.sweep_id = str(msg[1])
                else:
                    outcome = msg
        assert job.proc is not None
        job.proc.join()
        code = job.proc.exitcode
        with self._lock:
            cancelled = job.cancel_requested and (outcome is None or outcome[0] != "done")
            rid = job.recording_id
        if cancelled and rid is not None:
            # killed mid-store: a half-written recording is of no use to anyone
            self.store.delete_recording(rid)
        elif outcome is None and rid is not None:
            self.store.fail_recording(rid, f"the simulation worker died (exit code {code}) while storing")
        with self._lock:
            if cancelled:
                job.recording_id = None
                self._finish(job, "cancelled")
            elif outcome is not None and outcome[0] == "done":
                job.result = outcome[1]
                job.recording_id = outcome[1].get("recording_id")
                job.progress = 1.0
                self._finish(job, "done")
            elif outcome is not None:
                job.error = JobError(field=outcome[1], message=outcome[2])
                self._finish(job, "failed")
            else:
                job.error = JobError(
                    message=f"the simulation worker exited with code {code} before reporting"
                )
                self._finish(job, "failed")
            self._running -= 1
            self._monitors.discard(threading.current_thread())
            job.proc = None
            self._start_next()
        self.store.close()  # this thread's connection

    def _finish(self, job: Job, status: JobStatus) -> None:
        job.status = status
        job.finished_at = _now()
        job.finished.set()

    def _forget_old(self) -> None:
        done = [j for j in self._jobs.values() if j.status in FINISHED]
        if len(done) > KEEP_FINISHED:
            done.sort(key=lambda j: j.finished_at or "")
            for j in done[: len(done) - KEEP_FINISHED]:
                del self._jobs[j.id]
