"""The scheduler features against their authors' published effects (placemap.sim.published):
each check's baseline and changed scenario, compiled when the build is fresh, over two worker
processes; prints the model's effect beside the published one and whether the two agree
(same direction beyond 5%, both within 5% otherwise), per check and in total.

Not a calibration: the cost model is fitted to shared/calibration only, and these checks are
here to show where the model's features point the authors' way and where they do not
(docs/calibration.md, "The features against their published effects").
Run: backend/.venv/bin/python bench/sim_features.py [--seed N] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

from placemap.sim import _native
from placemap.sim.calibration import effect_pct
from placemap.sim.published import CHECKS, agrees
from placemap.sim.runner import run_many


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    scenarios = [sc for c in CHECKS for sc in c.scenarios(args.seed)]
    t0 = time.perf_counter()
    results = run_many(scenarios, jobs=2)
    wall = time.perf_counter() - t0
    rows = []
    for i, c in enumerate(CHECKS):
        base, test = results[2 * i], results[2 * i + 1]
        m = base["metric"]
        sim = effect_pct(m["better"], m["value"], test["metric"]["value"])
        rows.append(
            {
                "feature": c.feature,
                "topology": c.topology,
                "workload": dict(c.workload),
                "note": c.note,
                "metric": m["name"],
                "base": m["value"],
                "test": test["metric"]["value"],
                "simulated_pct": round(sim, 2),
                "published_pct": c.published_pct,
                "agrees": agrees(c.published_pct, sim),
                "migrations": [
                    base["counters"]["migrations"]["total"],
                    test["counters"]["migrations"]["total"],
                ],
                "source": c.source,
            }
        )
    n_ok = sum(r["agrees"] for r in rows)
    if args.json:
        print(
            json.dumps(
                {"checks": rows, "agree": n_ok, "total": len(rows), "wall_s": round(wall, 1)}, indent=1
            )
        )
        return
    build = "compiled" if _native.check() == "ok" else "pure Python (build stale or missing)"
    print(f"simulator: {build}; seed {args.seed}")
    print(f"{'feature':36} {'preset':13} {'workload':34} {'published':>10} {'simulated':>10}  agree")
    for r in rows:
        wl = " ".join(f"{k}={v}" for k, v in r["workload"].items() if k != "kind")
        wl = f"{r['workload']['kind']} {wl}"
        print(
            f"{r['feature']:36} {r['topology']:13} {wl[:34]:34} {r['published_pct']:+9.1f}% "
            f"{r['simulated_pct']:+9.1f}%  {'yes' if r['agrees'] else 'NO'}   {r['note']}"
        )
    print(f"agree: {n_ok}/{len(rows)}; {wall:.1f} s wall")


if __name__ == "__main__":
    main()
