"""bin/placemap from another working directory: openapi, admin import/list/delete, serve."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import httpx
from collector import collector_binary
from ftrace_lines import G4

from placemap.settings import REPO_ROOT

BIN = REPO_ROOT / "bin" / "placemap"


def _run(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PLACEMAP_DB": str(tmp / "cli.db"), "PLACEMAP_COLLECT": str(collector_binary(tmp))}
    return subprocess.run(
        [str(BIN), *args], cwd=tmp, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_openapi_lists_every_route(tmp_path: Path) -> None:
    p = _run(tmp_path, "openapi")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert "/api/recordings/{rid}/state" in doc["paths"]
    assert {"Recording", "Topology", "PlacementState", "Metrics", "Overview"} <= set(
        doc["components"]["schemas"]
    )
    assert not (tmp_path / "cli.db").exists(), "openapi does not touch the database"


def test_admin_import_list_delete(tmp_path: Path) -> None:
    p = _run(tmp_path, "admin", "import", str(G4), "--name", "g4 via cli")
    assert p.returncode == 0, p.stderr
    rid, events = p.stdout.split("\t")[:2]
    assert events == "72578 events"
    listed = _run(tmp_path, "admin", "list").stdout
    assert rid in listed and "g4 via cli" in listed and "ready" in listed
    assert _run(tmp_path, "admin", "delete", rid).returncode == 0
    assert rid not in _run(tmp_path, "admin", "list").stdout
    bad = _run(tmp_path, "admin", "delete", rid)
    assert bad.returncode == 1 and "no recording" in bad.stderr


def test_serve(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PLACEMAP_DB": str(tmp_path / "serve.db")}
    proc = subprocess.Popen(
        [str(BIN), "serve", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "bin/placemap serve did not come up"
                time.sleep(0.2)
        assert r.json()["ok"] is True
        assert (tmp_path / "serve.db").is_file()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
