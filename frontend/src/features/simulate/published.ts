/**
 * Reading a simulated pair against the published cells it reproduces (POST /api/sim/published):
 * the change in the calibration's sign (positive = better), whether the run points the way the
 * real kernel did (the calibration's rule: a direction counts beyond 5% published), and the cell,
 * its effect and its differences from the calibration's run as text, and the form set to the
 * model's own run of the cell.
 */
import type { PublishedCell, SimMetric } from "../../client/types";
import { pctText } from "../whatif/scenario";
import type { SimChoice } from "./scenario";

/** percent better than the baseline by the metric's direction; null without a baseline value */
export function betterPct(value: number, baseline: number, better: SimMetric["better"]): number | null {
  if (!(baseline > 0)) return null;
  return ((better === "lower" ? baseline - value : value - baseline) / baseline) * 100;
}

/** same / opposite: the run's sign against a published effect beyond 5%; unmoved: the run changed
 * nothing where the kernel did; no-direction: the published effect is within 5% */
export type Direction = "same" | "opposite" | "unmoved" | "no-direction";

export function direction(cell: Pick<PublishedCell, "published_pct" | "significant">, simulatedBetterPct: number): Direction {
  if (!cell.significant) return "no-direction";
  if (simulatedBetterPct === 0) return "unmoved";
  return cell.published_pct * simulatedBetterPct > 0 ? "same" : "opposite";
}

/** The way a run points against a cell: one change (the pair), or each seed's ("... on every
 * seed", or the count of each way when the seed decides); `data` is the way, or "mixed". */
export function waysText(cell: Pick<PublishedCell, "published_pct" | "significant">, changes: number[], seeds: boolean): { text: string; data: string } | null {
  const ways = changes.map((c) => direction(cell, c));
  const kinds = [...new Set(ways)].sort();
  const [only] = kinds;
  if (only === undefined) return null;
  if (kinds.length === 1) return { text: DIRECTION_TEXT[only] + (seeds && only !== "no-direction" ? " on every seed" : ""), data: only };
  const counts = kinds.map((w) => `${w} on ${String(ways.filter((x) => x === w).length)}`).join(", ");
  return { text: `the seed decides the way this run points (${counts})`, data: "mixed" };
}

export const DIRECTION_TEXT: Record<Direction, string> = {
  same: "this run points the same way",
  opposite: "this run points the other way",
  unmoved: "this run does not move it",
  "no-direction": "within the 5% the calibration counts no direction from",
};

function num(v: number): string {
  return v.toLocaleString("en-US", { maximumFractionDigits: 2 });
}

/** "+41.5% better (p99_latency_us 53 → 31)": the published effect and the values it is from */
export function effectText(c: PublishedCell): string {
  const effect = `${pctText(c.published_pct)} ${c.published_pct >= 0 ? "better" : "worse"}`;
  const values = c.tip_value !== null && c.value !== null ? ` (${c.metric} ${num(c.tip_value)} → ${num(c.value)})` : "";
  return effect + values;
}

/** "schbench Wakeup Hint, AMD Zen3 2x64C/128T NPS1, 8 workers, wake_affine": which cell */
export function whereText(c: PublishedCell): string {
  const uncertain = c.uncertain ? ", its reading marked uncertain" : "";
  return `${c.section}, ${c.machine}, ${c.x} ${c.x_name}, ${c.config}${uncertain}`;
}

/** "placemap calibrate runs it with duration_ms 30000 (here 300)", or null when the runs are alike */
export function differsText(c: Pick<PublishedCell, "differs" | "compared_by">): string | null {
  if (c.differs.length === 0) return null;
  const parts = c.differs.map((d) => `${d.field} ${String(d.calibration)} (here ${String(d.yours)})`);
  return `${c.compared_by} runs it with ${parts.join(", ")}`;
}

/** The form's choice set to the model's own run of a cell (its workload parameters and
 * duration), the machine, hints and features left as they are (they are the cell's already). */
export function withModelRun(choice: SimChoice, cell: Pick<PublishedCell, "model_workload" | "model_duration_ms">): SimChoice {
  return { ...choice, params: { ...choice.params, ...cell.model_workload }, durationMs: cell.model_duration_ms };
}
