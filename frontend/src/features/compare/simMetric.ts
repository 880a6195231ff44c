/**
 * A simulated recording's own metric (the API's Recording.sim_metric: what the simulator measured
 * when the run was saved) as the dashboard reads it: in the recording's header, and as the first row
 * of a comparison of two simulated runs of the same metric, with the right one's change read by the
 * metric's direction. Captured traces have none. Pure.
 */
import type { SimRunMetric } from "../../client/types";
import { changePct, pctText } from "../whatif/scenario";
import { metricText, verdict } from "../simulate/scenario";

function asRun(m: SimRunMetric) {
  return { metric: { name: m.name, value: m.value }, sim: { complete: m.complete } };
}

/** "p99_wakeup_latency_us 39.9 us over 24 wakeups", "runtime_s ≥ 300.0 ms" (a run that did not complete). */
export function simMetricText(m: SimRunMetric): string {
  const over = m.samples !== null && m.samples > 0 ? ` over ${String(m.samples)} wakeups` : "";
  return `${m.name} ${metricText(asRun(m))}${over}`;
}

export interface SimMetricRow {
  name: string;
  better: SimRunMetric["better"];
  a: string;
  b: string;
  /** the right one's change ("-35.1%", "=", "n/a") */
  change: string;
  /** whether the change is better or worse, or why there is none; null when the same */
  verdict: string | null;
}

/** The comparison's metric row: both recordings simulated, with the same metric; null otherwise. */
export function simMetricRow(a: SimRunMetric | null | undefined, b: SimRunMetric | null | undefined): SimMetricRow | null {
  if (!a || !b || a.name !== b.name) return null;
  const row = { name: a.name, better: a.better, a: metricText(asRun(a)), b: metricText(asRun(b)) };
  if (!a.complete || !b.complete) return { ...row, change: "n/a", verdict: "not compared: a run did not complete" };
  if (a.value === 0) return { ...row, change: "n/a", verdict: "the left is 0" };
  const v = verdict(b.value, a.value, a.better);
  return v === "the same" ? { ...row, change: "=", verdict: null } : { ...row, change: pctText(changePct(b.value, a.value)), verdict: v };
}
