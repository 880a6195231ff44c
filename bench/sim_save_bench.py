"""What `placemap sim --save` costs over a plain run: CPU seconds, events stored per CPU-second and
peak RSS of (a) run_scenario (the baseline, measured in the same run), (b) the same run with the
progress hook the API's jobs use, (c) the run saved as a recording into a fresh SQLite file,
(d) the same save without the placement reasons (sim_reasons; what a save cost before session 26:
the log's wakeup, fork and migrate hooks put back to EventLog's), to show what keeping them costs.

Each measurement runs in its own process (peak RSS is per process), modes interleaved, repeated;
the median is printed. Usage: backend/.venv/bin/python bench/sim_save_bench.py [--reps N]
(scripts/bench simsave).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from placemap.sim import _native
from placemap.sim.scenario import run_scenario
from placemap import sim_record
from placemap.sim.trace import EventLog
from placemap.sim_record import run
from placemap.store import Store

SCENARIOS: dict[str, dict[str, Any]] = {
    "hackbench icx-2s g2 l300": {
        "topology": "icx-2s",
        "workload": {"kind": "hackbench", "groups": 2, "loops": 300},
        "seed": 7,
        "duration_ms": 1000,
    },
    "schbench zen3 m2 w32 2s": {
        "topology": "zen3-2s-nps1",
        "workload": {"kind": "schbench", "messengers": 2, "workers": 32},
        "seed": 1,
        "duration_ms": 2000,
    },
}
MODES = ("plain", "progress", "save", "save_noreasons")


def child(mode: str, name: str) -> None:
    sc = SCENARIOS[name]
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db") if mode.startswith("save") else None
        if mode == "save_noreasons":
            sim_record._StreamingLog.wakeup = EventLog.wakeup  # type: ignore[method-assign]
            sim_record._StreamingLog.wakeup_new = EventLog.wakeup_new  # type: ignore[method-assign]
            sim_record._StreamingLog.migrate = EventLog.migrate  # type: ignore[method-assign]
        c0, w0 = time.process_time(), time.perf_counter()
        if mode == "plain":
            result = run_scenario(sc, wall_clock=False)
        else:
            result = run(sc, store=store, wall_clock=False, on_progress=lambda _f: None)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        rows = 0
        if store is not None:
            rec = store.get_recording(result["recording_id"])
            assert rec is not None and rec.status == "ready", rec
            rows = rec.event_count
            store.close()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = {"cpu_s": cpu, "wall_s": wall, "rss_kb": rss, "rows": rows, "sched_events": result["sim"]["events"]}
    out["build"] = _native.status
    print(json.dumps(out))


def measure(mode: str, name: str) -> dict[str, Any]:
    p = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--scenario", name],
        capture_output=True,
        text=True,
        check=True,
    )
    got: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    return got


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--child")
    ap.add_argument("--scenario")
    a = ap.parse_args()
    if a.child:
        child(a.child, a.scenario)
        return
    for name in SCENARIOS:
        runs: dict[str, list[dict[str, Any]]] = {m: [] for m in MODES}
        for _ in range(a.reps):
            for m in MODES:  # interleaved: a load change hits every mode alike
                runs[m].append(measure(m, name))
        base = statistics.median(r["cpu_s"] for r in runs["plain"])
        rows = runs["save"][0]["rows"]
        print(f"{name}: {rows} events stored, {runs['plain'][0]['sched_events']} sched events, "
              f"sim build: {runs['plain'][0]['build']}")  # fmt: skip
        for m in MODES:
            cpu = statistics.median(r["cpu_s"] for r in runs[m])
            wall = statistics.median(r["wall_s"] for r in runs[m])
            rss = statistics.median(r["rss_kb"] for r in runs[m]) / 1024
            print(f"  {m:14s} cpu {cpu:7.3f} s ({cpu / base:5.2f}x plain)  wall {wall:7.3f} s  "
                  f"{rows / cpu:10.0f} events/cpu-s  peak rss {rss:6.0f} MiB")  # fmt: skip


if __name__ == "__main__":
    main()
