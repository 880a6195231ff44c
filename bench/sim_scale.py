"""The model's scale at the published hackbench length: tip's runtime at `-l 100000` (the RFC
author's `perf bench sched messaging -p -t -l 100000`), 1-16 groups on both machines, against
the published tip runtime (calibration.absolute over the CSV's hackbench tip rows). The
default calibration runs 50 loops, whose runtime is not the published one, so its report leaves
hackbench out of the scale; this is that part, ~2.5 minutes on 2 CPUs, compiled when the build
is fresh (docs/calibration.md, "The scale").
Run: backend/.venv/bin/python bench/sim_scale.py [--json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from placemap.sim import _native
from placemap.sim.calibration import PUBLISHED_HACKBENCH_LOOPS, calibrate, read_rows

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT.parent / "shared" / "calibration" / "userspace-hinting-rfc.csv"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with CSV.open(newline="") as f:
        rows, _skipped = read_rows(f)
    tips = [r for r in rows if r["benchmark"] == "hackbench" and r["config"] == "tip"]
    build = _native.check()
    if not args.json:
        # pure Python is ~20x slower: most of an hour here
        print(f"build: {'compiled' if build == 'ok' else f'pure Python ({build})'}", flush=True)
    t0 = time.perf_counter()
    out = calibrate(tips, jobs=2, hackbench_loops=PUBLISHED_HACKBENCH_LOOPS)
    wall = time.perf_counter() - t0
    if args.json:
        print(
            json.dumps(
                {"absolute": out["absolute"], "build": build, "runs": out["runs"], "wall_s": round(wall, 1)}
            )
        )
        return
    print(f"{out['runs']} runs in {wall:.0f} s")
    print(f"tip's hackbench runtime at -l {PUBLISHED_HACKBENCH_LOOPS}, simulated against published:")
    for a in out["absolute"]:
        print(f"{a['machine']}: median ratio {a['median_ratio']}")
        print(f"  {'groups':>6} {'published s':>12} {'simulated s':>12} {'ratio':>6}")
        for c in a["cells"]:
            print(f"  {c['x']:>6} {c['published']:>12.2f} {c['simulated']:>12.2f} {c['ratio']:>6.2f}")


if __name__ == "__main__":
    main()
