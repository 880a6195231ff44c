import { describe, expect, it } from "vitest";
import type { LaneSpans } from "../client/arrow";
import type { Overview } from "../client/types";
import { cpuRanges, laneRows, moveCursor, rowHeight, spanAt, spansIn, switchesIn } from "./lanes";
import { synthTopology } from "./synthTopology";

function spans(rows: [number, number, number, number][]): LaneSpans {
  return {
    length: rows.length,
    cpu: Int32Array.from(rows.map((r) => r[0])),
    start: Float64Array.from(rows.map((r) => r[1])),
    end: Float64Array.from(rows.map((r) => r[2])),
    pid: Int32Array.from(rows.map((r) => r[3])),
    comm: { dict: ["t"], idx: new Int32Array(rows.length) },
    tgid: new Int32Array(rows.length).fill(-1),
    lost: new Uint8Array(rows.length),
  };
}

describe("CPU lanes", () => {
  // 2 nodes of 2 LLCs of 2 cores, 2 threads each: CPU n and n + 8 are one core's two threads
  const topo = synthTopology({ nodes: 2, llcsPerNode: 2, coresPerLlc: 2, smt: 2 });

  it("orders the rows as the grid nests them, SMT siblings side by side, and marks each LLC and node", () => {
    const r = laneRows(topo, null);
    expect(r.cpus).toEqual([0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15]);
    expect(r.rowOf.get(9)).toBe(3);
    expect(r.breaks).toEqual([
      { row: 4, kind: "llc" },
      { row: 8, kind: "node" },
      { row: 12, kind: "llc" },
    ]);
  });

  it("leaves out offline CPUs and puts a CPU the topology lacks last", () => {
    const off = synthTopology({ nodes: 1, llcsPerNode: 1, coresPerLlc: 2, smt: 1, offline: [1] });
    const r = laneRows(off, spans([[0, 0, 5, 1], [40, 0, 5, 2]]));
    expect(r.cpus).toEqual([0, 40]);
    expect(r.breaks).toEqual([{ row: 1, kind: "node" }]);
    expect(laneRows(null, spans([[3, 0, 5, 1], [1, 0, 5, 2]])).cpus).toEqual([1, 3]);
  });

  it("finds the span running on a CPU at a time, none in a gap or past the end", () => {
    const s = spans([[0, 0, 10, 5], [0, 10, 12, 6], [0, 20, 30, 5], [2, 5, 9, 7]]);
    const ranges = cpuRanges(s);
    expect([...ranges]).toEqual([[0, [0, 3]], [2, [3, 4]]]);
    expect(spanAt(s, ranges, 0, 0)).toBe(0);
    expect(spanAt(s, ranges, 0, 10)).toBe(1);
    expect(spanAt(s, ranges, 0, 15)).toBe(-1);
    expect(spanAt(s, ranges, 0, 29.5)).toBe(2);
    expect(spanAt(s, ranges, 0, 30)).toBe(-1);
    expect(spanAt(s, ranges, 2, 6)).toBe(3);
    expect(spanAt(s, ranges, 1, 6)).toBe(-1);
  });

  it("sizes the rows in whole px, 12 each for a few CPUs, about 160 px in all for many, at least 1", () => {
    expect(rowHeight(2)).toBe(12);
    expect(rowHeight(13)).toBe(12);
    expect(rowHeight(64)).toBe(2);
    expect(rowHeight(48)).toBe(3);
    expect(rowHeight(160)).toBe(1);
    expect(rowHeight(256)).toBe(1);
  });

  it("estimates the window's switches from the overview's bins, a cut bin by its share", () => {
    const ov = { t_start_ns: 100, bin_ns: 10, by_kind: { switch: [4, 10, 6] } } as unknown as Overview;
    expect(switchesIn(ov, 100, 130)).toBe(20);
    expect(switchesIn(ov, 115, 125)).toBe(8);
    expect(switchesIn({ ...ov, by_kind: {} }, 100, 130)).toBeNull();
    expect(switchesIn(null, 100, 130)).toBeNull();
  });
});

describe("CPU lanes by keyboard", () => {
  // CPU 0: [0,10) [10,12) gap [20,30); CPU 2: [5,9)
  const s = spans([[0, 0, 10, 5], [0, 10, 12, 6], [0, 20, 30, 5], [2, 5, 9, 7]]);
  const ranges = cpuRanges(s);
  const cpus = [0, 1, 2];

  it("moves along a row span by span, from inside a span and from a gap", () => {
    expect(moveCursor(s, ranges, cpus, { row: 0, t: 3 }, "ArrowRight")).toEqual({ row: 0, t: 10 });
    expect(moveCursor(s, ranges, cpus, { row: 0, t: 10 }, "ArrowRight")).toEqual({ row: 0, t: 20 });
    expect(moveCursor(s, ranges, cpus, { row: 0, t: 20 }, "ArrowRight")).toEqual({ row: 0, t: 20 });
    expect(moveCursor(s, ranges, cpus, { row: 0, t: 25 }, "ArrowLeft")).toEqual({ row: 0, t: 10 });
    expect(moveCursor(s, ranges, cpus, { row: 0, t: 15 }, "ArrowLeft")).toEqual({ row: 0, t: 10 });
    expect(moveCursor(s, ranges, cpus, { row: 0, t: 15 }, "ArrowRight")).toEqual({ row: 0, t: 20 });
    expect(moveCursor(s, ranges, cpus, { row: 0, t: 5 }, "ArrowLeft")).toEqual({ row: 0, t: 5 });
    expect(moveCursor(s, ranges, cpus, { row: 0, t: 15 }, "End")).toEqual({ row: 0, t: 20 });
    expect(moveCursor(s, ranges, cpus, { row: 0, t: 25 }, "Home")).toEqual({ row: 0, t: 0 });
  });

  it("moves between CPUs at the same time, within the rows; a row without spans stays put", () => {
    expect(moveCursor(s, ranges, cpus, { row: 0, t: 7 }, "ArrowDown")).toEqual({ row: 1, t: 7 });
    expect(moveCursor(s, ranges, cpus, { row: 2, t: 7 }, "ArrowDown")).toEqual({ row: 2, t: 7 });
    expect(moveCursor(s, ranges, cpus, { row: 0, t: 7 }, "ArrowUp")).toEqual({ row: 0, t: 7 });
    expect(moveCursor(s, ranges, cpus, { row: 1, t: 7 }, "ArrowRight")).toEqual({ row: 1, t: 7 });
    expect(moveCursor(s, ranges, cpus, { row: 2, t: 7 }, "x")).toEqual({ row: 2, t: 7 });
  });
});

describe("spansIn", () => {
  it("counts spans; summed columns less the spans counted again across a boundary", () => {
    const plain = spans([[0, 0, 10, 1], [0, 10, 20, 2], [1, 0, 5, 3]]);
    expect(spansIn(plain)).toBe(3);
    // CPU 0: one span through 4 adjacent columns into a 5th (counted in each), where 2 more run: 3
    // spans; CPU 1: 2 spans in column 1, column 2 idle (no row), 1 in column 3: 3 spans
    const cols = spans([[0, 0, 10, 1], [0, 10, 20, 1], [0, 20, 30, 1], [0, 30, 40, 1], [0, 40, 50, 2], [1, 0, 10, 3], [1, 20, 30, 4]]);
    cols.busy = {
      busy: new Float32Array(7).fill(1),
      share: new Float32Array(7).fill(1),
      spans: Int32Array.from([1, 1, 1, 1, 3, 2, 1]),
      mine: new Float32Array(7),
    };
    expect(spansIn(cols)).toBe(6);
  });
});
