import { describe, expect, it } from "vitest";
import { followTarget } from "./compare";

describe("followTarget", () => {
  it("puts the compared recording at the same time from its start", () => {
    // main runs 320.0-320.8 s, the twin 0-0.22 s
    expect(followTarget(320_100_000_000, 320_000_000_000, 0, 220_000_000)).toBe(100_000_000);
  });
  it("stays within the compared recording", () => {
    expect(followTarget(320_500_000_000, 320_000_000_000, 0, 220_000_000)).toBe(220_000_000);
    expect(followTarget(319_000_000_000, 320_000_000_000, 5, 220_000_000)).toBe(5);
  });
});
