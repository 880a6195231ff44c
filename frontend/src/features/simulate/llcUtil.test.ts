import { describe, expect, it } from "vitest";
import type { SimLlcUtil } from "../../client/types";
import { binSpan, llcSpread, spreadText } from "./llcUtil";

const util = (means: number[], cpus = 16): SimLlcUtil => ({
  bin_ns: 2_000_000,
  t_start_ns: 0,
  end_ns: 5_000_000,
  series: means.map((mean, llc) => ({ llc, cpus, mean, util: [mean, mean, mean] })),
});

describe("llcSpread", () => {
  it("counts the fewest LLCs that carry 90% of the busy CPU time, weighting each by its CPUs", () => {
    // busy CPU time 8, 4, 0.8, 0: the first two carry 12 of 12.8 (94%)
    const s = llcSpread(util([0.5, 0.25, 0.05, 0]));
    expect(s.carrying).toBe(2);
    expect(s.llcs).toBe(4);
    expect(s.busiest).toEqual({ llc: 0, mean: 0.5, share: 8 / 12.8 });
    // an even spread needs nine of ten LLCs for 90%
    expect(llcSpread(util(Array<number>(10).fill(0.3))).carrying).toBe(9);
  });

  it("weights by CPU count, not by the busy fraction alone", () => {
    const u = util([0.5, 0.4]);
    u.series[1] = { llc: 1, cpus: 64, mean: 0.4, util: [0.4] };
    expect(llcSpread(u).busiest?.llc).toBe(1); // 25.6 busy CPUs against 8
  });

  it("says when nothing ran", () => {
    const s = llcSpread(util([0, 0]));
    expect(s).toEqual({ llcs: 2, carrying: 0, busiest: null });
    expect(spreadText(s)).toBe("nothing ran on the 2 LLCs");
  });

  it("reads as a sentence", () => {
    expect(spreadText(llcSpread(util([0.5, 0.25, 0.05, 0])))).toBe(
      "90% of the work on 2 of 4 LLCs; the busiest, LLC 0, 50% busy (63% of the work)",
    );
  });
});

describe("binSpan", () => {
  it("gives each bin's simulated time, the last one ending at the run's end", () => {
    const u = util([0.1]);
    expect(binSpan(u, 0, 3)).toBe("0-2 ms");
    expect(binSpan(u, 2, 3)).toBe("4-5 ms");
  });
});
