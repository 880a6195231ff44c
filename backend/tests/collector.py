"""Test helpers: the real Go collector binary (PLACEMAP_COLLECT, the repo's build, or built here) and a
free local port for the real servers the tests start."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from placemap.settings import REPO_ROOT


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
