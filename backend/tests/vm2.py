"""The 2-CPU VM that recorded the vm2-* traces of ../shared/traces (vm2-sysfs-topology.tar.gz):
two CPUs, no SMT, one LLC, one node, in the project's topology schema."""

from __future__ import annotations

from typing import Any

VM2: dict[str, Any] = {
    "machine": "vm2",
    "cpus": [
        {"cpu": c, "online": True, "core": c, "llc": 0, "numa_node": 0, "package": 0, "smt_siblings": [c]}
        for c in (0, 1)
    ],
    "llcs": [{"id": 0, "cpus": [0, 1], "numa_nodes": [0]}],
    "numa_nodes": [{"id": 0, "cpus": [0, 1]}],
    "node_distances": [[10]],
}
