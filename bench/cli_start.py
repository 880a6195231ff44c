"""How long the simulator's commands take to start and finish on a small scenario, against the same
commands with the server's stack imported first (FastAPI, the importer's numba kernels, pyarrow: what
every `placemap` command imported at start before session 32), and against a bare interpreter (the
floor). Wall seconds of whole processes, modes interleaved, repeated; the median is printed.

Usage: backend/.venv/bin/python bench/cli_start.py [--reps N]   (scripts/bench cli)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BACKEND = Path(__file__).resolve().parents[1] / "backend"
SCENARIO = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "schbench", "messengers": 1, "workers": 16},
    "hints": ["fork_affine"],
    "features": {"SIS_SHORT": True},
    "seed": 1,
    "duration_ms": 200,
}
# the old start: the server's stack imported before the command runs
EAGER = "import placemap.api, placemap.sim_record, placemap.sim_profile\n"
RUN = "import sys\nfrom placemap.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def wall(code: str, args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *args], cwd=BACKEND, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    reps = ap.parse_args().reps
    with tempfile.TemporaryDirectory() as tmp:
        sc = Path(tmp) / "scenario.json"
        sc.write_text(json.dumps(SCENARIO))
        commands = {
            "sim SCENARIO --json": ["sim", str(sc), "--json"],
            "sim SCENARIO --baseline --json": ["sim", str(sc), "--baseline", "--json"],
            "domains zen3-2s-nps1": ["domains", "zen3-2s-nps1"],
        }
        floor = []
        times: dict[str, dict[str, list[float]]] = {c: {"now": [], "eager": []} for c in commands}
        for _ in range(reps):
            floor.append(wall("pass", []))
            for name, args in commands.items():
                times[name]["now"].append(wall(RUN, args))
                times[name]["eager"].append(wall(EAGER + RUN, args))
    print(f"placemap command start to exit, wall seconds, median of {reps} (interleaved)")
    print(f"  bare interpreter (python -c pass): {statistics.median(floor):.3f} s")
    print(f"  {'command':34} {'now':>8} {'server stack first':>19} {'ratio':>7}")
    for name, t in times.items():
        now, eager = statistics.median(t["now"]), statistics.median(t["eager"])
        print(f"  {name:34} {now:7.3f}s {eager:18.3f}s {eager / now:6.1f}x")


if __name__ == "__main__":
    main()
