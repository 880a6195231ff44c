"""The whole scenario of a saved simulated run, for its scenario.json download: a file that
`placemap sim` reruns anywhere, without the server's database.

The recording's metadata keeps a trace replay's profile shortened to a summary (for_meta: a
profile can be megabytes); the whole scenario, profile and topology inline, is kept beside it as
a derived blob, zlib-compressed JSON, written when the run is saved (sim_record). A run saved
before that blob existed is served from its metadata when nothing was shortened, or rebuilt from
the recording it replayed while that is still stored and gives the same profile summary (then
kept, once); otherwise ScenarioUnavailableError says why.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from typing import Any

from placemap.sim.errors import ScenarioError
from placemap.sim_profile import for_meta, resolve
from placemap.store import Store
from placemap.store.store import RecordingRow

BLOB = "scenario"  # the derived blob's name
RECORDING_SOURCE = "recording "  # how resolve() names a profile read from a stored recording


class ScenarioUnavailableError(Exception):
    """The recording's whole scenario cannot be given; the message says why, `code` names it:
    not_simulated (an import or a live recording) or scenario_unavailable."""

    def __init__(self, message: str, code: str = "scenario_unavailable") -> None:
        super().__init__(message)
        self.code = code


def blob(scenario: Mapping[str, Any]) -> bytes:
    """The scenario as the derived blob keeps it."""
    return zlib.compress(json.dumps(scenario, separators=(",", ":")).encode(), 6)


def file_text(scenario: Mapping[str, Any]) -> str:
    """The scenario as a scenario.json file: objects indented by two, keys in their order, a final
    newline (as the dashboard writes the scenario of a run it has not saved), but a list of
    numbers or strings on one line: a replayed task's ops are thousands of numbers."""
    return _text(scenario, "") + "\n"


def _text(v: Any, pad: str) -> str:
    inner = pad + "  "
    if isinstance(v, Mapping) and v:
        items = (f"{inner}{json.dumps(str(k))}: {_text(x, inner)}" for k, x in v.items())
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list) and any(isinstance(x, (Mapping, list)) for x in v):
        return "[\n" + ",\n".join(inner + _text(x, inner) for x in v) + "\n" + pad + "]"
    return json.dumps(v)


def saved_scenario(store: Store, rec: RecordingRow) -> dict[str, Any]:
    """The whole scenario the simulated recording `rec` ran; ScenarioUnavailableError when the
    recording is no simulated run, or its replayed profile is neither kept nor rebuildable."""
    stored = store.derived(rec.id, BLOB)
    if stored is not None:
        try:
            whole = json.loads(zlib.decompress(stored))
        except (zlib.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ScenarioUnavailableError(f"its stored scenario cannot be read: {exc}") from exc
        if not isinstance(whole, dict):
            raise ScenarioUnavailableError("its stored scenario is not a JSON object")
        return whole
    meta = rec.meta.get("scenario")
    if rec.source != "simulated" or not isinstance(meta, dict):
        raise ScenarioUnavailableError(
            "it is not a simulated run: only those have a scenario", "not_simulated"
        )
    if not _shortened(meta):
        return meta  # nothing was shortened: the metadata holds it whole
    whole = _rebuilt(store, meta)
    store.put_derived(rec.id, BLOB, blob(whole))
    return whole


def _shortened(meta: Mapping[str, Any]) -> bool:
    """A trace workload whose profile is for_meta's summary (its tasks a count)."""
    wl = meta.get("workload")
    prof = wl.get("profile") if isinstance(wl, Mapping) else None
    return isinstance(prof, Mapping) and not isinstance(prof.get("tasks"), list)


def _rebuilt(store: Store, meta: Mapping[str, Any]) -> dict[str, Any]:
    """A replay saved before the blob existed: its profile built again from the recording it
    replayed, which must give the summary the metadata kept."""
    wl = meta["workload"]
    summary = wl["profile"]
    source = str(summary.get("source", ""))
    if not source.startswith(RECORDING_SOURCE):
        raise ScenarioUnavailableError(
            f"it replayed {source or 'a profile'}, which the server does not keep, and was saved "
            "before runs kept their whole scenario"
        )
    src = source[len(RECORDING_SOURCE) :]
    asked = {**meta, "workload": {**{k: v for k, v in wl.items() if k != "profile"}, "recording": src}}
    try:
        whole: dict[str, Any] = resolve(asked, store)
    except ScenarioError as exc:
        raise ScenarioUnavailableError(
            f"it was saved before runs kept their whole scenario, and the recording it replayed "
            f"cannot give it again: {exc}"
        ) from exc
    if for_meta(whole)["workload"]["profile"] != summary:
        raise ScenarioUnavailableError(
            f"it was saved before runs kept their whole scenario, and recording {src} no longer "
            "gives the profile it replayed"
        )
    return whole
