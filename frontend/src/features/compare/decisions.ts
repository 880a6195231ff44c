/**
 * Why the two runs placed tasks where they did: each simulated run's decisions counted by reason
 * (GET decisions), reason by reason side by side as shares of the run's decisions of that kind, with
 * the right one's change in percentage points. Pure. A captured trace has no reasons (the kernel does
 * not say why): its side is null.
 */
import type { SimDecisions } from "../../client/types";

export type DecisionKind = "wakeup" | "fork" | "balance";

export const KINDS: readonly { kind: DecisionKind; title: string }[] = [
  { kind: "wakeup", title: "wakeups" },
  { kind: "fork", title: "forks" },
  { kind: "balance", title: "load balancing" },
];

export interface ReasonRow {
  key: string;
  /** the reason as one line: the path (wake_affine step, fork domains, balance kind and domain), then the pick */
  label: string;
  a: number | null;
  b: number | null;
  /** share of the side's decisions of this kind, 0..1 (null: that side has no reasons at all) */
  aShare: number | null;
  bShare: number | null;
}

export interface ReasonTable {
  kind: DecisionKind;
  rows: ReasonRow[];
  /** reasons left out below the top ones */
  more: number;
  aTotal: number | null;
  bTotal: number | null;
}

interface Counted {
  key: string;
  label: string;
  count: number;
}

function counted(d: SimDecisions, kind: DecisionKind): Counted[] {
  if (kind === "wakeup") return d.wakeup.map((r) => ({ key: `${r.path}\u241f${r.pick}`, label: `${r.path} \u2192 ${r.pick}`, count: r.count }));
  if (kind === "fork") return d.fork.map((r) => ({ key: `${r.path}\u241f${r.pick}`, label: `${r.path} \u2192 ${r.pick}`, count: r.count }));
  return d.balance.map((r) => ({
    key: `${r.kind}\u241f${r.domain}\u241f${r.outcome}`,
    label: r.domain ? `${r.kind} ${r.domain}: ${r.outcome}` : `${r.kind}: ${r.outcome}`,
    count: r.count,
  }));
}

/** One kind's reasons from both sides, the `top` largest (by the larger of the two shares) first. */
export function reasonTable(a: SimDecisions | null, b: SimDecisions | null, kind: DecisionKind, top = 8): ReasonTable {
  const ra = a ? counted(a, kind) : null;
  const rb = b ? counted(b, kind) : null;
  const total = (r: Counted[] | null) => (r ? r.reduce((s, x) => s + x.count, 0) : null);
  const aTotal = total(ra);
  const bTotal = total(rb);
  const byKey = new Map<string, ReasonRow>();
  const share = (n: number, t: number | null) => (t ? n / t : 0);
  for (const x of ra ?? []) byKey.set(x.key, { key: x.key, label: x.label, a: x.count, b: rb ? 0 : null, aShare: share(x.count, aTotal), bShare: rb ? 0 : null });
  for (const x of rb ?? []) {
    const row = byKey.get(x.key);
    if (row) {
      row.b = x.count;
      row.bShare = share(x.count, bTotal);
    } else byKey.set(x.key, { key: x.key, label: x.label, a: ra ? 0 : null, b: x.count, aShare: ra ? 0 : null, bShare: share(x.count, bTotal) });
  }
  const weight = (r: ReasonRow) => Math.max(r.aShare ?? 0, r.bShare ?? 0);
  const rows = [...byKey.values()].sort((x, y) => weight(y) - weight(x) || (x.label < y.label ? -1 : x.label > y.label ? 1 : 0));
  return { kind, rows: rows.slice(0, top), more: Math.max(0, rows.length - top), aTotal, bTotal };
}

export interface Shift {
  kind: DecisionKind;
  label: string;
  /** shares of the kind's decisions without (a) and with (b) the change */
  aShare: number;
  bShare: number;
}

/** The reason whose share moved most between run `a` and run `b` among their wakeups and forks (the
 * decisions hints and features act on; balancing outcomes follow from them), or null when none moved. */
export function largestShift(a: SimDecisions, b: SimDecisions): Shift | null {
  let best: Shift | null = null;
  for (const kind of ["wakeup", "fork"] as const) {
    for (const r of reasonTable(a, b, kind, Number.MAX_SAFE_INTEGER).rows) {
      const d = Math.abs((r.bShare ?? 0) - (r.aShare ?? 0));
      if (d > 0 && (best === null || d > Math.abs(best.bShare - best.aShare))) best = { kind, label: r.label, aShare: r.aShare ?? 0, bShare: r.bShare ?? 0 };
    }
  }
  return best;
}
