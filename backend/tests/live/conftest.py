"""Live ingest fixtures: a real `placemap serve` subprocess (uvicorn, websockets) over a temporary SQLite
file that a test may kill and restart, the collector binary built from this checkout, ingest tokens."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from collector import build_collector, free_port

from placemap.store import Store
from placemap.store.live import LiveStore

END_TIMEOUT_S = 3.0


@dataclass
class LiveServer:
    """`python -m placemap serve` on a fixed port and database, restartable."""

    db: Path
    port: int
    log: Path
    proc: subprocess.Popen[bytes] | None = field(default=None)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self) -> None:
        env = {**os.environ, "PLACEMAP_LIVE_END_TIMEOUT": str(END_TIMEOUT_S)}
        cmd = [sys.executable, "-m", "placemap", "serve", "--db", str(self.db), "--port", str(self.port)]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 90
        with httpx.Client(timeout=1) as c:
            while True:
                assert self.proc.poll() is None, f"server exited: {self.log.read_text()[-2000:]}"
                try:
                    if c.get(f"{self.url}/api/health").status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as in a crash."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60)

    def token(self, name: str = "test") -> tuple[str, str]:
        store = Store(self.db)
        try:
            return LiveStore(store).create_token(name)
        finally:
            store.close()

    def wait_status(self, rid: str, status: str, timeout_s: float = 60) -> dict[str, object]:
        deadline = time.monotonic() + timeout_s
        with self.client() as c:
            while True:
                rec: dict[str, object] = c.get(f"/api/recordings/{rid}").json()
                if rec.get("status") == status:
                    return rec
                assert time.monotonic() < deadline, f"recording {rid} stayed {rec.get('status')}"
                time.sleep(0.1)


def new_server(tmp: Path) -> LiveServer:
    return LiveServer(db=tmp / "placemap.db", port=free_port(), log=tmp / "server.log")


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server per test module (it takes seconds to start on a loaded 2-core machine)."""
    srv = new_server(tmp_path_factory.mktemp("live"))
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def collect_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """placemap-collect built from this checkout (a prebuilt binary may predate `live`)."""
    return build_collector(tmp_path_factory.mktemp("bin") / "placemap-collect")


@pytest.fixture(scope="module")
def topology(collect_bin: Path) -> dict[str, Any]:
    """This machine's topology as the collector's hello carries it."""
    out = subprocess.run([str(collect_bin), "topology", "--json", "--quiet"], capture_output=True, check=True)
    topo: dict[str, Any] = json.loads(out.stdout)
    return topo


def tracefs_reason() -> str | None:
    """Why the real-kernel tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root: the collector creates a tracefs instance"
    for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if Path(d, "instances").is_dir():
            return None
    mounted = subprocess.run(
        ["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"], capture_output=True, check=False
    )
    if mounted.returncode != 0 or not Path("/sys/kernel/tracing/instances").is_dir():
        return f"tracefs cannot be mounted here: {mounted.stderr.decode().strip()}"
    return None


def hackbench() -> str:
    for p in ("/usr/bin/hackbench", "/usr/sbin/hackbench"):
        if Path(p).is_file():
            return p
    pytest.skip("hackbench (Debian rt-tests) is not installed")
