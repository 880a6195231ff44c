"""The compiled build (mypyc, scripts/build-sim) is used only when it matches the sources,
and gives byte-identical output to the pure-Python modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from placemap.sim import _native

BACKEND = Path(__file__).resolve().parents[2]


def fake_build(tmp: Path, sources: dict[str, str], interpreter: str | None = None) -> Path:
    manifest = {
        "interpreter": interpreter or _native.interpreter(),
        "shared_lib": "nothing__mypyc",
        "sources": sources,
    }
    (tmp / _native.MANIFEST).write_text(json.dumps(manifest))
    return tmp


def test_sources_are_the_package_modules_but_the_chooser(tmp_path: Path) -> None:
    src = _native.sources()
    assert "engine.py" in src and "policy/wakeup.py" in src and "workloads/hackbench.py" in src
    assert "__init__.py" not in src and "_native.py" not in src
    assert "trace.py" not in src  # subclassed by interpreted code (sim_record)
    assert "policy/__init__.py" in src  # subpackages are compiled whole


def test_no_build_or_a_stale_one_falls_back_to_pure_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(_native.PURE_ENV, raising=False)
    assert _native.check(tmp_path) == "no compiled build (scripts/build-sim)"
    sources = _native.digest()
    edited = {**sources, "engine.py": "0" * 64}
    assert _native.check(fake_build(tmp_path, edited)) == "stale build: engine.py changed since"
    missing = {k: v for k, v in sources.items() if k != "state.py"}
    assert "state.py" in _native.check(fake_build(tmp_path, missing))
    other = fake_build(tmp_path, sources, interpreter="cpython-27 2.7.18 linux")
    assert _native.check(other).startswith("built for cpython-27")
    path: list[str] = ["/src"]
    assert _native.activate(path, other).startswith("pure: built for") and path == ["/src"]


def test_a_build_whose_library_does_not_load_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(_native.PURE_ENV, raising=False)
    build = fake_build(tmp_path, _native.digest())  # hashes match, but no shared library there
    assert _native.check(build) == "ok"
    path: list[str] = ["/src"]
    assert _native.activate(path, build).startswith("pure: compiled build does not load")
    assert path == ["/src"] and str(build) not in sys.path


def test_pure_env_forces_pure_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_native.PURE_ENV, "1")
    path: list[str] = ["/src"]
    assert _native.activate(path, fake_build(tmp_path, _native.digest())) == f"pure: {_native.PURE_ENV} set"
    assert path == ["/src"]


# Scenarios touching every workload and most toggles; outputs compared whole, and the event
# log (what --save stores) by hash.
CODE = """
import hashlib, json, sys
from placemap.sim import _native
from placemap.sim.scenario import parse_scenario, run_scenario, simulate
from placemap.sim.trace import EventLog
out = [_native.status]
for sc in json.loads(sys.argv[1]):
    log = EventLog()
    simulate(parse_scenario(sc), log)
    cols = hashlib.sha256(json.dumps(log.columns(), sort_keys=True).encode()).hexdigest()
    out.append([run_scenario(sc, wall_clock=False), cols, len(log)])
print(json.dumps(out, sort_keys=True))
"""
Z = "zen3-2s-nps1"
SCENARIOS = [
    {"topology": Z, "workload": {"kind": "hackbench", "groups": 2, "loops": 10}, "seed": 1,
     "hints": ["wake_hold"]},
    {"topology": "icx-2s", "workload": {"kind": "hackbench", "groups": 1, "loops": 10, "ipc": "socket",
     "mode": "thread"}, "seed": 2},
    {"topology": Z, "workload": {"kind": "schbench", "messengers": 1, "workers": 32}, "seed": 5,
     "duration_ms": 60, "features": {"SIS_SHORT": True, "SIS_UTIL": False}},
    {"topology": "zen3-2s-nps4", "workload": {"kind": "schbench", "messengers": 2, "workers": 16}, "seed": 2,
     "duration_ms": 60, "features": {"STEAL": True, "steal_node_limit": 8, "UTIL_FITS_CAPACITY": True}},
    {"topology": Z, "workload": {"kind": "tbench", "clients": 16}, "seed": 1, "duration_ms": 12,
     "hints": ["fork_affine", "wake_affine"]},
    {"topology": "icx-2s", "workload": {"kind": "tbench", "clients": 4}, "seed": 4, "duration_ms": 8,
     "features": {"NO_MC": True}},
    {"topology": Z, "workload": {"kind": "stream", "threads": 16}, "seed": 1, "duration_ms": 30,
     "features": {"MM_FOOTPRINT": True}, "hints": ["fork_spread"]},
    {"topology": Z, "workload": {"kind": "stream", "threads": 32}, "seed": 1, "duration_ms": 20,
     "features": {"NUMA_IMB_LEGACY": True, "SELECT_BIAS_PREV": True}},
]  # fmt: skip


def run_in_process(pure: bool) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if k != _native.PURE_ENV}
    if pure:
        env[_native.PURE_ENV] = "1"
    out = subprocess.run(
        [sys.executable, "-c", CODE, json.dumps(SCENARIOS)],
        cwd=BACKEND,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    status, *results = json.loads(out)
    return status, json.dumps(results, sort_keys=True)


def test_compiled_and_pure_python_give_byte_identical_output() -> None:
    why = _native.check()
    if why != "ok":
        pytest.skip(f"no fresh compiled build to compare with ({why}); run scripts/build-sim")
    status, compiled = run_in_process(pure=False)
    assert status == "compiled"
    pure_status, pure = run_in_process(pure=True)
    assert pure_status.startswith("pure")
    assert compiled == pure
    assert all(r[0]["sim"]["events"] > 0 for r in json.loads(pure))
