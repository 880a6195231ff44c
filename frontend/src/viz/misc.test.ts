import { describe, expect, it } from "vitest";
import { classifyMigration, cpuIndex, levelColor, processColor, processKey, LEVELS } from "./colors";
import { binOf, nextMigrationBin, rebin, stackCrossLlc, stackMigrations } from "./overview";
import { easeInOutCubic, flightPosition, flightProgress } from "./animate";
import { formatNs, parseTime } from "./time";
import { synthTopology } from "./synthTopology";
import { plural } from "./words";
import type { Overview } from "../client/types";

describe("migration levels", () => {
  const topo = synthTopology({ nodes: 2, llcsPerNode: 2, coresPerLlc: 2, smt: 2 });
  const idx = cpuIndex(topo);
  // 8 cores: cpu c and c+8 are SMT siblings; LLC = core/2; node = LLC/2
  it("classifies by topology", () => {
    expect(classifyMigration(idx, 0, 8)).toBe("smt");
    expect(classifyMigration(idx, 0, 1)).toBe("llc");
    expect(classifyMigration(idx, 0, 2)).toBe("node");
    expect(classifyMigration(idx, 0, 4)).toBe("cross_node");
    expect(classifyMigration(idx, 9, 12)).toBe("cross_node");
    expect(classifyMigration(idx, 3, 3)).toBeNull();
    expect(classifyMigration(idx, 3, 99)).toBeNull();
  });
  it("gives each level its own color", () => {
    expect(new Set(LEVELS.map((l) => levelColor(l))).size).toBe(4);
  });
  it("colors processes stably by tgid, then comm, then pid", () => {
    expect(processKey(10, "a", 7)).toBe("g7");
    expect(processKey(10, "a", -1)).toBe("ca");
    expect(processKey(10, "", -1)).toBe("p10");
    expect(processColor("cstream")).toBe(processColor("cstream"));
    const colors = new Set(Array.from({ length: 50 }, (_, i) => processColor(`p${i}`)));
    expect(colors.size).toBeGreaterThan(10);
  });
});

describe("overview binning", () => {
  it("preserves totals when rebinning and splits straddling bins", () => {
    const counts = [10, 0, 5, 5, 20];
    const bins = rebin(counts, 1000, 100, 1000, 1500, 2);
    expect(bins.map((b) => b.value)).toEqual([12.5, 27.5]);
    const fine = rebin(counts, 1000, 100, 1000, 1500, 500);
    expect(fine.reduce((s, b) => s + b.value, 0)).toBeCloseTo(40);
  });
  it("windows to a zoom range", () => {
    const bins = rebin([1, 2, 3, 4], 0, 10, 10, 30, 2);
    expect(bins.map((b) => b.value)).toEqual([2, 3]);
  });
  const ov: Overview = {
    t_start_ns: 0,
    t_end_ns: 40,
    bin_ns: 10,
    bins: 4,
    events: [5, 5, 5, 5],
    by_kind: {},
    migrations_by_level: { smt: [0, 1, 0, 0], llc: [0, 0, 0, 2], node: [0, 1, 0, 0], cross_node: [0, 0, 0, 1] },
    lost: [0, 0, 0, 0],
  };
  it("stacks levels and finds the next migration bin", () => {
    const s = stackMigrations(ov, 0, 40, 4);
    expect(s[1]?.stack.smt).toEqual([0, 1]);
    expect(s[1]?.stack.node).toEqual([1, 2]);
    expect(s[3]?.total).toBe(3);
    expect(binOf(ov, 25)).toBe(2);
    expect(binOf(ov, 999)).toBe(3);
    expect(nextMigrationBin(ov, 0)).toBe(10);
    expect(nextMigrationBin(ov, 12)).toBe(12);
    expect(nextMigrationBin(ov, 20)).toBe(30);
    expect(nextMigrationBin({ ...ov, migrations_by_level: { smt: [0, 0, 0, 0], llc: [0, 0, 0, 0], node: [0, 0, 0, 0], cross_node: [0, 0, 0, 0] } }, 0)).toBeNull();
  });
  it("stacks the wakeups from another LLC by where they woke, only where a recording has any", () => {
    const z = [0, 0, 0, 0];
    const waker = { shared_llc: [5, 1, 5, 0], cross_llc: [0, 4, 0, 5], to_waker_llc: [0, 3, 0, 1], to_prev_llc: [0, 1, 0, 3], elsewhere: [0, 0, 0, 1], on_waker_cpu: z, still_running: z, unknown: z };
    const s = stackCrossLlc({ ...ov, wakeups_by_waker: waker }, 0, 40, 2);
    if (s === null) throw new Error("no track");
    // two bins of two: pulled first, then kept, then neither; totals kept
    expect(s[0]?.stack.to_waker_llc).toEqual([0, 3]);
    expect(s[0]?.stack.to_prev_llc).toEqual([3, 4]);
    expect(s[1]?.stack.elsewhere).toEqual([4, 5]);
    expect(s.reduce((t, b) => t + b.total, 0)).toBe(9);
    // none: a one-LLC recording, or an overview stored without the rows
    expect(stackCrossLlc({ ...ov, wakeups_by_waker: { ...waker, cross_llc: z } }, 0, 40, 2)).toBeNull();
    expect(stackCrossLlc(ov, 0, 40, 2)).toBeNull();
  });
});

describe("flight interpolation", () => {
  const a = { x: 0, y: 0, w: 10, h: 10 };
  const b = { x: 100, y: 0, w: 10, h: 10 };
  it("starts at the source center and ends at the destination center", () => {
    expect(flightPosition(a, b, 0)).toEqual({ x: 5, y: 5 });
    const end = flightPosition(a, b, 1);
    expect(end.x).toBeCloseTo(105);
    expect(end.y).toBeCloseTo(5);
  });
  it("arcs off the straight line mid-flight and moves monotonically along it", () => {
    const mid = flightPosition(a, b, 0.5);
    expect(mid.x).toBeCloseTo(55);
    expect(Math.abs(mid.y - 5)).toBeGreaterThan(5);
    let prev = -Infinity;
    for (let p = 0; p <= 1; p += 0.05) {
      const x = flightPosition(a, b, p).x;
      expect(x).toBeGreaterThanOrEqual(prev);
      prev = x;
    }
  });
  it("eases and clamps progress", () => {
    expect(easeInOutCubic(-1)).toBe(0);
    expect(easeInOutCubic(2)).toBe(1);
    expect(flightProgress(100, 150, 100)).toBe(0.5);
    expect(flightProgress(100, 500, 100)).toBe(1);
  });
});

describe("time", () => {
  it("formats and parses ns exactly", () => {
    expect(formatNs(450594375000)).toBe("450.594375000");
    expect(parseTime("450594375123", 0)).toBe(450594375123);
    expect(parseTime("450.594375123", 0)).toBe(450594375123);
    expect(parseTime("450.594375123s", 0)).toBe(450594375123);
    expect(parseTime("12ms", 0)).toBe(12e6);
    expect(parseTime("1.5 us", 0)).toBe(1500);
    expect(parseTime("+1.5s", 1000)).toBe(1_500_001_000);
    expect(parseTime("abc", 0)).toBeNull();
    expect(parseTime("99999999999999999999", 0)).toBeNull();
  });
});

describe("plural", () => {
  it("adds an s to every count but 1, and groups thousands", () => {
    expect(plural(1, "LLC")).toBe("1 LLC");
    expect(plural(0, "node")).toBe("0 nodes");
    expect(plural(16, "LLC")).toBe("16 LLCs");
    expect(plural(72578, "event")).toBe("72,578 events");
  });
});
