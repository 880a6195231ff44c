import { describe, expect, it } from "vitest";
import type { Recording, SimOptions, Topology } from "../../client/types";
import { hostLabel, hostRecordings, MAX_HOSTS } from "./hosts";
import { defaultSimChoice, simScenario } from "./scenario";

function rec(id: string, over: Partial<Recording>): Recording {
  return { id, name: id, status: "ready", topology_id: `t-${id}`, topology_source: "sysfs", ...over } as Recording;
}

// a real machine's shape: 2 CPUs online, one offline, one LLC, one node
const TOPO = {
  machine: "<b>host</b>",
  source: "sysfs",
  cpus: [0, 1, 2].map((c) => ({ cpu: c, online: c < 2, core: c, llc: 0, numa_node: 0, package: 0, smt_siblings: [c] })),
  llcs: [{ id: 0, cpus: [0, 1, 2], numa_nodes: [0] }],
  numa_nodes: [{ id: 0, cpus: [0, 1, 2] }],
  node_distances: [[10]],
} as unknown as Topology;

describe("recorded hosts", () => {
  it("offers each real machine's topology once, newest recording first, never a preset's or a guessed one", () => {
    const recs = [
      rec("a", {}),
      rec("b", { topology_id: "t-a" }), // the same host again
      rec("c", { topology_source: "preset" }), // a simulated run's preset
      rec("d", { topology_source: "inferred" }), // guessed from a trace's CPUs
      rec("e", { status: "importing" }),
      rec("f", { topology_id: null }),
      rec("g", { topology_source: "manual" }),
    ];
    expect(hostRecordings(recs).map((r) => r.id)).toEqual(["a", "g"]);
  });

  it("lists at most MAX_HOSTS", () => {
    const many = Array.from({ length: MAX_HOSTS + 5 }, (_, i) => rec(String(i), {}));
    expect(hostRecordings(many)).toHaveLength(MAX_HOSTS);
  });

  it("reads a host by its online CPUs, LLCs and nodes", () => {
    expect(hostLabel(TOPO)).toBe("<b>host</b> (recorded: 2 CPUs, 1 LLC, 1 node)");
  });

  it("sends a recorded host's topology inline, a preset by its name", () => {
    const opts = { presets: ["zen3-2s-nps1"], hint_categories: {}, features: {}, workloads: { schbench: [] }, max_duration_ms: 1000 } as unknown as SimOptions;
    const choice = defaultSimChoice(opts);
    expect(simScenario(choice, opts).topology).toBe("zen3-2s-nps1");
    expect(simScenario({ ...choice, topology: "host:t-a", topologyBody: TOPO }, opts).topology).toEqual(TOPO);
  });
});
