/**
 * Colors: migration levels classified by topology (smt / llc / node / cross_node) with one color
 * per level, and stable per-process colors (by tgid when known, else comm, else pid) from d3 schemes.
 */
import { scaleOrdinal } from "d3-scale";
import { schemeTableau10, schemePaired } from "d3-scale-chromatic";
import type { MigrationLevel, Topology } from "../client/types";

export const LEVELS: readonly MigrationLevel[] = ["smt", "llc", "node", "cross_node"];
export const LEVEL_LABELS: Record<MigrationLevel, string> = {
  smt: "SMT sibling (same core)",
  llc: "same LLC, other core",
  node: "same NUMA node, other LLC",
  cross_node: "cross NUMA node",
};

/** Ordered from cheapest to most expensive crossing: green, blue, amber, red. */
export const levelColor = scaleOrdinal<MigrationLevel, string>()
  .domain(LEVELS)
  .range(["#2ca02c", "#1f77b4", "#e69500", "#d62728"]);

export interface CpuTopoIndex {
  core: Int32Array;
  llc: Int32Array;
  node: Int32Array;
}

/** Dense per-CPU lookup arrays (-1 = unknown). */
export function cpuIndex(topo: Topology): CpuTopoIndex {
  const n = topo.cpus.reduce((m, c) => Math.max(m, c.cpu + 1), 0);
  const core = new Int32Array(n).fill(-1);
  const llc = new Int32Array(n).fill(-1);
  const node = new Int32Array(n).fill(-1);
  for (const c of topo.cpus) {
    core[c.cpu] = c.core ?? -1;
    llc[c.cpu] = c.llc ?? -1;
    node[c.cpu] = c.numa_node ?? -1;
  }
  return { core, llc, node };
}

/** The crossing level of a move from -> to, or null when it is no move or the CPUs are unknown. */
export function classifyMigration(idx: CpuTopoIndex, from: number, to: number): MigrationLevel | null {
  if (from === to || from < 0 || to < 0) return null;
  const cf = idx.core[from] ?? -1;
  const ct = idx.core[to] ?? -1;
  if (cf >= 0 && cf === ct) return "smt";
  const lf = idx.llc[from] ?? -1;
  const lt = idx.llc[to] ?? -1;
  if (lf >= 0 && lf === lt) return "llc";
  const nf = idx.node[from] ?? -1;
  const nt = idx.node[to] ?? -1;
  if (nf >= 0 && nf === nt) return "node";
  if (nf < 0 || nt < 0 || lf < 0 || lt < 0) return null;
  return "cross_node";
}

const PALETTE: readonly string[] = [...schemeTableau10, ...schemePaired.filter((_, i) => i % 2 === 1)];

/** FNV-1a: a stable small hash so a process keeps its color across seeks and reloads. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The key a task is colored by: tgid when known, else comm, else pid. */
export function processKey(pid: number, comm: string, tgid: number): string {
  if (tgid > 0) return `g${tgid}`;
  if (comm) return `c${comm}`;
  return `p${pid}`;
}

const cache = new Map<string, string>();
export function processColor(key: string): string {
  let c = cache.get(key);
  if (c === undefined) {
    c = PALETTE[hashString(key) % PALETTE.length] ?? "#888";
    if (cache.size > 50_000) cache.clear();
    cache.set(key, c);
  }
  return c;
}
