"""Shared fixtures: real trace rows from ../shared, stores on temporary SQLite files."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from collector import TOPOLOGIES, collector_binary, read_topology, sysfs_roots
from ftrace_lines import G4, g4_rows

from placemap.schema.events import EVENT_SCHEMA
from placemap.store import Store


@pytest.fixture(scope="session")
def g4_table(tmp_path_factory: pytest.TempPathFactory) -> pa.Table:
    """vm2-hackbench-g4 as one table, as the Go importer reads it (placemap-collect import)."""
    collector = collector_binary(tmp_path_factory.mktemp("collector"))
    proc = subprocess.run(
        [str(collector), "import", str(G4), "--out", "-"], capture_output=True, check=True, timeout=120
    )
    table = pa.ipc.open_stream(proc.stdout).read_all()
    return pa.Table.from_arrays([table.column(f.name) for f in EVENT_SCHEMA], schema=EVENT_SCHEMA)


@pytest.fixture(scope="session")
def g4_parsed_rows() -> list[dict[str, Any]]:
    """The same file parsed here line by line (a cross-check of the importer)."""
    return g4_rows()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "placemap.db")
    yield s
    s.close()


@pytest.fixture(scope="session")
def epyc_7451_topology(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real AMD EPYC 7451 sysfs dump of ../shared/topologies (util-linux's lscpu test data),
    read by the real collector (`placemap-collect topology --json`): its Topology JSON file. Only
    this tarball is extracted (all of them are 645 MB)."""
    tmp = tmp_path_factory.mktemp("epyc_7451")
    tarball = TOPOLOGIES / "util-linux-lscpu" / "x86_64-epyc_7451.tar.gz"
    subprocess.run(["tar", "xzf", str(tarball), "-C", str(tmp)], check=True, capture_output=True, timeout=120)
    (root,) = sysfs_roots(tmp)
    read = read_topology(collector_binary(tmp), root)
    assert read.returncode == 0, read.stderr
    out = tmp / "epyc-7451.json"
    out.write_bytes(read.stdout)
    return out
