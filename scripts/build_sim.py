"""Compile the placement simulator (backend/placemap/sim) with mypyc into backend/build/sim-native.

Called by scripts/build-sim [BACKEND_DIR]. Compiles a snapshot of the sources (so that edits made while gcc
runs cannot end up in a build labelled with older hashes), then swaps the new build in whole.
placemap/sim/_native.py decides at import whether the build is fresh enough to use.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# the backend directory whose placemap/sim to compile: this repo's, or a copy (bench/sim_bench.py)
REPO_BACKEND = Path(__file__).resolve().parents[1] / "backend"
BACKEND = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else REPO_BACKEND
sys.path.insert(0, str(BACKEND))
os.environ["PLACEMAP_SIM_PURE"] = "1"  # import the pure modules here, never a build being replaced

from placemap.sim import _native  # noqa: E402

# One C file for all the modules, and link-time optimization: gcc can then inline the small
# functions of one module into another and mypyc's runtime helpers (list and dict item access,
# int arithmetic: separate C files) into the callers, and bind calls inside the shared library
# directly (no interposition, no PLT). Same IEEE arithmetic (no -ffast-math, no -march, so no
# FMA contraction): results stay byte-identical to the pure-Python modules. About 7% faster on
# bench.REFERENCE than a multi-file build without LTO (398k vs 368k events per CPU-second).
MULTI_FILE = False
EXTRA_CFLAGS = ["-flto=auto", "-fno-semantic-interposition", "-fno-plt"]
# Profile-guided: a first build instrumented (-fprofile-generate) runs TRAIN, and the final
# build is laid out and inlined by the branch and call counts it recorded (-fprofile-use).
# Counts decide code layout only, never arithmetic. A failed training run falls back to the
# build without a profile.
PGO_GENERATE = ["-fprofile-generate", "-fprofile-update=single"]
PGO_USE = ["-fprofile-use", "-fprofile-partial-training", "-Wno-missing-profile", "-Wno-coverage-mismatch"]
# A few short runs of each workload kind (the reference hackbench over sockets first, then the
# calibration's threads over pipes), on three machines.
TRAIN = """
import sys
from placemap.sim import engine, bench
from placemap.sim.scenario import run_scenario
if not engine.__file__.endswith(".so"):
    sys.exit("training: the instrumented build was not imported")
Z1, Z4, ICX = "zen3-2s-nps1", "zen3-2s-nps4", "icx-2s"
runs = [bench.REFERENCE,
        {"topology": ICX, "workload": {"kind": "hackbench", "groups": 2, "loops": 50, "mode": "thread", "ipc": "pipe"},
         "seed": 2},
        {"topology": Z1, "workload": {"kind": "schbench", "workers": 32}, "duration_ms": 300},
        {"topology": Z4, "workload": {"kind": "tbench", "clients": 32}, "duration_ms": 20},
        {"topology": ICX, "workload": {"kind": "stream", "threads": 16}, "duration_ms": 60},
        {"topology": Z1, "workload": {"kind": "netperf", "threads": 8}, "duration_ms": 10}]
for sc in runs:
    run_scenario(sc, wall_clock=False)
"""


def _compile(files: list[str], flags: list[str]) -> None:
    from mypyc.build import mypycify  # noqa: PLC0415 - build-time only
    from setuptools import setup  # noqa: PLC0415

    exts = mypycify(files, opt_level="3", multi_file=MULTI_FILE)
    for ext in exts:
        ext.extra_compile_args = [*ext.extra_compile_args, *EXTRA_CFLAGS, *flags]
        ext.extra_link_args = [*ext.extra_link_args, *EXTRA_CFLAGS, *flags]
    setup(
        name="placemap-sim-native",
        ext_modules=exts,
        script_args=["build_ext", "--inplace", "--force", "--parallel", "2", "-q"],
    )


def _train(work: Path) -> bool:
    """Run TRAIN on the build in `work`; True when it ran to the end."""
    env = {k: v for k, v in os.environ.items() if k != _native.PURE_ENV}
    env["PYTHONPATH"] = str(work)
    r = subprocess.run([sys.executable, "-c", TRAIN], cwd=work, env=env, check=False)
    return r.returncode == 0


def main() -> int:
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sim-native-") as tmp:
        work = Path(tmp)
        pkg = work / "placemap" / "sim"
        shutil.copytree(_native.PACKAGE_DIR, pkg, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
        (work / "placemap" / "__init__.py").write_text("")
        hashes = _native.digest(pkg)
        os.chdir(work)
        files = [f"placemap/sim/{rel}" for rel in hashes]
        _compile(files, PGO_GENERATE)
        trained = _train(work)
        if not trained:
            print("build-sim: training run failed; building without a profile", file=sys.stderr)
        _compile(files, PGO_USE if trained else [])
        shared = [p.name.split(".")[0] for p in work.glob("*__mypyc*.so")]
        if len(shared) != 1:
            print(f"build-sim: expected one mypyc shared library, found {shared}", file=sys.stderr)
            return 1
        new = _native.BUILD_DIR.with_name(_native.BUILD_DIR.name + ".new")
        shutil.rmtree(new, ignore_errors=True)
        for so in [*work.glob("*.so"), *(work / "placemap").rglob("*.so")]:
            dst = new / so.relative_to(work)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(so, dst)
        manifest = {"interpreter": _native.interpreter(), "shared_lib": shared[0], "sources": hashes}
        (new / _native.MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    old = _native.BUILD_DIR.with_name(_native.BUILD_DIR.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if _native.BUILD_DIR.exists():
        _native.BUILD_DIR.rename(old)
    new.rename(_native.BUILD_DIR)
    shutil.rmtree(old, ignore_errors=True)
    why = _native.check()
    how = "profile-guided" if trained else "no profile"
    print(f"build-sim: {len(hashes)} modules compiled ({how}) in {time.monotonic() - t0:.0f} s; {why}")
    return 0 if why == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
