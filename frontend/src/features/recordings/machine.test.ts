import { describe, expect, it } from "vitest";
import type { Recording } from "../../client/types";
import { machineChoices, uploadMachine } from "./machine";

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
