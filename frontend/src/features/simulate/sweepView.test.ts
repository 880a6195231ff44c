import { describe, expect, it } from "vitest";
import type { SimSweepResult, SimSweepRow, Topology, WorkloadParam } from "../../client/types";
import { symlogTicks } from "./SweepChange";
import { acrossCells, acrossSummary, sweepCsv, MACHINES, parseSweepValues, parseTicked, pctText, sweepParams, sweepSpec, sweepSummary, logScale, toggleTicked, toggleValues, TOGGLES } from "./sweepView";

const WORKERS: WorkloadParam = { name: "workers", type: "int", default: 16, min: 1, max: 4096, help: "" };
const SCHBENCH: WorkloadParam[] = [
  { name: "messengers", type: "int", default: 1, min: 1, max: 64, help: "" },
  WORKERS,
  { name: "mode", type: "choice", default: "a", choices: ["a", "b"], help: "" },
];

describe("parseSweepValues", () => {
  it("reads whole numbers separated by commas or spaces, once each, ascending", () => {
    expect(parseSweepValues("32, 4 16,4,,8", WORKERS)).toEqual({ values: [4, 8, 16, 32] });
  });

  it("names the parameter and what is wrong", () => {
    expect(parseSweepValues("4", WORKERS)).toEqual({ error: "sweep workers: give 2 to 10 different values (1 given)" });
    expect(parseSweepValues("4,4", WORKERS)).toEqual({ error: "sweep workers: give 2 to 10 different values (1 given)" });
    expect(parseSweepValues("1,2,3,4,5,6,7,8,9,10,11", WORKERS)).toMatchObject({ error: expect.stringContaining("(11 given)") as unknown });
    expect(parseSweepValues("4,8.5", WORKERS)).toEqual({ error: 'sweep workers: "8.5" is not a whole number' });
    expect(parseSweepValues("-4,8", WORKERS)).toEqual({ error: 'sweep workers: "-4" is not a whole number' });
    expect(parseSweepValues("0,8", WORKERS)).toEqual({ error: "sweep workers: 0 is outside 1..4096" });
    expect(parseSweepValues("8,5000", WORKERS)).toEqual({ error: "sweep workers: 5000 is outside 1..4096" });
  });
});

describe("sweepSpec", () => {
  it("offers the integer parameters only", () => {
    expect(sweepParams(SCHBENCH).map((p) => p.name)).toEqual(["messengers", "workers"]);
  });

  it("asks for the baseline and the seeds only when the choice changes something", () => {
    expect(sweepSpec("", "1,2", SCHBENCH, true, 3)).toBeNull();
    expect(sweepSpec("workers", "8,4", SCHBENCH, true, 3)).toEqual({ spec: { param: "workers", values: [4, 8], baseline: true, seeds: 3, calibrated: false } });
    expect(sweepSpec("workers", "8,4", SCHBENCH, false, 3)).toEqual({ spec: { param: "workers", values: [4, 8], baseline: false, seeds: 1, calibrated: false } });
    expect(sweepSpec("mode", "1,2", SCHBENCH, true, 1)).toEqual({ error: "sweep: the workload has no integer parameter mode" });
    expect(sweepSpec("workers", "4", SCHBENCH, true, 1)).toMatchObject({ error: expect.stringContaining("sweep workers") as unknown });
  });
});

describe("the chart's scale", () => {
  it("is logarithmic when the metric spans more than 20x, and only for positive values", () => {
    expect(logScale([29, 38.4, 51.4, 15407])).toBe(true);
    expect(logScale([29, 38.4, 51.4, 580])).toBe(false); // exactly 20x
    expect(logScale([0, 1, 5000])).toBe(false);
    expect(logScale([])).toBe(false);
  });
});

const row = (x: number | string, change: number | null, pub: number[] = []): SimSweepRow => ({
  x,
  value: 1,
  complete: true,
  baseline: 1,
  baseline_complete: true,
  change_pct: change,
  direction: change === null ? null : change > 5 ? "better" : change < -5 ? "worse" : "same",
  changes: null,
  seeds: null,
  published: pub.map((p) => ({ published_pct: p, significant: Math.abs(p) > 5, section: "s", config: "wake_affine", differs: [] })),
  published_pct: pub.length ? (pub[0] ?? null) : null,
  llc_spread: null,
  baseline_llc_spread: null,
  cpu_utilization: 0.5,
  migrations: 0,
});

const result = (over: Partial<SimSweepResult>): SimSweepResult => ({
  param: "workers",
  values: [4, 8, 16, 32],
  ordered: true,
  calibrated: false,
  baseline: true,
  seeds: 1,
  metric: { name: "p99_wakeup_latency_us", better: "lower" },
  rows: [row(4, 47.7, [48.8]), row(8, 37.6, [41.5]), row(16, 36.1, [-3510.9]), row(32, -15621.7, [-13431])],
  turns: [{ between: [16, 32], from: "better", to: "worse", from_pct: 36.1, to_pct: -15621.7, seed_decides: null }],
  published_turns: [{ between: [8, 16], from: "better", to: "worse", from_pct: 41.5, to_pct: -3510.9, seed_decides: null }],
  onset: { x: 4, direction: "better", pct: 47.7 },
  published_onset: { x: 4, direction: "better", pct: 48.8 },
  ways: { better: [4, 8, 16], worse: [32], same: [] },
  published_ways: { better: [4, 8], worse: [16, 32], same: [] },
  published_error: null,
  events: 100,
  ...over,
});

describe("sweepSummary", () => {
  it("reads the model's turn beside the published one, as placemap sim --sweep prints them", () => {
    expect(sweepSummary(result({}))).toEqual([
      "the change first passes 5% at 4 workers: better (+47.7%)",
      "the change turns between 16 and 32 workers: better (+36.1%) -> worse (-15622%)",
      "published: it first passes 5% at 4 workers: better (+48.8%)",
      "published: it turns between 8 and 16 workers: better (+41.5%) -> worse (-3511%)",
    ]);
  });

  it("says when neither turns, when a seed decides a turn, and when the tables were unreadable", () => {
    const flat = result({ turns: [], published_turns: [], onset: null, published_error: "t.csv: bad" });
    expect(sweepSummary(flat)).toEqual([
      "the change first passes 5% nowhere",
      "the change does not turn: no two workers values point opposite ways beyond 5%",
      "published: it first passes 5% at 4 workers: better (+48.8%)",
      "published: it does not turn over these values",
      "the published tables could not be read: t.csv: bad",
    ]);
    const noisy = result({ seeds: 3, turns: [{ between: [4, 8], from: "worse", to: "better", from_pct: -6, to_pct: 9, seed_decides: true }] });
    expect(sweepSummary(noisy)[1]).toBe("the change turns between 4 and 8 workers: worse (-6.0%) -> better (+9.0%) (a seed decides the way at one end)");
  });

  it("has no published line where no x is a published cell, and no turn without a baseline", () => {
    const lone = result({ rows: [row(4, 10), row(8, -10)], published_turns: [] });
    expect(sweepSummary(lone)).toEqual([
      "the change first passes 5% at 4 workers: better (+47.7%)",
      "the change turns between 16 and 32 workers: better (+36.1%) -> worse (-15622%)",
    ]);
    expect(sweepSummary(result({ baseline: false, turns: [] }))).toEqual([
      "p99_wakeup_latency_us at each of 4 workers values (nothing to compare: no hints or feature changes)",
    ]);
    expect(pctText(null)).toBe("n/a");
  });
});

describe("a sweep over machines", () => {
  const presets = ["zen3-2s-nps1", "zen3-2s-nps2", "zen3-2s-nps4", "icx-2s"];

  it("keeps the ticked presets in the presets' order and refuses fewer than two or an unknown one", () => {
    expect(parseTicked("icx-2s, zen3-2s-nps1", presets, "machines", 10)).toEqual({ values: ["zen3-2s-nps1", "icx-2s"] });
    expect(parseTicked("icx-2s", presets, "machines", 10)).toEqual({ error: "sweep machines: tick 2 to 10 machines (1 ticked)" });
    expect(parseTicked("icx-2s,zen9", presets, "machines", 10)).toEqual({ error: 'sweep machines: "zen9" is not one of them' });
    expect(toggleTicked("icx-2s", "zen3-2s-nps4", true, presets)).toBe("zen3-2s-nps4,icx-2s");
    expect(toggleTicked("zen3-2s-nps4,icx-2s", "icx-2s", false, presets)).toBe("zen3-2s-nps4");
  });

  it("submits the machines as the topology sweep, and the integers otherwise", () => {
    expect(sweepSpec(MACHINES, "icx-2s,zen3-2s-nps4", [], true, 2, presets)).toEqual({
      spec: { param: "topology", values: ["zen3-2s-nps4", "icx-2s"], baseline: true, seeds: 2, calibrated: false },
    });
    expect(sweepSpec(MACHINES, "icx-2s", [], true, 1, presets)).toEqual({ error: "sweep machines: tick 2 to 10 machines (1 ticked)" });
    expect(sweepSpec("", "1,2", [], true, 1, presets)).toBeNull();
    // each point as calibrate runs it: along a parameter, not over machines
    expect(sweepSpec("workers", "8,4", SCHBENCH, true, 1, presets, [], true)).toEqual({ spec: { param: "workers", values: [4, 8], baseline: true, seeds: 1, calibrated: true } });
    expect(sweepSpec(MACHINES, "icx-2s,zen3-2s-nps1", [], true, 1, presets, [], true)).toMatchObject({ spec: { calibrated: false } });
    // toggles always run beside the baseline, even when the form's own choice changes nothing
    const toggles = ["fork_affine", "wake_hold", "NO_SIS_UTIL"];
    expect(sweepSpec(TOGGLES, "NO_SIS_UTIL,fork_affine", [], false, 3, presets, toggles)).toEqual({
      spec: { param: "toggle", values: ["fork_affine", "NO_SIS_UTIL"], baseline: true, seeds: 3, calibrated: false },
    });
    expect(sweepSpec(TOGGLES, "wake_hold", [], false, 1, presets, toggles)).toEqual({ error: "sweep toggles: tick or type 2 to 6 toggles (1 given)" });
    // combinations typed beside the ticked toggles, each once, after them
    expect(sweepSpec(TOGGLES, "wake_hold", [], false, 1, presets, toggles, false, " fork_affine+wake_affine, wake_hold,STEAL+steal_node_limit=8,")).toEqual({
      spec: { param: "toggle", values: ["wake_hold", "fork_affine+wake_affine", "STEAL+steal_node_limit=8"], baseline: true, seeds: 1, calibrated: false },
    });
    expect(toggleValues("", "a,b,c,d,e,f,g", toggles)).toEqual({ error: "sweep toggles: tick or type 2 to 6 toggles (7 given)" });
  });

  it("reads where the change helps and hurts, not a turn, as placemap sim --sweep topology= prints it", () => {
    const r = result({
      param: "topology",
      values: ["zen3-2s-nps1", "icx-2s"],
      ordered: false,
      rows: [row("zen3-2s-nps1", -32.9, [-14.7]), row("icx-2s", -1.3, [-2.6])],
      turns: [],
      published_turns: [],
      onset: null,
      published_onset: null,
      ways: { better: [], worse: ["zen3-2s-nps1"], same: ["icx-2s"] },
      published_ways: { better: [], worse: ["zen3-2s-nps1"], same: ["icx-2s"] },
    });
    expect(sweepSummary(r)).toEqual([
      "the change, beyond 5%: worse on zen3-2s-nps1; same on icx-2s",
      "published: worse on zen3-2s-nps1; same on icx-2s",
    ]);
    expect(sweepSummary({ ...r, rows: [row("zen3-2s-nps1", -32.9), row("icx-2s", -1.3)] })).toEqual([
      "the change, beyond 5%: worse on zen3-2s-nps1; same on icx-2s",
    ]);
  });
});

describe("symlogTicks", () => {
  it("puts 0 and the powers of ten within the change's range on the axis", () => {
    expect(symlogTicks(-15675.8, 52.3)).toEqual([-10000, -1000, -100, 0]);
    expect(symlogTicks(-150, 52.3)).toEqual([-100, -10, 0, 10]);
    expect(symlogTicks(-10, 10)).toEqual([-10, 0, 10]);
    expect(symlogTicks(-10, 100)).toEqual([-10, 0, 10, 100]);
  });
});

describe("a sweep across machines", () => {
  const presets = ["zen3-2s-nps1", "zen3-2s-nps2", "zen3-2s-nps4", "icx-2s"];

  it("submits the ticked machines as across, for a parameter or toggles, never for machines", () => {
    expect(sweepSpec("workers", "8,4", SCHBENCH, true, 1, presets, [], false, "", "icx-2s,zen3-2s-nps1")).toEqual({
      spec: { param: "workers", values: [4, 8], baseline: true, seeds: 1, calibrated: false, across: ["zen3-2s-nps1", "icx-2s"] },
    });
    expect(sweepSpec(TOGGLES, "wake_hold,NO_SIS_UTIL", [], false, 1, presets, ["wake_hold", "NO_SIS_UTIL"], false, "", "zen3-2s-nps4,icx-2s")).toMatchObject({
      spec: { param: "toggle", across: ["zen3-2s-nps4", "icx-2s"] },
    });
    expect(sweepSpec("workers", "8,4", SCHBENCH, true, 1, presets, [], false, "", "icx-2s")).toEqual({ error: "sweep across: tick 2 to 10 machines (1 ticked)" });
    // none ticked: the form's machine alone
    expect(sweepSpec("workers", "8,4", SCHBENCH, true, 1, presets, [], false, "", "")).not.toHaveProperty("spec.across");
    expect(sweepSpec(MACHINES, "icx-2s,zen3-2s-nps1", [], true, 1, presets, [], false, "", "icx-2s,zen3-2s-nps4")).not.toHaveProperty("spec.across");
  });

  it("sends the topology of each recorded host it runs on, and only of those", () => {
    const epyc = { machine: "epyc", cpus: [] } as unknown as Topology;
    const vm = { machine: "vm", cpus: [] } as unknown as Topology;
    const hosts = new Map([["epyc", { key: "host:t1", label: "epyc", topology: epyc }], ["vm", { key: "host:t2", label: "vm", topology: vm }]]);
    // the presets' order, then the hosts'
    expect(sweepSpec("workers", "8,4", SCHBENCH, true, 1, presets, [], false, "", "epyc,icx-2s", hosts)).toEqual({
      spec: { param: "workers", values: [4, 8], baseline: true, seeds: 1, calibrated: false, across: ["icx-2s", "epyc"], hosts: { epyc } },
    });
    expect(sweepSpec(MACHINES, "vm,zen3-2s-nps1,epyc", [], false, 1, presets, [], false, "", "", hosts)).toEqual({
      spec: { param: MACHINES, values: ["zen3-2s-nps1", "epyc", "vm"], baseline: false, seeds: 1, calibrated: false, hosts: { epyc, vm } },
    });
    // presets only: no hosts sent; a host no longer listed is refused by name
    expect(sweepSpec(MACHINES, "icx-2s,zen3-2s-nps1", [], false, 1, presets, [], false, "", "", hosts)).not.toHaveProperty("spec.hosts");
    expect(sweepSpec("workers", "8,4", SCHBENCH, true, 1, presets, [], false, "", "gone,icx-2s", hosts)).toEqual({ error: 'sweep across: "gone" is not one of them' });
  });

  // zen3's wake_affine collapse between 16 and 32 workers; icx's 64-CPU LLCs hold them
  const zen3 = { ...result({}), topology: "zen3-2s-nps1" };
  const icx = {
    ...result({
      rows: [row(4, 0, [5]), row(8, 1.4, [3.6]), row(16, 4.1, [0]), row(32, 0.7, [-1.3])],
      turns: [],
      published_turns: [],
    }),
    topology: "icx-2s",
  };
  const across = result({ rows: [], turns: [], published_turns: [], across: ["zen3-2s-nps1", "icx-2s"], panels: [zen3, icx] });

  it("lays every value on every machine out as one table, marking where each machine's change turns", () => {
    const t = acrossCells(across);
    expect(t.map((r) => r.x)).toEqual([4, 8, 16, 32]);
    expect(t[3]?.cells.map((c) => [c.machine, c.row?.change_pct, c.turns])).toEqual([
      ["zen3-2s-nps1", -15621.7, true],
      ["icx-2s", 0.7, false],
    ]);
    expect(t[2]?.cells.map((c) => c.turns)).toEqual([false, false]);
  });

  it("gives every value on every machine as CSV, each machine's columns named by it", () => {
    const lines = sweepCsv(across).trimEnd().split("\n");
    expect(lines[0]).toBe("workers,zen3-2s-nps1 p99_wakeup_latency_us,zen3-2s-nps1 baseline,zen3-2s-nps1 change_pct,zen3-2s-nps1 published_pct,icx-2s p99_wakeup_latency_us,icx-2s baseline,icx-2s change_pct,icx-2s published_pct");
    expect(lines).toHaveLength(5);
    expect(lines[4]).toBe("32,1,1,-15621.7,-13431,1,1,0.7,-1.3");
    // one machine: its own columns; without a baseline the metric alone; a name with a comma quoted
    expect(sweepCsv(result({})).split("\n")[1]).toBe("4,1,1,47.7,48.8");
    expect(sweepCsv(result({ baseline: false, values: ["a,b"], rows: [{ ...row("a,b", null), value: 12.5 }] }))).toBe('workers,p99_wakeup_latency_us\n"a,b",12.5\n');
  });

  it("reads each machine's turns beside the published ones, and how often the model points the published way", () => {
    expect(acrossSummary(across)).toEqual([
      "zen3-2s-nps1: the change turns between 16 and 32; published: between 8 and 16",
      "icx-2s: the change turns nowhere; published: nowhere",
      // beyond 5% published: zen3's four (16 the wrong way), none of icx's
      "on the published cells beyond 5%, the model points the published way on 3 of 4",
    ]);
    const toggles = result({
      param: "toggle",
      ordered: false,
      panels: [
        { ...zen3, param: "toggle", ordered: false, ways: { better: ["wake_hold"], worse: ["fork_affine", "NO_MC"], same: ["STEAL", "SIS_SHORT"] } },
        { ...icx, param: "toggle", ordered: false, ways: { better: [], worse: [], same: [] } },
      ],
    });
    expect(acrossSummary(toggles).slice(0, 2)).toEqual(["zen3-2s-nps1: better with wake_hold; worse with fork_affine, NO_MC; 2 the same", "icx-2s: not measured"]);
  });
});
