"""Placement reasons for a simulated run saved before runs kept them (sim_reasons, session 26):
its saved scenario (sim_saved) run again, which the simulator being seeded and deterministic makes
the same run, checked to be that run, and its reasons stored with the recording.

The check is what makes the reasons honest: the rerun's events by kind must be the stored
recording's (events_by_kind), and its counters and metric the saved result's. A simulator changed
since the run was saved (a new mechanism) gives another run, whose reasons would name placements
the recording does not have; then ReasonsUnavailableError says what differs and nothing is
stored. The rerun stores no events: only the reasons, about a tenth of a saved run's bytes.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from placemap.schema.events import KIND_NAMES
from placemap.sim.scenario import parse_scenario, simulate, summarize
from placemap.sim_reasons import REASONS
from placemap.sim_record import Progress, _StreamingLog
from placemap.sim_saved import ScenarioUnavailableError, saved_scenario
from placemap.store import RecordingRow, Store

# the saved result's counters the rerun must give again (cpu_utilization aside: since session 27
# it counts the tasks still running at the end, so a run saved before may read lower)
CHECKED_COUNTERS = ("migrations", "wakeups", "context_switches", "avg_wait_us")


class ReasonsUnavailableError(Exception):
    """The run's reasons cannot be worked out; `code` names why: not_found, not_simulated,
    already_kept, scenario_unavailable or rerun_differs (the message says what differs)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class _RerunLog(_StreamingLog):
    """Keeps the reasons and counts the events by kind; stores no event."""

    def __init__(self, duration_ns: int, on_progress: Progress | None) -> None:
        super().__init__(duration_ns, on_progress, None, keep_reasons=True)
        self.kinds: Counter[int] = Counter()

    def _row(
        self, kind: int, ts: int, cpu: int, cur_pid: int, subject: tuple[int, str], **extra: object
    ) -> None:
        self.kinds[kind] += 1
        super()._row(kind, ts, cpu, cur_pid, subject, **extra)


def check(store: Store, rid: str) -> tuple[RecordingRow, dict[str, Any]]:
    """Simulated run `rid` and its whole scenario when its reasons can be worked out (quickly: no
    rerun); ReasonsUnavailableError otherwise."""
    rec = store.get_recording(rid)
    if rec is None:
        raise ReasonsUnavailableError(f"no recording {rid}", "not_found")
    if rec.source != "simulated" or rec.status != "ready":
        raise ReasonsUnavailableError(
            "only a simulated run that is stored whole has placement reasons: the kernel does not "
            "say why it placed a task",
            "not_simulated",
        )
    if store.derived(rid, REASONS) is not None:
        raise ReasonsUnavailableError("this run keeps its placement reasons already", "already_kept")
    try:
        return rec, saved_scenario(store, rec)
    except ScenarioUnavailableError as exc:
        why = f"its scenario cannot be run again: {exc}"
        raise ReasonsUnavailableError(why, "scenario_unavailable") from exc


def backfill(store: Store, rid: str, *, on_progress: Progress | None = None) -> dict[str, Any]:
    """Rerun simulated run `rid`'s scenario and store its placement reasons; the rerun's result
    JSON (with recording_id), or ReasonsUnavailableError (nothing stored)."""
    rec, scenario = check(store, rid)
    sc = parse_scenario(scenario)
    log = _RerunLog(sc.duration_ns, on_progress)
    eng, wl = simulate(sc, log, decisions=True)
    result = summarize(eng, wl, 0.0)
    differs = _differences(rec.meta, log.kinds, result)
    if differs:
        raise ReasonsUnavailableError(
            f"rerunning its scenario no longer gives the saved run ({'; '.join(differs[:3])}): the "
            "simulator has changed since it was saved, so reasons worked out now would not be its own",
            "rerun_differs",
        )
    assert log.reasons is not None
    log.reasons.save(store, rid)
    result["recording_id"] = rid
    if on_progress is not None:
        on_progress(1.0)
    return result


def _differences(meta: dict[str, Any], kinds: Counter[int], result: dict[str, Any]) -> list[str]:
    """What the rerun gives otherwise than the saved run: 'switch 120 saved, 118 now', ..."""
    out = []
    stored = meta.get("events_by_kind")
    stored = stored if isinstance(stored, dict) else {}
    for code, name in enumerate(KIND_NAMES):
        was, now = int(stored.get(name, 0)), kinds.get(code, 0)
        if was != now:
            out.append(f"{name} events {was:,} saved, {now:,} now")
    saved = meta.get("sim_result")
    if not isinstance(saved, dict):
        return [*out, "the saved result is missing"]
    for key in CHECKED_COUNTERS:
        if saved.get("counters", {}).get(key) != result["counters"][key]:
            out.append(f"counters.{key} differ")
    if saved.get("metric") != result["metric"]:
        out.append(f"metric {saved.get('metric', {}).get('value')} saved, {result['metric']['value']} now")
    return out


__all__ = ["ReasonsUnavailableError", "backfill", "check"]
