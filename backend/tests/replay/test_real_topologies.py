"""Classification with real machines' topologies: sysfs dumps from ../shared/topologies (extract.sh),
read by `placemap-collect topology`, with the real g4 events (which use CPUs 0 and 1 only, so every
migration takes the level of that pair on the machine)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from collector import collector_binary, extract_topologies, read_topology, sysfs_roots
from test_helpers import ingest

from placemap.schema.models.topology_schema import Topology
from placemap.store import Store


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_topologies(tmp_path_factory.mktemp("topologies"))


def _topology(dumps: Path, name: str, collector: Path) -> Topology:
    roots = sysfs_roots(dumps / name)
    assert len(roots) == 1, f"{name}: expected one sysfs tree, found {roots}"
    run = read_topology(collector, roots[0])
    assert run.returncode == 0, run.stderr
    return Topology.model_validate(json.loads(run.stdout))


@pytest.mark.parametrize(
    ("dump", "level", "why"),
    [
        (
            "hwloc__linux__20em64t-hybrid-1p6c2t+2ca4co1t",
            "smt",
            "CPUs 0 and 1 are the two threads of one core",
        ),
        ("hwloc__linux__32intel64-2p8co2t+8ve", "llc", "2 sockets; CPUs 0 and 1 are cores of socket 0's L3"),
        ("hwloc__linux__16amd64-8n2c", "node", "8 nodes of 2 cores, each core its own L2 as LLC"),
        ("util-linux-lscpu__x86_64-64cpu", "cross_node", "CPU 1 is on another NUMA node than CPU 0"),
    ],
)
def test_g4_on_a_real_machine(  # noqa: PLR0917 - pytest fixtures and parameters
    store: Store, g4_table: pa.Table, dumps: Path, tmp_path: Path, dump: str, level: str, why: str
) -> None:
    topology = _topology(dumps, dump, collector_binary(tmp_path))
    rid = ingest(store, g4_table, topology=topology)
    blob = store.derived(rid, "metrics.json")
    assert blob is not None
    m = json.loads(blob)
    expected = {lvl: 629 if lvl == level else 0 for lvl in ("smt", "llc", "node", "cross_node")}
    assert m["migrations"]["by_level"] == expected, why


def test_offline_cpu0_counts_migrations_without_a_level(
    store: Store, g4_table: pa.Table, dumps: Path, tmp_path: Path
) -> None:
    topology = _topology(dumps, "hwloc__linux__offline-cpu0-node0", collector_binary(tmp_path))
    assert not next(c for c in topology.cpus if c.cpu == 0).online
    rid = ingest(store, g4_table, topology=topology)
    blob = store.derived(rid, "metrics.json")
    assert blob is not None
    m = json.loads(blob)
    assert m["migrations"]["total"] == 629, "every migration is counted"
    assert sum(m["migrations"]["by_level"].values()) == 0, "CPU 0's place is unknown: no level is made up"
