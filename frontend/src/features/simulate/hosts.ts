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

/** One recording per distinct recorded topology, in the list's order (newest first); never a
 * simulated run's (its topology, copied from the host it ran on, is "manual" too). */
export function hostRecordings(recs: Recording[]): Recording[] {
  const seen = new Set<string>();
  const out: Recording[] = [];
  for (const r of recs) {
    const tid = r.topology_id;
    // a simulated run's machine is the host or preset it was given, not a machine recorded here
    if (r.status !== "ready" || r.source === "simulated" || tid == null || !REAL_SOURCES.has(r.topology_source ?? "") || seen.has(tid)) continue;
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

/** A host as the form lists it: the choice's topology value and the topology sent inline. */
export interface Host {
  /** the form's topology value: HOST_PREFIX + topology id */
  key: string;
  label: string;
  topology: Topology;
}

/** The hosts to list: `hosts`, and the chosen one while it is no longer among them (its
 * recordings deleted since it was chosen: the choice keeps its topology, so the list must too). */
export function withChosen(hosts: Host[], key: string, topology: Topology | null): Host[] {
  if (topology === null || !key.startsWith(HOST_PREFIX) || hosts.some((h) => h.key === key)) return hosts;
  return [...hosts, { key, label: hostLabel(topology), topology }];
}

/** The hosts without repeats of the same machine (an identical topology stored again, e.g. with
 * each import from it): the first, newest, of each. `same` gives each one's topology as text. */
export function distinctHosts<T>(hosts: T[], same: (h: T) => string): T[] {
  const seen = new Set<string>();
  return hosts.filter((h) => {
    const k = same(h);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
