"""Test helper: the real Go importer binary (PLACEMAP_COLLECT, the repo's build, or built here)."""

from __future__ import annotations

import os
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
    out = tmp / "placemap-collect"
    subprocess.run(
        ["go", "build", "-o", str(out), "./cmd/placemap-collect"],
        cwd=REPO_ROOT / "collectors",
        env={**os.environ, "CGO_ENABLED": "0"},
        check=True,
    )
    return out
