import { describe, expect, it } from "vitest";
import type { Recording, SimOptions, Topology } from "../../client/types";
import { distinctHosts, HOST_PREFIX, hostLabel, hostRecordings, MAX_HOSTS, RECORDED, storedHosts, sweepHostName, sweepHosts, withChosen, withMachine } from "./hosts";
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
      rec("h", { topology_source: "manual", source: "simulated" }), // a run on a host: its copy
    ];
    expect(hostRecordings(recs).map((r) => r.id)).toEqual(["a", "g"]);
  });

  it("keeps the chosen host listed once its recordings are gone, and adds nothing else", () => {
    const listed = [{ key: `${HOST_PREFIX}t-a`, label: "a", topology: TOPO }];
    // still listed, or a preset chosen, or no topology held: the list as it is
    expect(withChosen(listed, `${HOST_PREFIX}t-a`, TOPO)).toBe(listed);
    expect(withChosen(listed, "zen3-2s-nps1", null)).toBe(listed);
    expect(withChosen([], `${HOST_PREFIX}t-x`, null)).toEqual([]);
    // chosen, then its recording deleted: it stays, labelled from the topology the choice holds
    expect(withChosen(listed, `${HOST_PREFIX}t-x`, TOPO)).toEqual([
      ...listed,
      { key: `${HOST_PREFIX}t-x`, label: "<b>host</b> (recorded: 2 CPUs, 1 LLC, 1 node)", topology: TOPO },
    ]);
  });

  it("lists a machine stored twice once, the newest first", () => {
    const h = (k: string) => ({ key: k, label: k, topology: TOPO });
    const text: Record<string, string> = { a: "x", b: "y", c: "x" };
    expect(distinctHosts([h("a"), h("b"), h("c")], (x) => text[x.key] ?? "").map((x) => x.key)).toEqual(["a", "b"]);
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

describe("recorded hosts as a sweep's machines", () => {
  const presets = ["zen3-2s-nps1", "icx-2s"];
  const host = (tid: string, machine: string, cpus = 3): { key: string; label: string; topology: Topology } => {
    const topology = { ...TOPO, machine, cpus: TOPO.cpus.slice(0, cpus) };
    return { key: `${HOST_PREFIX}${tid}`, label: hostLabel(topology), topology };
  };

  it("names each host by its machine, unique beside the presets, 'recorded' and each other", () => {
    expect(sweepHostName("epyc-7713", presets, new Set())).toBe("epyc-7713");
    expect(sweepHostName("icx-2s", presets, new Set())).toBe("icx-2s-2");
    expect(sweepHostName(RECORDED, presets, new Set())).toBe("recorded-2");
    expect(sweepHostName("a,b ", presets, new Set(["a-b", "a-b-2"]))).toBe("a-b-3");
    expect(sweepHostName("  ", presets, new Set())).toBe("host");
    // a machine's name can be anything a topology was given: none of it breaks a list, a table or a file
    expect(sweepHostName("a\nb\tc\u0085d\u00a0e\u200bf g", presets, new Set())).toBe("a-b-c-d-e-f g");
    expect(sweepHostName("x".repeat(200), presets, new Set())).toHaveLength(60);
    expect(sweepHostName("<script>", presets, new Set())).toBe("<script>"); // text wherever it is shown
  });

  it("lists a stored sweep's hosts by their names first, then the recorded hosts not among them", () => {
    const a = host("t-a", "box");
    const b = host("t-b", "box", 2); // another machine of the same name
    expect([...sweepHosts(presets, [a, b])].map(([n, h]) => [n, h.key])).toEqual([["box", a.key], ["box-2", b.key]]);
    // the stored sweep called b "lab": b keeps that name, so its tick restores; a is named after it
    const stored = storedHosts({ hosts: { lab: b.topology } });
    const got = sweepHosts(presets, [a, b], stored);
    expect([...got].map(([n, h]) => [n, h.key])).toEqual([["lab", b.key], ["box", a.key]]);
    // its recordings gone, a stored host is still there to run, under a key of its own
    const only = sweepHosts(presets, [], stored);
    expect([...only].map(([n, h]) => [n, h.key, h.topology])).toEqual([["lab", `${HOST_PREFIX}sweep:lab`, b.topology]]);
    expect(storedHosts({})).toBeNull();
    expect(storedHosts({ hosts: {} })).toBeNull();
  });

  it("sets the form's machine to a host (its key and topology) or to the preset named", () => {
    const lab = host("t-lab", "lab");
    const hosts = new Map([["lab", lab]]);
    const form = { topology: "icx-2s", topologyBody: null as Topology | null, seed: 3 };
    expect(withMachine(form, "lab", hosts)).toEqual({ topology: lab.key, topologyBody: lab.topology, seed: 3 });
    expect(withMachine({ ...form, topology: lab.key, topologyBody: lab.topology }, "zen3-2s-nps1", hosts)).toEqual({ topology: "zen3-2s-nps1", topologyBody: null, seed: 3 });
  });
});
