"""Topology lookups for classification: CPU pair -> migration level, CPU -> LLC / NUMA node.

Level codes: 0 smt (same core), 1 llc (same LLC, other core), 2 node (same NUMA node, other LLC),
3 cross_node, 4 unknown (a CPU the topology does not describe).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from placemap.schema.models.topology_schema import Cpu, Llc, NumaNode, Topology

LEVELS: tuple[str, ...] = ("smt", "llc", "node", "cross_node")
UNKNOWN_LEVEL = 4
SAME_CPU = 5
CAUSES: tuple[str, ...] = ("wakeup", "fork", "balance")


def inferred_topology(cpus: Iterable[int], machine: str) -> Topology:
    """What a trace alone tells: the CPUs seen, each its own core, one LLC, one NUMA node."""
    ids = sorted({c for c in cpus if c >= 0})
    return Topology(
        machine=machine,
        source="inferred",
        cpus=[
            Cpu(cpu=c, online=True, core=i, llc=0, numa_node=0, package=0, smt_siblings=[c])
            for i, c in enumerate(ids)
        ],
        llcs=[Llc(id=0, cpus=ids, numa_nodes=[0])] if ids else [],
        numa_nodes=[NumaNode(id=0, cpus=ids)],
        node_distances=[[10]],
    )


class LevelMap:
    """Dense lookup tables built from a topology (None = inferred: every CPU pair shares the LLC)."""

    def __init__(self, topology: Topology | None) -> None:
        self.inferred = topology is None
        cpus = [] if topology is None else topology.cpus
        n = max((c.cpu for c in cpus), default=-1) + 1
        self.n = n
        self.core = np.full(n, -1, dtype=np.int64)
        self.llc = np.full(n, -1, dtype=np.int32)
        self.node = np.full(n, -1, dtype=np.int32)
        for c in cpus:
            self.core[c.cpu] = -1 if c.core is None else c.core
            self.llc[c.cpu] = -1 if c.llc is None else c.llc
            self.node[c.cpu] = -1 if c.numa_node is None else c.numa_node
        self.n_llcs = 1 if topology is None else max(len(topology.llcs), 1)
        # CPUs per LLC (at least 1: an LLC listed without CPUs divides by one), counted in one
        # pass: a count per LLC over every CPU would be LLCs x CPUs steps, which a topology of
        # many empty LLCs makes billions
        in_range = [c.llc for c in cpus if c.llc is not None and 0 <= c.llc < self.n_llcs]
        counts = np.bincount(np.array(in_range, dtype=np.int64), minlength=self.n_llcs)
        self.llc_cpus = np.maximum(counts, 1).astype(np.int64)
        self.matrix = self._matrix()
        # CPUs outside the table: an inferred topology has one LLC, so any two CPUs share it.
        self.default_level = 1 if self.inferred else UNKNOWN_LEVEL

    def _matrix(self) -> npt.NDArray[np.int8]:
        n = self.n
        core, llc, node = self.core, self.llc, self.node
        m = np.full((n, n), 3, dtype=np.int8)
        m[node[:, None] == node[None, :]] = 2
        m[llc[:, None] == llc[None, :]] = 1
        m[core[:, None] == core[None, :]] = 0
        unknown = (core < 0) | (llc < 0) | (node < 0)
        m[unknown, :] = UNKNOWN_LEVEL
        m[:, unknown] = UNKNOWN_LEVEL
        return m

    def cpu_llc(self, cpus: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
        """LLC index of each CPU; -1 where unknown (0 for every CPU of an inferred topology)."""
        if self.inferred:
            return np.zeros(len(cpus), dtype=np.int32)
        out = np.full(len(cpus), -1, dtype=np.int32)
        ok = (cpus >= 0) & (cpus < self.n)
        out[ok] = self.llc[cpus[ok]]
        return out

    def llc_of(self, cpu: int | None) -> int | None:
        if cpu is None or cpu < 0:
            return None
        if self.inferred:
            return 0
        return int(self.llc[cpu]) if cpu < self.n and self.llc[cpu] >= 0 else None

    def node_of(self, cpu: int | None) -> int | None:
        if cpu is None or cpu < 0:
            return None
        if self.inferred:
            return 0
        return int(self.node[cpu]) if cpu < self.n and self.node[cpu] >= 0 else None
