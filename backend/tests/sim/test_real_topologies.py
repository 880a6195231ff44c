"""The simulator on real machines: every sysfs dump in ../shared/topologies (extract.sh), read by the
real `placemap-collect topology` as a recorded host's topology is, then simulated. The presets are
regular; these are not: ARM clusters, a hybrid Intel part whose E-cores have no SMT sibling, POWER
SMT-4, eight NUMA nodes of two cores, sparse CPU numbers, CPUs on no NUMA node."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from collector import collector_binary, extract_topologies, read_topology, sysfs_roots

from placemap.sim.errors import ScenarioError
from placemap.sim.scenario import parse_scenario, simulate
from placemap.sim.topology import Topology, from_dict
from placemap.sim.trace import EventLog

# the dumps the collector reads: hwloc's linux/ and x86+linux/ sysfs trees, cri-resource-manager's
# and util-linux's (the x86/ ones are cpuid dumps without a sysfs tree); one is refused by the
# collector itself (40intel64-4n10c+pci-conflicts: its L3 maps disagree), which its tests cover
MIN_MACHINES = 20
NODELESS = "hwloc__linux__offline-cpu0-node0"


@pytest.fixture(scope="module")
def machines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """name -> topology JSON, one per sysfs tree the collector reads (a tarball may hold several)."""
    dest = extract_topologies(tmp_path_factory.mktemp("topologies"))
    collector = collector_binary(tmp_path_factory.mktemp("bin"))
    out: dict[str, dict[str, Any]] = {}
    for dump in sorted(dest.iterdir()):
        roots = sysfs_roots(dump)
        for i, root in enumerate(roots):
            run = read_topology(collector, root)
            if run.returncode == 0:
                out[dump.name if len(roots) == 1 else f"{dump.name}#{i}"] = json.loads(run.stdout)
    assert len(out) >= MIN_MACHINES, sorted(out)
    return out


def _levels_present(t: Topology) -> set[str]:
    """The migration levels two online CPUs of this machine can be apart by."""
    cpus = t.cpus
    present: set[str] = set()
    for a in cpus:
        for b in cpus:
            if a == b:
                continue
            if b in t.siblings[a]:
                present.add("smt")
            elif t.llc_of[a] == t.llc_of[b]:
                present.add("llc")
            elif t.node_of[a] == t.node_of[b]:
                present.add("pkg")
            else:
                present.add("numa")
    return present


def _run(
    topo: Mapping[str, Any], workload: dict[str, Any], hints: list[str], ms: int
) -> tuple[Any, Any, EventLog]:
    sc = parse_scenario(
        {"topology": topo, "workload": workload, "hints": hints, "seed": 1, "duration_ms": ms}
    )
    log = EventLog()
    eng, wl = simulate(sc, log)
    return eng, wl, log


def test_every_real_machine_simulates(machines: dict[str, dict[str, Any]]) -> None:
    """hackbench, schbench and Stream run to their end on each machine, with hints; every event
    is on an online CPU of that machine, and no migration is at a level the machine lacks (no
    SMT move on a machine without SMT, no NUMA move on one node)."""
    checked = 0
    for name, data in machines.items():
        if name == NODELESS:
            continue
        t = from_dict(data)
        online = set(t.cpus)
        levels = _levels_present(t)
        for workload, hints, ms in (
            ({"kind": "hackbench", "groups": 2, "ipc": "pipe", "loops": 20}, ["wake_hold"], 2000),
            (
                {"kind": "schbench", "workers": 8, "cputime_us": 2000, "sleeptime_us": 2000},
                ["wake_affine"],
                300,
            ),
            ({"kind": "stream", "threads": 4}, ["fork_spread"], 50),
        ):
            eng, wl, log = _run(data, workload, hints, ms)
            what = f"{name}: {workload['kind']}"
            assert wl.complete(), what
            assert wl.metric(eng, eng.env.now) > 0, what
            used = {
                c
                for col in ("cpu", "target_cpu", "orig_cpu", "dest_cpu")
                for c in log.cols[col]
                if c is not None
            }
            assert used <= online, f"{what}: events on CPUs {sorted(used - online)}, not online there"
            by_level = eng.counters(eng.env.now)["migrations"]["by_level"]
            moved = {lvl for lvl, n in by_level.items() if n}
            assert moved <= levels, (
                f"{what}: migrations at {sorted(moved - levels)}; the machine has {sorted(levels)}"
            )
        checked += 1
    assert checked >= MIN_MACHINES - 1


def test_the_real_machines_vary(machines: dict[str, dict[str, Any]]) -> None:
    """The set is worth running: it holds machines without SMT, with SMT-4, with one NUMA node and
    with eight, and with a single CPU per LLC (the shapes the presets never have)."""
    topos = [from_dict(d) for n, d in machines.items() if n != NODELESS]
    smt = {max(len(t.siblings[c]) for c in t.cpus) for t in topos}
    nodes = {t.nr_nodes for t in topos}
    assert {1, 2, 4} <= smt, smt
    assert {1, 8} <= nodes, nodes
    assert any(min(len(cs) for cs in t.llc_cpus if cs) == 1 for t in topos)


def test_an_online_cpu_on_no_node_is_named(machines: dict[str, dict[str, Any]]) -> None:
    """hwloc's offline-cpu0-node0: sysfs has no node0, so CPUs 4, 6, ... 20 are online on no NUMA
    node (the collector records numa_node null and says so in a note). The simulator cannot place
    them in the distance table: a named error on the first such CPU, not a traceback."""
    data = machines[NODELESS]
    with pytest.raises(ScenarioError) as err:
        from_dict(data)
    assert err.value.field == "topology.cpus[4].numa_node"
    assert "CPU 4 is online but on no NUMA node" in str(err.value)
