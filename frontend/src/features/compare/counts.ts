/**
 * The comparison's numbers: what each recording's kernel (or model) decided over the whole run,
 * row by row (migrations by level and cause, wakeups by level and by where their waker ran, the
 * run-queue delay after a wakeup, CPU busy and how it sits on the LLCs, what was lost), with the
 * right one's change against the left
 * one. Pure; the rows come from each recording's GET metrics (and its topology).
 */
import type { Metrics, Overview, Topology, WakerCounts } from "../../client/types";
import { formatDuration } from "../../viz/time";
import { spreadOf, type LlcSpread } from "../simulate/llcUtil";

export interface CountRow {
  key: string;
  label: string;
  /** indented under the row before it (a part of a total) */
  part: boolean;
  /** indented once more: a part of the part above it */
  sub?: boolean;
  /** what the row counts, where its label cannot say it all (the row header's title) */
  hint?: string;
  a: number | null;
  b: number | null;
  /** how the value reads: a count, a fraction shown as a percentage, or a time in ns */
  unit: "count" | "fraction" | "ns";
}

const LEVELS = [
  ["smt", "SMT sibling"],
  ["llc", "same LLC"],
  ["node", "other LLC, same node"],
  ["cross_node", "other node"],
] as const;

const CAUSES = [
  ["wakeup", "at wakeup"],
  ["fork", "at fork"],
  ["balance", "by the balancer"],
] as const;

function meanBusy(m: Metrics): number | null {
  const busy = m.per_cpu_busy;
  if (!busy || busy.length === 0) return null;
  return busy.reduce((s, x) => s + x, 0) / busy.length;
}

function sameCpuShare(m: Metrics): number | null {
  return m.wakeups.total > 0 ? m.wakeups.same_cpu / m.wakeups.total : null;
}

type WakerKey = "to_waker_llc" | "to_prev_llc" | "elsewhere";

/** Of the wakeups whose waker ran in another LLC than the wakee's prev CPU, the share that woke
 * where `k` says (null without such wakeups). */
export function shareOfCross(w: WakerCounts, k: WakerKey): number | null {
  return w.cross_llc > 0 ? w[k] / w.cross_llc : null;
}

/** Of the wakeups whose waker is known (shared_llc + cross_llc), the share on the waker's own CPU;
 * null without any (a capture without sched_waking). */
function onWakerShare(w: WakerCounts): number | null {
  const known = w.shared_llc + w.cross_llc;
  return known > 0 ? w.on_waker_cpu / known : null;
}

/** The wakeups by where their waker ran (sched_waking's CPU): the rows under "wakeups", read from a
 * recording's counts (its whole run's, or its overview's up to a playhead). */
const WAKER_ROWS: { key: string; label: string; sub: boolean; unit: CountRow["unit"]; hint: string; f: (w: WakerCounts) => number | null }[] = [
  {
    key: "cross_llc",
    label: "waker in another LLC",
    sub: false,
    unit: "count",
    hint: "woken from a CPU (sched_waking's) outside the LLC of the CPU the task last ran on: where the wakeup path (wake_affine() for a fair task) chooses between the two LLCs",
    f: (w) => w.cross_llc,
  },
  { key: "to_waker_llc", label: "pulled to the waker's LLC", sub: true, unit: "fraction", hint: "of the wakeups from another LLC, the share that woke in the waker's LLC", f: (w) => shareOfCross(w, "to_waker_llc") },
  { key: "to_prev_llc", label: "kept in its own LLC", sub: true, unit: "fraction", hint: "of the wakeups from another LLC, the share that woke in the LLC it last ran in", f: (w) => shareOfCross(w, "to_prev_llc") },
  { key: "elsewhere", label: "in neither", sub: true, unit: "fraction", hint: "of the wakeups from another LLC, the share that woke in a third LLC", f: (w) => shareOfCross(w, "elsewhere") },
  {
    key: "on_waker_cpu",
    label: "on the waker's CPU",
    sub: false,
    unit: "fraction",
    hint: "of the wakeups whose waker is known (from its LLC or another), the share that woke on the very CPU of its waker",
    f: onWakerShare,
  },
  {
    key: "still_running",
    label: "woken while it ran",
    sub: false,
    unit: "count",
    hint: "woken while still on its CPU (before the switch that took it off) or preempted on its runqueue, and woke there: no choice shows (the kernel found it still queued, or queued the wakeup on the CPU it was leaving)",
    f: (w) => w.still_running,
  },
  {
    key: "unknown",
    label: "waker unknown",
    sub: false,
    unit: "count",
    hint: "no sched_waking before the wakeup (the trace did not record it, or a ring-buffer loss came between them), or a CPU the topology does not describe",
    f: (w) => w.unknown,
  },
];

/** The waker rows for two recordings' counts (null: a recording stored before they were counted,
 * or an overview whose stored events could not be read again). */
function wakerRows(a: WakerCounts | null | undefined, b: WakerCounts | null | undefined): CountRow[] {
  return WAKER_ROWS.map((w) => ({ key: `wakeups.waker.${w.key}`, label: w.label, part: true, sub: w.sub, hint: w.hint, a: a ? w.f(a) : null, b: b ? w.f(b) : null, unit: w.unit }));
}

/** Where the run's work sat: its CPUs' busy time summed per LLC of its topology (null without the
 * per-CPU busy time, which needs switches, or without LLCs in the topology). */
export function llcWorkSpread(m: Metrics, topo: Topology | null | undefined): LlcSpread | null {
  const busy = m.per_cpu_busy;
  if (!busy || busy.length === 0 || !topo) return null;
  const byLlc = new Map<number, { busy: number; cpus: number }>();
  for (const c of topo.cpus) {
    if (c.llc === null || !c.online) continue;
    const w = byLlc.get(c.llc) ?? { busy: 0, cpus: 0 };
    w.busy += busy[c.cpu] ?? 0;
    w.cpus += 1;
    byLlc.set(c.llc, w);
  }
  if (byLlc.size === 0) return null;
  return spreadOf([...byLlc].map(([llc, w]) => ({ llc, mean: w.busy / w.cpus, busy: w.busy })));
}

/** The rows, in reading order, for the left recording `a` and the right one `b` (each on its
 * topology, for the rows of where the work ran). */
export function compareRows(a: Metrics, b: Metrics, topoA?: Topology | null, topoB?: Topology | null): CountRow[] {
  const rows: CountRow[] = [];
  const add = (key: string, label: string, part: boolean, f: (m: Metrics) => number | null, unit: CountRow["unit"] = "count") =>
    rows.push({ key, label, part, a: f(a), b: f(b), unit });
  add("migrations", "migrations", false, (m) => m.migrations.total);
  for (const [k, label] of LEVELS) add(`migrations.${k}`, label, true, (m) => m.migrations.by_level[k]);
  for (const [k, label] of CAUSES) add(`migrations.cause.${k}`, label, true, (m) => m.migrations.by_cause[k]);
  add("wakeups", "wakeups", false, (m) => m.wakeups.total);
  add("wakeups.same_cpu", "on its last CPU", true, sameCpuShare, "fraction");
  for (const [k, label] of LEVELS) add(`wakeups.${k}`, `moved: ${label}`, true, (m) => m.wakeups.by_level[k]);
  rows.push(...wakerRows(a.wakeups.by_waker, b.wakeups.by_waker));
  // run-queue delay after a wakeup (null: no wakeup was followed by its switch-in, or, said in the
  // row's hint, a stored chunk could not be read for a recording stored before it was measured)
  const unread = delaysUnread(a, b);
  rows.push({ key: "delay.p50", label: "wakeup → run, p50", part: false, a: a.wakeup_latency?.p50_ns ?? null, b: b.wakeup_latency?.p50_ns ?? null, unit: "ns", ...(unread ? { hint: unread } : {}) });
  add("delay.p99", "p99", true, (m) => m.wakeup_latency?.p99_ns ?? null, "ns");
  add("delay.max", "max", true, (m) => m.wakeup_latency?.max_ns ?? null, "ns");
  add("busy", "CPU busy (mean)", false, meanBusy, "fraction");
  // where the work ran: how few LLCs hold 90% of the busy CPU time, and the busiest one's share
  const [sa, sb] = [llcWorkSpread(a, topoA), llcWorkSpread(b, topoB)];
  rows.push({ key: "llc.carrying", label: "LLCs carrying 90% of it", part: true, a: sa?.carrying ?? null, b: sb?.carrying ?? null, unit: "count" });
  rows.push({ key: "llc.busiest", label: "the busiest LLC's share", part: true, a: sa?.busiest?.share ?? null, b: sb?.busiest?.share ?? null, unit: "fraction" });
  add("switches", "context switches", false, (m) => m.events_by_kind.switch ?? 0);
  add("lost", "events lost", false, (m) => m.lost_events);
  add("skipped", "lines skipped", false, (m) => m.skipped_lines);
  return rows;
}

/** Why the run-queue delays are missing, for the row's hint: each side whose stored chunk could not
 * be read for them ("left: not read (stored chunk 5: …)"); undefined when neither. */
export function delaysUnread(a: Metrics, b: Metrics): string | undefined {
  const why = (side: string, m: Metrics) => (m.wakeup_latency_unread ? `${side}: not read (${m.wakeup_latency_unread})` : null);
  const parts = a === b ? [why("the run", a)] : [why("left", a), why("right", b)];
  const said = parts.filter((p): p is string => p !== null);
  return said.length ? `the run-queue delay after a wakeup: ${said.join("; ")}` : undefined;
}

/** A row's class: indented as a part of the row above ("part"), or of the part above ("part sub"). */
export function rowClass(r: CountRow): string | undefined {
  return r.sub ? "part sub" : r.part ? "part" : undefined;
}

/** A row's value as text. */
export function formatValue(v: number | null, unit: CountRow["unit"]): string {
  if (v === null) return "–";
  if (unit === "ns") return formatDuration(v);
  return unit === "fraction" ? `${(v * 100).toFixed(1)}%` : v.toLocaleString("en-US");
}

/** The right value's change against the left one, short enough for a narrow column: "+30.0%", "−50.0%",
 * "+4" from 0 (no ratio), "=" when equal; a fraction changes by percentage points ("−25.0 pt"). */
export function formatChange(a: number | null, b: number | null, unit: CountRow["unit"]): string {
  if (a === null || b === null) return "";
  if (a === b) return "=";
  const sign = b > a ? "+" : "\u2212";
  if (unit === "fraction") return `${sign}${(Math.abs(b - a) * 100).toFixed(1)} pt`;
  if (a === 0) return unit === "ns" ? `${sign}${formatDuration(Math.abs(b - a))}` : `${sign}${Math.abs(b - a).toLocaleString("en-US")}`;
  return `${sign}${((Math.abs(b - a) / a) * 100).toFixed(1)}%`;
}

/** Bins of `ov` up to and including the one holding time `t` (absolute ns): how many to sum. */
export function binsUpTo(ov: Overview, t: number): number {
  if (t < ov.t_start_ns || ov.bin_ns <= 0) return 0;
  return Math.min(ov.bins, Math.floor((t - ov.t_start_ns) / ov.bin_ns) + 1);
}

function sumTo(series: number[] | undefined, n: number): number {
  let s = 0;
  if (series) for (let i = 0; i < n && i < series.length; i++) s += series[i] ?? 0;
  return Math.round(s); // resampled bins may hold fractions of a stored bin's count
}

/** An overview's wakeups by their waker summed over its first `n` bins (null: the overview has no
 * such rows). */
export function wakerCountsTo(ov: Overview, n: number): WakerCounts | null {
  const w = ov.wakeups_by_waker;
  if (!w) return null;
  return {
    shared_llc: sumTo(w.shared_llc, n),
    cross_llc: sumTo(w.cross_llc, n),
    to_waker_llc: sumTo(w.to_waker_llc, n),
    to_prev_llc: sumTo(w.to_prev_llc, n),
    elsewhere: sumTo(w.elsewhere, n),
    on_waker_cpu: sumTo(w.on_waker_cpu, n),
    still_running: sumTo(w.still_running, n),
    unknown: sumTo(w.unknown, n),
  };
}

/** The rows the overview's bins can give up to each recording's playhead (`aT`, `bT`: absolute ns),
 * to the end of the bin holding it: migrations by level, wakeups by level and by where their waker
 * ran, switches, lost events; in the whole run's order, so that at the end they read as its rows.
 * The rows only the whole run's metrics have (migrations by cause, the run-queue delay, CPU busy,
 * skipped lines) are left out. */
export function rowsUpTo(a: Overview, aT: number, b: Overview, bT: number): CountRow[] {
  const na = binsUpTo(a, aT);
  const nb = binsUpTo(b, bT);
  const rows: CountRow[] = [];
  const add = (key: string, label: string, part: boolean, f: (ov: Overview, n: number) => number | null, unit: CountRow["unit"] = "count") =>
    rows.push({ key, label, part, a: f(a, na), b: f(b, nb), unit });
  // every migration event (the kind's row), as the whole run's total counts them: also one whose level
  // is unknown (no orig_cpu in its source, nor a CPU known for the task), which no level row holds
  add("migrations", "migrations", false, (ov, n) => sumTo(ov.by_kind.migrate, n));
  for (const [k, label] of LEVELS) add(`migrations.${k}`, label, true, (ov, n) => sumTo(ov.migrations_by_level[k], n));
  add("wakeups", "wakeups", false, (ov, n) => sumTo(ov.by_kind.wakeup, n));
  add(
    "wakeups.same_cpu",
    "on its last CPU",
    true,
    (ov, n) => {
      const all = sumTo(ov.by_kind.wakeup, n);
      return ov.wakeups_by_level && all > 0 ? sumTo(ov.wakeups_by_level.same_cpu, n) / all : null;
    },
    "fraction",
  );
  for (const [k, label] of LEVELS) add(`wakeups.${k}`, `moved: ${label}`, true, (ov, n) => (ov.wakeups_by_level ? sumTo(ov.wakeups_by_level[k], n) : null));
  rows.push(...wakerRows(wakerCountsTo(a, na), wakerCountsTo(b, nb)));
  add("switches", "context switches", false, (ov, n) => sumTo(ov.by_kind.switch, n));
  add("lost", "events lost", false, (ov, n) => sumTo(ov.lost, n));
  return rows;
}
