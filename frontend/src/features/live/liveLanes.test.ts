import { describe, expect, it } from "vitest";
import { LIVE_LANES_NS, LIVE_LANES_STEP_NS, liveWindow } from "./LiveLanes";

describe("liveWindow", () => {
  const t0 = 1_000_000_000_000;
  it("ends at the playhead rounded up to the next whole step from the run's start", () => {
    expect(liveWindow(t0, t0 + 7.2e9)).toEqual([t0 + 8e9 - LIVE_LANES_NS, t0 + 8e9]);
    expect(liveWindow(t0, t0 + 8e9)).toEqual([t0 + 8e9 - LIVE_LANES_NS, t0 + 8e9]);
    expect(liveWindow(t0, t0 + 8e9 + 1)).toEqual([t0 + 9e9 - LIVE_LANES_NS, t0 + 9e9]);
  });
  it("stays the same within a step, so the lanes are asked for again only when it moves on", () => {
    const a = liveWindow(t0, t0 + 12.01e9);
    expect(liveWindow(t0, t0 + 12.99e9)).toEqual(a);
    expect(liveWindow(t0, t0 + 13.01e9)[1] - a[1]).toBe(LIVE_LANES_STEP_NS);
  });
  it("starts at the run's start early on, never before it, and is never empty", () => {
    expect(liveWindow(t0, t0 + 2.5e9)).toEqual([t0, t0 + 3e9]);
    expect(liveWindow(t0, t0)).toEqual([t0, t0 + LIVE_LANES_STEP_NS]);
    expect(liveWindow(t0, t0 - 5)).toEqual([t0, t0 + LIVE_LANES_STEP_NS]);
  });
});
