"""Test helpers: the real Go collector binary (PLACEMAP_COLLECT, the repo's build, or built here), the
real machines' sysfs dumps of ../shared/topologies as it reads them, and a free local port for the
real servers the tests start."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from placemap.settings import REPO_ROOT

TOPOLOGIES = REPO_ROOT.parent / "shared" / "topologies"


def collector_binary(tmp: Path) -> Path:
    """PLACEMAP_COLLECT, else the repo's built binary, else build it (the tests need the real importer)."""
    if env := os.environ.get("PLACEMAP_COLLECT"):
        return Path(env)
    built = REPO_ROOT / "collectors" / "bin" / "placemap-collect"
    if built.is_file():
        return built
    return build_collector(tmp / "placemap-collect")


def build_collector(out: Path) -> Path:
    """placemap-collect built from this checkout into `out`."""
    subprocess.run(
        ["go", "build", "-o", str(out), "./cmd/placemap-collect"],
        cwd=REPO_ROOT / "collectors",
        env={**os.environ, "CGO_ENABLED": "0"},
        check=True,
    )
    return out


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def extract_topologies(dest: Path) -> Path:
    """Every sysfs dump of ../shared/topologies extracted into dest/<name>/ (its extract.sh)."""
    subprocess.run(["sh", str(TOPOLOGIES / "extract.sh"), str(dest)], check=True, capture_output=True)
    return dest


def sysfs_roots(dump: Path) -> list[Path]:
    """The sysfs trees in one extracted dump (a dump may hold several machines)."""
    return sorted(p.parents[3] for p in dump.glob("**/sys/devices/system/cpu"))


def read_topology(collector: Path, root: Path) -> subprocess.CompletedProcess[bytes]:
    """`placemap-collect topology --sysfs-root ROOT --json`: the topology JSON on stdout, or a
    named error and a non-zero exit for a tree the collector refuses."""
    return subprocess.run(
        [str(collector), "topology", "--sysfs-root", str(root), "--json", "--quiet"],
        capture_output=True,
        timeout=60,
        check=False,
    )
