/**
 * The simulate form's choices -> a parametric scenario (POST /api/sim/jobs), its baseline (the same
 * run without the hints and feature changes) and how a result reads. The workloads and their
 * parameters come from GET /api/sim/options, so the form cannot drift from the simulator. Pure.
 */
import type { SimMetric, SimOptions } from "../../client/types";
import type { Toggles } from "../whatif/ToggleFields";
import { defaultToggles, toggleParts } from "../whatif/scenario";
import { formatDuration } from "../../viz/time";

export interface SimChoice extends Toggles {
  topology: string;
  kind: string;
  params: Record<string, number | string>;
  durationMs: number;
}

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
  return { ...defaultToggles(opts), topology, kind, params: paramDefaults(opts, kind), durationMs: 1000 };
}

/** Another workload, with its own parameters' defaults. */
export function withKind(choice: SimChoice, kind: string, opts: SimOptions): SimChoice {
  return { ...choice, kind, params: paramDefaults(opts, kind) };
}

export function simScenario(choice: SimChoice, opts: SimOptions): Record<string, unknown> {
  return {
    topology: choice.topology,
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
