"""Deployment files: docker-compose.yml validated by the real `docker-compose config` (Debian's
docker-compose, installed by `scripts/install --test`; no Docker engine runs here, and `config`
needs none), the settings the host collector depends on, and the Dockerfiles' stage wiring."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
COMPOSE = shutil.which("docker-compose")
needs_compose = pytest.mark.skipif(
    COMPOSE is None,
    reason="docker-compose is not installed (scripts/install --test installs Debian's docker-compose)",
)


def compose(*args: str, env_file: str = "collector.env.example") -> subprocess.CompletedProcess[str]:
    assert COMPOSE is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOSE_")}
    env["PLACEMAP_COLLECTOR_ENV"] = env_file  # the committed example instead of the real (gitignored) token
    return subprocess.run(
        [COMPOSE, "-f", str(ROOT / "docker-compose.yml"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    proc = compose("config")
    assert proc.returncode == 0, proc.stderr
    body: dict[str, Any] = yaml.safe_load(proc.stdout)
    return body


@needs_compose
def test_config_quiet_validates() -> None:
    proc = compose("config", "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""


@needs_compose
def test_missing_token_file_is_an_error() -> None:
    proc = compose("config", "-q", env_file="no-such-collector.env")
    assert proc.returncode != 0
    assert "no-such-collector.env" in proc.stderr


@needs_compose
def test_backend_starts_alone_with_its_volume(config: dict[str, Any]) -> None:
    backend = config["services"]["backend"]
    assert "profiles" not in backend  # `docker compose up` starts it without the collector
    assert "placemap-data:/data:rw" in backend["volumes"]
    assert "placemap-data" in config["volumes"]
    assert backend["ports"] == ["127.0.0.1:8000:8000/tcp"]
    assert Path(backend["build"]["context"], backend["build"]["dockerfile"]).is_file()


@needs_compose
def test_collector_is_privileged_on_the_host(config: dict[str, Any]) -> None:
    col = config["services"]["collector"]
    assert col["profiles"] == ["collector"]
    assert col["privileged"] is True
    assert col["pid"] == "host"
    assert col["network_mode"] == "host"  # the host's hostname names the machine, not the container id
    assert "backend" in col["depends_on"]
    assert Path(col["build"]["context"], col["build"]["dockerfile"]).is_file()
    binds = {v["target"]: v for v in col["volumes"] if isinstance(v, dict) and v.get("type") == "bind"}
    assert binds["/sys"]["source"] == "/sys" and binds["/sys"]["read_only"] is True
    tracing = binds["/sys/kernel/tracing"]
    assert tracing["source"] == "/sys/kernel/tracing"
    assert not tracing.get("read_only", False)  # the collector creates its instance there


@needs_compose
def test_collector_token_comes_from_the_env_file(config: dict[str, Any]) -> None:
    col = config["services"]["collector"]
    example = (ROOT / "collector.env.example").read_text()
    token = re.search(r"^PLACEMAP_TOKEN=(.+)$", example, re.M)
    assert token is not None
    assert col["environment"]["PLACEMAP_TOKEN"] == token.group(1)
    cmd = col["command"]
    assert cmd[:3] == ["live", "--server", "http://127.0.0.1:8000"]  # the backend's published port
    assert "--token" not in cmd  # with the host's PID namespace, argv is visible to every host user


def test_real_token_file_is_ignored_and_example_is_not() -> None:
    ignored = subprocess.run(["git", "check-ignore", "-q", "collector.env"], cwd=ROOT, check=False)
    assert ignored.returncode == 0
    example = subprocess.run(["git", "check-ignore", "-q", "collector.env.example"], cwd=ROOT, check=False)
    assert example.returncode == 1


def stages(dockerfile: Path) -> list[tuple[str, str, str]]:
    """(image, stage name, the stage's instructions) for every FROM, in order."""
    out: list[tuple[str, str, str]] = []
    for part in re.split(r"^(?=FROM )", dockerfile.read_text(), flags=re.M)[1:]:
        m = re.match(r"FROM (\S+)(?: AS (\S+))?", part)
        assert m is not None, part
        out.append((m.group(1), m.group(2) or "", part))
    return out


@pytest.mark.parametrize("path", ["backend/Dockerfile", "collectors/Dockerfile"])
def test_dockerfiles_are_multi_stage_and_wired(path: str) -> None:
    st = stages(ROOT / path)
    assert len(st) >= 2
    names = {name for _, name, _ in st[:-1]}
    assert all(names), "every build stage is named"
    body = (ROOT / path).read_text()
    for ref in re.findall(r"COPY --from=(\S+)", body):
        assert ref in names, f"{path}: COPY --from={ref} names no stage"
    final_image = st[-1][0]
    assert not final_image.startswith("golang") and not final_image.startswith("node")
    assert "CGO_ENABLED=0" in body
    for line in body.splitlines():
        assert re.match(r"^(#.*|\s*|[A-Z]+ .*|\s+.*)$", line), f"{path}: not an instruction: {line!r}"


def test_collector_image_runs_the_binary_it_copies() -> None:
    st = stages(ROOT / "collectors/Dockerfile")
    final = st[-1][2]
    dest = re.search(r"COPY --from=\S+ \S+ (\S+)", final)
    entry = re.search(r'ENTRYPOINT \["([^"]+)"\]', final)
    assert dest is not None and entry is not None
    assert entry.group(1) == dest.group(1)
    assert "distroless/static" in st[-1][0]  # a static binary needs no libc
