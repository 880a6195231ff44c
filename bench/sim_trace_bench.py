"""Trace replay (the simulator's trace workload) on the real traces of ../shared/traces: how fast a
recording becomes a profile and replays, and how close the replay on the recording's own 2-CPU
VM comes to the recorded span, side by side with the importer that reads the same file.

For each trace: the importer (placemap-collect import, the baseline every recording pays), the
profile built from its events (placemap.sim_profile), and the replay on the VM's topology and on
zen3-2s-nps1 (compiled simulator when its build is fresh). Figures: events per second of each
stage, the profile's share of the import's time, simulated scheduler events per CPU-second of
the replays, and replayed/recorded span.
Run: backend/.venv/bin/python bench/sim_trace_bench.py   (writes bench/out/sim_trace_bench.json)
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))
sys.path.insert(0, str(ROOT / "backend" / "tests"))

import pyarrow as pa  # noqa: E402
from collector import collector_binary  # noqa: E402
from vm2 import VM2  # noqa: E402

from placemap.schema.events import EVENT_SCHEMA  # noqa: E402
from placemap.sim import _native  # noqa: E402
from placemap.sim.scenario import parse_scenario, simulate  # noqa: E402
from placemap.sim_profile import profile_from_table  # noqa: E402

TRACES = ROOT.parent / "shared" / "traces"
FILES = [
    "vm2-hackbench-g4.ftrace.txt.gz",
    "vm2-hackbench-g2.perf-script.txt.gz",
    "vm2-hackbench-threads.tracefs-raw/trace.txt.gz",
]


def best_of(n: int, f: Any) -> tuple[float, Any]:
    """Least CPU time of n calls, and the last result."""
    best, out = float("inf"), None
    for _ in range(n):
        c0 = time.process_time()
        out = f()
        best = min(best, time.process_time() - c0)
    return best, out


def main() -> int:
    collector = collector_binary(ROOT / "bench" / "out" / "collector")
    print(f"simulator build: {_native.status}")
    print(
        f"{'trace':<40} {'events':>7} {'import ev/s':>12} {'profile ev/s':>13} {'prof/import':>11} "
        f"{'replay vm2':>10} {'recorded':>9} {'ratio':>6} {'sim ev/CPU-s vm2':>16} {'zen3':>10}"
    )
    rows = []
    for name in FILES:
        path = TRACES / name
        imp_s = float("inf")
        raw = b""
        for _ in range(3):
            w0 = time.perf_counter()  # a child process: its wall time (the machine has 2 CPUs)
            raw = subprocess.run(
                [str(collector), "import", str(path), "--out", "-"], capture_output=True, check=True
            ).stdout
            imp_s = min(imp_s, time.perf_counter() - w0)
        t = pa.ipc.open_stream(raw).read_all()
        table = pa.Table.from_arrays([t.column(f.name) for f in EVENT_SCHEMA], schema=EVENT_SCHEMA)
        prof_s, profile = best_of(3, lambda table=table, name=name: profile_from_table(table, source=name))
        replays = {}
        for topo_name, topo in (("vm2", VM2), ("zen3", "zen3-2s-nps1")):
            wl_spec = {"kind": "trace", "profile": profile}
            sc = parse_scenario({"topology": topo, "workload": wl_spec, "seed": 1, "duration_ms": 60_000})
            cpu_s, (eng, wl) = best_of(3, lambda sc=sc: simulate(sc))
            replays[topo_name] = {
                "runtime_s": wl.metric(eng, eng.env.now),
                "complete": wl.complete(),
                "sched_events": eng.sched_events(),
                "cpu_s": round(cpu_s, 4),
                "events_per_cpu_s": round(eng.sched_events() / cpu_s) if cpu_s > 0 else 0,
            }
        n = table.num_rows
        rec_s = profile["recorded_ns"] / 1e9
        row = {
            "trace": name,
            "events": n,
            "import_wall_s": round(imp_s, 4),
            "profile_cpu_s": round(prof_s, 4),
            "recorded_s": rec_s,
            "skipped": profile["skipped"],
            "replay": replays,
        }
        rows.append(row)
        v, z = replays["vm2"], replays["zen3"]
        print(
            f"{name:<40} {n:>7} {n / imp_s:>12,.0f} {n / prof_s:>13,.0f} {prof_s / imp_s:>11.2f} "
            f"{v['runtime_s']:>10.4f} {rec_s:>9.4f} {v['runtime_s'] / rec_s:>6.3f} "
            f"{v['events_per_cpu_s']:>16,} {z['events_per_cpu_s']:>10,}"
        )
    out = ROOT / "bench" / "out" / "sim_trace_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"simulator": _native.status, "traces": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
