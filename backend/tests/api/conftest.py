"""A real uvicorn server on a free port over a temporary SQLite file, with the real Go importer."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
import uvicorn
from collector import collector_binary, free_port

from placemap.api import create_app
from placemap.settings import Settings

UPLOAD_LIMIT = 1_000_000  # bytes: vm2-hackbench-g4.ftrace.txt.gz (552,818) fits, 1.5 MB does not


@dataclass
class Server:
    url: str
    settings: Settings

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("api")
    settings = Settings(
        db_path=tmp / "placemap.db",
        max_upload_bytes=UPLOAD_LIMIT,
        collector=collector_binary(tmp),
        frontend_dist=tmp / "dist",
    )
    port = free_port()
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning", ws="none")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield Server(f"http://127.0.0.1:{port}", settings)
    srv.should_exit = True
    thread.join(timeout=30)


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def wait_done(client: httpx.Client, rid: str, timeout_s: float = 120) -> dict[str, object]:
    """Poll GET /api/recordings/{id} until the import leaves `importing`."""
    deadline = time.monotonic() + timeout_s
    while True:
        rec: dict[str, object] = client.get(f"/api/recordings/{rid}").json()
        if rec["status"] != "importing":
            return rec
        assert time.monotonic() < deadline, f"import of {rid} did not finish"
        time.sleep(0.1)
