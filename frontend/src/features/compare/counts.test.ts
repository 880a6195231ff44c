import { describe, expect, it } from "vitest";
import type { Metrics, Overview, Topology } from "../../client/types";
import { binsUpTo, compareRows, formatChange, formatValue, llcWorkSpread, rowClass, rowsUpTo, shareOfCross, wakerCountsTo } from "./counts";
import { wakeHints } from "./WakerShift";

const lv = (smt: number, llc: number, node: number, cross_node: number) => ({ smt, llc, node, cross_node });
const cause = (wakeup: number, fork: number, balance: number) => ({ wakeup, fork, balance });

function metrics(over: Partial<Metrics> = {}): Metrics {
  return {
    events_by_kind: { switch: 1000, waking: 400 },
    migrations: {
      total: 30,
      by_level: lv(5, 10, 0, 15),
      by_cause: cause(20, 4, 6),
      by_level_cause: { smt: cause(5, 0, 0), llc: cause(5, 4, 1), node: cause(0, 0, 0), cross_node: cause(10, 0, 5) },
    },
    wakeups: { total: 400, same_cpu: 300, by_level: lv(1, 2, 0, 97) },
    lost_events: 7,
    skipped_lines: 2,
    llc_util: null,
    per_cpu_busy: [0.5, 0.25],
    ...over,
  };
}

const row = (rows: ReturnType<typeof compareRows>, key: string) => {
  const r = rows.find((x) => x.key === key);
  if (!r) throw new Error(`no row ${key}`);
  return r;
};

describe("run-queue delays not read", () => {
  it("says in the row's hint which side's stored chunk stopped them", () => {
    const bad = metrics({ wakeup_latency: null, wakeup_latency_unread: "stored chunk 5: not zstd" });
    expect(row(compareRows(metrics(), bad), "delay.p50").hint).toBe("the run-queue delay after a wakeup: right: not read (stored chunk 5: not zstd)");
    expect(row(compareRows(bad, bad), "delay.p50").hint).toBe("the run-queue delay after a wakeup: the run: not read (stored chunk 5: not zstd)");
    expect(row(compareRows(metrics(), metrics()), "delay.p50").hint).toBeUndefined();
    expect(row(compareRows(bad, metrics()), "delay.p50")).toMatchObject({ a: null });
  });
});

describe("compareRows", () => {
  it("takes each value from its own recording", () => {
    const b = metrics({ migrations: { ...metrics().migrations, total: 3, by_level: lv(1, 2, 0, 0) }, lost_events: 0, per_cpu_busy: [1, 1, 0, 0] });
    const rows = compareRows(metrics(), b);
    expect(row(rows, "migrations")).toMatchObject({ a: 30, b: 3, part: false });
    expect(row(rows, "migrations.cross_node")).toMatchObject({ a: 15, b: 0, part: true });
    expect(row(rows, "migrations.cause.balance")).toMatchObject({ a: 6, b: 6 });
    expect(row(rows, "wakeups.same_cpu")).toMatchObject({ a: 0.75, b: 0.75, unit: "fraction" });
    expect(row(rows, "wakeups.cross_node")).toMatchObject({ a: 97, b: 97 });
    expect(row(rows, "busy")).toMatchObject({ a: 0.375, b: 0.5 });
    expect(row(rows, "switches")).toMatchObject({ a: 1000, b: 1000 });
    expect(row(rows, "lost")).toMatchObject({ a: 7, b: 0 });
    expect(row(rows, "skipped")).toMatchObject({ a: 2, b: 2 });
    // the run-queue delay after a wakeup: a recording without one (no wakeup followed by its switch-in)
    const lat = { samples: 10, p50_ns: 1500, p90_ns: 9000, p99_ns: 40000, max_ns: 2_000_000 };
    const withLat = compareRows(metrics({ wakeup_latency: lat }), metrics());
    expect(row(withLat, "delay.p50")).toMatchObject({ a: 1500, b: null, unit: "ns", part: false });
    expect(row(withLat, "delay.p99")).toMatchObject({ a: 40000, b: null, part: true });
    expect(row(withLat, "delay.max")).toMatchObject({ a: 2_000_000, b: null });
  });

  it("has no share where there is nothing to divide", () => {
    const none = metrics({ wakeups: { total: 0, same_cpu: 0, by_level: lv(0, 0, 0, 0) }, per_cpu_busy: null, events_by_kind: {} });
    const rows = compareRows(none, metrics());
    expect(row(rows, "wakeups.same_cpu").a).toBeNull();
    expect(row(rows, "busy").a).toBeNull();
    expect(row(rows, "switches").a).toBe(0);
  });
});

describe("wakeups by where the waker ran", () => {
  const byWaker = (cross: number, toWaker: number, toPrev: number, elsewhere: number) => ({
    shared_llc: 400 - cross - 12,
    cross_llc: cross,
    to_waker_llc: toWaker,
    to_prev_llc: toPrev,
    elsewhere,
    on_waker_cpu: 100,
    still_running: 5,
    unknown: 7,
  });
  const withWaker = (w: ReturnType<typeof byWaker> | null) => metrics({ wakeups: { ...metrics().wakeups, by_waker: w } });

  it("gives the cross-LLC wakeups' destinations as shares of them, each run its own", () => {
    const rows = compareRows(withWaker(byWaker(80, 60, 20, 0)), withWaker(byWaker(50, 10, 30, 10)));
    expect(row(rows, "wakeups.waker.cross_llc")).toMatchObject({ a: 80, b: 50, unit: "count", part: true, sub: false });
    expect(row(rows, "wakeups.waker.to_waker_llc")).toMatchObject({ a: 0.75, b: 0.2, unit: "fraction", sub: true });
    expect(row(rows, "wakeups.waker.to_prev_llc")).toMatchObject({ a: 0.25, b: 0.6, sub: true });
    expect(row(rows, "wakeups.waker.elsewhere")).toMatchObject({ a: 0, b: 0.2, sub: true });
    // on the waker's CPU: a share of the wakeups whose waker is known (400 less 5 still running and
    // 7 unknown), not of the cross-LLC ones
    expect(row(rows, "wakeups.waker.on_waker_cpu")).toMatchObject({ a: 100 / 388, b: 100 / 388, unit: "fraction" });
    expect(row(rows, "wakeups.waker.still_running")).toMatchObject({ a: 5, b: 5 });
    expect(row(rows, "wakeups.waker.unknown")).toMatchObject({ a: 7, b: 7 });
    // the rows sit under "wakeups", after its levels, and say what they count
    const keys = rows.map((r) => r.key);
    expect(keys.indexOf("wakeups.waker.cross_llc")).toBe(keys.indexOf("wakeups.cross_node") + 1);
    expect(row(rows, "wakeups.waker.cross_llc").hint).toMatch(/sched_waking/);
    expect(rowClass(row(rows, "wakeups.waker.to_waker_llc"))).toBe("part sub");
    expect(rowClass(row(rows, "wakeups.waker.cross_llc"))).toBe("part");
    expect(rowClass(row(rows, "wakeups"))).toBeUndefined();
  });

  it("has no share without cross-LLC wakeups, and nothing for a recording stored before they were counted", () => {
    const rows = compareRows(withWaker(byWaker(0, 0, 0, 0)), withWaker(null));
    expect(row(rows, "wakeups.waker.cross_llc")).toMatchObject({ a: 0, b: null });
    expect(row(rows, "wakeups.waker.to_waker_llc")).toMatchObject({ a: null, b: null });
    expect(row(rows, "wakeups.waker.on_waker_cpu")).toMatchObject({ a: 100 / 388, b: null });
    // a capture without sched_waking: no waker known, so no share on the waker's CPU either
    const unknown = { shared_llc: 0, cross_llc: 0, to_waker_llc: 0, to_prev_llc: 0, elsewhere: 0, on_waker_cpu: 0, still_running: 0, unknown: 400 };
    expect(row(compareRows(withWaker(unknown), withWaker(null)), "wakeups.waker.on_waker_cpu").a).toBeNull();
    expect(row(rows, "wakeups.waker.unknown")).toMatchObject({ a: 7, b: null });
  });
});

describe("formatValue and formatChange", () => {
  it("reads counts and fractions", () => {
    expect(formatValue(12345, "count")).toBe("12,345");
    expect(formatValue(0.1234, "fraction")).toBe("12.3%");
    expect(formatValue(null, "count")).toBe("–");
    expect(formatValue(40000, "ns")).toBe("40.0 us");
  });
  it("gives the twin's change against the recording", () => {
    expect(formatChange(40, 52, "count")).toBe("+30.0%");
    expect(formatChange(40, 20, "count")).toBe("\u221250.0%");
    expect(formatChange(0, 1234, "count")).toBe("+1,234");
    expect(formatChange(0, 4, "count")).toBe("+4");
    expect(formatChange(7, 7, "count")).toBe("=");
    expect(formatChange(0.75, 0.5, "fraction")).toBe("\u221225.0 pt");
    expect(formatChange(null, 3, "count")).toBe("");
    expect(formatChange(1000, 1500, "ns")).toBe("+50.0%");
    expect(formatChange(0, 1500, "ns")).toBe("+1.50 us");
  });
});

function ov(t0: number, bin: number, migs: number[], wakeups: number[], lost: number[] = migs.map(() => 0)): Overview {
  return {
    t_start_ns: t0,
    t_end_ns: t0 + bin * migs.length,
    bin_ns: bin,
    bins: migs.length,
    events: migs.map((m, i) => m + (wakeups[i] ?? 0)),
    by_kind: { migrate: migs, wakeup: wakeups, switch: wakeups.map((w) => 2 * w) },
    migrations_by_level: { smt: migs.map(() => 0), llc: migs.map((m) => (m > 1 ? m - 1 : m)), node: migs.map((m) => (m > 1 ? 1 : 0)), cross_node: migs.map(() => 0) },
    lost,
  };
}

describe("counts up to the playhead", () => {
  it("sums the bins up to the one holding the playhead", () => {
    const a = ov(1000, 10, [1, 2, 3, 4], [5, 5, 5, 5]);
    expect(binsUpTo(a, 999)).toBe(0);
    expect(binsUpTo(a, 1000)).toBe(1);
    expect(binsUpTo(a, 1019)).toBe(2);
    expect(binsUpTo(a, 10_000)).toBe(4);
  });

  it("gives each side's counts at its own playhead", () => {
    const a = ov(1000, 10, [1, 2, 3, 4], [5, 5, 5, 5], [0, 7, 0, 0]);
    const b = ov(0, 20, [0, 8, 0], [1, 1, 1]); // another recording, another start and bin width
    const rows = rowsUpTo(a, 1015, b, 25); // two bins of a, two of b
    const r = (k: string) => rows.find((x) => x.key === k);
    expect(r("migrations.llc")).toMatchObject({ a: 2, b: 7 });
    expect(r("migrations.node")).toMatchObject({ a: 1, b: 1 });
    expect(r("migrations")).toMatchObject({ a: 3, b: 8 });
    expect(r("wakeups")).toMatchObject({ a: 10, b: 2 });
    expect(r("switches")).toMatchObject({ a: 20, b: 4 });
    expect(r("lost")).toMatchObject({ a: 7, b: 0 });
    // what only the whole run's metrics have is not made up
    expect(r("migrations.cause.wakeup")).toBeUndefined();
    expect(r("busy")).toBeUndefined();
    // an overview stored without wakeup rows reads as unknown, not as zero
    expect(r("wakeups.same_cpu")).toMatchObject({ a: null, b: null });
    expect(r("wakeups.waker.cross_llc")).toMatchObject({ a: null, b: null });
  });

  it("counts a migration of no known level in the total, as the whole run's metrics do", () => {
    // bin 1 holds 3 migration events, 2 of them at a level (the third named no orig_cpu)
    const a: Overview = { ...ov(1000, 10, [1, 3], [0, 0]), migrations_by_level: { smt: [0, 0], llc: [1, 1], node: [0, 1], cross_node: [0, 0] } };
    const r = (t: number, k: string) => rowsUpTo(a, t, a, t).find((x) => x.key === k)?.a;
    expect(r(1005, "migrations")).toBe(1);
    expect(r(1015, "migrations")).toBe(4); // the whole run's total: every migrate event
    expect(r(1015, "migrations.llc")).toBe(2);
    expect(r(1015, "migrations.node")).toBe(1);
  });

  it("gives the wakeups by level and by their waker up to each playhead, as the whole run's rows", () => {
    const zeros = [0, 0, 0, 0];
    const a: Overview = {
      ...ov(1000, 10, zeros, [5, 5, 5, 5]),
      wakeups_by_level: { smt: zeros, llc: [1, 0, 0, 2], node: [0, 1, 0, 0], cross_node: zeros, unknown: zeros, same_cpu: [4, 4, 5, 3] },
      wakeups_by_waker: {
        shared_llc: [3, 1, 5, 1],
        cross_llc: [2, 4, 0, 4],
        to_waker_llc: [2, 1, 0, 4],
        to_prev_llc: [0, 3, 0, 0],
        elsewhere: zeros,
        on_waker_cpu: [1, 1, 5, 4],
        still_running: zeros,
        unknown: zeros,
      },
    };
    const b = ov(0, 20, [0, 0, 0], [1, 1, 1]); // stored before the rows: unknown
    const rows = rowsUpTo(a, 1015, b, 25); // a's first two bins
    const r = (k: string) => rows.find((x) => x.key === k);
    expect(r("wakeups.same_cpu")).toMatchObject({ a: 8 / 10, b: null });
    expect(r("wakeups.llc")).toMatchObject({ a: 1, b: null });
    expect(r("wakeups.node")).toMatchObject({ a: 1, b: null });
    expect(r("wakeups.waker.cross_llc")).toMatchObject({ a: 6, b: null });
    expect(r("wakeups.waker.to_waker_llc")).toMatchObject({ a: 3 / 6, unit: "fraction" });
    expect(r("wakeups.waker.to_prev_llc")).toMatchObject({ a: 3 / 6 });
    expect(r("wakeups.waker.on_waker_cpu")).toMatchObject({ a: 2 / 10 });
    expect(wakerCountsTo(a, 4)).toEqual({ shared_llc: 10, cross_llc: 10, to_waker_llc: 7, to_prev_llc: 3, elsewhere: 0, on_waker_cpu: 11, still_running: 0, unknown: 0 });
    expect(wakerCountsTo(b, 3)).toBeNull();
    // the same rows, in the same order, as the whole run's table has them
    const whole = compareRows(metrics(), metrics()).map((x) => x.key).filter((k) => rows.some((y) => y.key === k));
    expect(rows.map((x) => x.key)).toEqual(whole);
  });
});

/** A machine of `llcs` LLCs of `per` CPUs each (CPU n on LLC n / per); `offline` CPUs too. */
function topo(llcs: number, per: number, offline: number[] = []): Topology {
  const cpus = Array.from({ length: llcs * per }, (_, cpu) => ({ cpu, online: !offline.includes(cpu), core: cpu, llc: Math.floor(cpu / per), numa_node: 0, package: 0 }));
  return { machine: "t", source: "manual", cpus, llcs: [], numa_nodes: [], node_distances: [[10]] } as unknown as Topology;
}

describe("where the work ran", () => {
  it("sums each LLC's CPUs' busy time and counts the fewest LLCs that carry 90% of it", () => {
    // LLC 0 (CPUs 0-1) busy 1.5 CPUs, LLC 1 0.25, LLC 2 0: the first carries 86%, two carry 100%
    const m = metrics({ per_cpu_busy: [1, 0.5, 0.25, 0, 0, 0] });
    const s = llcWorkSpread(m, topo(3, 2));
    expect(s).toEqual({ llcs: 3, carrying: 2, busiest: { llc: 0, mean: 0.75, share: 1.5 / 1.75 } });
    const rows = compareRows(m, metrics({ per_cpu_busy: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5] }), topo(3, 2), topo(3, 2));
    expect(row(rows, "llc.carrying")).toMatchObject({ a: 2, b: 3, unit: "count", part: true });
    expect(row(rows, "llc.busiest")).toMatchObject({ a: 1.5 / 1.75, b: 1 / 3, unit: "fraction" });
  });

  it("leaves out offline CPUs and has no rows without per-CPU busy time or a topology with LLCs", () => {
    const m = metrics({ per_cpu_busy: [1, 1, 0.2, 0.2] });
    expect(llcWorkSpread(m, topo(2, 2, [1]))?.busiest).toEqual({ llc: 0, mean: 1, share: 1 / 1.4 });
    expect(llcWorkSpread(metrics({ per_cpu_busy: null }), topo(2, 2))).toBeNull();
    expect(llcWorkSpread(m, null)).toBeNull();
    const noLlc = topo(1, 4);
    noLlc.cpus = noLlc.cpus.map((c) => ({ ...c, llc: null }));
    expect(llcWorkSpread(m, noLlc)).toBeNull();
    expect(row(compareRows(m, m), "llc.carrying")).toMatchObject({ a: null, b: null });
  });
});

describe("wakeHints", () => {
  it("keeps the hints that act on a wakeup from another LLC", () => {
    expect(wakeHints({ hints: ["fork_affine", "wake_hold"] })).toEqual(["wake_hold"]);
    expect(wakeHints({ hints: ["wake_affine"] })).toEqual(["wake_affine"]);
    expect(wakeHints({ hints: ["wake_wide"] })).toEqual([]);
    expect(wakeHints({})).toEqual([]);
    expect(wakeHints(null)).toEqual([]);
  });
});

describe("shareOfCross", () => {
  const w = (cross: number, toWaker: number) => ({ shared_llc: 5, cross_llc: cross, to_waker_llc: toWaker, to_prev_llc: cross - toWaker, elsewhere: 0, on_waker_cpu: 1, still_running: 0, unknown: 0 });
  it("is the share of the cross-LLC wakeups that woke in the waker's LLC, none without any", () => {
    expect(shareOfCross(w(40, 30), "to_waker_llc")).toBe(0.75);
    expect(shareOfCross(w(40, 30), "to_prev_llc")).toBe(0.25);
    expect(shareOfCross(w(0, 0), "to_waker_llc")).toBeNull();
  });
});
