/**
 * The recorded hosts the Simulate form offers beside the presets: the topologies of stored
 * recordings that came from a real machine (read from sysfs by the collector, or supplied with an
 * import), so that a workload can be simulated on the user's own machine, sent inline as the
 * scenario's topology. Pure: which recordings qualify and how a host reads in the list.
 */
import type { Recording, Topology } from "../../client/types";

/** A choice's topology value for a recorded host (presets are plain names). */
export const HOST_PREFIX = "host:";

/** At most this many hosts are listed (the newest recordings' first). */
export const MAX_HOSTS = 12;

/** Topology sources that describe a real machine (not a preset, not one guessed from a trace). */
const REAL_SOURCES = new Set(["sysfs", "manual"]);

/** One recording per distinct recorded topology, in the list's order (newest first). */
export function hostRecordings(recs: Recording[]): Recording[] {
  const seen = new Set<string>();
  const out: Recording[] = [];
  for (const r of recs) {
    const tid = r.topology_id;
    if (r.status !== "ready" || tid == null || !REAL_SOURCES.has(r.topology_source ?? "") || seen.has(tid)) continue;
    seen.add(tid);
    out.push(r);
    if (out.length === MAX_HOSTS) break;
  }
  return out;
}

function plural(n: number, one: string): string {
  return `${String(n)} ${one}${n === 1 ? "" : "s"}`;
}

/** "epyc-7713 (recorded: 256 CPUs, 16 LLCs, 2 nodes)". */
export function hostLabel(topo: Topology): string {
  const cpus = topo.cpus.filter((c) => c.online).length;
  return `${topo.machine} (recorded: ${plural(cpus, "CPU")}, ${plural(topo.llcs.length, "LLC")}, ${plural(topo.numa_nodes.length, "node")})`;
}
