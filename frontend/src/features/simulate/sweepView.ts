/**
 * The simulate form's sweep: the values typed for one integer workload parameter, checked against
 * its bounds (GET /api/sim/options) before anything is submitted, or the machines (presets and
 * recorded hosts) or
 * toggles ticked, and the machines to run it across, the sweep a job runs (POST
 * /api/sim/jobs with `sweep`), and how its result reads: where the change turns, the model's
 * beside the published tables', as `placemap sim --sweep` prints it, the chart's scale, and a sweep
 * across machines as one table of every value on every machine. Pure.
 */
import type { SimSweepOnset, SimSweepResult, SimSweepRow, SimSweepSpec, SimSweepTurn, SimSweepWays, WorkloadParam } from "../../client/types";
import { hostsOf, type Host } from "./hosts";

/** Percent: a change within it counts as none (the calibration's threshold, placemap.sim.calibration). */
export const SIGNIFICANT_PCT = 5;

/** The most values one sweep runs (the server's bound: placemap.sim_sweep.MAX_POINTS). */
export const MAX_SWEEP_POINTS = 10;

/** The sweep parameter whose values are machines (presets), not workload integers
 * (placemap.sim_sweep.MACHINES). */
export const MACHINES = "topology";

/** The sweep parameter whose values are toggles: hints and feature changes, each instead of the
 * scenario's own, against one baseline (placemap.sim_sweep.TOGGLES). */
export const TOGGLES = "toggle";

/** The ticked names (machines or toggles), as the form keeps them (joined by commas), in the
 * order of `names`: `least` (2) to `most` of them, or what is wrong with them (naming `field`). */
export function parseTicked(text: string, names: string[], what: string, most: number, least = 2, field = what): { values: string[] } | { error: string } {
  const ticked = new Set(text.split(",").map((s) => s.trim()).filter((s) => s !== ""));
  const unknown = [...ticked].find((s) => !names.includes(s));
  if (unknown !== undefined) return { error: `sweep ${field}: "${unknown}" is not one of them` };
  const values = names.filter((p) => ticked.has(p));
  if (values.length < least || values.length > most) {
    return { error: `sweep ${field}: tick 2 to ${String(most)} ${what} (${String(values.length)} ticked)` };
  }
  return { values };
}

/** The most toggles one sweep runs (the server's bound: placemap.sim_toggle.MAX_TOGGLES): every
 * toggle on its own and three combinations. */
export function maxToggles(toggles: string[]): number {
  return toggles.length + 3;
}

/** A toggle sweep's values: the ticked toggles, then the combinations typed (`fork_affine+wake_affine,
 * STEAL+steal_node_limit=8`, separated by commas; the server checks each and names a bad one), 2
 * to maxToggles in all, each once. */
export function toggleValues(ticked: string, combos: string, toggles: string[]): { values: string[] } | { error: string } {
  const got = parseTicked(ticked, toggles, "toggles", toggles.length, 0);
  if ("error" in got) return got;
  const typed = combos.split(",").map((c) => c.trim()).filter((c) => c !== "" && !got.values.includes(c));
  const values = [...got.values, ...new Set(typed)];
  const most = maxToggles(toggles);
  if (values.length < 2 || values.length > most) {
    return { error: `sweep toggles: tick or type 2 to ${String(most)} toggles (${String(values.length)} given)` };
  }
  return { values };
}

/** The form's ticked names with `name` ticked or not, in the order of `names`. */
export function toggleTicked(text: string, name: string, on: boolean, names: string[]): string {
  const ticked = new Set(text.split(",").map((s) => s.trim()).filter((s) => s !== ""));
  if (on) ticked.add(name);
  else ticked.delete(name);
  return names.filter((p) => ticked.has(p)).join(",");
}

/** The integer parameters a sweep can vary. */
export function sweepParams(params: WorkloadParam[]): WorkloadParam[] {
  return params.filter((p) => p.type === "int");
}

/** The typed values ("1, 2,4 8"), ascending: 2 to MAX_SWEEP_POINTS different integers within the
 * parameter's bounds, or what is wrong with them, naming the parameter. */
export function parseSweepValues(text: string, p: WorkloadParam): { values: number[] } | { error: string } {
  const parts = text.split(/[\s,]+/).filter((s) => s !== "");
  const bad = parts.find((s) => !/^\d+$/.test(s));
  if (bad !== undefined) return { error: `sweep ${p.name}: "${bad}" is not a whole number` };
  const values = [...new Set(parts.map(Number))].sort((a, b) => a - b);
  if (values.length < 2 || values.length > MAX_SWEEP_POINTS) {
    return { error: `sweep ${p.name}: give 2 to ${String(MAX_SWEEP_POINTS)} different values (${String(values.length)} given)` };
  }
  const lo = p.min ?? 0;
  const hi = p.max ?? Number.MAX_SAFE_INTEGER;
  const out = values.find((v) => v < lo || v > hi);
  if (out !== undefined) return { error: `sweep ${p.name}: ${String(out)} is outside ${String(lo)}..${String(hi)}` };
  return { values };
}

/** The sweep to submit for the form's choice: null without a parameter chosen; each point beside
 * its baseline when the choice changes something (a toggle sweep always), on the form's seeds;
 * with machines ticked in `across` (2 or more; none: the form's machine alone), the whole sweep on
 * each of them. A machine is a preset or a name of `hosts` (hosts.sweepHosts), whose topology the
 * spec's `hosts` sends. */
export function sweepSpec(
  param: string,
  text: string,
  params: WorkloadParam[],
  changes: boolean,
  seeds: number,
  presets: string[] = [],
  toggles: string[] = [],
  calibrated = false,
  combos = "",
  across = "",
  hosts: ReadonlyMap<string, Host> = new Map(),
): { spec: SimSweepSpec } | { error: string } | null {
  if (param === "") return null;
  const machines = [...presets, ...hosts.keys()];
  let on: string[] | undefined;
  if (across !== "" && param !== MACHINES) {
    const got = parseTicked(across, machines, "machines", MAX_SWEEP_POINTS, 2, "across");
    if ("error" in got) return got;
    on = got.values;
  }
  // the machines the sweep runs on, the recorded hosts among them sent with their topologies
  const withAcross = (spec: SimSweepSpec): { spec: SimSweepSpec } => {
    const out = on ? { ...spec, across: on } : spec;
    return { spec: { ...out, ...hostsOf([...(on ?? []), ...(param === MACHINES ? spec.values.map(String) : [])], hosts) } };
  };
  let got: { values: (number | string)[] } | { error: string };
  if (param === MACHINES) {
    got = parseTicked(text, machines, "machines", MAX_SWEEP_POINTS);
  } else if (param === TOGGLES) {
    // a toggle's effect is against the baseline: a toggle sweep always runs it
    got = toggleValues(text, combos, toggles);
    if ("values" in got) return withAcross({ param, values: got.values, baseline: true, seeds, calibrated: false });
  } else {
    const p = sweepParams(params).find((x) => x.name === param);
    if (!p) return { error: `sweep: the workload has no integer parameter ${param}` };
    got = parseSweepValues(text, p);
  }
  if ("error" in got) return got;
  // as calibrate runs each point: only along a workload parameter, never over machines
  return withAcross({ param, values: got.values, baseline: changes, seeds: changes ? seeds : 1, calibrated: calibrated && param !== MACHINES });
}

/** A log scale when the metric spans more than 20x (schbench's p99 from tens of us to tens of
 * ms), else linear; only positive values can be drawn on a log scale. */
export function logScale(values: number[]): boolean {
  const pos = values.filter((v) => v > 0);
  if (pos.length === 0 || pos.length < values.length) return false;
  return Math.max(...pos) / Math.min(...pos) > 20;
}

export function pctText(v: number | null): string {
  if (v === null) return "n/a";
  const abs = Math.abs(v);
  return `${v >= 0 ? "+" : ""}${v.toFixed(abs >= 100 ? 0 : 1)}%`;
}

function turnText(t: SimSweepTurn, param: string): string {
  const [a, b] = t.between;
  return `between ${String(a)} and ${String(b)} ${param}: ${t.from} (${pctText(t.from_pct)}) -> ${t.to} (${pctText(t.to_pct)})`;
}

function onsetText(o: SimSweepOnset | null, param: string): string {
  return o ? `at ${String(o.x)} ${param}: ${o.direction} (${pctText(o.pct)})` : "nowhere";
}

function waysText(w: SimSweepWays): string {
  const parts = (["better", "worse", "same"] as const).filter((d) => w[d].length > 0).map((d) => `${d} on ${w[d].join(", ")}`);
  return parts.length > 0 ? parts.join("; ") : "not measured";
}

/** The sweep's reading, as the command line prints it: where the change first passes 5%, where it
 * turns (or that it does not), on several seeds whether a seed decides a turn's end, and the same
 * for the published effect over the same values; over machines (no scale to turn along), which
 * machines the change helps and which it hurts, and the published ways; without a baseline, what
 * was run. */
export function sweepSummary(r: SimSweepResult): string[] {
  const p = r.param;
  if (!r.baseline) return [`${r.metric.name} at each of ${String(r.values.length)} ${p} values (nothing to compare: no hints or feature changes)`];
  const published = r.rows.some((row) => row.published.length > 0);
  const out: string[] = [];
  if (!r.ordered) {
    out.push(`the change, beyond 5%: ${waysText(r.ways)}`);
    if (published) out.push(`published: ${waysText(r.published_ways)}`);
  } else {
    out.push(`the change first passes 5% ${onsetText(r.onset, p)}`);
    out.push(...r.turns.map((t) => `the change turns ${turnText(t, p)}${t.seed_decides ? " (a seed decides the way at one end)" : ""}`));
    if (r.turns.length === 0) out.push(`the change does not turn: no two ${p} values point opposite ways beyond 5%`);
    if (published) {
      out.push(`published: it first passes 5% ${onsetText(r.published_onset, p)}`);
      out.push(...r.published_turns.map((t) => `published: it turns ${turnText(t, p)}`));
      if (r.published_turns.length === 0) out.push("published: it does not turn over these values");
    }
  }
  if (r.published_error) out.push(`the published tables could not be read: ${r.published_error}`);
  return out;
}

/** A sweep across machines' panels, one per machine (none: a sweep on one machine, or one stored
 * before sweeps ran across machines). */
export function panelsOf(r: SimSweepResult): SimSweepResult[] {
  return r.panels ?? [];
}

/** One cell of a sweep across machines: a machine's row at one value, and whether that machine's
 * change turns there (the value after a turn: a line above the cell). */
export interface AcrossCell {
  machine: string;
  row: SimSweepRow | null;
  turns: boolean;
}

/** A sweep across machines as one table: a row per value (in sweep order), a cell per machine (in
 * the order of `across`). */
export function acrossCells(r: SimSweepResult): { x: number | string; cells: AcrossCell[] }[] {
  return r.values.map((x) => ({
    x,
    cells: panelsOf(r).map((p) => ({
      machine: p.topology ?? "",
      row: p.rows.find((row) => row.x === x) ?? null,
      turns: p.turns.some((t) => t.between[1] === x),
    })),
  }));
}

/** A sweep across machines read as a whole: for a parameter, where each machine's change turns (or
 * that it does not) beside where the published one does; for toggles, which toggles help and hurt
 * where; and how often the model points the published way, over the published cells beyond 5%. */
export function acrossSummary(r: SimSweepResult): string[] {
  if (!r.baseline) return [`${r.metric.name} at each of ${String(r.values.length)} ${r.param} values on each of ${String(panelsOf(r).length)} machines (nothing to compare: no hints or feature changes)`];
  const out: string[] = [];
  for (const p of panelsOf(r)) {
    const m = p.topology ?? "";
    if (r.ordered) {
      const model = p.turns.map((t) => `between ${t.between.join(" and ")}`).join(", ") || "nowhere";
      const pub = p.rows.some((row) => row.published.length > 0) ? `; published: ${p.published_turns.map((t) => `between ${t.between.join(" and ")}`).join(", ") || "nowhere"}` : "";
      out.push(`${m}: the change turns ${model}${pub}`);
    } else {
      // the table shows them all: the ones that move by name, the rest counted
      const moved = (["better", "worse"] as const).filter((d) => p.ways[d].length > 0).map((d) => `${d} with ${p.ways[d].join(", ")}`);
      const same = p.ways.same.length > 0 ? [`${String(p.ways.same.length)} the same`] : [];
      out.push(`${m}: ${[...moved, ...same].join("; ") || "not measured"}`);
    }
  }
  const cells = panelsOf(r).flatMap((p) => p.rows).filter((row) => row.published_pct !== null && Math.abs(row.published_pct) > SIGNIFICANT_PCT && row.direction !== null);
  if (cells.length > 0) {
    const same = cells.filter((row) => row.direction === ((row.published_pct ?? 0) > 0 ? "better" : "worse")).length;
    out.push(`on the published cells beyond 5%, the model points the published way on ${String(same)} of ${String(cells.length)}`);
  }
  if (r.published_error) out.push(`the published tables could not be read: ${r.published_error}`);
  return out;
}

/** A CSV field: quoted when it holds a comma, a quote or a line break. */
function csvField(v: string | number | null): string {
  if (v === null) return "";
  const t = String(v);
  return /[",\n\r]/.test(t) ? `"${t.replaceAll('"', '""')}"` : t;
}

/** The sweep as a CSV table, to paste into a mail or a spreadsheet: a row per value; with a
 * baseline its metric, the baseline's, the change (% better) and the published effect (the median
 * of the published cells; empty where none), else the metric alone; across machines those columns
 * for each machine in turn, named by it. */
export function sweepCsv(r: SimSweepResult): string {
  const panels = panelsOf(r);
  const cols = r.baseline ? [r.metric.name, "baseline", "change_pct", "published_pct"] : [r.metric.name];
  const cells = (row: SimSweepRow | undefined): (number | null)[] =>
    row === undefined ? cols.map(() => null) : r.baseline ? [row.value, row.baseline, row.change_pct, row.published_pct] : [row.value];
  const head = panels.length > 0 ? panels.flatMap((p) => cols.map((c) => `${p.topology ?? ""} ${c}`)) : cols;
  const lines = [[r.param, ...head].map(csvField).join(",")];
  for (const x of r.values) {
    const rows = panels.length > 0 ? panels.map((p) => p.rows.find((row) => row.x === x)) : [r.rows.find((row) => row.x === x)];
    lines.push([x, ...rows.flatMap(cells)].map(csvField).join(","));
  }
  return `${lines.join("\n")}\n`;
}
