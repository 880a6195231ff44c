"""POST /api/sim/published against the real uvicorn server: the published cell a scenario's pair
reproduces (the RFC's tables in ../shared/calibration), a bad scenario named, a server without the
tables, and a file it cannot read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import Server

WAKE_AFFINE_8: dict[str, Any] = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "schbench", "messengers": 1, "workers": 8},
    "hints": ["wake_affine"],
    "seed": 1,
    "duration_ms": 300,
}


@pytest.fixture
def tables_at(server: Server) -> Iterator[Any]:
    """Point the running server at another tables file for one test (the route reads the
    setting per request)."""
    before = server.settings.calibration_csv

    def at(path: Path) -> None:
        server.settings.calibration_csv = path

    yield at
    server.settings.calibration_csv = before


def test_the_published_cell_of_a_pair(client: httpx.Client) -> None:
    r = client.post("/api/sim/published", json={"scenario": WAKE_AFFINE_8})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (
        body["tables"] == {"file": "userspace-hinting-rfc.csv", "skipped_rows": 0} and body["reason"] is None
    )
    [cell] = body["cells"]
    assert cell["section"] == "schbench Wakeup Hint" and cell["machine"] == "AMD Zen3 2x64C/128T NPS1"
    assert (cell["tip_value"], cell["value"], cell["published_pct"], cell["better"]) == (
        53.0,
        31.0,
        41.5,
        "lower",
    )
    assert cell["differs"] == [{"field": "duration_ms", "calibration": 30000, "yours": 300}]
    assert (cell["reference"], cell["compared_by"]) == ("userspace-hinting-rfc.csv", "placemap calibrate")
    # the collapse past the LLC: the cell the model disagrees with is served as published
    r16 = client.post(
        "/api/sim/published",
        json={"scenario": {**WAKE_AFFINE_8, "workload": {"kind": "schbench", "workers": 16}}},
    )
    assert r16.json()["cells"][0]["published_pct"] == -3510.95


def test_no_cell_has_a_reason(client: httpx.Client) -> None:
    r = client.post("/api/sim/published", json={"scenario": {**WAKE_AFFINE_8, "features": {"STEAL": True}}})
    assert r.status_code == 200
    assert r.json()["cells"] == [] and r.json()["reason"] == "the published runs have the default features"


def test_a_bad_scenario_is_named(client: httpx.Client) -> None:
    r = client.post("/api/sim/published", json={"scenario": {**WAKE_AFFINE_8, "hints": ["wake_sideways"]}})
    assert r.status_code == 422
    assert r.json()["detail"]["code"] == "bad_scenario" and "hints" in r.json()["detail"]["message"]


def test_without_the_tables_nothing_is_published(
    client: httpx.Client, tables_at: Any, tmp_path: Path
) -> None:
    tables_at(tmp_path / "absent.csv")
    r = client.post("/api/sim/published", json={"scenario": WAKE_AFFINE_8})
    assert r.status_code == 200
    assert r.json() == {"cells": [], "reason": None, "tables": None}
    # a feature change's pair is read against the features' own effects, which are in the repo
    sis_short = {"topology": "spr-2s-224", "workload": {"kind": "netperf", "test": "tcp_rr", "threads": 224},
                 "features": {"SIS_SHORT": True}, "duration_ms": 300}  # fmt: skip
    body = client.post("/api/sim/published", json={"scenario": sis_short}).json()
    assert body["tables"] is None and [c["published_pct"] for c in body["cells"]] == [665.4]


def test_an_unusable_file_is_an_error_naming_it(client: httpx.Client, tables_at: Any, tmp_path: Path) -> None:
    bad = tmp_path / "broken.csv"
    bad.write_text("machine,section\nAMD,x\n")  # no benchmark, x, config... columns
    tables_at(bad)
    r = client.post("/api/sim/published", json={"scenario": WAKE_AFFINE_8})
    assert r.status_code == 500
    detail = r.json()["detail"]
    assert detail["code"] == "published_unreadable" and detail["message"].startswith(
        "broken.csv: no column benchmark"
    )
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    tables_at(binary)
    r = client.post("/api/sim/published", json={"scenario": WAKE_AFFINE_8})
    assert r.status_code == 500 and r.json()["detail"]["message"].startswith("binary.csv: ")
