/**
 * CPU lanes, the pure part: one row per CPU in the grid's order (NUMA node > LLC > core > CPU), where
 * an LLC and a node end, each row's height, the span under a point, and the window's context
 * switches estimated from the overview (so a window too busy to draw is said without asking the
 * server). The canvas that draws them is features/playback/CpuLanes.tsx.
 */
import type { LaneSpans } from "../client/arrow";
import type { Overview, Topology } from "../client/types";
import { rebin } from "./overview";

export interface LaneRows {
  /** the CPU of each row, top down */
  cpus: number[];
  rowOf: Map<number, number>;
  /** rows where a new LLC (or, stronger, a new node) starts, row 0 excluded */
  breaks: { row: number; kind: "llc" | "node" }[];
}

/** The rows: the topology's online CPUs by node, LLC, core, CPU; then any CPU the spans name that
 * the topology lacks, by number. */
export function laneRows(topo: Topology | null, spans: LaneSpans | null): LaneRows {
  const key = new Map<number, [number, number, number]>();
  for (const c of topo?.cpus ?? []) {
    if (c.online) key.set(c.cpu, [c.numa_node ?? Infinity, c.llc ?? Infinity, c.core ?? Infinity]);
  }
  const cpus = [...key.keys()].sort((a, b) => {
    const ka = key.get(a) ?? [0, 0, 0];
    const kb = key.get(b) ?? [0, 0, 0];
    return ka[0] - kb[0] || ka[1] - kb[1] || ka[2] - kb[2] || a - b;
  });
  const extra = new Set<number>();
  if (spans) for (let i = 0; i < spans.length; i++) if (!key.has(spans.cpu[i] ?? -1)) extra.add(spans.cpu[i] ?? -1);
  cpus.push(...[...extra].sort((a, b) => a - b));
  const rowOf = new Map(cpus.map((c, i) => [c, i]));
  const breaks: LaneRows["breaks"] = [];
  for (let r = 1; r < cpus.length; r++) {
    const a = key.get(cpus[r - 1] ?? -1);
    const b = key.get(cpus[r] ?? -1);
    if (!a || !b) {
      if (a !== b) breaks.push({ row: r, kind: "node" });
    } else if (a[0] !== b[0]) breaks.push({ row: r, kind: "node" });
    else if (a[1] !== b[1]) breaks.push({ row: r, kind: "llc" });
  }
  return { cpus, rowOf, breaks };
}

/** A row's height in whole px (rows do not blur into each other): 12 for a few CPUs, less for many,
 * about LANES_H px in all, never below 1 px (a 256-CPU machine's lanes are 256 px tall). */
export const LANES_H = 160;
export function rowHeight(rows: number): number {
  return Math.max(1, Math.min(12, Math.floor(LANES_H / Math.max(1, rows))));
}

/** Each CPU's spans: [first, end) row indices (the spans come by CPU then time). */
export function cpuRanges(spans: LaneSpans): Map<number, [number, number]> {
  const out = new Map<number, [number, number]>();
  for (let i = 0; i < spans.length; i++) {
    const c = spans.cpu[i] ?? -1;
    const r = out.get(c);
    if (r) r[1] = i + 1;
    else out.set(c, [i, i + 1]);
  }
  return out;
}

/** The span running on `cpu` at time `t` (start <= t < end), or -1. */
export function spanAt(spans: LaneSpans, ranges: Map<number, [number, number]>, cpu: number, t: number): number {
  const r = ranges.get(cpu);
  if (!r) return -1;
  let lo = r[0];
  let hi = r[1];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((spans.start[mid] ?? 0) <= t) lo = mid + 1;
    else hi = mid;
  }
  const i = lo - 1;
  return i >= r[0] && t < (spans.end[i] ?? -Infinity) ? i : -1;
}

/** The spans the lanes hold; summed columns, at least as many: each column counts the spans touching
 * it, and one span can run on across each boundary between a CPU's adjacent columns, counted again
 * there. */
export function spansIn(spans: LaneSpans): number {
  if (!spans.busy) return spans.length;
  let n = 0;
  for (let i = 0; i < spans.length; i++) {
    n += spans.busy.spans[i] ?? 1;
    if (i > 0 && spans.cpu[i] === spans.cpu[i - 1] && spans.start[i] === spans.end[i - 1]) n -= 1;
  }
  return n;
}

/** The context switches of [t0, t1] as the overview's bins give them (a bin cut by the window counts
 * its share), rounded; null without the switch row. */
export function switchesIn(overview: Overview | null, t0: number, t1: number): number | null {
  const row = overview?.by_kind.switch;
  if (!overview || !row) return null;
  const bins = rebin(row, overview.t_start_ns, overview.bin_ns, t0, Math.max(t1, t0 + 1), 1);
  return Math.round(bins[0]?.value ?? 0);
}

/** The keyboard's place in the lanes: a row and a time (the span there, if any, is the one meant). */
export interface LaneCursor {
  row: number;
  t: number;
}

/** The cursor after a key: Up/Down a CPU (the same time), Right/Left the next/previous span on the
 * row (its start), Home/End the row's first/last span; any other key leaves it. */
export function moveCursor(spans: LaneSpans, ranges: Map<number, [number, number]>, cpus: number[], cur: LaneCursor, key: string): LaneCursor {
  if (key === "ArrowDown") return { row: Math.min(cpus.length - 1, cur.row + 1), t: cur.t };
  if (key === "ArrowUp") return { row: Math.max(0, cur.row - 1), t: cur.t };
  const r = ranges.get(cpus[cur.row] ?? -1);
  if (!r) return cur;
  const [lo, hi] = r;
  // the first span starting after t (the one before it holds t, or ends before t)
  let a = lo;
  let b = hi;
  while (a < b) {
    const m = (a + b) >> 1;
    if ((spans.start[m] ?? 0) <= cur.t) a = m + 1;
    else b = m;
  }
  const to = (i: number): LaneCursor => ({ row: cur.row, t: spans.start[i] ?? cur.t });
  switch (key) {
    case "ArrowRight":
      return a < hi ? to(a) : cur;
    case "ArrowLeft": {
      const inside = a - 1 >= lo && cur.t < (spans.end[a - 1] ?? -Infinity);
      const prev = inside ? a - 2 : a - 1;
      return prev >= lo ? to(prev) : cur;
    }
    case "Home":
      return to(lo);
    case "End":
      return to(hi - 1);
    default:
      return cur;
  }
}
