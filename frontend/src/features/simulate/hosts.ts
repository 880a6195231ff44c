/**
 * The recorded hosts the Simulate form offers beside the presets: the topologies of stored
 * recordings that came from a real machine (read from sysfs by the collector, or supplied with an
 * import), so that a workload can be simulated on the user's own machine, sent inline as the
 * scenario's topology, or run a sweep on, beside presets, by a name of its own (sweepHosts). Pure:
 * which recordings qualify, how a host reads in the list and what a sweep calls it.
 */
import type { Recording, SimSweepSpec, Topology } from "../../client/types";
import { plural } from "../../viz/words";

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

/** The name a sweep's machine "recorded" has: a stored recording's own host (what-if replays). */
export const RECORDED = "recorded";

/** The longest name a sweep gives a host (the server's placemap.sim_sweep.MAX_HOST_NAME). */
export const MAX_HOST_NAME = 64;

/** A recorded host's name in a sweep: its machine's (commas, control and separator characters but
 * the space, which a sweep's list or the server refuse, made dashes; outer spaces dropped; at most MAX_HOST_NAME characters with room
 * for a suffix), or "host"; then "-2", "-3", ... until no preset, "recorded" or name already
 * `taken` has it. */
export function sweepHostName(machine: string, presets: string[], taken: ReadonlySet<string>): string {
  // what the server takes as printable (Python's str.isprintable: no control, format or separator
  // character but the space)
  const base = machine.replace(/[,\p{C}\p{Z}]/gu, (c) => (c === " " ? c : "-")).trim().slice(0, MAX_HOST_NAME - 4).trim() || "host";
  const used = (n: string) => presets.includes(n) || n === RECORDED || taken.has(n);
  let name = base;
  for (let i = 2; used(name); i++) name = `${base}-${String(i)}`;
  return name;
}

/** The machines a sweep can run on beside the presets, by the names the sweep gives them: a stored
 * sweep's own hosts (`stored`, its spec's: so that it runs again though their recordings are gone),
 * then each recorded host not among them, named by sweepHostName. A name's host is what picking it
 * sets in the form's machine. */
export function sweepHosts(presets: string[], hosts: Host[], stored: Readonly<Record<string, Topology>> | null = null): Map<string, Host> {
  const out = new Map<string, Host>();
  const named = new Map<string, string>(); // each topology listed (as text) -> its name
  for (const [name, topology] of Object.entries(stored ?? {})) {
    out.set(name, { key: `${HOST_PREFIX}sweep:${name}`, label: hostLabel(topology), topology });
    named.set(JSON.stringify(topology), name);
  }
  for (const h of hosts) {
    const text = JSON.stringify(h.topology);
    // the stored sweep's host is this recorded one: picking it sets the listed host
    const name = named.get(text) ?? sweepHostName(h.topology.machine, presets, new Set(out.keys()));
    named.set(text, name);
    out.set(name, h);
  }
  return out;
}

/** The spec's `hosts` for a sweep on `machines`: the topology of each that is a host, by its name
 * ({} when none is). */
export function hostsOf(machines: string[], hosts: ReadonlyMap<string, { topology: Topology }>): { hosts?: Record<string, Topology> } {
  const sent = machines.flatMap((m) => { const h = hosts.get(m); return h ? [[m, h.topology] as const] : []; });
  return sent.length > 0 ? { hosts: Object.fromEntries(sent) } : {};
}

/** The form with machine `m`: a host's (its key, and its topology sent inline), else the preset or
 * "recorded" that `m` names. */
export function withMachine<T extends { topology: string; topologyBody: Topology | null }>(choice: T, m: string, hosts: ReadonlyMap<string, Host>): T {
  const h = hosts.get(m);
  return h ? { ...choice, topology: h.key, topologyBody: h.topology } : { ...choice, topology: m, topologyBody: null };
}

/** A stored sweep's hosts (its spec's `hosts`: name -> topology), which the server checked as
 * topologies before it ran them; null without any. */
export function storedHosts(spec: Pick<SimSweepSpec, "hosts">): Readonly<Record<string, Topology>> | null {
  const h = spec.hosts;
  return h == null || Object.keys(h).length === 0 ? null : (h as Record<string, Topology>);
}
