"""Machine topology for the simulator: the presets of placement-model.md section 1 and a loader
for a topology dict in the project's schema (schemas/jsonschema/topology.schema.json).

A `Topology` is plain immutable data indexed by CPU number: core, LLC, NUMA node (dense index)
and package of every CPU, plus the SLIT distance matrix. Offline CPUs keep their number but are
absent from every span, so the policies never see them.

Distances of the presets are not in the placement model; they are the SLIT tables such machines
report: AMD Zen NPS1 10/32 (NPS2/NPS4 add 12 between nodes of one socket), two-socket Intel
10/21, and for the 8-socket Haswell-EX a glueless twisted ladder (every socket linked to three
others, two hops at most) reported as 10/21/31.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from placemap.sim.errors import ScenarioError

# The largest NR_CPUS any kernel builds with (x86_64 MAXSMP; the topology schema's bound on a CPU
# number): CPU numbers are below it, and a topology's per-CPU tables are sized by the largest one.
NR_CPUS_MAX: Final = 8192

# Upstream default (include/linux/topology.h RECLAIM_DISTANCE); AMD Zen raises it to 32
# (arch/x86/kernel/cpu/amd.c) so that a 2-socket EPYC keeps fork/exec balancing across sockets.
RECLAIM_DISTANCE = 30
RECLAIM_DISTANCE_ZEN = 32


@dataclass(frozen=True, slots=True)
class Topology:
    """CPU topology as the simulator consumes it (all tuples indexed by CPU number)."""

    name: str
    online: tuple[bool, ...]
    core_of: tuple[int, ...]
    llc_of: tuple[int, ...]
    node_of: tuple[int, ...]  # dense node index into node_ids / distances
    package_of: tuple[int, ...]
    siblings: tuple[tuple[int, ...], ...]
    llc_cpus: tuple[tuple[int, ...], ...]
    node_cpus: tuple[tuple[int, ...], ...]
    node_ids: tuple[int, ...]  # sysfs node id of each dense node index
    distances: tuple[tuple[int, ...], ...]
    llc_size_kb: tuple[int, ...]
    node_reclaim_distance: int = RECLAIM_DISTANCE

    @property
    def nr_cpus(self) -> int:
        """Number of CPU slots (the highest CPU number plus one; offline CPUs included)."""
        return len(self.online)

    @property
    def cpus(self) -> tuple[int, ...]:
        """Online CPUs, ascending."""
        return tuple(c for c in range(len(self.online)) if self.online[c])

    @property
    def nr_llcs(self) -> int:
        return len(self.llc_cpus)

    @property
    def nr_nodes(self) -> int:
        return len(self.node_cpus)

    def package_cpus(self, package: int) -> tuple[int, ...]:
        return tuple(c for c in self.cpus if self.package_of[c] == package)

    def to_dict(self) -> dict[str, Any]:
        """The topology in the project's schema (source "preset")."""
        cpus = [
            {
                "cpu": c,
                "online": self.online[c],
                "core": self.core_of[c],
                "llc": self.llc_of[c],
                "numa_node": self.node_ids[self.node_of[c]],
                "package": self.package_of[c],
                "smt_siblings": list(self.siblings[c]),
            }
            for c in range(self.nr_cpus)
        ]
        llcs = [
            {
                "id": i,
                "cpus": list(cs),
                "numa_nodes": sorted({self.node_ids[self.node_of[c]] for c in cs}),
                "size_kb": self.llc_size_kb[i],
                "package": self.package_of[cs[0]],
            }
            for i, cs in enumerate(self.llc_cpus)
        ]
        nodes = [{"id": self.node_ids[i], "cpus": list(cs)} for i, cs in enumerate(self.node_cpus)]
        return {
            "machine": self.name,
            "source": "preset",
            "cpus": cpus,
            "llcs": llcs,
            "numa_nodes": nodes,
            "node_distances": [list(r) for r in self.distances],
        }


def _build(
    name: str,
    *,
    packages: int,
    cores_per_package: int,
    threads: int,
    cores_per_llc: int,
    nodes_per_package: int,
    llc_kb: int,
    distance: Sequence[Sequence[int]],
    reclaim: int = RECLAIM_DISTANCE,
) -> Topology:
    """Linux x86 enumeration: first threads of every core, package by package, then the second
    threads in the same order (sibling of CPU N is N + total cores)."""
    total_cores = packages * cores_per_package
    n = total_cores * threads
    core_of = [c % total_cores for c in range(n)]
    package_of = [core_of[c] // cores_per_package for c in range(n)]
    llc_of = [core_of[c] // cores_per_llc for c in range(n)]
    cores_per_node = cores_per_package // nodes_per_package
    node_of = [core_of[c] // cores_per_node for c in range(n)]
    siblings = tuple(tuple(core_of[c] + t * total_cores for t in range(threads)) for c in range(n))
    nr_llcs = total_cores // cores_per_llc
    nr_nodes = packages * nodes_per_package
    return Topology(
        name=name,
        online=(True,) * n,
        core_of=tuple(core_of),
        llc_of=tuple(llc_of),
        node_of=tuple(node_of),
        package_of=tuple(package_of),
        siblings=siblings,
        llc_cpus=tuple(tuple(c for c in range(n) if llc_of[c] == i) for i in range(nr_llcs)),
        node_cpus=tuple(tuple(c for c in range(n) if node_of[c] == i) for i in range(nr_nodes)),
        node_ids=tuple(range(nr_nodes)),
        distances=tuple(tuple(r) for r in distance),
        llc_size_kb=(llc_kb,) * nr_llcs,
        node_reclaim_distance=reclaim,
    )


def _socket_distances(packages: int, nodes_per_package: int, same: int, remote: int) -> list[list[int]]:
    n = packages * nodes_per_package
    return [
        [
            10 if i == j else (same if i // nodes_per_package == j // nodes_per_package else remote)
            for j in range(n)
        ]
        for i in range(n)
    ]


def _ladder8() -> list[list[int]]:
    """8 sockets, each linked to its ring neighbours and the opposite socket (3 QPI links)."""
    linked = {(i, j) for i in range(8) for j in ((i + 1) % 8, (i - 1) % 8, (i + 4) % 8)}
    return [[10 if i == j else 21 if (i, j) in linked else 31 for j in range(8)] for i in range(8)]


def _zen3(nps: int) -> Topology:
    return _build(
        f"zen3-2s-nps{nps}",
        packages=2,
        cores_per_package=64,
        threads=2,
        cores_per_llc=8,
        nodes_per_package=nps,
        llc_kb=32 * 1024,
        distance=_socket_distances(2, nps, 12, 32),
        reclaim=RECLAIM_DISTANCE_ZEN,
    )


PRESETS: dict[str, Any] = {
    "zen3-2s-nps1": lambda: _zen3(1),
    "zen3-2s-nps2": lambda: _zen3(2),
    "zen3-2s-nps4": lambda: _zen3(4),
    "zen4-9654-2s": lambda: _build(
        "zen4-9654-2s",
        packages=2,
        cores_per_package=96,
        threads=2,
        cores_per_llc=8,
        nodes_per_package=1,
        llc_kb=32 * 1024,
        distance=_socket_distances(2, 1, 12, 32),
        reclaim=RECLAIM_DISTANCE_ZEN,
    ),
    "icx-2s": lambda: _build(
        "icx-2s",
        packages=2,
        cores_per_package=32,
        threads=2,
        cores_per_llc=32,
        nodes_per_package=1,
        llc_kb=48 * 1024,
        distance=_socket_distances(2, 1, 10, 20),
    ),
    "spr-2s-224": lambda: _build(
        "spr-2s-224",
        packages=2,
        cores_per_package=56,
        threads=2,
        cores_per_llc=56,
        nodes_per_package=1,
        llc_kb=105 * 1024,
        distance=_socket_distances(2, 1, 10, 21),
    ),
    "bdw-1s-20": lambda: _build(
        "bdw-1s-20",
        packages=1,
        cores_per_package=10,
        threads=2,
        cores_per_llc=10,
        nodes_per_package=1,
        llc_kb=25 * 1024,
        distance=[[10]],
    ),
    "hsw-8s-288": lambda: _build(
        "hsw-8s-288",
        packages=8,
        cores_per_package=18,
        threads=2,
        cores_per_llc=18,
        nodes_per_package=1,
        llc_kb=45 * 1024,
        distance=_ladder8(),
    ),
}


def preset(name: str) -> Topology:
    """A preset topology by name; ScenarioError naming `topology` when unknown."""
    factory = PRESETS.get(name)
    if factory is None:
        raise ScenarioError("topology", f"unknown preset {name!r}; known: {', '.join(sorted(PRESETS))}")
    topo: Topology = factory()
    return topo


def _int(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(field, f"expected an integer, got {value!r}")
    return value


def from_dict(data: Mapping[str, Any], field: str = "topology") -> Topology:
    """Build a Topology from a dict in the project's topology schema.

    Errors name the offending field (e.g. `topology.cpus[3].llc`). Offline CPUs are kept as
    numbers but excluded from every span. Node ids may be sparse; they are mapped to dense
    indices in the order of `numa_nodes`.
    """
    if not isinstance(data, Mapping):
        raise ScenarioError(field, "expected a topology object")
    for key in ("cpus", "llcs", "numa_nodes", "node_distances"):
        if not isinstance(data.get(key), list):
            raise ScenarioError(f"{field}.{key}", "missing or not a list")
    nodes = data["numa_nodes"]
    node_index: dict[int, int] = {}
    for i, nd in enumerate(nodes):
        nid = _int(nd.get("id") if isinstance(nd, Mapping) else None, f"{field}.numa_nodes[{i}].id")
        node_index[nid] = i
    dist = data["node_distances"]
    if len(dist) != len(nodes) or any(not isinstance(r, list) or len(r) != len(nodes) for r in dist):
        raise ScenarioError(f"{field}.node_distances", f"expected a {len(nodes)}x{len(nodes)} matrix")
    distances = tuple(
        tuple(_int(v, f"{field}.node_distances[{i}][{j}]") for j, v in enumerate(r))
        for i, r in enumerate(dist)
    )
    raw = data["cpus"]
    if not raw:
        raise ScenarioError(f"{field}.cpus", "no CPUs")
    by_num: dict[int, Mapping[str, Any]] = {}
    for i, c in enumerate(raw):
        if not isinstance(c, Mapping):
            raise ScenarioError(f"{field}.cpus[{i}]", "expected an object")
        num = _int(c.get("cpu"), f"{field}.cpus[{i}].cpu")
        if num < 0 or num in by_num:
            raise ScenarioError(f"{field}.cpus[{i}].cpu", f"negative or duplicate CPU {num}")
        if num >= NR_CPUS_MAX:
            # (before the tables below, sized by the largest CPU number, are allocated)
            raise ScenarioError(
                f"{field}.cpus[{i}].cpu", f"CPU {num} is beyond the kernel's largest NR_CPUS ({NR_CPUS_MAX})"
            )
        by_num[num] = c
    n = max(by_num) + 1
    online = [False] * n
    core_of = [-1] * n
    llc_of = [-1] * n
    node_of = [-1] * n
    package_of = [-1] * n
    sib: list[tuple[int, ...]] = [()] * n
    nr_llcs = len(data["llcs"])
    for i, c in enumerate(raw):
        num = c["cpu"]
        if c.get("online") is False:
            continue
        online[num] = True
        core_of[num] = _int(c.get("core"), f"{field}.cpus[{i}].core")
        llc = _int(c.get("llc"), f"{field}.cpus[{i}].llc")
        if not 0 <= llc < nr_llcs:
            raise ScenarioError(f"{field}.cpus[{i}].llc", f"LLC {llc} not in llcs (0..{nr_llcs - 1})")
        llc_of[num] = llc
        if c.get("numa_node") is None:
            # placemap-collect writes null where sysfs puts the CPU on no node it lists
            raise ScenarioError(
                f"{field}.cpus[{i}].numa_node",
                f"CPU {num} is online but on no NUMA node; the simulator needs a node (and its "
                "distances) for every online CPU",
            )
        nid = _int(c.get("numa_node"), f"{field}.cpus[{i}].numa_node")
        if nid not in node_index:
            raise ScenarioError(f"{field}.cpus[{i}].numa_node", f"node {nid} not in numa_nodes")
        node_of[num] = node_index[nid]
        pkg = c.get("package")
        package_of[num] = 0 if pkg is None else _int(pkg, f"{field}.cpus[{i}].package")
        s = c.get("smt_siblings")
        if not isinstance(s, list) or num not in s:
            raise ScenarioError(f"{field}.cpus[{i}].smt_siblings", "must be a list containing the CPU itself")
        sibs = sorted(_int(x, f"{field}.cpus[{i}].smt_siblings") for x in s)
        if sibs[0] < 0:
            # (a negative number would index the CPU tables from their end)
            raise ScenarioError(f"{field}.cpus[{i}].smt_siblings", f"{sibs[0]} is no CPU number")
        sib[num] = tuple(sibs)
    cpus_online = [c for c in range(n) if online[c]]
    # Offline siblings drop out of every list first (SMT-4 with two threads offline, as
    # `ppc64_cpu --smt=2` leaves a POWER core); then a sibling list must agree from both ends.
    for c in cpus_online:
        sib[c] = tuple(x for x in sib[c] if x < n and online[x])
    for c in cpus_online:
        for x in sib[c]:
            if sib[x] != sib[c]:
                raise ScenarioError(f"{field}.cpus", f"CPUs {c} and {x} disagree on smt_siblings")
    llc_cpus = tuple(tuple(c for c in cpus_online if llc_of[c] == i) for i in range(nr_llcs))
    size_kb = []
    for i, llc_d in enumerate(data["llcs"]):
        sz = llc_d.get("size_kb") if isinstance(llc_d, Mapping) else None
        size_kb.append(32 * 1024 if sz is None else _int(sz, f"{field}.llcs[{i}].size_kb"))
    node_cpus = tuple(tuple(c for c in cpus_online if node_of[c] == i) for i in range(len(nodes)))
    name = data.get("machine")
    return Topology(
        name=name if isinstance(name, str) else "custom",
        online=tuple(online),
        core_of=tuple(core_of),
        llc_of=tuple(llc_of),
        node_of=tuple(node_of),
        package_of=tuple(package_of),
        siblings=tuple(sib),
        llc_cpus=llc_cpus,
        node_cpus=node_cpus,
        node_ids=tuple(node_index),
        distances=distances,
        llc_size_kb=tuple(size_kb),
    )


def load(spec: str | Mapping[str, Any], field: str = "topology") -> Topology:
    """A preset name or an inline topology object."""
    if isinstance(spec, str):
        return preset(spec)
    return from_dict(spec, field)
