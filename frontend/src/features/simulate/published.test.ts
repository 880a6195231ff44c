import { describe, expect, it } from "vitest";
import type { PublishedCell } from "../../client/types";
import { betterPct, differsText, direction, effectText, waysText, whereText, withModelRun } from "./published";
import type { SimChoice } from "./scenario";

// the RFC's Zen3 schbench cell at 8 workers under wake_affine (shared/calibration)
const cell: PublishedCell = {
  source: "000_98a4d79b1cefe2b8.txt",
  section: "schbench Wakeup Hint",
  machine: "AMD Zen3 2x64C/128T NPS1",
  benchmark: "schbench",
  metric: "p99_latency_us",
  better: "lower",
  x_name: "workers",
  x: 8,
  config: "wake_affine",
  value: 31,
  tip_value: 53,
  published_pct: 41.5,
  significant: true,
  uncertain: false,
  differs: [{ field: "duration_ms", calibration: 30000, yours: 300 }],
  reference: "userspace-hinting-rfc.csv",
  compared_by: "placemap calibrate",
  model_workload: { messengers: 1, workers: 8, cputime_us: 30000, sleeptime_us: 30000 },
  model_duration_ms: 30000,
};

describe("published cells", () => {
  it("signs the change by the metric's direction, as the calibration does", () => {
    expect(betterPct(31, 53, "lower")).toBeCloseTo(41.5, 0);
    expect(betterPct(60, 50, "lower")).toBeCloseTo(-20);
    expect(betterPct(60, 50, "higher")).toBeCloseTo(20);
    expect(betterPct(1, 0, "higher")).toBeNull();
  });

  it("counts a direction only beyond 5% published", () => {
    expect(direction(cell, 35.1)).toBe("same");
    expect(direction(cell, -2)).toBe("opposite");
    expect(direction(cell, 0)).toBe("unmoved");
    expect(direction({ ...cell, published_pct: -3510.95 }, 36.2)).toBe("opposite");
    expect(direction({ ...cell, published_pct: 3.2, significant: false }, -40)).toBe("no-direction");
  });

  it("says the way one pair points, or each seed's", () => {
    expect(waysText(cell, [35.1], false)).toEqual({ text: "this run points the same way", data: "same" });
    expect(waysText(cell, [35.1, 35.1, 2], true)).toEqual({ text: "this run points the same way on every seed", data: "same" });
    expect(waysText(cell, [-0.1, 0, 0.2, -1.4], true)).toEqual({ text: "the seed decides the way this run points (opposite on 2, same on 1, unmoved on 1)", data: "mixed" });
    expect(waysText({ ...cell, significant: false }, [5, -5], true)?.text).toBe("within the 5% the calibration counts no direction from");
    expect(waysText(cell, [], true)).toBeNull();
  });

  it("writes the cell and where the run differs from the calibration's", () => {
    expect(effectText(cell)).toBe("+41.5% better (p99_latency_us 53 → 31)");
    expect(effectText({ ...cell, tip_value: null, published_pct: -6.89 })).toBe("-6.9% worse");
    expect(whereText(cell)).toBe("schbench Wakeup Hint, AMD Zen3 2x64C/128T NPS1, 8 workers, wake_affine");
    expect(whereText({ ...cell, uncertain: true })).toBe("schbench Wakeup Hint, AMD Zen3 2x64C/128T NPS1, 8 workers, wake_affine, its reading marked uncertain");
    expect(differsText(cell)).toBe("placemap calibrate runs it with duration_ms 30000 (here 300)");
    expect(differsText({ ...cell, compared_by: "scripts/bench simfeatures" })).toBe("scripts/bench simfeatures runs it with duration_ms 30000 (here 300)");
    expect(differsText({ ...cell, differs: [] })).toBeNull();
  });

  it("sets the form to the model's run of the cell, keeping the machine, hints and seeds", () => {
    const choice: SimChoice = {
      topology: "zen3-2s-nps1",
      kind: "schbench",
      params: { messengers: 1, workers: 8, cputime_us: 10000, sleeptime_us: 30000 },
      durationMs: 300,
      seed: 3,
      seeds: 2,
      hints: { wake: "wake_affine" },
      features: {},
      topologyBody: null,
      sweepParam: "",
      sweepValues: "",
      sweepCalibrated: false,
      sweepCombos: "",
      sweepAcross: "",
    };
    const got = withModelRun(choice, cell);
    expect(got.params).toEqual({ messengers: 1, workers: 8, cputime_us: 30000, sleeptime_us: 30000 });
    expect(got.durationMs).toBe(30000);
    expect({ ...got, params: choice.params, durationMs: 300 }).toEqual(choice);
  });
});
