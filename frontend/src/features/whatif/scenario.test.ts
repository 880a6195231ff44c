import { describe, expect, it } from "vitest";
import type { SimOptions, Topology } from "../../client/types";
import { baselineOf, changePct, changesSomething, defaultChoice, durationMs, featureTable, profileSkips, whatIfScenario } from "./scenario";

// as GET /api/sim/options answers (a subset)
const OPTS: SimOptions = {
  presets: ["zen3-2s-nps1", "icx-2s"],
  hint_categories: { fork: ["fork_affine", "fork_spread"], wake: ["wake_affine", "wake_hold"] },
  features: { SIS_UTIL: true, SIS_SHORT: false, steal_node_limit: 2 },
  workloads: {},
  max_duration_ms: 600_000,
  sweep_toggles: [],
  sweep_calibrated: {},
};

describe("whatIfScenario", () => {
  it("replays the recording on its own host by default, changing nothing", () => {
    const c = defaultChoice(OPTS, true);
    expect(whatIfScenario("r1", 788e6, c, OPTS)).toEqual({
      topology: "recorded",
      workload: { kind: "trace", recording: "r1" },
      hints: [],
      features: {},
      seed: 1,
      duration_ms: 3152,
    });
  });

  it("names a preset when the recording has no host topology", () => {
    expect(defaultChoice(OPTS, false).topology).toBe("zen3-2s-nps1");
  });

  it("sends the chosen hints (one per category) and only the features that differ from their defaults", () => {
    const c = defaultChoice(OPTS, false);
    c.hints.wake = "wake_affine";
    c.features.SIS_UTIL = false;
    c.features.SIS_SHORT = false;
    const sc = whatIfScenario("r2", 1e9, { ...c, topology: "icx-2s", seed: 7 }, OPTS);
    expect(sc.hints).toEqual(["wake_affine"]);
    expect(sc.features).toEqual({ SIS_UTIL: false });
    expect(sc.topology).toBe("icx-2s");
    expect(sc.seed).toBe(7);
  });

  it("allows four times the recorded span, within the job limits", () => {
    expect(durationMs(0, 600_000)).toBe(1000);
    expect(durationMs(10e9, 600_000)).toBe(40_000);
    expect(durationMs(1e12, 600_000)).toBe(600_000);
    expect(durationMs(10e9, 30_000)).toBe(30_000);
  });
});

describe("the baseline a what-if is compared with", () => {
  it("is the same machine and seed without the hints and feature changes", () => {
    const c = { ...defaultChoice(OPTS, true), topology: "icx-2s", seed: 3 };
    c.hints.fork = "fork_spread";
    c.features.SIS_SHORT = true;
    expect(changesSomething(c, OPTS)).toBe(true);
    const b = baselineOf(c, OPTS);
    expect(whatIfScenario("r", 1e9, b, OPTS)).toMatchObject({ topology: "icx-2s", seed: 3, hints: [], features: {} });
    expect(changesSomething(b, OPTS)).toBe(false);
  });

  it("gives the change in percent of the baseline", () => {
    expect(changePct(0.22, 0.2)).toBeCloseTo(10);
    expect(changePct(0.18, 0.2)).toBeCloseTo(-10);
    expect(changePct(1, 0)).toBe(0);
  });
});

describe("profileSkips", () => {
  it("reads what the recording lacked from a twin's stored scenario, and nothing from anything else", () => {
    const twin = { workload: { kind: "trace", profile: { source: "recording r", skipped: { switches_missing: 72, sleeps_without_wakeup: 1, x: "y" } } } };
    expect(profileSkips(twin)).toEqual({ switches_missing: 72, sleeps_without_wakeup: 1 });
    expect(profileSkips(null)).toEqual({});
    expect(profileSkips({ workload: { kind: "schbench" } })).toEqual({});
  });
});

describe("featureTable", () => {
  it("replays the recording under every toggle instead of the form's own, on its machine or across those ticked", () => {
    const choice = { ...defaultChoice(OPTS, true), hints: { fork: "fork_spread", wake: "" }, features: { ...defaultChoice(OPTS, true).features, SIS_SHORT: true } };
    const t = featureTable("r1", 2e9, choice, OPTS, []);
    expect(t.spec).toEqual({ param: "toggle", values: ["all"], baseline: true, seeds: 1, calibrated: false });
    // the form's own fork_spread and SIS_SHORT are not in it: each toggle runs instead of them
    expect(t.scenario).toEqual(whatIfScenario("r1", 2e9, baselineOf(choice, OPTS), OPTS));
    expect([t.scenario.hints, t.scenario.features]).toEqual([[], {}]);
    expect(featureTable("r1", 2e9, choice, OPTS, ["zen3-2s-nps1", "icx-2s"]).spec.across).toEqual(["zen3-2s-nps1", "icx-2s"]);
    // another recorded host's topology goes with it when it is one of the machines, else none does
    const lab = { topology: { machine: "lab" } as unknown as Topology };
    const hosts = new Map([["lab", lab], ["other", lab]]);
    expect(featureTable("r1", 2e9, choice, OPTS, ["recorded", "lab"], hosts).spec).toMatchObject({ across: ["recorded", "lab"], hosts: { lab: lab.topology } });
    expect(featureTable("r1", 2e9, choice, OPTS, ["recorded", "icx-2s"], hosts).spec).not.toHaveProperty("hosts");
  });
});
