"""Shared fixtures: real trace rows from ../shared, stores on temporary SQLite files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from ftrace_lines import g4_rows

from placemap.schema.events import EVENT_SCHEMA
from placemap.store import Store


@pytest.fixture(scope="session")
def g4_table() -> pa.Table:
    """vm2-hackbench-g4 as one table (parsed from the real ftrace lines)."""
    rows: list[dict[str, Any]] = g4_rows()
    return pa.Table.from_pylist(rows, schema=EVENT_SCHEMA)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "placemap.db")
    yield s
    s.close()
