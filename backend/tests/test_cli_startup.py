"""The simulator's commands start without the server's stack: `placemap sim`, a sweep, `domains` and
`calibrate` import neither FastAPI, uvicorn, the importer's numba kernels nor pyarrow (about 1.5 s
of a 2 s start before cli.py imported each command's needs when it runs); `sim --save`, which writes
a recording, does import pyarrow, which shows the check sees an import when there is one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from placemap.settings import DEFAULT_CALIBRATION_CSV, REPO_ROOT

HEAVY = ("fastapi", "starlette", "uvicorn", "numba", "pyarrow")
# main() as bin/placemap runs it, then the heavy top-level packages it left imported, on stderr
SNIPPET = f"""
import json, sys
from placemap.cli import main
code = main(sys.argv[1:])
heavy = sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))
print("HEAVY=" + json.dumps(heavy), file=sys.stderr)
sys.exit(code)
"""
SCENARIO = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "schbench", "messengers": 1, "workers": 4},
    "hints": ["wake_affine"],
    "seed": 1,
    "duration_ms": 20,
}


def _run(tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    env = {**os.environ, "PLACEMAP_DB": str(tmp / "cli.db")}
    proc = subprocess.run(
        [sys.executable, "-c", SNIPPET, *args],
        cwd=REPO_ROOT / "backend",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("HEAVY=")]
    assert lines, proc.stderr
    heavy: list[str] = json.loads(lines[-1].removeprefix("HEAVY="))
    return proc, heavy


@pytest.mark.parametrize(
    "args",
    [
        ("sim", "{scenario}", "--json"),
        ("sim", "{scenario}", "--baseline", "--json"),
        ("sim", "{scenario}", "--sweep", "workers=2,4", "--json"),
        ("domains", "zen3-2s-nps1"),
        ("calibrate", "--csv", "{csv}", "--json"),
    ],
    ids=["sim", "baseline", "sweep", "domains", "calibrate"],
)
def test_simulator_commands_do_not_import_the_server_stack(tmp_path: Path, args: tuple[str, ...]) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(SCENARIO))
    # one published row of the calibration file: schbench, Zen3, its header and first data row
    rows = DEFAULT_CALIBRATION_CSV.read_text().splitlines()
    csv = tmp_path / "one.csv"
    csv.write_text("\n".join([rows[0], next(r for r in rows[1:] if ",schbench," in r)]) + "\n")
    proc, heavy = _run(tmp_path, *(a.format(scenario=scenario, csv=csv) for a in args))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()
    if args[0] == "sim":
        out = json.loads(proc.stdout)
        # the run, the pair, or the sweep: each as its command prints it
        assert {"metric", "change_pct", "panels"} & set(out), out
    assert heavy == []


def test_sim_save_does_import_pyarrow_and_stores_the_run(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(SCENARIO))
    proc, heavy = _run(tmp_path, "sim", str(scenario), "--save", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "recording_id" in json.loads(proc.stdout)
    assert "pyarrow" in heavy
    assert "fastapi" not in heavy
