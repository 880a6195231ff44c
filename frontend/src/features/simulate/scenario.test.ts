import { describe, expect, it } from "vitest";
import type { SimOptions, Topology } from "../../client/types";
import { baselineOf, changesSomething } from "../whatif/scenario";
import { choiceOfSweep, cliCommand, replayedRecording, comparable, defaultSimChoice, scenarioFileText, latencyText, extraSeedPairs, formatMetric, MAX_SEEDS, metricText, pickSwept, seedSummary, simScenario, verdict, whyNotCompared, withKind, withSweepParam, type SeedResult } from "./scenario";

// as GET /api/sim/options answers (a subset)
const OPTS: SimOptions = {
  presets: ["bdw-1s-20", "zen3-2s-nps1"],
  hint_categories: { fork: ["fork_affine", "fork_spread"], wake: ["wake_affine", "wake_hold"] },
  features: { SIS_UTIL: true, SIS_SHORT: false, steal_node_limit: 2 },
  workloads: {
    hackbench: [
      { name: "groups", type: "int", default: 10, min: 1, max: 64, choices: null, help: "-g" },
      { name: "ipc", type: "choice", default: "socket", min: null, max: null, choices: ["pipe", "socket"], help: "-p" },
    ],
    schbench: [{ name: "workers", type: "int", default: 16, min: 1, max: 4096, choices: null, help: "-t" }],
  },
  max_duration_ms: 600_000,
  sweep_toggles: [],
  sweep_calibrated: {},
};

describe("simScenario", () => {
  it("starts from schbench's defaults on zen3-2s-nps1, changing nothing", () => {
    const c = defaultSimChoice(OPTS);
    expect(simScenario(c, OPTS)).toEqual({
      topology: "zen3-2s-nps1",
      workload: { kind: "schbench", workers: 16 },
      hints: [],
      features: {},
      seed: 1,
      duration_ms: 1000,
    });
    expect(changesSomething(c, OPTS)).toBe(false);
  });

  it("takes another workload's own defaults, and the baseline drops only hints and feature changes", () => {
    let c = withKind(defaultSimChoice(OPTS), "hackbench", OPTS);
    c = { ...c, params: { ...c.params, ipc: "pipe" }, hints: { ...c.hints, wake: "wake_affine" }, features: { ...c.features, SIS_SHORT: true }, seed: 3 };
    expect(simScenario(c, OPTS)).toMatchObject({ workload: { kind: "hackbench", groups: 10, ipc: "pipe" }, hints: ["wake_affine"], features: { SIS_SHORT: true }, seed: 3 });
    expect(changesSomething(c, OPTS)).toBe(true);
    expect(simScenario(baselineOf(c, OPTS), OPTS)).toEqual({
      topology: "zen3-2s-nps1",
      workload: { kind: "hackbench", groups: 10, ipc: "pipe" },
      hints: [],
      features: {},
      seed: 3,
      duration_ms: 1000,
    });
  });
});

describe("formatMetric and verdict", () => {
  it("reads each metric in its unit", () => {
    expect(formatMetric({ name: "runtime_s", value: 0.2195 })).toBe("219.5 ms");
    expect(formatMetric({ name: "p99_wakeup_latency_us", value: 41.04 })).toBe("41 us");
    expect(formatMetric({ name: "p99_wakeup_latency_us", value: 2636.25 })).toBe("2,636.3 us");
    expect(formatMetric({ name: "throughput_mb_s", value: 15168.4 })).toBe("15,168 MB/s");
    expect(formatMetric({ name: "transactions_per_s", value: 51234.6 })).toBe("51,235/s");
  });
  it("reads an incomplete run's metric as what it is: a runtime's lower bound, else nothing measured", () => {
    const done = { complete: true };
    const cut = { complete: false };
    expect(metricText({ metric: { name: "p99_wakeup_latency_us", value: 41.04 }, sim: done })).toBe("41 us");
    expect(metricText({ metric: { name: "p99_wakeup_latency_us", value: 0 }, sim: cut })).toBe("no samples");
    expect(metricText({ metric: { name: "runtime_s", value: 0.2195 }, sim: cut })).toBe("≥ 219.5 ms");
    expect(metricText({ metric: { name: "throughput_mb_s", value: 0 }, sim: cut })).toBe("nothing measured");
    expect(metricText({ metric: { name: "switches_per_s", value: 0 }, sim: cut })).toBe("nothing measured");
    const run = (complete: boolean) => ({ metric: { name: "runtime_s", value: 0.005 }, sim: { complete } });
    expect(comparable(run(true), run(true))).toBe(true);
    expect(comparable(run(true), run(false))).toBe(false);
    expect(comparable(run(false), run(true))).toBe(false);
    expect(whyNotCompared(run(true), run(false))).toBe("the baseline did not complete");
    expect(whyNotCompared(run(false), run(true))).toBe("this run did not complete");
    expect(whyNotCompared(run(false), run(false))).toBe("neither run completed");
  });
  it("says better or worse by the metric's direction", () => {
    expect(verdict(40, 50, "lower")).toBe("better");
    expect(verdict(40, 50, "higher")).toBe("worse");
    expect(verdict(60, 50, "higher")).toBe("better");
    expect(verdict(50, 50, "lower")).toBe("the same");
  });
});

describe("seeds", () => {
  const hinted = { ...defaultSimChoice(OPTS), hints: { fork: "", wake: "wake_affine" }, seed: 4, seeds: 3 };
  it("runs the pair on the seeds after the form's own, each beside its baseline on the same seed", () => {
    const pairs = extraSeedPairs(hinted, OPTS, true);
    expect(pairs.map((p) => p.seed)).toEqual([5, 6]);
    expect(pairs[0]?.scenario).toEqual({ ...simScenario(hinted, OPTS), seed: 5 });
    expect(pairs[1]?.baseline).toEqual({ ...simScenario(baselineOf(hinted, OPTS), OPTS), seed: 6 });
    expect(pairs[1]?.baseline).toMatchObject({ hints: [], features: {} });
    // one seed, or nothing to compare: no further pairs; never more than MAX_SEEDS in all
    expect(extraSeedPairs({ ...hinted, seeds: 1 }, OPTS, true)).toEqual([]);
    expect(extraSeedPairs(hinted, OPTS, false)).toEqual([]);
    expect(extraSeedPairs({ ...hinted, seeds: 99 }, OPTS, true)).toHaveLength(MAX_SEEDS - 1);
  });

  const pair = (seed: number, v: number, b: number, complete = true): SeedResult => ({
    seed,
    run: { metric: { name: "p99_wakeup_latency_us", value: v }, sim: { complete } },
    base: { metric: { name: "p99_wakeup_latency_us", value: b }, sim: { complete: true } },
  });
  it("says one sign holds on every seed, by the metric's direction, with the median and range", () => {
    const s = seedSummary([pair(1, 40, 60), pair(2, 30, 60), pair(3, 50, 60)], "lower");
    expect(s.verdict).toBe("better on every seed");
    expect([s.median, s.min, s.max]).toEqual([changePctOf(40, 60), -50, changePctOf(50, 60)]);
    expect(s.identical).toBe(false);
    expect(seedSummary([pair(1, 40, 60), pair(2, 40, 60)], "lower").identical).toBe(true);
    expect(seedSummary([pair(1, 40, 60)], "lower").identical).toBe(false);
    expect(seedSummary([pair(1, 40, 60), pair(2, 30, 60)], "higher").verdict).toBe("worse on every seed");
    expect(seedSummary([pair(1, 60, 60)], "lower").verdict).toBe("the same on every seed");
  });
  it("says the seed decides when the signs differ, and counts what measured nothing as a seed only", () => {
    const failed: SeedResult = { seed: 5, failed: "boom" };
    const s = seedSummary([pair(1, 40, 60), pair(2, 70, 60), pair(3, 60, 60), pair(4, 0, 60, false), failed], "lower");
    expect(s.verdict).toBe("the seed decides: better on 1, worse on 1, the same on 1");
    expect([s.seeds, s.measured, s.better, s.worse, s.same]).toEqual([5, 3, 1, 1, 1]);
    expect(s.median).toBe(0);
    const none = seedSummary([pair(1, 0, 60, false), failed], "lower");
    expect(none.verdict).toBe("no seed measured a change");
    expect([none.median, none.min, none.max]).toEqual([null, null, null]);
  });
});

describe("latencyText", () => {
  it("lists the percentiles in order with the sample count, and nothing without samples", () => {
    const lat = { samples: 32, p50: 45.5, p90: 53.5, p99: 59.5, p99_9: 60, max: 61, note: null };
    expect(latencyText(lat)).toBe("32 wakeups (us): p50 45.5, p90 53.5, p99 59.5, p99.9 60, max 61");
    expect(latencyText({ samples: 0, p50: null, p90: null, p99: null, p99_9: null, max: null, note: null })).toBeNull();
  });
});

function changePctOf(v: number, b: number): number {
  return ((v - b) / b) * 100;
}

describe("the run on the command line", () => {
  it("gives the submitted scenario as JSON that reads back the same, hostile strings included", () => {
    const scenario = { topology: "zen3-2s-nps1", workload: { kind: "schbench", workers: 8 }, hints: ["wake_affine"], features: { SIS_SHORT: true }, seed: 1, duration_ms: 300, name: "<script>\u0000\"" };
    const text = scenarioFileText(scenario);
    expect(JSON.parse(text)).toEqual(scenario);
    expect(text.endsWith("}\n")).toBe(true);
  });

  it("names --baseline for a pair and --seeds only for a pair on several seeds", () => {
    expect(cliCommand(false, 1)).toBe("bin/placemap sim scenario.json");
    expect(cliCommand(false, 4)).toBe("bin/placemap sim scenario.json");
    expect(cliCommand(true, 1)).toBe("bin/placemap sim scenario.json --baseline");
    expect(cliCommand(true, 2)).toBe("bin/placemap sim scenario.json --baseline --seeds 2");
    expect(cliCommand(true, 3, { param: "workers", values: [4, 8] })).toBe("bin/placemap sim scenario.json --baseline --seeds 3 --sweep workers=4,8");
    expect(cliCommand(false, 1, { param: "groups", values: [1, 2, 4] })).toBe("bin/placemap sim scenario.json --sweep groups=1,2,4");
    expect(cliCommand(true, 1, { param: "clients", values: [4, 8], calibrated: true })).toBe("bin/placemap sim scenario.json --baseline --sweep clients=4,8 --calibrated");
    expect(cliCommand(true, 4)).toBe("bin/placemap sim scenario.json --baseline --seeds 4");
    expect(cliCommand(true, 1, { param: "toggle", values: ["all"], across: ["zen3-2s-nps1", "icx-2s"] })).toBe("bin/placemap sim scenario.json --baseline --sweep toggle=all --across zen3-2s-nps1,icx-2s");
    expect(cliCommand(true, 1, { param: "workers", values: [4, 8], across: [] })).toBe("bin/placemap sim scenario.json --baseline --sweep workers=4,8");
    // a machine that is no preset: its topology file, which Reproduce offers
    const lab = { machine: "lab" } as unknown as Topology;
    expect(cliCommand(true, 1, { param: "toggle", values: ["all"], across: ["icx-2s", "lab"], hosts: { lab } })).toBe("bin/placemap sim scenario.json --baseline --sweep toggle=all --across icx-2s,lab.json");
    expect(cliCommand(false, 1, { param: "topology", values: ["lab", "icx-2s"], hosts: { lab } })).toBe("bin/placemap sim scenario.json --sweep topology=lab.json,icx-2s");
  });
});

describe("the sweep's parameter and the picked point", () => {
  const opts: SimOptions = {
    presets: ["zen3-2s-nps1", "icx-2s"],
    hint_categories: { fork: ["fork_affine", "fork_spread"], wake: ["wake_affine", "wake_hold"] },
    features: { SIS_UTIL: true, SIS_SHORT: false, steal_node_limit: 2 },
    workloads: { schbench: [{ name: "workers", type: "int", default: 16, min: 1, max: 4096, help: "" }] },
    max_duration_ms: 60000,
    sweep_toggles: ["fork_affine", "fork_spread", "wake_affine", "wake_hold", "NO_SIS_UTIL", "SIS_SHORT"],
    sweep_calibrated: { schbench: "workers" },
  };
  const base = { ...defaultSimChoice(opts), sweepParam: "workers", sweepValues: "4,8" };

  it("starts a machine sweep with the form's machine ticked, toggles all ticked, and a parameter sweep afresh after either", () => {
    const m = withSweepParam(base, "topology", opts);
    expect([m.sweepParam, m.sweepValues]).toEqual(["topology", "zen3-2s-nps1"]);
    expect(withSweepParam({ ...base, topologyBody: { cpus: [] } as never }, "topology", opts).sweepValues).toBe("");
    expect(withSweepParam(m, "workers", opts).sweepValues).toBe("");
    expect(withSweepParam(base, "workers", opts).sweepValues).toBe("4,8");
    const t = withSweepParam(base, "toggle", opts);
    expect(t.sweepValues).toBe(opts.sweep_toggles.join(","));
    expect(withSweepParam(t, "workers", opts).sweepValues).toBe("");
    // another workload keeps a machine or toggle sweep and drops a parameter's
    expect(withKind(t, "schbench", opts).sweepValues).toBe(opts.sweep_toggles.join(","));
    expect(withKind({ ...m, sweepValues: "zen3-2s-nps1,icx-2s" }, "schbench", opts).sweepValues).toBe("zen3-2s-nps1,icx-2s");
    expect(withKind(base, "schbench", opts).sweepParam).toBe("");
    // the machines a sweep runs across stay with another parameter, and go with a sweep over machines
    const across = { ...base, sweepAcross: "zen3-2s-nps1,icx-2s" };
    expect(withSweepParam(across, "toggle", opts).sweepAcross).toBe("zen3-2s-nps1,icx-2s");
    expect(withSweepParam(across, "topology", opts).sweepAcross).toBe("");
  });

  it("puts a stored sweep's scenario and sweep back in the form, so that Simulate reruns it", () => {
    const scenario = { topology: "icx-2s", workload: { kind: "schbench", workers: 32, nosuch: 1 }, hints: ["wake_hold"], features: { SIS_SHORT: true }, seed: 4, duration_ms: 3000 };
    const got = choiceOfSweep({ ...base, hints: { fork: "fork_spread", wake: "" } }, scenario, { param: "topology", values: ["zen3-2s-nps1", "icx-2s"], seeds: 2, calibrated: false }, opts);
    expect([got.topology, got.kind, got.params, got.seed, got.durationMs, got.seeds]).toEqual(["icx-2s", "schbench", { workers: 32 }, 4, 3000, 2]);
    expect(got.hints).toEqual({ fork: "", wake: "wake_hold" }); // the form's own fork hint is not the sweep's
    expect(got.features).toEqual({ SIS_UTIL: true, SIS_SHORT: true });
    expect([got.sweepParam, got.sweepValues, got.sweepCalibrated]).toEqual(["topology", "zen3-2s-nps1,icx-2s", false]);
    expect(simScenario(got, opts)).toEqual({ ...scenario, workload: { kind: "schbench", workers: 32 } });
    // a toggle sweep's combinations go back in their field, its listed toggles ticked
    const t = choiceOfSweep(base, scenario, { param: "toggle", values: ["wake_hold", "fork_affine+wake_affine", "NO_SIS_UTIL"], seeds: 1, calibrated: false }, opts);
    expect([t.sweepValues, t.sweepCombos]).toEqual(["wake_hold,NO_SIS_UTIL", "fork_affine+wake_affine"]);
    // an inline host topology keeps the form's machine
    const calibrated = choiceOfSweep(base, { ...scenario, topology: { cpus: [] } }, { param: "workers", values: [4, 8], seeds: 1, calibrated: true }, opts);
    expect([calibrated.topology, calibrated.sweepCalibrated]).toEqual([base.topology, true]);
    // the machines it ran across ticked again (one this server does not know left out)
    const across = choiceOfSweep(base, scenario, { param: "workers", values: [4, 8], seeds: 1, calibrated: false, across: ["icx-2s", "zen9", "zen3-2s-nps1"] }, opts);
    expect(across.sweepAcross).toBe("icx-2s,zen3-2s-nps1");
    // a recorded host the form can tick (hosts.sweepHosts) is ticked again too
    const machines = [...opts.presets, "lab"];
    expect(choiceOfSweep(base, scenario, { param: "workers", values: [4, 8], seeds: 1, calibrated: false, across: ["lab", "zen9", "icx-2s"] }, opts, machines).sweepAcross).toBe("lab,icx-2s");
    expect(choiceOfSweep({ ...base, sweepAcross: "icx-2s,zen3-2s-nps1" }, scenario, { param: "workers", values: [4, 8], seeds: 1, calibrated: false }, opts).sweepAcross).toBe("");
  });

  it("sets the machine, the toggles or the parameter to the value picked in the sweep's table", () => {
    const picked = pickSwept({ ...base, topologyBody: { cpus: [] } as never }, "topology", "icx-2s", opts);
    expect([picked.topology, picked.topologyBody]).toEqual(["icx-2s", null]);
    expect(pickSwept(base, "workers", 32, opts).params.workers).toBe(32);
    expect(pickSwept(base, "nosuch", 32, opts)).toBe(base);
    // a toggle replaces the form's own: SIS_SHORT on before, only the hints after
    const own = { ...base, features: { ...base.features, SIS_SHORT: true } };
    const both = pickSwept(own, "toggle", "fork_spread+wake_hold", opts);
    expect([both.hints, both.features]).toEqual([{ fork: "fork_spread", wake: "wake_hold" }, { SIS_UTIL: true, SIS_SHORT: false }]);
    expect(pickSwept(own, "toggle", "NO_SIS_UTIL", opts).features).toEqual({ SIS_UTIL: false, SIS_SHORT: false });
    expect(pickSwept(own, "toggle", "STEAL+steal_node_limit=8", opts)).toBe(own); // the form cannot say it
  });
});

describe("replayedRecording", () => {
  it("names the stored recording a trace workload replays, and nothing else", () => {
    expect(replayedRecording({ topology: "recorded", workload: { kind: "trace", recording: "r1" } })).toBe("r1");
    expect(replayedRecording({ workload: { kind: "trace", file: "/t.txt" } })).toBeNull();
    expect(replayedRecording({ workload: { kind: "schbench", recording: "r1" } })).toBeNull();
    expect(replayedRecording({})).toBeNull();
  });
});
