/**
 * The wakeups by LLC pair (GET metrics' wakeups.llc_pairs: the LLC the waker ran in against the LLC
 * the task woke in, the pairs with wakeups listed) laid out as a heatmap: its cells, their share,
 * where NUMA nodes change along the LLCs (the topology's llcs[].numa_nodes), the share on the
 * diagonal (woke in the waker's LLC) and the pairs most wakeups crossed, for a text summary. Pure:
 * drawn by features/compare/LlcPairs.
 */
import type { LlcPairs, Topology } from "../client/types";

export interface PairCell {
  /** the waker's LLC (row) and the LLC the task woke in (column) */
  w: number;
  t: number;
  n: number;
  share: number;
}

export interface PairsLayout {
  llcs: number;
  total: number;
  /** wakeups that woke in their waker's LLC (the diagonal) */
  diagonal: number;
  cells: PairCell[];
  /** the largest cell's count (a colour scale's top) */
  max: number;
  /** LLC indices at which a new NUMA node starts (a line before them), from the topology */
  nodeBreaks: number[];
  /** the cells off the diagonal with the most wakeups, most first (at most 3) */
  across: PairCell[];
}

/** The heatmap's layout; null for a machine of one LLC (every wakeup on the diagonal: nothing to
 * show) or without the counts. Pairs outside the LLCs are left out. */
export function pairsLayout(lp: LlcPairs | null | undefined, topo: Topology | null | undefined): PairsLayout | null {
  if (!lp || lp.llcs < 2) return null;
  const n = lp.llcs;
  const cells: PairCell[] = [];
  let total = 0;
  for (const [w = -1, t = -1, c = 0] of lp.pairs) {
    if (w < 0 || w >= n || t < 0 || t >= n || c <= 0) continue;
    total += c;
    cells.push({ w, t, n: c, share: 0 });
  }
  let diagonal = 0;
  let max = 0;
  for (const c of cells) {
    c.share = c.n / total;
    if (c.w === c.t) diagonal += c.n;
    if (c.n > max) max = c.n;
  }
  const across = cells.filter((c) => c.w !== c.t).sort((a, b) => b.n - a.n || a.w - b.w || a.t - b.t).slice(0, 3);
  return { llcs: n, total, diagonal, cells, max, nodeBreaks: nodeBreaks(topo, n), across };
}

/** The layout in words (the heatmap's accessible name): its size, the diagonal's share and the
 * pairs most wakeups crossed. */
export function pairsSummary(l: PairsLayout): string {
  const pct = l.total > 0 ? `${((100 * l.diagonal) / l.total).toFixed(1)}%` : "–";
  const most = l.across.map((c) => `LLC ${c.w} to ${c.t}: ${c.n.toLocaleString("en-US")}`).join(", ") || "none";
  return `wakeups by LLC pair, ${l.llcs} LLCs: ${l.diagonal.toLocaleString("en-US")} of ${l.total.toLocaleString("en-US")} (${pct}) in the waker's LLC; most across: ${most}`;
}

function nodeBreaks(topo: Topology | null | undefined, n: number): number[] {
  if (!topo) return [];
  const node = new Map(topo.llcs.map((l) => [l.id, l.numa_nodes[0]]));
  const out: number[] = [];
  for (let i = 1; i < n; i++) {
    const a = node.get(i - 1);
    const b = node.get(i);
    if (a !== undefined && b !== undefined && a !== b) out.push(i);
  }
  return out;
}
