import { describe, expect, it } from "vitest";
import { pairsLayout } from "./llcPairs";
import { synthTopology } from "./synthTopology";

describe("wakeups by LLC pair", () => {
  // 2 nodes of 2 LLCs each: LLCs 0-1 on node 0, 2-3 on node 1
  const topo = synthTopology({ nodes: 2, llcsPerNode: 2, coresPerLlc: 2, smt: 1 });
  const pairs = [
    [5, 0, 0, 1],
    [0, 2, 0, 0],
    [0, 0, 0, 0],
    [0, 8, 0, 4],
  ];

  it("keeps the cells with a count, each at its waker's row and wakee's column, with its share", () => {
    const l = pairsLayout(pairs, topo);
    expect(l).not.toBeNull();
    if (!l) return;
    expect(l.llcs).toBe(4);
    expect(l.total).toBe(20);
    expect(l.diagonal).toBe(11);
    expect(l.max).toBe(8);
    expect(l.cells.map((c) => [c.w, c.t, c.n])).toEqual([
      [0, 0, 5],
      [0, 3, 1],
      [1, 1, 2],
      [3, 1, 8],
      [3, 3, 4],
    ]);
    expect(l.cells.find((c) => c.w === 3 && c.t === 1)?.share).toBe(8 / 20);
  });

  it("marks where the NUMA node changes along the LLCs", () => {
    expect(pairsLayout(pairs, topo)?.nodeBreaks).toEqual([2]);
    expect(pairsLayout(pairs, null)?.nodeBreaks).toEqual([]);
  });

  it("has nothing to show for one LLC, an older recording, or a matrix that is not square", () => {
    expect(pairsLayout([[7]], topo)).toBeNull();
    expect(pairsLayout(null, topo)).toBeNull();
    expect(pairsLayout(undefined, topo)).toBeNull();
    expect(pairsLayout([[1, 2], [3]], topo)).toBeNull();
  });
});
