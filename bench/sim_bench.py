"""Simulator speed (issue 3): simulated scheduler events (wakeups + switches + migrations) per
second, where the time goes, and the wall time of a full `placemap calibrate`.

Prints side by side, measured in this run (each variant in its own process):
  - the reference scenario (bench.REFERENCE: `hackbench -g 8` on zen3-2s-nps1, hackbench's
    defaults otherwise: processes, sockets, 100 loops) and the one before session 9
    (bench.PIPE_REFERENCE: pipes, 200 loops), each on a process's first run: events per
    second of wall time and per CPU-second, best of --repeats, for
      baseline: the simulator as of BASELINE_COMMIT (before the speed work; pure Python),
      pure:     today's sources as pure Python (PLACEMAP_SIM_PURE=1),
      compiled: today's sources compiled by scripts/build-sim (mypyc; when the repo's build
                is stale, a snapshot of the sources under bench/out/sim-now is compiled);
  - where the time goes: a cProfile summary of the pure run, and of the compiled one (invisible
    to cProfile) a perf sampling profile when `perf` is installed: each sample counts for the
    innermost compiled function on its stack (the interpreter and runtime helpers it called
    included), summed per function and per module;
  - the full calibration (every cell of shared/calibration, seed 1): compiled, over a pool of
    --jobs processes, wall and CPU time. Its baseline (the pre-work code, one process) takes
    ~10 minutes, so it runs on every --subset-step-th cell only and is extrapolated by the
    ratio of full to subset time of today's code (stated in the output).
Run: backend/.venv/bin/python bench/sim_bench.py [--repeats 3] [--subset-step 10] [--no-build]
     [--no-calibrate] [--no-perf]
Writes bench/out/sim_bench.json too.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
BACKEND = ROOT / "backend"
BASELINE_COMMIT = "9995109"  # main before the simulator speed work (pure Python, no pool)
CSV = ROOT.parent / "shared" / "calibration" / "userspace-hinting-rfc.csv"
TARGET = 1_000_000  # events per second, the target

MEASURE = """
import json, sys
from placemap.sim import bench
try:
    from placemap.sim import _native
    status = _native.status
except ImportError:
    status = "pure (no compiled build in this version)"
r = bench.measure(json.loads(sys.argv[2]), profile=sys.argv[1] == "profile", top=15)
r["status"] = status
print(json.dumps(r))
"""

# the same in one process: the first run (discarded) builds the sched domains and makes the
# modules' first calls; the second is measured (the speed of every run after the first)
MEASURE_SECOND = """
import json, sys
from placemap.sim import bench
bench.measure(json.loads(sys.argv[2]))
r = bench.measure(json.loads(sys.argv[2]))
r["status"] = "compiled, a process's second run"
print(json.dumps(r))
"""

# what a first run pays once: the sched domains' build of the scenario's topology (cached for
# the process's later runs), first in a fresh process and then warm
DOMAINS_BUILD = """
import json, sys, time
from placemap.sim.domains import SchedDomains
from placemap.sim.scenario import parse_scenario
sc = parse_scenario(json.loads(sys.argv[2]))
t = []
for _ in range(50):
    t0 = time.perf_counter()
    SchedDomains(sc.topology, no_mc=sc.features.NO_MC)
    t.append(time.perf_counter() - t0)
print(json.dumps({"first_ms": t[0] * 1e3, "warm_ms": min(t[1:]) * 1e3}))
"""

CELLS = """
import csv, json, resource, sys, time
from placemap.sim import calibration as C
from placemap.sim.scenario import run_scenario
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
keys = C.plan(rows)[:: int(sys.argv[2])]
c0, w0 = time.process_time(), time.perf_counter()
for k in keys:
    run_scenario(C.scenario_for(k, 1), wall_clock=False)
print(json.dumps({"cells": len(keys), "cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0}))
"""

CALIBRATE = """
import csv, json, resource, sys, time
from placemap.sim import _native
from placemap.sim.calibration import calibrate, plan
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
w0 = time.perf_counter()
out = calibrate(rows, jobs=int(sys.argv[2]))
wall = time.perf_counter() - w0
ru = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = sum(r.ru_utime + r.ru_stime for r in ru)
print(json.dumps({"cells": len(plan(rows)), "runs": out["runs"], "wall_s": wall, "cpu_s": cpu,
                  "status": _native.status, "overall": out["overall"]}))
"""


def baseline_tree() -> Path:
    """The simulator as of BASELINE_COMMIT, unpacked under bench/out (once)."""
    dst = OUT / f"sim-baseline-{BASELINE_COMMIT}"
    if not (dst / "backend" / "placemap" / "sim" / "engine.py").exists():
        tar = subprocess.run(
            ["git", "archive", BASELINE_COMMIT, "backend/placemap/__init__.py", "backend/placemap/sim"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
        with tarfile.open(fileobj=BytesIO(tar)) as tf:
            tf.extractall(dst, filter="data")
    return dst / "backend"


# the reference scenario three times in one process (the first builds the sched domains)
LOOP = """
from placemap.sim import bench
from placemap.sim.scenario import parse_scenario, simulate
sc = parse_scenario(bench.REFERENCE)
for _ in range(3):
    simulate(sc)
"""


PERF_RECORD = ("perf", "record", "-q", "-F", "1000", "--call-graph", "dwarf,16384")


def perf_profile(tree: Path, top: int = 15) -> dict[str, Any] | None:
    """Sampling profile of the compiled build (perf record with DWARF call stacks): shares of
    samples by the innermost compiled function (CPyDef_<module>___<function>) on the stack.
    None when perf is missing or refuses (perf_event_paranoid)."""
    if shutil.which("perf") is None:
        return None
    env = {k: v for k, v in os.environ.items() if k != "PLACEMAP_SIM_PURE"}
    env["PYTHONPATH"] = str(tree)
    with tempfile.TemporaryDirectory(prefix="sim-perf-") as tmp:
        data = str(Path(tmp) / "perf.data")
        rec = subprocess.run(
            [*PERF_RECORD, "-o", data, sys.executable, "-c", LOOP],
            cwd=tree,
            env=env,
            capture_output=True,
            check=False,
        )
        if rec.returncode != 0:
            return None
        script = subprocess.run(
            ["perf", "script", "-i", data], capture_output=True, text=True, check=False
        ).stdout
    by_fn: collections.Counter[str] = collections.Counter()
    total = 0
    frames: list[str] = []
    for line in [*script.splitlines(), ""]:
        if line.strip() and line[0] in " \t":
            frames.append(line)
            continue
        if frames:
            total += 1
            m = next((m for f in frames if (m := re.search(r"CPyDef_(\w+)", f))), None)
            by_fn[m.group(1) if m else "(outside compiled code: interpreter start, imports)"] += 1
        frames = []
    if not total:
        return None
    by_mod: collections.Counter[str] = collections.Counter()
    for fn, n in by_fn.items():
        by_mod[fn.split("___")[0]] += n
    return {
        "samples": total,
        "modules": [{"module": k, "share": round(v / total, 3)} for k, v in by_mod.most_common(top)],
        "functions": [{"function": k, "share": round(v / total, 3)} for k, v in by_fn.most_common(top)],
    }


CHECK = """
import json
from placemap.sim import _native
print(json.dumps({"check": _native.check()}))
"""


def snapshot() -> Path:
    """A copy of today's simulator sources under bench/out (with their own build directory)."""
    dst = OUT / "sim-now" / "backend"
    shutil.rmtree(dst / "placemap", ignore_errors=True)
    (dst / "placemap").mkdir(parents=True)
    shutil.copy2(BACKEND / "placemap" / "__init__.py", dst / "placemap" / "__init__.py")
    shutil.copytree(
        BACKEND / "placemap" / "sim", dst / "placemap" / "sim", ignore=shutil.ignore_patterns("__pycache__")
    )
    return dst


def child(code: str, args: list[str], tree: Path, pure: bool) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PLACEMAP_SIM_PURE"}
    env["PYTHONPATH"] = str(tree)
    if pure:
        env["PLACEMAP_SIM_PURE"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=tree, env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def best(code: str, tree: Path, pure: bool, repeats: int, scenario: dict[str, Any]) -> dict[str, Any]:
    runs = [child(code, ["plain", json.dumps(scenario)], tree, pure) for _ in range(repeats)]
    r = min(runs, key=lambda x: x["cpu_s"])
    r["events_per_wall_s"] = round(r["sched_events"] / r["wall_s"]) if r["wall_s"] else 0
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--subset-step", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-build", action="store_true", help="do not run scripts/build-sim when stale")
    ap.add_argument("--no-calibrate", action="store_true", help="skip the full calibrate and its baseline")
    ap.add_argument("--no-perf", action="store_true", help="skip the perf profile of the compiled build")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(BACKEND))
    from placemap.sim import _native  # noqa: PLC0415 - after the path is set

    report: dict[str, Any] = {"target_events_per_s": TARGET, "cpus": os.cpu_count(), "load": os.getloadavg()}
    tree = BACKEND
    why = _native.check()
    if why != "ok" and not args.no_build:
        # compile a snapshot, so that edits made meanwhile (others work in this tree) cannot
        # leave the build stale before it is measured
        tree = snapshot()
        t0 = time.perf_counter()
        subprocess.run(
            [str(ROOT / "scripts" / "build-sim"), str(tree)], check=False, stdout=subprocess.DEVNULL
        )
        report["build_s"] = round(time.perf_counter() - t0, 1)
        why = child(CHECK, [], tree, False)["check"]
    report["compiled_build"] = why
    report["sources"] = str(tree)
    print(
        f"machine: {os.cpu_count()} CPUs, load average {report['load'][0]:.1f}; sources {tree}; "
        f"compiled build: {why}"
    )

    base = baseline_tree()
    from placemap.sim.bench import PIPE_REFERENCE, REFERENCE  # noqa: PLC0415 - after the path is set

    for key, scenario, text in (
        ("reference", REFERENCE, REFERENCE_TEXT),
        ("pipe_reference", PIPE_REFERENCE, PIPE_REFERENCE_TEXT),
    ):
        print(f"\n{text} (best of {args.repeats}, a process's first run):")
        print(
            f"{'variant':<10} {'events':>8} {'cpu_s':>7} {'wall_s':>7} {'events/cpu-s':>13} {'events/wall-s':>14}"
        )
        variants: dict[str, dict[str, Any]] = {}
        for name, src, pure in (("baseline", base, True), ("pure", tree, True), ("compiled", tree, False)):
            if name == "compiled" and why != "ok":
                print(f"{name:<10} skipped: {why}")
                continue
            r = best(MEASURE, src, pure, args.repeats, scenario)
            variants[name] = r
            print(
                f"{name:<10} {r['sched_events']:>8} {r['cpu_s']:>7.3f} {r['wall_s']:>7.3f} "
                f"{r['events_per_cpu_s']:>13,} {r['events_per_wall_s']:>14,}  {r['status']}"
            )
        b = variants["baseline"]["events_per_cpu_s"]
        for r in variants.values():
            r["speedup_vs_baseline_cpu"] = round(r["events_per_cpu_s"] / b, 2)
        fastest = max(variants.values(), key=lambda r: r["events_per_cpu_s"])
        print(
            "speed-up per CPU-second vs baseline: "
            + ", ".join(f"{n} x{r['speedup_vs_baseline_cpu']}" for n, r in variants.items())
            + f"; target {TARGET:,}/s: {fastest['events_per_cpu_s'] / TARGET:.0%} of it (first runs)"
        )
        if "compiled" in variants:
            # beside the headline, not instead of it: the first run is what one `placemap sim` pays
            r2 = best(MEASURE_SECOND, tree, False, args.repeats, scenario)
            variants["compiled_second_run"] = r2
            print(
                f"a compiled process's second run (best of {args.repeats}): {r2['events_per_cpu_s']:,} "
                f"events/CPU-s, x{r2['events_per_cpu_s'] / variants['compiled']['events_per_cpu_s']:.2f} "
                "its first run's (the domains' build and the modules' first calls are the difference)"
            )
            builds = [
                child(DOMAINS_BUILD, ["plain", json.dumps(scenario)], tree, False)
                for _ in range(args.repeats)
            ]
            db = min(builds, key=lambda x: x["first_ms"])
            variants["compiled_domains_build"] = db
            print(
                f"  a first run's one-time costs: the sched domains' build {db['first_ms']:.2f} ms in a "
                f"fresh process ({db['warm_ms']:.2f} ms warm; best of {args.repeats}); page faults "
                f"{variants['compiled']['page_faults']} in the first run, {r2['page_faults']} in the second"
            )
        report[key] = variants

    prof = child(MEASURE, ["profile", json.dumps(REFERENCE)], tree, True)
    print(f"\nwhere the time goes, reference (pure Python under cProfile, {prof['cpu_s']} CPU-s; own time):")
    for row in prof["profile"]:
        print(f"  {row['share']:>6.1%} {row['own_s']:>7.3f}s {row['calls']:>9} {row['function']}")
    report["profile"] = prof["profile"]

    if why == "ok" and not args.no_perf:
        pp = perf_profile(tree)
        if pp is None:
            print("\ncompiled profile: perf missing or not permitted")
        else:
            print(f"\nwhere the time goes, compiled (perf, {pp['samples']} samples, 3 reference runs):")
            print(
                "  by module:   " + ", ".join(f"{m['module']} {m['share']:.1%}" for m in pp["modules"][:10])
            )
            for row in pp["functions"]:
                print(f"  {row['share']:>6.1%} {row['function']}")
        report["profile_compiled"] = pp

    if why == "ok" and not args.no_calibrate:
        full = child(CALIBRATE, [str(CSV), str(args.jobs)], tree, False)
        now_sub = child(CELLS, [str(CSV), str(args.subset_step)], tree, False)
        base_sub = child(CELLS, [str(CSV), str(args.subset_step)], base, True)
        scale = full["cpu_s"] / now_sub["cpu_s"]
        base_full_cpu = base_sub["cpu_s"] * scale
        print(
            f"\nfull calibrate ({full['cells']} cells, {full['runs']} runs), compiled, "
            f"{args.jobs} processes: wall {full['wall_s']:.1f} s, CPU {full['cpu_s']:.1f} s "
            f"({full['status']})"
        )
        print(
            f"baseline (pre-work code, one process): {base_sub['cpu_s']:.1f} CPU-s on "
            f"{base_sub['cells']} cells (every {args.subset_step}th); today's code takes "
            f"{now_sub['cpu_s']:.1f} CPU-s on them and "
            f"{full['cpu_s']:.1f} on all, so the baseline's full run is ~{base_full_cpu:.0f} CPU-s "
            f"(extrapolated, x{scale:.1f}), its wall time on an idle core the same"
        )
        load = os.getloadavg()[0]
        print(
            f"CPU-s baseline / today: x{base_full_cpu / full['cpu_s']:.1f}; today's wall time with the "
            f"machine to itself: about {full['cpu_s'] / args.jobs:.0f} s (CPU-s / {args.jobs} processes); "
            f"measured here {full['wall_s']:.0f} s at load average {load:.1f} on {os.cpu_count()} CPUs"
        )
        report["calibrate"] = {
            "full": full,
            "subset_now": now_sub,
            "subset_baseline": base_sub,
            "baseline_full_cpu_s_extrapolated": round(base_full_cpu, 1),
        }
    (OUT / "sim_bench.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0


REFERENCE_TEXT = (
    "reference: hackbench -g 8 (processes, sockets, 100 loops), zen3-2s-nps1, seed 1 (bench.REFERENCE)"
)
PIPE_REFERENCE_TEXT = (
    "reference before session 9: hackbench -g 8 -p -l 200 (pipes), zen3-2s-nps1, seed 1 (bench.PIPE_REFERENCE)"
)

if __name__ == "__main__":
    sys.exit(main())
