/**
 * How a simulated run's work sits on the machine's LLCs (the result's llc_util: each LLC's busy
 * fraction per bin and over the run): the fewest LLCs that carry most of it and the busiest one.
 * Pure, for the Simulate and What-if results (LlcUtil.tsx) and the comparison's table (counts.ts).
 */
import type { SimLlcUtil } from "../../client/types";

/** The share of the run's busy time `carrying` LLCs hold between them. */
export const CARRY_SHARE = 0.9;

export interface LlcSpread {
  /** LLCs in the run's topology */
  llcs: number;
  /** the fewest LLCs whose busy time makes CARRY_SHARE of the run's (0 when nothing ran) */
  carrying: number;
  /** the busiest LLC (by busy CPU time), its busy fraction over the run and its share of the work */
  busiest: { llc: number; mean: number; share: number } | null;
}

/** One LLC's work: its busy fraction over the run, and its busy CPU time in CPUs (mean x CPUs). */
export interface LlcWork {
  llc: number;
  mean: number;
  busy: number;
}

/** Busy CPU time per LLC is mean x CPUs: an LLC of 16 CPUs at 50% does the work of 8 CPUs. */
export function llcSpread(u: SimLlcUtil): LlcSpread {
  return spreadOf(u.series.map((s) => ({ llc: s.llc, mean: s.mean, busy: s.mean * s.cpus })));
}

/** llcSpread of any run's work per LLC (a recording's, from its CPUs' busy time: compare/counts.ts). */
export function spreadOf(work: LlcWork[]): LlcSpread {
  const total = work.reduce((a, w) => a + w.busy, 0);
  if (!(total > 0)) return { llcs: work.length, carrying: 0, busiest: null };
  const sorted = [...work].sort((a, b) => b.busy - a.busy || a.llc - b.llc);
  let carrying = 0;
  let acc = 0;
  for (const w of sorted) {
    carrying++;
    acc += w.busy;
    if (acc >= CARRY_SHARE * total - 1e-12) break;
  }
  const top = sorted[0];
  return { llcs: work.length, carrying, busiest: top ? { llc: top.llc, mean: top.mean, share: top.busy / total } : null };
}

const pct = (x: number): string => `${String(Math.round(100 * x))}%`;

/** "90% of the work on 3 of 16 LLCs; the busiest, LLC 10, 42% busy (59% of the work)". */
export function spreadText(s: LlcSpread): string {
  if (s.busiest === null) return `nothing ran on the ${String(s.llcs)} LLCs`;
  const b = s.busiest;
  return `${pct(CARRY_SHARE)} of the work on ${String(s.carrying)} of ${String(s.llcs)} LLCs; the busiest, LLC ${String(b.llc)}, ${pct(b.mean)} busy (${pct(b.share)} of the work)`;
}

/** A bin's span in simulated ms, "a-b ms" (the last bin ends at end_ns). */
export function binSpan(u: SimLlcUtil, i: number, bins: number): string {
  const start = u.t_start_ns + i * u.bin_ns;
  const end = i === bins - 1 ? u.end_ns : start + u.bin_ns;
  const ms = (ns: number): string => (ns / 1e6).toFixed(ns % 1e6 === 0 ? 0 : 1);
  return `${ms(start)}-${ms(end)} ms`;
}
