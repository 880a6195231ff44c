/**
 * The wakeups-by-LLC-pair matrix (GET metrics' wakeups.llc_pairs: rows the LLC the waker ran in,
 * columns the LLC the task woke in) laid out as a heatmap: its cells with a count, their share of
 * the matrix, where NUMA nodes change along the LLCs (the topology's llcs[].numa_nodes), and the
 * share on the diagonal (woke in the waker's LLC). Pure: drawn by features/compare/LlcPairs.
 */
import type { Topology } from "../client/types";

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
}

/** The matrix's layout; null when it has fewer than two LLCs (one LLC: every wakeup is on the
 * diagonal, nothing to show) or is not square. */
export function pairsLayout(pairs: readonly (readonly number[])[] | null | undefined, topo: Topology | null | undefined): PairsLayout | null {
  if (!pairs || pairs.length < 2 || pairs.some((r) => r.length !== pairs.length)) return null;
  const cells: PairCell[] = [];
  let total = 0;
  let diagonal = 0;
  let max = 0;
  for (const [w, row] of pairs.entries())
    for (const [t, n] of row.entries()) {
      total += n;
      if (w === t) diagonal += n;
      if (n > max) max = n;
    }
  for (const [w, row] of pairs.entries())
    for (const [t, n] of row.entries()) if (n > 0) cells.push({ w, t, n, share: n / total });
  return { llcs: pairs.length, total, diagonal, cells, max, nodeBreaks: nodeBreaks(topo, pairs.length) };
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
