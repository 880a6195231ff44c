/**
 * Timeline overview helpers: re-bin the server's Overview (GET overview) to the pixels on screen,
 * restrict it to a zoom window, and stack migrations by level. Pure.
 */
import type { MigrationLevel, Overview } from "../client/types";
import { LEVELS } from "./colors";

export interface Bin {
  t0: number;
  t1: number;
  value: number;
}

/** Bin index of t in an overview (clamped). */
export function binOf(ov: Pick<Overview, "t_start_ns" | "bin_ns" | "bins">, t: number): number {
  if (ov.bin_ns <= 0) return 0;
  const i = Math.floor((t - ov.t_start_ns) / ov.bin_ns);
  return Math.max(0, Math.min(ov.bins - 1, i));
}

/**
 * Sum source bins into `target` equal bins over [t0, t1]. A source bin that straddles a target
 * boundary is split proportionally to the overlap, so totals are preserved for the full range.
 */
export function rebin(
  counts: readonly number[],
  srcStart: number,
  srcBinNs: number,
  t0: number,
  t1: number,
  target: number,
): Bin[] {
  const out: Bin[] = [];
  const n = Math.max(1, Math.floor(target));
  const w = (t1 - t0) / n;
  for (let i = 0; i < n; i++) out.push({ t0: t0 + i * w, t1: t0 + (i + 1) * w, value: 0 });
  if (w <= 0 || srcBinNs <= 0) return out;
  for (let s = 0; s < counts.length; s++) {
    const v = counts[s] ?? 0;
    if (v === 0) continue;
    const a = srcStart + s * srcBinNs;
    const b = a + srcBinNs;
    if (b <= t0 || a >= t1) continue;
    const first = Math.max(0, Math.floor((Math.max(a, t0) - t0) / w));
    const last = Math.min(n - 1, Math.floor((Math.min(b, t1) - t0 - 1e-9) / w));
    for (let k = first; k <= last; k++) {
      const bin = out[k];
      if (!bin) continue;
      const ov = Math.min(b, bin.t1) - Math.max(a, bin.t0);
      if (ov > 0) bin.value += (v * ov) / srcBinNs;
    }
  }
  return out;
}

export interface StackedBin {
  t0: number;
  t1: number;
  /** cumulative [y0, y1] per level, in LEVELS order */
  stack: Record<MigrationLevel, [number, number]>;
  total: number;
}

/** Series stacked bin by bin over [t0, t1] in `target` bins, in `keys` order: each bin's
 * cumulative [y0, y1] per key and its total. */
export function stackSeries<K extends string>(series: Record<K, readonly number[]>, keys: readonly K[], ov: Overview, t0: number, t1: number, target: number): { t0: number; t1: number; stack: Record<K, [number, number]>; total: number }[] {
  const per = keys.map((k) => rebin(series[k], ov.t_start_ns, ov.bin_ns, t0, t1, target));
  const first = per[0] ?? [];
  return first.map((b, i) => {
    let y = 0;
    const stack = {} as Record<K, [number, number]>;
    keys.forEach((k, j) => {
      const v = per[j]?.[i]?.value ?? 0;
      stack[k] = [y, y + v];
      y += v;
    });
    return { t0: b.t0, t1: b.t1, stack, total: y };
  });
}

export function stackMigrations(ov: Overview, t0: number, t1: number, target: number): StackedBin[] {
  return stackSeries(ov.migrations_by_level, LEVELS, ov, t0, t1, target);
}

/** Where the wakeups whose waker ran in another LLC than the wakee's prev CPU woke: pulled to the
 * waker's LLC, kept in prev's, or in neither (the overview's wakeups_by_waker rows). */
export const CROSS_LLC = ["to_waker_llc", "to_prev_llc", "elsewhere"] as const;
export type CrossLlc = (typeof CROSS_LLC)[number];

/** The cross-LLC wakeups stacked over [t0, t1]; null when the overview has no such rows or the
 * whole recording has no such wakeup (one LLC, or a capture without sched_waking). */
export function stackCrossLlc(ov: Overview, t0: number, t1: number, target: number): { t0: number; t1: number; stack: Record<CrossLlc, [number, number]>; total: number }[] | null {
  const w = ov.wakeups_by_waker;
  if (!w || !w.cross_llc.some((v) => v > 0)) return null;
  return stackSeries(w, CROSS_LLC, ov, t0, t1, target);
}

/** The first bin start >= t (strictly after t's bin) holding migrations, or null. */
export function nextMigrationBin(ov: Overview, t: number): number | null {
  const start = binOf(ov, t);
  for (let i = start; i < ov.bins; i++) {
    let n = 0;
    for (const l of LEVELS) n += ov.migrations_by_level[l][i] ?? 0;
    if (n > 0) {
      const b0 = ov.t_start_ns + i * ov.bin_ns;
      if (b0 + ov.bin_ns > t) return Math.max(b0, i === start ? t : b0);
    }
  }
  return null;
}
