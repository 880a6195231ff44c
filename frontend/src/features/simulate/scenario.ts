/**
 * The simulate form's choices -> a parametric scenario (POST /api/sim/jobs), its baseline (the same
 * run without the hints and feature changes), the same pair on further seeds, and how a result and
 * a change over seeds read. The workloads and their parameters come from GET /api/sim/options, so
 * the form cannot drift from the simulator. Pure.
 */
import type { SimLatency, SimMetric, SimOptions, Topology } from "../../client/types";
import type { Toggles } from "../whatif/ToggleFields";
import { baselineOf, changePct, defaultToggles, toggleParts } from "../whatif/scenario";
import { formatDuration } from "../../viz/time";
import { MACHINES, TOGGLES } from "./sweepView";

export interface SimChoice extends Toggles {
  topology: string;
  kind: string;
  params: Record<string, number | string>;
  durationMs: number;
  /** run the pair on this many seeds: the choice's seed and the ones after it (1..MAX_SEEDS) */
  seeds: number;
  /** a recorded host's topology, sent inline (topology is then HOST_PREFIX + its id); null: a preset */
  topologyBody: Topology | null;
  /** the integer workload parameter to sweep, "topology" for machines or "toggle" for toggles
   * ("" for none), and its values as typed, or the ticked presets or toggles joined by commas
   * (sweepView) */
  sweepParam: string;
  sweepValues: string;
  /** run each point of a sweep along the tables' parameter as placemap calibrate runs its cell */
  sweepCalibrated: boolean;
  /** a toggle sweep's combinations as typed (`fork_affine+wake_affine, STEAL+steal_node_limit=8`) */
  sweepCombos: string;
  /** the presets to run a sweep (of a parameter or toggles) across, ticked and joined by commas;
   * "" runs it on the form's machine alone */
  sweepAcross: string;
}

/** The most seeds the form runs a pair on (two jobs each, within the server's queue of 32). */
export const MAX_SEEDS = 8;

/** The parameters' defaults for `kind`. */
export function paramDefaults(opts: SimOptions, kind: string): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  for (const p of opts.workloads[kind] ?? []) out[p.name] = p.default;
  return out;
}

export function defaultSimChoice(opts: SimOptions): SimChoice {
  const kinds = Object.keys(opts.workloads);
  const kind = kinds.includes("schbench") ? "schbench" : (kinds[0] ?? "");
  const topology = opts.presets.includes("zen3-2s-nps1") ? "zen3-2s-nps1" : (opts.presets[0] ?? "");
  return { ...defaultToggles(opts), topology, kind, params: paramDefaults(opts, kind), durationMs: 1000, seeds: 1, topologyBody: null, sweepParam: "", sweepValues: "", sweepCalibrated: false, sweepCombos: "", sweepAcross: "" };
}

/** Another workload, with its own parameters' defaults (and no sweep of a parameter, as its
 * parameters differ; a sweep over machines or toggles stays). */
export function withKind(choice: SimChoice, kind: string, opts: SimOptions): SimChoice {
  const named = choice.sweepParam === MACHINES || choice.sweepParam === TOGGLES;
  return { ...choice, kind, params: paramDefaults(opts, kind), sweepParam: named ? choice.sweepParam : "", sweepValues: named ? choice.sweepValues : "" };
}

/** Another sweep parameter: machines start with the form's machine ticked (when a preset), toggles
 * with every toggle ticked, an integer parameter with the values typed for the last one (none
 * after machines or toggles). */
export function withSweepParam(choice: SimChoice, param: string, opts: SimOptions): SimChoice {
  if (param === MACHINES) {
    const own = choice.topologyBody === null && opts.presets.includes(choice.topology) ? choice.topology : "";
    // a sweep over machines runs on each already: none to run it across
    return { ...choice, sweepParam: param, sweepValues: own, sweepAcross: "" };
  }
  if (param === TOGGLES) return { ...choice, sweepParam: param, sweepValues: opts.sweep_toggles.join(",") };
  const named = choice.sweepParam === MACHINES || choice.sweepParam === TOGGLES;
  return { ...choice, sweepParam: param, sweepValues: named ? "" : choice.sweepValues };
}

/** A form's toggles (Simulate's, the what-if's) set to one toggle of a sweep (`fork_affine+wake_affine`, `NO_SIS_UTIL`: hints,
 * features on by name and off by NO_ and name), instead of its own; null when the form cannot
 * say it (an integer feature such as steal_node_limit=8). */
export function toggleChoice<T extends Toggles>(choice: T, x: string, opts: SimOptions): T | null {
  const t = defaultToggles(opts);
  for (const part of x.split("+").map((p) => p.trim())) {
    const cat = Object.entries(opts.hint_categories).find(([, hs]) => hs.includes(part))?.[0];
    if (cat !== undefined) t.hints[cat] = part;
    else if (part in t.features) t.features[part] = true;
    else if (part.startsWith("NO_") && part.slice(3) in t.features) t.features[part.slice(3)] = false;
    else return null;
  }
  return { ...choice, hints: t.hints, features: t.features };
}

/** The form set to one point of a sweep (a value picked in its table): that machine, those
 * toggles, or the parameter at that value. */
export function pickSwept(choice: SimChoice, param: string, x: number | string, opts: SimOptions): SimChoice {
  if (param === MACHINES) return typeof x === "string" ? { ...choice, topology: x, topologyBody: null } : choice;
  if (param === TOGGLES) return (typeof x === "string" ? toggleChoice(choice, x, opts) : null) ?? choice;
  return param in choice.params ? { ...choice, params: { ...choice.params, [param]: x } } : choice;
}

/** The recording a scenario replays (a trace workload naming a stored recording), else null. */
export function replayedRecording(scenario: Record<string, unknown>): string | null {
  const w = scenario.workload;
  if (w === null || typeof w !== "object" || !("kind" in w) || w.kind !== "trace" || !("recording" in w)) return null;
  return typeof w.recording === "string" ? w.recording : null;
}

/** The form as it was when it ran a stored sweep (a link ?sweep=ID): the scenario's preset, workload
 * and parameters, hints, features, seed and length, and the sweep's parameter and values, so that
 * Simulate runs it again; what the form cannot hold keeps the form's (an inline host topology, a
 * parameter or feature this server does not know). `machines`: those the form can tick (the
 * presets, and the recorded hosts by their sweep names: hosts.sweepHosts). */
export function choiceOfSweep(choice: SimChoice, scenario: Record<string, unknown>, sweep: { param: string; values: (number | string)[]; seeds: number; calibrated: boolean; across?: string[] }, opts: SimOptions, machines: string[] = opts.presets): SimChoice {
  const values = sweep.values.map(String);
  // a toggle sweep's values: the toggles the form lists are ticked, the others typed as combinations
  const listed = sweep.param === TOGGLES ? values.filter((v) => opts.sweep_toggles.includes(v)) : values;
  const combos = sweep.param === TOGGLES ? values.filter((v) => !opts.sweep_toggles.includes(v)) : [];
  const out: SimChoice = { ...choice, ...defaultToggles(opts), seeds: sweep.seeds, sweepParam: sweep.param, sweepValues: listed.join(","), sweepCalibrated: sweep.calibrated, sweepCombos: combos.join(", "), sweepAcross: (sweep.across ?? []).filter((m) => machines.includes(m)).join(",") };
  if (typeof scenario.topology === "string" && opts.presets.includes(scenario.topology)) {
    out.topology = scenario.topology;
    out.topologyBody = null;
  }
  const w = scenario.workload;
  if (w !== null && typeof w === "object" && "kind" in w && typeof w.kind === "string" && w.kind in opts.workloads) {
    out.kind = w.kind;
    out.params = paramDefaults(opts, w.kind);
    for (const [k, v] of Object.entries(w)) if (k in out.params && (typeof v === "number" || typeof v === "string")) out.params[k] = v;
  }
  if (Array.isArray(scenario.hints)) {
    for (const h of scenario.hints) {
      const cat = Object.entries(opts.hint_categories).find(([, hs]) => hs.includes(String(h)))?.[0];
      if (cat !== undefined) out.hints[cat] = String(h);
    }
  }
  const f = scenario.features;
  if (f !== null && typeof f === "object") {
    for (const [k, v] of Object.entries(f)) if (k in out.features && typeof v === "boolean") out.features[k] = v;
  }
  if (typeof scenario.seed === "number") out.seed = scenario.seed;
  if (typeof scenario.duration_ms === "number") out.durationMs = scenario.duration_ms;
  return out;
}

export function simScenario(choice: SimChoice, opts: SimOptions): Record<string, unknown> {
  return {
    topology: choice.topologyBody ?? choice.topology,
    workload: { kind: choice.kind, ...choice.params },
    ...toggleParts(choice, opts),
    seed: choice.seed,
    duration_ms: choice.durationMs,
  };
}

/** Whether a metric is a runtime (seconds), not a rate per second or a latency. */
function isRuntime(name: string): boolean {
  return name.endsWith("_s") && !name.endsWith("_per_s") && !name.endsWith("_mb_s");
}

/** A metric's value with its unit, from its name's suffix. */
export function formatMetric(m: Pick<SimMetric, "name" | "value">): string {
  const v = m.value;
  if (isRuntime(m.name)) return formatDuration(v * 1e9);
  const num = (digits: number) => v.toLocaleString("en-US", { maximumFractionDigits: digits });
  if (m.name.endsWith("_us")) return `${num(1)} us`;
  if (m.name.endsWith("_mb_s")) return `${num(0)} MB/s`;
  if (m.name.endsWith("_per_s")) return `${num(0)}/s`;
  return num(3);
}

type RunLike = { metric: Pick<SimMetric, "name" | "value">; sim: { complete: boolean } };

/** A run's metric as a result: for a run that did not complete (its sim.incomplete says why), a
 * runtime is the time simulated, a lower bound; any other metric measured nothing, and its 0 is
 * no latency or rate. */
export function metricText(r: RunLike): string {
  if (r.sim.complete) return formatMetric(r.metric);
  if (isRuntime(r.metric.name)) return `≥ ${formatMetric(r.metric)}`;
  return r.metric.name.endsWith("_us") ? "no samples" : "nothing measured";
}

/** A latency metric's distribution as a line: "32 wakeups (us): p50 45.5, p90 53.5, p99 59.5,
 * p99.9 59.5, max 61" (the CLI's wording); null when it has no samples. */
export function latencyText(lat: SimLatency): string | null {
  if (lat.samples === 0) return null;
  const parts: [string, number | null][] = [["p50", lat.p50], ["p90", lat.p90], ["p99", lat.p99], ["p99.9", lat.p99_9], ["max", lat.max]];
  const values = parts.map(([k, v]) => `${k} ${v === null ? "n/a" : String(v)}`).join(", ");
  return `${String(lat.samples)} wakeups (us): ${values}`;
}

/** Whether two runs' metrics can be compared: both complete (a lower bound or a value that
 * measured nothing is no result to compare). */
export function comparable(a: RunLike, b: RunLike): boolean {
  return a.sim.complete && b.sim.complete;
}

/** Which of a run and its baseline did not complete, when they are not comparable. */
export function whyNotCompared(run: RunLike, baseline: RunLike): string {
  if (!run.sim.complete && !baseline.sim.complete) return "neither run completed";
  return run.sim.complete ? "the baseline did not complete" : "this run did not complete";
}

/** Whether a run did better than its baseline, by the metric's own direction. */
export function verdict(value: number, baseline: number, better: SimMetric["better"]): "better" | "worse" | "the same" {
  if (value === baseline) return "the same";
  return (value < baseline) === (better === "lower") ? "better" : "worse";
}

/** One more seed's pair: the scenario and its baseline on `seed`. */
export interface SeedPair {
  seed: number;
  scenario: Record<string, unknown>;
  baseline: Record<string, unknown>;
}

/** The pairs on the seeds after the choice's own (whose pair the form runs and saves first): none
 * when seeds is 1 or the choice changes nothing. */
export function extraSeedPairs(choice: SimChoice, opts: SimOptions, changes: boolean): SeedPair[] {
  if (!changes) return [];
  const n = Math.min(MAX_SEEDS, Math.max(1, Math.floor(choice.seeds)));
  const out: SeedPair[] = [];
  for (let i = 1; i < n; i++) {
    const c = { ...choice, seed: choice.seed + i };
    out.push({ seed: c.seed, scenario: simScenario(c, opts), baseline: simScenario(baselineOf(c, opts), opts) });
  }
  return out;
}

/** A finished pair on one seed as the summary reads it, or why one of its jobs failed. */
export type SeedResult = { seed: number; run: RunLike; base: RunLike } | { seed: number; failed: string };

export interface SeedSummary {
  seeds: number;
  /** seeds whose two runs completed: the change was measured */
  measured: number;
  better: number;
  worse: number;
  same: number;
  /** the measured changes in % of the baseline (signed, as the form shows one) */
  median: number | null;
  min: number | null;
  max: number | null;
  /** two or more seeds measured and every one the very same change: the seeds moved nothing */
  identical: boolean;
  verdict: string;
}

/** How the change spreads over seeds: how many seeds it is better, worse or the same on by the
 * metric's direction, and whether one sign holds on every measured seed or the seed decides (the
 * model's noise, not an effect). A seed whose run did not complete, or whose job failed, counts as
 * a seed but measured nothing. As `placemap sim --baseline --seeds` says it (sim_pair.py). */
export function seedSummary(results: SeedResult[], better: SimMetric["better"]): SeedSummary {
  const changes: number[] = [];
  let nb = 0;
  let nw = 0;
  for (const r of results) {
    if ("failed" in r || !comparable(r.run, r.base)) continue;
    const v = r.run.metric.value;
    const b = r.base.metric.value;
    changes.push(changePct(v, b));
    const how = verdict(v, b, better);
    if (how === "better") nb++;
    else if (how === "worse") nw++;
  }
  const m = changes.length;
  const same = m - nb - nw;
  let text: string;
  if (m === 0) text = "no seed measured a change";
  else if (nb === m) text = "better on every seed";
  else if (nw === m) text = "worse on every seed";
  else if (same === m) text = "the same on every seed";
  else text = `the seed decides: better on ${String(nb)}, worse on ${String(nw)}, the same on ${String(same)}`;
  const sorted = [...changes].sort((a, b) => a - b);
  const mid = Math.floor(m / 2);
  const median = m === 0 ? null : m % 2 ? sorted[mid] : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
  return {
    seeds: results.length,
    measured: m,
    better: nb,
    worse: nw,
    same,
    median: median ?? null,
    min: m ? (sorted[0] ?? null) : null,
    max: m ? (sorted[m - 1] ?? null) : null,
    identical: m > 1 && sorted[0] === sorted[m - 1],
    verdict: text,
  };
}

/**
 * A submitted scenario as a file for `placemap sim` (the JSON the job ran: the command line given
 * it runs the same simulation, seeded and deterministic, and prints the same metric).
 */
export function scenarioFileText(scenario: Record<string, unknown>): string {
  return `${JSON.stringify(scenario, null, 2)}\n`;
}

/** A sweep as its command line reads it: its values, how they ran, and its hosts (name -> topology). */
export interface CliSweep {
  param: string;
  values: (number | string)[];
  calibrated?: boolean;
  across?: string[];
  hosts?: Readonly<Record<string, Topology>> | null;
}

/**
 * The command that reruns what the form ran from that file: the run alone, or with `baseline` the
 * pair (`--baseline`: the same run without its hints and feature changes), on `seeds` seeds from
 * the file's (`--seeds`, a pair only, as the form runs further seeds only for a pair); with `sweep`,
 * the same at each of its values (`--sweep PARAM=V1,...`, `--sweep topology=PRESET,...`; `--calibrated`
 * when each point ran as calibrate runs its cell; `--across PRESET,...` when it ran on each machine;
 * a machine of `hosts` as its topology file, NAME.json, which Reproduce offers beside scenario.json).
 */
export function cliCommand(baseline: boolean, seeds: number, sweep?: CliSweep): string {
  const args = ["bin/placemap", "sim", "scenario.json"];
  if (baseline) args.push("--baseline");
  if (baseline && seeds > 1) args.push("--seeds", String(seeds));
  // a machine that is no preset is its topology file on the command line (hostFiles)
  const machine = (m: number | string) => (sweep?.hosts && String(m) in sweep.hosts ? `${String(m)}.json` : String(m));
  if (sweep) args.push("--sweep", `${sweep.param}=${sweep.values.map(sweep.param === MACHINES ? machine : String).join(",")}`);
  if (sweep?.calibrated) args.push("--calibrated");
  if (sweep?.across?.length) args.push("--across", sweep.across.map(machine).join(","));
  return args.join(" ");
}
