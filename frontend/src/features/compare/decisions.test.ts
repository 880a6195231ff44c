import { describe, expect, it } from "vitest";
import type { SimDecisions } from "../../client/types";
import { largestShift, reasonTable } from "./decisions";

const SYNC = "wake_affine_idle: sync wakeup and the waker is alone on its CPU";
const HINT = "wake_affine hint: the waker's LLC has an idle core";

function dec(wakeup: [string, string, number][], balance: [SimDecisions["balance"][number]["kind"], string, string, number][] = []): SimDecisions {
  return {
    wakeup: wakeup.map(([path, pick, count]) => ({ path, pick, count })),
    fork: [{ path: "NUMA: idlest group has more idle CPUs", pick: "most recently idled CPU of the chosen group", count: 4 }],
    balance: balance.map(([kind, domain, outcome, count]) => ({ kind, domain, outcome, count })),
  };
}

describe("reasonTable", () => {
  it("puts both runs' reasons side by side as shares of their own decisions", () => {
    const a = dec([[SYNC, "target idle", 75], [SYNC, "no idle CPU in the target's LLC: target", 25]]);
    const b = dec([[SYNC, "target idle", 40], [HINT, "idle core found in the target's LLC", 160]]);
    const t = reasonTable(a, b, "wakeup");
    expect(t.aTotal).toBe(100);
    expect(t.bTotal).toBe(200);
    // the hint's path is 80% of the right run and absent (0) on the left
    expect(t.rows[0]).toMatchObject({ label: `${HINT} \u2192 idle core found in the target's LLC`, a: 0, b: 160, aShare: 0, bShare: 0.8 });
    expect(t.rows[1]).toMatchObject({ a: 75, b: 40, aShare: 0.75, bShare: 0.2 });
    expect(t.rows[2]).toMatchObject({ a: 25, b: 0, aShare: 0.25, bShare: 0 });
    expect(t.more).toBe(0);
  });

  it("keeps the top reasons and counts the rest", () => {
    const many = dec(Array.from({ length: 12 }, (_, i) => [SYNC, `pick ${String(i)}`, 100 - i] as [string, string, number]));
    const t = reasonTable(many, many, "wakeup", 8);
    expect(t.rows).toHaveLength(8);
    expect(t.more).toBe(4);
    expect(t.rows.map((r) => r.a)).toEqual([100, 99, 98, 97, 96, 95, 94, 93]);
  });

  it("a captured trace has no reasons: its side is null, not zero", () => {
    const b = dec([[SYNC, "target idle", 3]]);
    const t = reasonTable(null, b, "wakeup");
    expect(t.aTotal).toBeNull();
    expect(t.rows[0]).toMatchObject({ a: null, aShare: null, b: 3, bShare: 1 });
  });

  it("labels balance outcomes by kind and domain", () => {
    const a = dec([], [["periodic", "PKG", "balanced", 3], ["newidle", "", "walked its domains, pulled nothing", 1]]);
    const t = reasonTable(a, a, "balance");
    expect(t.rows.map((r) => r.label)).toEqual(["periodic PKG: balanced", "newidle: walked its domains, pulled nothing"]);
  });
});

describe("largestShift", () => {
  it("names the wakeup or fork reason whose share moved most", () => {
    const a = dec([[SYNC, "target idle", 90], [SYNC, "no idle CPU in the target's LLC: target", 10]]);
    const b = dec([[SYNC, "target idle", 50], [HINT, "idle core found in the target's LLC", 45], [SYNC, "no idle CPU in the target's LLC: target", 5]]);
    // target idle fell 40 points, the hint's path rose 45
    expect(largestShift(a, b)).toEqual({ kind: "wakeup", label: `${HINT} \u2192 idle core found in the target's LLC`, aShare: 0, bShare: 0.45 });
    expect(largestShift(a, a)).toBeNull();
  });
});
