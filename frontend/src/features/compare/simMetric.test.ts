import { describe, expect, it } from "vitest";
import type { SimRunMetric } from "../../client/types";
import { simMetricRow, simMetricText } from "./simMetric";

const p99 = (value: number, extra: Partial<SimRunMetric> = {}): SimRunMetric => ({
  name: "p99_wakeup_latency_us", value, better: "lower", complete: true, incomplete: null, samples: 240, note: null, ...extra,
});

describe("a simulated recording's metric", () => {
  it("reads with its value and the wakeups it comes from", () => {
    expect(simMetricText(p99(39.9, { samples: 24 }))).toBe("p99_wakeup_latency_us 39.9 us over 24 wakeups");
    const runtime: SimRunMetric = { name: "runtime_s", value: 0.3, better: "lower", complete: false, incomplete: "not finished", samples: null, note: null };
    expect(simMetricText(runtime)).toBe("runtime_s ≥ 300.0 ms");
  });

  it("opens a comparison of two runs of one metric, the right one's change read by its direction", () => {
    expect(simMetricRow(p99(61.5), p99(39.9))).toEqual({ name: "p99_wakeup_latency_us", better: "lower", a: "61.5 us", b: "39.9 us", change: "-35.1%", verdict: "better" });
    expect(simMetricRow(p99(39.9), p99(61.5))).toMatchObject({ change: "+54.1%", verdict: "worse" });
    const tput = (v: number): SimRunMetric => ({ ...p99(v), name: "throughput_mb_s", better: "higher" });
    expect(simMetricRow(tput(100), tput(150))).toMatchObject({ change: "+50.0%", verdict: "better" });
    expect(simMetricRow(p99(40), p99(40))).toMatchObject({ change: "=", verdict: null });
    expect(simMetricRow(p99(0), p99(40))).toMatchObject({ change: "n/a", verdict: "the left is 0" });
  });

  it("compares no run that did not complete, and nothing across metrics or with a captured trace", () => {
    const none = p99(0, { complete: false, incomplete: "no wakeup after the warmup", samples: 0 });
    expect(simMetricRow(none, p99(40))).toMatchObject({ a: "no samples", b: "40 us", change: "n/a", verdict: "not compared: a run did not complete" });
    expect(simMetricRow(p99(40), { ...p99(1), name: "runtime_s" })).toBeNull();
    expect(simMetricRow(p99(40), null)).toBeNull();
    expect(simMetricRow(undefined, p99(40))).toBeNull();
  });
});
