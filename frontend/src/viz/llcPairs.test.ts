import { describe, expect, it } from "vitest";
import { pairsLayout, pairsSummary } from "./llcPairs";
import { synthTopology } from "./synthTopology";

describe("wakeups by LLC pair", () => {
  // 2 nodes of 2 LLCs each: LLCs 0-1 on node 0, 2-3 on node 1
  const topo = synthTopology({ nodes: 2, llcsPerNode: 2, coresPerLlc: 2, smt: 1 });
  // [waker's LLC, wakee's LLC, wakeups]
  const lp = { llcs: 4, pairs: [[0, 0, 5], [0, 3, 1], [1, 1, 2], [3, 1, 8], [3, 3, 4]] };

  it("keeps each pair at its waker's row and wakee's column, with its share", () => {
    const l = pairsLayout(lp, topo);
    if (!l) throw new Error("no layout");
    expect(l.llcs).toBe(4);
    expect(l.total).toBe(20);
    expect(l.diagonal).toBe(11);
    expect(l.max).toBe(8);
    expect(l.cells.map((c) => [c.w, c.t, c.n])).toEqual(lp.pairs);
    expect(l.cells.find((c) => c.w === 3 && c.t === 1)?.share).toBe(8 / 20);
    // the pairs across LLCs, most first
    expect(l.across.map((c) => [c.w, c.t])).toEqual([[3, 1], [0, 3]]);
    expect(pairsSummary(l)).toBe("wakeups by LLC pair, 4 LLCs: 11 of 20 (55.0%) in the waker's LLC; most across: LLC 3 to 1: 8, LLC 0 to 3: 1");
  });

  it("marks where the NUMA node changes along the LLCs", () => {
    expect(pairsLayout(lp, topo)?.nodeBreaks).toEqual([2]);
    expect(pairsLayout(lp, null)?.nodeBreaks).toEqual([]);
  });

  it("leaves out a pair outside the LLCs, and has nothing to show for one LLC or no counts", () => {
    const l = pairsLayout({ llcs: 2, pairs: [[0, 1, 3], [2, 0, 9], [1, -1, 4]] }, null);
    expect(l?.cells.map((c) => [c.w, c.t, c.n])).toEqual([[0, 1, 3]]);
    expect(l && pairsSummary(l)).toBe("wakeups by LLC pair, 2 LLCs: 0 of 3 (0.0%) in the waker's LLC; most across: LLC 0 to 1: 3");
    expect(pairsLayout({ llcs: 1, pairs: [[0, 0, 7]] }, topo)).toBeNull();
    expect(pairsLayout(null, topo)).toBeNull();
    expect(pairsLayout(undefined, topo)).toBeNull();
    const none = pairsLayout({ llcs: 3, pairs: [] }, null);
    expect(none && pairsSummary(none)).toBe("wakeups by LLC pair, 3 LLCs: 0 of 0 (–) in the waker's LLC; most across: none");
  });
});
