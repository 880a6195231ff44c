"""SimJobs without HTTP: `workers` bounds the worker processes running at once, the rest queue in
order, and shutdown cancels everything (real spawned processes, real SQLite)."""

from __future__ import annotations

import time
from pathlib import Path

from placemap.sim_jobs import Job, SimJobs
from placemap.store import Store

ENDLESS = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "schbench", "messengers": 2, "workers": 32},
    "duration_ms": 600_000,
}


def job(jobs: SimJobs, jid: str) -> Job:
    j = jobs.get(jid)
    assert j is not None
    return j


def test_two_workers_run_two_jobs_and_queue_the_third(tmp_path: Path) -> None:
    store = Store(tmp_path / "p.db")
    jobs = SimJobs(store, workers=2)
    try:
        ids = [jobs.submit(ENDLESS, save=False).id for _ in range(3)]
        assert [job(jobs, i).status for i in ids] == ["running", "running", "queued"]
        procs = [job(jobs, i).proc for i in ids[:2]]
        assert all(p is not None and p.is_alive() for p in procs)
        # the first one cancelled: the queued one takes its place
        cancelled = jobs.cancel(ids[0])
        assert cancelled is not None and cancelled.status == "cancelled"
        deadline = time.monotonic() + 60
        while job(jobs, ids[2]).status != "running":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert job(jobs, ids[1]).status == "running"
    finally:
        jobs.shutdown()
    assert [job(jobs, i).status for i in ids] == ["cancelled"] * 3
    assert all(p is not None and not p.is_alive() for p in procs)
    assert store.list_recordings() == []
    store.close()


def test_a_saved_job_past_its_event_bound_fails_naming_duration_ms_and_its_recording_says_why(
    tmp_path: Path,
) -> None:
    """A hackbench of ~88k stored events against a bound of 20000 (the server's is 100M,
    settings.sim_max_saved_events): saved, the job stops there; unsaved, it is not bounded."""
    store = Store(tmp_path / "p.db")
    jobs = SimJobs(store, workers=1, max_saved_events=20_000)
    short = {
        "topology": "icx-2s",
        "workload": {"kind": "hackbench", "groups": 2, "loops": 500},
        "duration_ms": 1000,
    }
    try:
        saved, unsaved = jobs.submit(short, save=True).id, jobs.submit(short, save=False).id
        deadline = time.monotonic() + 120
        while job(jobs, unsaved).status not in ("done", "failed"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        jobs.shutdown()
    failed = job(jobs, saved)
    assert failed.status == "failed" and failed.error is not None and failed.error.field == "duration_ms"
    assert failed.error.message.startswith("duration_ms: a saved run stores at most 20,000 events")
    assert failed.error.message.endswith(
        "of its 1,000 ms simulated: save a shorter run, or run it unsaved (its metric needs no recording)"
    )
    done = job(jobs, unsaved)
    assert done.status == "done" and done.result is not None and done.result["sim"]["complete"]
    [rec] = store.list_recordings()
    assert rec.id == failed.recording_id and rec.status == "failed"
    assert rec.error is not None and "a saved run stores at most 20,000 events" in rec.error
    store.close()
