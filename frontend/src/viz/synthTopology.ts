/**
 * Synthetic Topology builder (regular machines: nodes x LLCs x cores x SMT), used by tests and the
 * demo/benchmark fixtures. Pure.
 */
import type { Topology, TopologyCpu } from "../client/types";

export interface SynthOptions {
  nodes: number;
  llcsPerNode: number;
  coresPerLlc: number;
  smt: number;
  /** NUMA node ids (sparse numbering); defaults to 0..nodes-1. */
  nodeIds?: number[];
  /** Extra CPU-less (memory-only) node ids. */
  memoryOnlyNodes?: number[];
  /** CPUs reported offline (their llc/core/node become unknown). */
  offline?: number[];
  machine?: string;
}

/** CPU numbering like Linux on x86: first threads of all cores, then the second threads. */
export function synthTopology(o: SynthOptions): Topology {
  const nodeIds = o.nodeIds ?? Array.from({ length: o.nodes }, (_, i) => i);
  const nCores = o.nodes * o.llcsPerNode * o.coresPerLlc;
  const offline = new Set(o.offline ?? []);
  const cpus: TopologyCpu[] = [];
  for (let t = 0; t < o.smt; t++) {
    for (let core = 0; core < nCores; core++) {
      const cpu = t * nCores + core;
      const llc = Math.floor(core / o.coresPerLlc);
      const nodeIdx = Math.floor(llc / o.llcsPerNode);
      const node = nodeIds[nodeIdx] ?? nodeIdx;
      const sibs = Array.from({ length: o.smt }, (_, k) => k * nCores + core);
      const off = offline.has(cpu);
      cpus.push({
        cpu,
        online: !off,
        core: off ? null : core,
        llc: off ? null : llc,
        numa_node: off ? null : node,
        package: off ? null : nodeIdx,
        smt_siblings: off ? [cpu] : sibs,
      });
    }
  }
  cpus.sort((a, b) => a.cpu - b.cpu);
  const llcs = Array.from({ length: o.nodes * o.llcsPerNode }, (_, id) => {
    const nodeIdx = Math.floor(id / o.llcsPerNode);
    return {
      id,
      cpus: cpus.filter((c) => Math.floor((c.cpu % nCores) / o.coresPerLlc) === id).map((c) => c.cpu),
      numa_nodes: [nodeIds[nodeIdx] ?? nodeIdx],
      level: 3,
    };
  });
  const numa_nodes = [
    ...nodeIds.map((id) => ({ id, cpus: cpus.filter((c) => c.numa_node === id).map((c) => c.cpu) })),
    ...(o.memoryOnlyNodes ?? []).map((id) => ({ id, cpus: [] as number[] })),
  ];
  const n = numa_nodes.length;
  return {
    machine: o.machine ?? `synth-${cpus.length}`,
    source: "manual",
    cpus,
    llcs,
    numa_nodes,
    node_distances: Array.from({ length: n }, (_, i) =>
      Array.from({ length: n }, (_, j) => (i === j ? 10 : 20)),
    ),
  };
}
