"""replay.topo.LevelMap's CPUs per LLC, the divisor of each LLC's utilization."""

from __future__ import annotations

from placemap.replay.topo import LevelMap
from placemap.schema.models.topology_schema import Topology


def _cpu(n: int, llc: int | None) -> dict[str, object]:
    return {"cpu": n, "online": llc is not None, "core": n, "llc": llc, "numa_node": 0, "package": 0,
            "smt_siblings": [n]}  # fmt: skip


def test_cpus_per_llc_count_each_llcs_cpus_and_never_divide_by_zero() -> None:
    topo = Topology.model_validate(
        {
            "machine": "t",
            "source": "manual",
            # LLC 0: CPUs 0, 1, 5; LLC 1: CPU 2; LLC 2 lists no CPU; CPU 3 offline (no LLC)
            "cpus": [_cpu(0, 0), _cpu(1, 0), _cpu(2, 1), _cpu(3, None), _cpu(5, 0)],
            "llcs": [{"id": i, "cpus": [], "numa_nodes": [0]} for i in range(3)],
            "numa_nodes": [{"id": 0, "cpus": [0, 1, 2, 3, 5]}],
            "node_distances": [[10]],
        }
    )
    assert LevelMap(topo).llc_cpus.tolist() == [3, 1, 1]
    assert LevelMap(None).llc_cpus.tolist() == [1]
