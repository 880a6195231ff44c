import { describe, expect, it } from "vitest";
import { chooseColumns, hitTestCpu, layoutGrid, type GridLayout, type Rect } from "./layout";
import { synthTopology } from "./synthTopology";
import { realTopology } from "../testing/realTopology";

function inside(a: Rect, b: Rect): boolean {
  const eps = 1e-6;
  return a.x >= b.x - eps && a.y >= b.y - eps && a.x + a.w <= b.x + b.w + eps && a.y + a.h <= b.y + b.h + eps;
}
function overlap(a: Rect, b: Rect): boolean {
  const eps = 1e-6;
  return a.x < b.x + b.w - eps && b.x < a.x + a.w - eps && a.y < b.y + b.h - eps && b.y < a.y + a.h - eps;
}

function checkInvariants(l: GridLayout, nCpus: number): void {
  expect(l.cpus).toHaveLength(nCpus);
  const bounds = { x: 0, y: 0, w: l.width, h: l.height };
  const llcOf = new Map<number, Rect>();
  const nodeOf = new Map<number, Rect>();
  for (const b of l.llcs) for (const c of b.cpus) llcOf.set(c, b);
  for (const b of l.nodes) for (const c of b.cpus) nodeOf.set(c, b);
  // collect problems, then assert once (thousands of expect() calls are slow)
  const problems: string[] = [];
  for (const c of l.cpus) {
    if (!inside(c, bounds)) problems.push(`cpu ${c.cpu} out of bounds`);
    if (!(c.w > 0 && c.h > 0)) problems.push(`cpu ${c.cpu} empty`);
    const llc = llcOf.get(c.cpu);
    const node = nodeOf.get(c.cpu);
    if (!llc || !node) problems.push(`cpu ${c.cpu} has no LLC or node box`);
    else {
      if (!inside(c, llc)) problems.push(`cpu ${c.cpu} outside its LLC`);
      if (!inside(llc, node)) problems.push(`LLC of cpu ${c.cpu} outside its node`);
    }
  }
  // no two CPU cells overlap (sweep by x)
  const sorted = [...l.cpus].sort((a, b) => a.x - b.x);
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i];
    if (!a) continue;
    for (let j = i + 1; j < sorted.length; j++) {
      const b = sorted[j];
      if (!b || b.x >= a.x + a.w) break;
      if (overlap(a, b)) problems.push(`cpu ${a.cpu} overlaps cpu ${b.cpu}`);
    }
  }
  expect(problems).toEqual([]);
}

describe("layoutGrid", () => {
  it("lays out 2 CPUs (one core, SMT pair) big and side by side", () => {
    const topo = synthTopology({ nodes: 1, llcsPerNode: 1, coresPerLlc: 1, smt: 2 });
    const l = layoutGrid(topo, 800, 400);
    checkInvariants(l, 2);
    const [a, b] = l.cpus;
    expect(a && b && Math.abs(a.y - b.y) < 1e-9 && a.x < b.x).toBe(true);
    expect(a && a.w > 100 && a.h > 100).toBe(true);
    expect(l.nodes[0]?.labelH).toBeGreaterThan(0);
    expect(l.llcs[0]?.labelH).toBeGreaterThan(0);
  });

  it("keeps 512 CPUs readable in 1280x720", () => {
    const topo = synthTopology({ nodes: 8, llcsPerNode: 4, coresPerLlc: 8, smt: 2 });
    expect(topo.cpus).toHaveLength(512);
    const l = layoutGrid(topo, 1280, 720);
    checkInvariants(l, 512);
    const minW = Math.min(...l.cpus.map((c) => c.w));
    const minH = Math.min(...l.cpus.map((c) => c.h));
    expect(minW).toBeGreaterThanOrEqual(8);
    expect(minH).toBeGreaterThanOrEqual(8);
    for (const c of l.cpus) expect(c.w / c.h).toBeLessThan(4);
    expect(l.llcs).toHaveLength(32);
    expect(l.nodes).toHaveLength(8);
    // SMT siblings share a row within their core box
    const c0 = l.byCpu[0];
    const c256 = l.byCpu[256];
    expect(c0 && c256 && Math.abs(c0.y - c256.y) < 1e-9).toBe(true);
    // uses most of the area
    const used = l.cpus.reduce((s, c) => s + c.w * c.h, 0);
    expect(used / (1280 * 720)).toBeGreaterThan(0.45);
  });

  it("handles sparse node ids and CPU-less nodes", () => {
    const topo = synthTopology({
      nodes: 2,
      llcsPerNode: 2,
      coresPerLlc: 4,
      smt: 1,
      nodeIds: [0, 2],
      memoryOnlyNodes: [5],
    });
    const l = layoutGrid(topo, 600, 300);
    checkInvariants(l, 16);
    expect(l.nodes.map((n) => n.id)).toEqual([0, 2]);
    expect(l.emptyNodes.map((n) => n.id)).toEqual([5]);
    const strip = l.emptyNodes[0];
    expect(strip).toBeDefined();
    if (strip) {
      expect(inside(strip, { x: 0, y: 0, w: 600, h: 300 })).toBe(true);
      for (const c of l.cpus) expect(overlap(c, strip)).toBe(false);
    }
  });

  it("places offline CPUs with unknown topology in an unknown group, still hit-testable", () => {
    const topo = synthTopology({ nodes: 1, llcsPerNode: 2, coresPerLlc: 2, smt: 2, offline: [7] });
    const l = layoutGrid(topo, 400, 300);
    checkInvariants(l, 8);
    const off = l.byCpu[7];
    expect(off?.online).toBe(false);
    expect(l.nodes.some((n) => n.id === -1 && n.cpus.includes(7))).toBe(true);
    if (off) expect(hitTestCpu(l, off.x + off.w / 2, off.y + off.h / 2)).toBe(7);
    expect(hitTestCpu(l, -5, -5)).toBeNull();
  });

  it("chooses near-square cells", () => {
    expect(chooseColumns(16, 400, 400, 1)).toBe(4);
    expect(chooseColumns(8, 800, 100, 1)).toBe(8);
    expect(chooseColumns(1, 10, 10, 1)).toBe(1);
  });

  describe("real machines (hwloc sysfs dumps read by placemap-collect)", { timeout: 30_000 }, () => {
    it("256ppc-8n8s4t: 8 sparse nodes, SMT4, 256 CPUs", () => {
      const topo = realTopology("256ppc-8n8s4t");
      const l = layoutGrid(topo, 1100, 640);
      checkInvariants(l, 256);
      expect(l.nodes.map((n) => n.id)).toEqual([0, 1, 4, 5, 8, 9, 12, 13]);
      // the four threads of a core share a row
      const c0 = topo.cpus[0];
      const sibs = (c0?.smt_siblings ?? []).map((c) => l.byCpu[c]);
      expect(sibs).toHaveLength(4);
      expect(new Set(sibs.map((c) => c?.y)).size).toBe(1);
      expect(Math.min(...l.cpus.map((c) => c.w))).toBeGreaterThanOrEqual(6);
    });
    it("48amd64-4pa2n6c-sparse: node ids 0..73", () => {
      const topo = realTopology("48amd64-4pa2n6c-sparse");
      const l = layoutGrid(topo, 800, 500);
      checkInvariants(l, 48);
      expect(l.nodes.map((n) => n.id)).toEqual([0, 1, 2, 33, 34, 45, 72, 73]);
    });
    it("offline-cpu0-node0: offline CPUs with unknown LLC and node", () => {
      const topo = realTopology("offline-cpu0-node0");
      const l = layoutGrid(topo, 600, 400);
      checkInvariants(l, topo.cpus.length);
      const offline = topo.cpus.filter((c) => !c.online).map((c) => c.cpu);
      expect(offline.length).toBeGreaterThan(0);
      for (const c of offline) expect(l.byCpu[c]?.online).toBe(false);
    });
  });
});

