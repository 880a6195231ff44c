/**
 * The machine a trace was recorded on, chosen as it is uploaded: none (its topology inferred from the
 * trace: the CPUs it names, one LLC), a simulator preset, a machine recorded here (a stored
 * recording's real topology), or a topology file read on the page (`placemap-collect topology --json`
 * of the host, stored by POST /api/topologies). Pure: the choices the upload offers, and what the
 * upload sends for one (POST /api/recordings?preset= or ?topology_id=).
 */
import type { Recording, Topology } from "../../client/types";
import { hostRecordings } from "../simulate/hosts";
import { plural } from "../../viz/words";

export interface MachineChoice {
  /** "" (inferred), "preset:NAME" or "topology:ID" */
  value: string;
  label: string;
  group: "inferred" | "presets" | "recorded" | "files";
}

export const INFERRED = "";

/** A topology file read on the page and stored: the choice for it. */
export function fileChoice(id: string, fileName: string, topo: Topology): MachineChoice {
  const cpus = topo.cpus.filter((c) => c.online).length;
  return {
    value: `topology:${id}`,
    label: `${topo.machine} (${fileName}: ${plural(cpus, "CPU")}, ${plural(topo.llcs.length, "LLC")}, ${plural(topo.numa_nodes.length, "node")})`,
    group: "files",
  };
}

/** The choices, inferred first, then the presets, then the machines recorded here (one per topology). */
export function machineChoices(presets: readonly string[], recs: Recording[], files: MachineChoice[] = []): MachineChoice[] {
  const fromFiles = new Set(files.map((f) => f.value));
  return [
    { value: INFERRED, label: "inferred from the trace (one LLC)", group: "inferred" },
    ...presets.map((p) => ({ value: `preset:${p}`, label: p, group: "presets" as const })),
    ...hostRecordings(recs)
      .map((r) => ({ value: `topology:${String(r.topology_id)}`, label: `the machine of ${r.name}`, group: "recorded" as const }))
      .filter((c) => !fromFiles.has(c.value)),
    ...files,
  ];
}

/** What the upload sends for a choice. */
export function uploadMachine(value: string): { preset?: string; topologyId?: string } {
  if (value.startsWith("preset:")) return { preset: value.slice("preset:".length) };
  if (value.startsWith("topology:")) return { topologyId: value.slice("topology:".length) };
  return {};
}

/** The choice for `value` among `choices`, or the first (inferred) when it is no longer offered (a
 * recorded machine whose recordings were deleted, or past the newest few): what the select shows is
 * then what the upload sends. */
export function chosenMachine(choices: MachineChoice[], value: string): MachineChoice {
  return choices.find((c) => c.value === value) ?? choices[0] ?? { value: INFERRED, label: "", group: "inferred" };
}
