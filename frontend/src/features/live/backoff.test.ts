import { describe, expect, it } from "vitest";
import { Backoff, backoffDelay, DEFAULT_BACKOFF } from "./backoff";

describe("backoffDelay", () => {
  const noJitter = { baseMs: 250, maxMs: 8000, jitter: 0 };
  it("doubles from the base up to the cap", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((a) => backoffDelay(a, noJitter, 0.3))).toEqual([250, 500, 1000, 2000, 4000, 8000, 8000, 8000]);
  });
  it("stays at the cap for huge attempt counts (no Infinity/NaN)", () => {
    expect(backoffDelay(5000, noJitter, 0)).toBe(8000);
  });
  it("jitter spreads the delay between (1 - jitter) and 1 of it", () => {
    expect(backoffDelay(2, DEFAULT_BACKOFF, 0)).toBe(500);
    expect(backoffDelay(2, DEFAULT_BACKOFF, 1)).toBe(1000);
    expect(backoffDelay(2, DEFAULT_BACKOFF, 0.5)).toBe(750);
  });
  it("clamps bad inputs", () => {
    expect(backoffDelay(-3, noJitter, 0)).toBe(250);
    expect(backoffDelay(1, { ...noJitter, jitter: 7 }, 2)).toBe(500);
  });
});

describe("Backoff", () => {
  it("counts attempts and starts over after reset", () => {
    const b = new Backoff({ baseMs: 100, maxMs: 1000, jitter: 0 }, () => 0);
    expect([b.next(), b.next(), b.next()]).toEqual([100, 200, 400]);
    expect(b.attempts).toBe(3);
    b.reset();
    expect(b.next()).toBe(100);
  });
});
