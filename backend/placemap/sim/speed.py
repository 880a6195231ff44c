"""How fast a running task's work progresses on its CPU: SMT_SPEED while an SMT sibling runs
too, times its share of the LLC and node memory bandwidth when it is memory-bound
(cost.mem_speed). Keeps the count of running memory-bound tasks per LLC and node."""

from __future__ import annotations

from placemap.sim import cost
from placemap.sim.state import Rq
from placemap.sim.topology import Topology


class Speeds:
    """Speed factors of the CPUs of one topology."""

    def __init__(self, topo: Topology, rqs: list[Rq]) -> None:
        self.topo = topo
        self.rqs = rqs
        self.mem_llc = [0] * topo.nr_llcs
        self.mem_node = [0] * topo.nr_nodes
        self.mem_cpus: list[set[int]] = [set() for _ in range(topo.nr_nodes)]
        self.llc_cores = [len({topo.core_of[c] for c in cs}) for cs in topo.llc_cpus]
        self.node_cores = [len({topo.core_of[c] for c in cs}) for cs in topo.node_cpus]
        # nodes sharing each node's socket (NPS2/NPS4 split a socket's memory channels)
        self.nps = [
            max(1, sum(1 for m in topo.node_cpus if m and topo.package_of[m[0]] == topo.package_of[cs[0]]))
            if cs
            else 1
            for cs in topo.node_cpus
        ]

    def speed(self, cpu: int) -> float:
        rqs = self.rqs
        speed = 1.0
        for s in self.topo.siblings[cpu]:
            if s != cpu and rqs[s].curr is not None:
                speed = cost.SMT_SPEED
                break
        p = rqs[cpu].curr
        if p is not None and p.membound:
            llc, node = self.topo.llc_of[cpu], self.topo.node_of[cpu]
            speed *= cost.mem_speed(
                self.mem_llc[llc],
                self.mem_node[node],
                self.llc_cores[llc],
                self.nps[node],
                self.node_cores[node],
            )
        return speed

    def membound_change(self, cpu: int, delta: int) -> list[int]:
        """A memory-bound task starts (+1) or stops (-1) running on cpu; returns the other
        CPUs of its node running memory-bound tasks (whose speed may have changed)."""
        t = self.topo
        node = t.node_of[cpu]
        self.mem_llc[t.llc_of[cpu]] += delta
        self.mem_node[node] += delta
        cpus = self.mem_cpus[node]
        if delta > 0:
            cpus.add(cpu)
        else:
            cpus.discard(cpu)
        return sorted(c for c in cpus if c != cpu)
