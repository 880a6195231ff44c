"""A saved simulated run's whole scenario (placemap.sim_saved): kept when the run is saved, so that
its scenario.json reruns the run without the database; rebuilt for replays saved before, from the
real vm2-hackbench-g4 recording they replayed, or refused with the reason."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from collector import collector_binary
from ftrace_lines import G4

from placemap.replay.ingest import Ingestor
from placemap.sim.scenario import run_scenario
from placemap.sim_profile import resolve
from placemap.sim_record import run
from placemap.sim_saved import BLOB, ScenarioUnavailableError, file_text, saved_scenario
from placemap.store import Store
from placemap.store.live import LiveStore


def _ingest(store: Store, table: pa.Table) -> str:
    rid = store.create_recording("g4")
    ing = Ingestor(store, rid, None)
    for batch in table.to_batches(max_chunksize=10_000):
        ing.add(batch)
    ing.finish(None)
    return rid


def _replay(rid: str) -> dict[str, Any]:
    return {
        "topology": "bdw-1s-20",
        "workload": {"kind": "trace", "recording": rid},
        "hints": ["wake_affine"],
        "seed": 1,
        "duration_ms": 5000,
    }


def _drop_blob(store: Store, rid: str) -> None:
    """As a run saved before the blob existed (session 25 and earlier) was stored."""
    with sqlite3.connect(store.path) as c:
        c.execute("DELETE FROM derived WHERE recording_id = ? AND name = ?", (rid, BLOB))


def _saved(store: Store, scenario: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    result = run(scenario, store=store, wall_clock=False)
    rec = store.get_recording(result.pop("recording_id"))
    assert rec is not None and rec.status == "ready"
    return result, rec


def test_a_saved_replay_s_scenario_is_whole_and_reruns_the_run_exactly(
    store: Store, g4_table: pa.Table
) -> None:
    whole = resolve(_replay(_ingest(store, g4_table)), store)
    result, rec = _saved(store, whole)
    # the metadata keeps the profile's summary; the download gets every task's ops
    assert isinstance(rec.meta["scenario"]["workload"]["profile"]["tasks"], int)
    assert store.derived(rec.id, BLOB) is not None, "kept when the run is saved"
    got = saved_scenario(store, rec)
    assert got == whole and len(got["workload"]["profile"]["tasks"]) > 160
    # the file, read back, runs the very run the recording holds, without the store
    rerun = run_scenario(json.loads(file_text(got)), wall_clock=False, decisions=True)
    assert rerun == result


def test_a_replay_saved_before_runs_kept_it_is_rebuilt_from_its_recording_once(
    store: Store, g4_table: pa.Table
) -> None:
    whole = resolve(_replay(_ingest(store, g4_table)), store)
    _, rec = _saved(store, whole)
    _drop_blob(store, rec.id)
    assert saved_scenario(store, rec) == whole
    assert store.derived(rec.id, BLOB) is not None, "the rebuilt scenario is kept"
    # a recording that no longer gives the summary the run kept is not passed off as its profile
    _drop_blob(store, rec.id)
    summary = {**rec.meta["scenario"]["workload"]["profile"], "tasks": 5}
    LiveStore(store).merge_meta(
        rec.id, {"scenario": {**whole, "workload": {"kind": "trace", "profile": summary}}}
    )
    changed = store.get_recording(rec.id)
    assert changed is not None
    with pytest.raises(ScenarioUnavailableError, match="no longer gives the profile it replayed"):
        saved_scenario(store, changed)


def test_a_replay_whose_recording_is_gone_says_so(store: Store, g4_table: pa.Table) -> None:
    src = _ingest(store, g4_table)
    _, rec = _saved(store, resolve(_replay(src), store))
    _drop_blob(store, rec.id)
    store.delete_recording(src)
    with pytest.raises(ScenarioUnavailableError, match=f"no recording '{src}'") as e:
        saved_scenario(store, rec)
    assert e.value.code == "scenario_unavailable"
    assert store.derived(rec.id, BLOB) is None


def test_a_replay_of_a_file_saved_before_runs_kept_it_names_the_file(store: Store, tmp_path: Path) -> None:
    sc = {
        "topology": "bdw-1s-20",
        "workload": {"kind": "trace", "file": str(G4)},
        "seed": 1,
        "duration_ms": 5000,
    }
    whole = resolve(sc, None, collector_binary(tmp_path))
    _, rec = _saved(store, whole)
    assert saved_scenario(store, rec) == whole
    _drop_blob(store, rec.id)
    with pytest.raises(
        ScenarioUnavailableError, match=f"it replayed file {G4.name}, which the server does not keep"
    ):
        saved_scenario(store, rec)


def test_other_runs_and_recordings(store: Store, g4_table: pa.Table) -> None:
    sc = {
        "topology": "zen3-2s-nps1",
        "workload": {"kind": "schbench", "messengers": 1, "workers": 4},
        "hints": ["fork_affine"],
        "seed": 3,
        "duration_ms": 150,
    }
    _, rec = _saved(store, sc)
    assert saved_scenario(store, rec) == sc
    _drop_blob(store, rec.id)
    assert saved_scenario(store, rec) == sc, "nothing shortened: the metadata holds it whole"
    imported = store.get_recording(_ingest(store, g4_table))
    assert imported is not None
    with pytest.raises(ScenarioUnavailableError, match="not a simulated run") as e:
        saved_scenario(store, imported)
    assert e.value.code == "not_simulated"
    assert store.put_derived(rec.id, BLOB, b"\x78\x9c garbage")
    with pytest.raises(ScenarioUnavailableError, match="cannot be read"):
        saved_scenario(store, rec)


def test_the_file_puts_lists_of_numbers_on_one_line_and_reads_back() -> None:
    sc = {
        "topology": "bdw-1s-20",
        "workload": {
            "kind": "trace",
            "profile": {
                "tasks": [
                    {"pid": 7, "comm": '<script>"\n', "cpu": 0, "start": "running", "ops": [0, 1000, 6]},
                ]
            },
        },
        "hints": [],
        "features": {"SIS_UTIL": False},
        "seed": 1,
    }
    text = file_text(sc)
    assert json.loads(text) == sc and text.endswith("}\n")
    lines = text.splitlines()
    assert '          "ops": [0, 1000, 6]' in lines and '  "hints": [],' in lines
    assert '          "comm": "<script>\\"\\n",' in lines
    assert lines[:2] == ["{", '  "topology": "bdw-1s-20",'], "keys in the scenario's order"
