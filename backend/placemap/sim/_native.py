"""Which build of the simulator runs: the compiled one (mypyc, several times faster) when it
is fresh, else the pure-Python modules. Both give byte-identical results.

scripts/build-sim compiles a snapshot of the package's sources with mypyc into
backend/build/sim-native/ (gitignored): the compiled modules under placemap/sim/, mypyc's
shared library at the top, and MANIFEST.json with the sha256 of every source it compiled.
`activate` (called by placemap/sim/__init__.py) puts that directory first on the package's
__path__ only when every source file here still hashes as in the manifest, the interpreter
is the one it was built for and the shared library loads. Any edit to a module therefore
falls back to pure Python until the next build, instead of running stale compiled code.
PLACEMAP_SIM_PURE=1 forces pure Python. NOT_COMPILED says which modules always stay pure.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
BUILD_DIR = PACKAGE_DIR.parents[1] / "build" / "sim-native"
MANIFEST = "MANIFEST.json"
PURE_ENV = "PLACEMAP_SIM_PURE"
# Kept pure: __init__ and this module choose the build; trace.EventLog is subclassed by
# interpreted code (sim_record), which a compiled class does not allow, and is off the hot path
# unless a run is recorded.
NOT_COMPILED = ("__init__.py", "_native.py", "trace.py")

# What activate() decided, for bench output and tests: "compiled" or "pure: <why>".
status = "pure: not activated"


def sources(root: Path = PACKAGE_DIR) -> list[str]:
    """The modules to compile, as paths relative to `root` (the package directory), sorted."""
    out = []
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        if rel in NOT_COMPILED or "__pycache__" in rel:
            continue
        out.append(rel)
    return out


def digest(root: Path = PACKAGE_DIR) -> dict[str, str]:
    """sha256 of every module to compile, by relative path."""
    return {rel: hashlib.sha256((root / rel).read_bytes()).hexdigest() for rel in sources(root)}


def interpreter() -> str:
    """What a compiled build is tied to: the interpreter's version and ABI."""
    return f"{sys.implementation.cache_tag} {sys.version.split()[0]} {sys.platform}"


def check(build_dir: Path = BUILD_DIR) -> str:
    """Return "ok", or why the build at build_dir cannot be used."""
    try:
        manifest = json.loads((build_dir / MANIFEST).read_text())
    except FileNotFoundError:
        return "no compiled build (scripts/build-sim)"
    except (OSError, ValueError) as exc:
        return f"unreadable manifest: {exc}"
    if manifest.get("interpreter") != interpreter():
        return f"built for {manifest.get('interpreter')}, running {interpreter()}"
    want: dict[str, str] = manifest.get("sources", {})
    have = digest()
    changed = sorted(k for k in want.keys() | have.keys() if want.get(k) != have.get(k))
    if changed:
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        return f"stale build: {', '.join(changed[:3])}{more} changed since"
    return "ok"


def activate(path: list[str], build_dir: Path = BUILD_DIR) -> str:
    """Put the compiled build first on the package's __path__ when it is usable; returns and
    records the decision in `status`."""
    global status  # noqa: PLW0603 - one decision per process, read by bench and tests
    if os.environ.get(PURE_ENV):
        status = f"pure: {PURE_ENV} set"
        return status
    why = check(build_dir)
    if why != "ok":
        status = f"pure: {why}"
        return status
    manifest = json.loads((build_dir / MANIFEST).read_text())
    top = str(build_dir)
    if top not in sys.path:
        sys.path.append(top)  # mypyc's shared library is a top-level module
    try:
        importlib.import_module(manifest["shared_lib"])
    except ImportError as exc:
        sys.path.remove(top)
        status = f"pure: compiled build does not load: {exc}"
        return status
    path.insert(0, str(build_dir / "placemap" / "sim"))
    status = "compiled"
    return status
