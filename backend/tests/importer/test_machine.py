"""The machine given for a trace (placemap.importer.machine): a preset's topology, and the check that
it has every CPU the trace names, online, saying which it lacks and which it has."""

from __future__ import annotations

import pytest

from placemap.importer.machine import machine_mismatch, preset_topology
from placemap.schema.models.topology_schema import Topology


def test_a_preset_s_topology_is_the_simulator_s() -> None:
    body = preset_topology("zen3-2s-nps4")
    assert (
        body["machine"],
        body["source"],
        len(body["cpus"]),
        len(body["llcs"]),
        len(body["numa_nodes"]),
    ) == (
        "zen3-2s-nps4",
        "preset",
        256,
        16,
        8,
    )
    with pytest.raises(KeyError):
        preset_topology("zen9")


def _machine(online: dict[int, bool]) -> Topology:
    return Topology.model_validate(
        {
            "machine": "gappy",
            "source": "manual",
            "cpus": [
                {
                    "cpu": c,
                    "online": on,
                    "core": c,
                    "llc": 0,
                    "numa_node": 0,
                    "package": 0,
                    "smt_siblings": [c],
                }
                for c, on in online.items()
            ],
            "llcs": [{"id": 0, "cpus": sorted(online), "numa_nodes": [0]}],
            "numa_nodes": [{"id": 0, "cpus": sorted(online)}],
            "node_distances": [[10]],
        }
    )


def test_a_cpu_the_machine_lacks_or_has_offline_is_named_with_what_it_has() -> None:
    # CPUs 0-3 and 8-9 online, 4 offline: CPU 4 (offline) and 6 (absent) are both refused
    topo = _machine({0: True, 1: True, 2: True, 3: True, 4: False, 8: True, 9: True})
    assert machine_mismatch({0, 3, 8}, topo) is None
    why = machine_mismatch({0, 4, 6}, topo)
    assert why is not None
    assert why.startswith(
        "the trace names CPU 4, 6, which the machine gappy given for it does not have online"
    )
    assert "(it has CPUs 0-3,8-9 online)" in why
    none = machine_mismatch({0}, _machine({0: False}))
    assert none is not None and "(it has no CPU online)" in none


def test_what_the_machine_has_is_listed_as_a_cpulist_of_at_most_eight_ranges() -> None:
    # every other CPU online: 20 ranges of one CPU each, the first eight listed
    topo = _machine({c: c % 2 == 0 for c in range(40)})
    why = machine_mismatch({1}, topo)
    assert why is not None and "(it has CPUs 0,2,4,6,8,10,12,14,... (12 more ranges) online)" in why
