"""Store rows and replay results -> API models (no business logic: shapes only)."""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import ValidationError

from placemap.api.models import CpuState, LlcState, PlacementState
from placemap.replay import kernel as kn
from placemap.replay.seek import StateAt
from placemap.replay.topo import LevelMap
from placemap.schema.models.recording_schema import Recording, SimRunMetric
from placemap.store import RecordingRow, Store


def recording(row: RecordingRow, store: Store) -> Recording:
    meta = row.meta
    topology_source = meta.get("topology_source")
    if topology_source is None and row.topology_id is not None:
        topo = store.get_topology(row.topology_id)
        topology_source = None if topo is None else topo.get("source")
    return Recording.model_validate(
        {
            "id": row.id,
            "name": row.name,
            "source": row.source,
            "status": row.status,
            "created_at": row.created_at,
            "host": meta.get("host"),
            "kernel_release": meta.get("kernel_release"),
            "format": row.format,
            "event_count": row.event_count,
            "t_start_ns": row.t_start_ns,
            "t_end_ns": row.t_end_ns,
            "cpus_seen": meta.get("cpus_seen", []),
            "lost_events": row.lost_events,
            "skipped_lines": row.skipped_lines,
            "events_by_kind": meta.get("events_by_kind", {}),
            "bytes_stored": row.bytes_stored,
            "chunk_count": row.chunk_count,
            "topology_source": topology_source,
            "scenario": meta.get("scenario"),
            "sim_metric": sim_metric(meta.get("sim_result")),
            "import_summary": meta.get("import_summary"),
            "error": row.error,
            "progress": row.progress if row.status == "importing" else None,
            "topology_id": row.topology_id,
        }
    )


def sim_metric(result: object) -> dict[str, Any] | None:
    """A simulated recording's metric from the result JSON stored in its metadata (sim_record):
    None for a captured trace, and for a run saved before `sim.complete` was kept (its 0 may have
    measured nothing, and nothing says so). A run saved before `latency_us` has no counts."""
    if not isinstance(result, dict) or not isinstance(result.get("metric"), dict):
        return None
    m, run, lat = result["metric"], result.get("sim"), result.get("latency_us") or {}
    if not isinstance(run, dict) or "complete" not in run:
        return None
    body = {
        "name": m.get("name"),
        "value": m.get("value"),
        "better": m.get("better"),
        "complete": run["complete"],
        "incomplete": run.get("incomplete"),
        "samples": lat.get("samples"),
        "note": lat.get("note"),
    }
    try:  # a damaged metadata row must not fail the recordings list: no metric, the rest shown
        return SimRunMetric.model_validate(body).model_dump()
    except ValidationError:
        return None


def placement_state(
    at: StateAt, levels: LevelMap, topology_cpus: list[int], include_dead: bool = False
) -> PlacementState:
    """The state at `at`; dead tasks are counted in `dead_tasks` and left out unless include_dead
    (on recordings with pid churn they are nearly all tasks, and were most of GET state's cost).

    Tasks go in as plain dicts validated in one model_validate call: in pydantic-core that is ~2x
    faster than a TaskState(...) per task and ~4x faster than model_construct (pure Python)."""
    st = at.state
    live = st.state != kn.S_DEAD
    active = (st.state == kn.S_RUNNABLE) | (st.state == kn.S_RUNNING)
    ncpu = max(len(st.cpu_run), max(topology_cpus, default=-1) + 1)
    on_cpu = st.cpu >= 0
    runnable = np.bincount(st.cpu[on_cpu & active], minlength=ncpu)
    cpu_ids = sorted(set(topology_cpus) | {c for c in range(len(st.cpu_run)) if st.cpu_run[c] >= 0})
    cpus = []
    for c in cpu_ids:
        run = int(st.cpu_run[c]) if c < len(st.cpu_run) and st.cpu_run[c] >= 0 else None
        cpus.append(
            CpuState(
                cpu=c,
                running_pid=run,
                running_comm=None if not run else st.comm_of(run),
                runnable=int(runnable[c]) if c < len(runnable) else 0,
            )
        )
    keep = np.ones(len(st.pids), dtype=bool) if include_dead else live
    dead_left_out = int(len(st.pids) - int(keep.sum()))
    names = kn.STATE_NAMES
    tasks = [
        {"pid": p, "comm": m, "cpu": c if c >= 0 else None, "state": names[s]}
        for p, c, s, m in zip(
            st.pids[keep].tolist(),
            st.cpu[keep].tolist(),
            st.state[keep].tolist(),
            st.comm[keep].tolist(),
            strict=True,
        )
    ]
    llc_of_task = levels.cpu_llc(st.cpu.astype(np.int32))
    llc_of_task[~on_cpu] = -1
    llcs = []
    for i in range(levels.n_llcs):
        here = llc_of_task == i
        llcs.append(
            LlcState(
                llc=i,
                tasks=int((here & live).sum()),
                runnable=int((here & active).sum()),
                running=int((here & (st.state == kn.S_RUNNING)).sum()),
            )
        )
    return PlacementState.model_validate(
        {
            "t_ns": at.t_ns,
            "event_index": at.event_index,
            "cpus": cpus,
            "tasks": tasks,
            "dead_tasks": dead_left_out,
            "llcs": llcs,
        }
    )
