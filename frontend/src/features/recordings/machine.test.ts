import { describe, expect, it } from "vitest";
import type { Recording } from "../../client/types";
import type { Topology } from "../../client/types";
import { chosenMachine, fileChoice, machineChoices, uploadMachine } from "./machine";

const rec = (id: string, over: Partial<Recording> = {}) => ({ id, name: `rec ${id}`, status: "ready", source: "imported", topology_id: `t-${id}`, topology_source: "sysfs", ...over }) as Recording;

describe("the machine of an upload", () => {
  it("offers inferred, the presets, then each machine recorded here once", () => {
    const got = machineChoices(["zen3-2s-nps1", "icx-2s"], [rec("a"), rec("b", { topology_id: "t-a" }), rec("c", { topology_source: "inferred" }), rec("d", { source: "simulated", topology_source: "manual" })]);
    expect(got.map((c) => [c.value, c.group])).toEqual([
      ["", "inferred"],
      ["preset:zen3-2s-nps1", "presets"],
      ["preset:icx-2s", "presets"],
      ["topology:t-a", "recorded"],
    ]);
    expect(got[3]?.label).toBe("the machine of rec a");
  });

  it("sends a preset or a stored topology, nothing when inferred", () => {
    expect(uploadMachine("preset:zen3-2s-nps4")).toEqual({ preset: "zen3-2s-nps4" });
    expect(uploadMachine("topology:abc")).toEqual({ topologyId: "abc" });
    expect(uploadMachine("")).toEqual({});
  });
});

describe("the machine chosen", () => {
  it("is the choice offered, or inferred once a recorded machine is no longer offered", () => {
    const choices = machineChoices(["icx-2s"], [rec("a")]);
    expect(chosenMachine(choices, "preset:icx-2s").label).toBe("icx-2s");
    expect(chosenMachine(choices, "topology:t-a").label).toBe("the machine of rec a");
    // its recording deleted: no longer listed, so neither shown nor sent
    const after = machineChoices(["icx-2s"], []);
    expect(chosenMachine(after, "topology:t-a").value).toBe("");
    expect(uploadMachine(chosenMachine(after, "topology:t-a").value)).toEqual({});
  });
});

describe("a topology file read on the page", () => {
  const topo = {
    machine: "epyc-7451",
    cpus: [...Array(96).keys()].map((cpu) => ({ cpu, online: cpu !== 95 })),
    llcs: Array(16).fill({}),
    numa_nodes: Array(8).fill({}),
  } as unknown as Topology;

  it("is offered by its machine and file, as its stored topology, once", () => {
    const file = fileChoice("t-9", "host.json", topo);
    expect(file).toEqual({ value: "topology:t-9", label: "epyc-7451 (host.json: 95 CPUs, 16 LLCs, 8 nodes)", group: "files" });
    // the same topology recorded here already: listed once, as the file
    const got = machineChoices([], [rec("z", { topology_id: "t-9" })], [file]);
    expect(got.filter((c) => c.value === "topology:t-9").map((c) => c.group)).toEqual(["files"]);
    expect(uploadMachine(chosenMachine(got, file.value).value)).toEqual({ topologyId: "t-9" });
  });
});
