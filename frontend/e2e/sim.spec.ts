/**
 * A simulated run in real chromium against the real backend: submitted as an API job with save,
 * it appears in the recordings list with its "simulated" badge and scenario (as text), and opens
 * on the simulated machine's grid (the preset's LLCs and nodes in the placement text view).
 */
import { expect, test, type Locator } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { importG4, openSimulate, shot, vm2Topology } from "./fixtures";

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "test-artifacts");
const PLACEMAP = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "placemap");
const PYTHON = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "backend", ".venv", "bin", "python");


/** A result beside a baseline where neither run completed: no change shown, and why. */
async function expectNeitherCompared(result: Locator): Promise<void> {
  await expect(result.getByTestId("simulate-nochange")).toHaveText(" (not compared with its baseline: neither run completed)", { timeout: 60_000 });
  await expect(result.getByTestId("simulate-change")).toHaveCount(0);
}

const SCENARIO = {
  topology: "zen3-2s-nps1",
  workload: { kind: "schbench", messengers: 1, workers: 8 },
  hints: ["fork_affine"],
  features: { SIS_SHORT: true },
  seed: 1,
  duration_ms: 100,
};

interface Job { status: string; recording_id: string | null; error: { message: string } | null }
interface Topo { llcs: { id: number; cpus: number[]; numa_nodes: number[] }[] }

test("simulated recording: badge and scenario in the list, the preset's grid", async ({ page, request }) => {
  test.setTimeout(240_000);
  const r = await request.post("/api/sim/jobs", { data: { scenario: SCENARIO, save: true } });
  expect(r.status()).toBe(202);
  const jid = ((await r.json()) as { job_id: string }).job_id;
  let job: Job | null = null;
  await expect
    .poll(
      async () => {
        job = (await (await request.get(`/api/sim/jobs/${jid}`)).json()) as Job;
        return job.status;
      },
      { timeout: 180_000 },
    )
    .toBe("done");
  const rid = (job as Job | null)?.recording_id;
  expect(rid).toBeTruthy();
  const rec = (await (await request.get(`/api/recordings/${rid}`)).json()) as { name: string; topology_id: string };
  const topo = (await (await request.get(`/api/topologies/${rec.topology_id}`)).json()) as Topo;
  expect(topo.llcs.length).toBe(16);

  await page.goto("/");
  const item = page.getByTestId("recording-item").filter({ hasText: rec.name });
  await expect(item.getByTestId("sim-badge")).toHaveText("simulated");
  await expect(item.getByTestId("sim-rec-meta")).toContainText("zen3-2s-nps1 · schbench");
  await expect(item.getByTestId("sim-hints")).toHaveText(" · hints fork_affine");
  await expect(item.getByTestId("sim-features")).toHaveText(" · features SIS_SHORT=on");
  // 100 ms end within schbench's warmup: the stored metric says it measured nothing, and why (tooltip)
  const metric = (await (await request.get(`/api/recordings/${rid ?? ""}`)).json() as { sim_metric: { complete: boolean; incomplete: string } }).sim_metric;
  expect(metric.complete).toBe(false);
  await expect(item.getByTestId("sim-metric")).toHaveText("p99_wakeup_latency_us no samples");
  await expect(item.getByTestId("sim-metric")).toHaveAttribute("title", metric.incomplete);

  await item.locator("button.rec-open").click();
  await expect(page.getByTestId("rec-sim-metric")).toHaveText("p99_wakeup_latency_us no samples");
  // the scenario that produced it, from the header as a file: the command line reruns the same run
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("rec-scenario-file").click()]);
  expect(download.suggestedFilename()).toBe("scenario.json");
  const file = join(mkdtempSync(join(tmpdir(), "placemap-download-")), "scenario.json");
  await download.saveAs(file);
  const stored = ((await (await request.get(`/api/recordings/${rid ?? ""}`)).json()) as { scenario: Record<string, unknown> }).scenario;
  expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(stored);
  type Ran = { metric: unknown; counters: unknown; wakeup_latency: unknown };
  const rerun = JSON.parse(execFileSync(PLACEMAP, ["sim", file, "--json"], { encoding: "utf8" })) as Ran;
  const ran = ((await (await request.get(`/api/sim/jobs/${jid}`)).json()) as { result: Ran }).result;
  expect(rerun.counters).toEqual(ran.counters);
  expect(rerun.metric).toEqual(ran.metric);
  expect(rerun.wakeup_latency).toEqual(ran.wakeup_latency);
  const rows = page.getByTestId("placement-state").locator("table.llc-table tbody tr");
  await expect(rows).toHaveCount(topo.llcs.length);
  for (const [i, l] of topo.llcs.entries()) {
    await expect(rows.nth(i).locator("th")).toHaveText(String(l.id));
    await expect(rows.nth(i).locator("td").nth(0)).toHaveText(l.numa_nodes.join(","));
    await expect(rows.nth(i).locator("td").nth(1)).toHaveText(String(l.cpus.length));
  }
  await page.screenshot({ path: join(ARTIFACTS, "sim-recording.png") });
});

test("simulate form: a workload under a hint beside its baseline, both saved, compared side by side", async ({ page, request }) => {
  test.setTimeout(240_000);
  const { sim, form } = await openSimulate(page);
  // the form's defaults are the simulator's (GET /api/sim/options)
  await expect(form.getByLabel("workload")).toHaveValue("schbench");
  await expect(form.getByLabel("workers")).toHaveValue("16");
  await form.getByLabel("machine").selectOption("zen3-2s-nps1");
  await form.getByLabel("workers").fill("8");
  await form.getByRole("radio", { name: "wake_affine" }).check();
  await form.getByLabel("simulated ms").fill("300");
  await form.getByRole("button", { name: "Simulate" }).click();
  const result = sim.getByTestId("simulate-result");
  await expect(result.getByTestId("simulate-change")).toContainText("without the hints and feature changes", { timeout: 180_000 });

  // the same scenario through the API gives the value shown (seeded and deterministic)
  const scenario = { topology: "zen3-2s-nps1", workload: { kind: "schbench", messengers: 1, workers: 8, cputime_us: 30000, sleeptime_us: 30000 }, seed: 1, duration_ms: 300 };
  type Latency = { samples: number; p50: number; p90: number; p99: number; p99_9: number; max: number; note: string | null };
  type LlcUtil = { series: { llc: number; cpus: number; mean: number; util: number[] }[] };
  type ByWaker = { cross_llc: number; to_waker_llc: number };
  const latencies: Latency[] = [];
  const utils: LlcUtil[] = [];
  const wakers: ByWaker[] = [];
  const value = async (hints: string[]): Promise<number> => {
    const jid = ((await (await request.post("/api/sim/jobs", { data: { scenario: { ...scenario, hints } } })).json()) as { job_id: string }).job_id;
    let v = NaN;
    await expect
      .poll(async () => {
        const j = (await (await request.get(`/api/sim/jobs/${jid}`)).json()) as { status: string; result: { metric: { value: number }; latency_us: Latency; llc_util: LlcUtil; counters: { wakeups: { by_waker: ByWaker } } } | null };
        if (j.result) {
          v = j.result.metric.value;
          latencies.push(j.result.latency_us);
          utils.push(j.result.llc_util);
          wakers.push(j.result.counters.wakeups.by_waker);
        }
        return j.status;
      }, { timeout: 120_000 })
      .toBe("done");
    return v;
  };
  const [hinted, base] = [await value(["wake_affine"]), await value([])];
  // the p99's distribution under it, as the API gives it; 300 ms leave few wakeups, and both runs say so
  const [lat, baseLat] = [latencies[0], latencies[latencies.length - 1]];
  if (lat === undefined || baseLat === undefined) throw new Error("the jobs gave no results");
  const line = result.getByTestId("simulate-latency");
  await expect(line).toContainText(`wakeup latency over ${String(lat.samples)} wakeups (us): p50 ${String(lat.p50)}, p90 ${String(lat.p90)}, p99 ${String(lat.p99)}, p99.9 ${String(lat.p99_9)}, max ${String(lat.max)}`);
  expect(lat.p99).toBe(hinted);
  expect(lat.note).toContain(`the p99 of ${String(lat.samples)} wakeups is`);
  expect(baseLat.note).not.toBeNull();
  await expect(line.getByTestId("simulate-few-samples")).toHaveText(`${lat.note ?? ""}; so is its baseline's (${String(baseLat.samples)} wakeups)`);
  expect(await line.getByTestId("simulate-few-samples").evaluate((e) => getComputedStyle(e).color)).toBe(await page.evaluate(() => {
    const probe = document.createElement("span");
    probe.style.color = "var(--warn)";
    document.body.append(probe);
    const c = getComputedStyle(probe).color;
    probe.remove();
    return c;
  }));
  // where each run's work ran, as the API gives it: a heat map row per LLC and a column per bin of
  // simulated time, and the busiest LLC by busy CPU time (ties: the lowest LLC)
  const llcUtil = result.getByTestId("simulate-llc-util");
  for (const [testId, u] of [["llc-util-run", utils[0]], ["llc-util-base", utils[utils.length - 1]]] as const) {
    if (u === undefined) throw new Error("the jobs gave no llc_util");
    const part = llcUtil.getByTestId(testId);
    await expect(part.locator("rect")).toHaveCount(u.series.length * (u.series[0]?.util.length ?? 0));
    const top = [...u.series].sort((a, b) => b.mean * b.cpus - a.mean * a.cpus || a.llc - b.llc)[0];
    if (!top) throw new Error("no LLCs");
    await expect(part.getByTestId(`${testId}-spread`)).toContainText(`of ${String(u.series.length)} LLCs; the busiest, LLC ${String(top.llc)}, ${String(Math.round(100 * top.mean))}% busy`);
  }
  const us = (x: number) => `${x.toLocaleString("en-US", { maximumFractionDigits: 1 })} us`;
  await expect(result.getByTestId("simulate-value")).toHaveText(us(hinted));
  await expect(result.getByTestId("simulate-change")).toContainText(`against ${us(base)}`);
  await expect(result.getByTestId("simulate-change")).toContainText(hinted < base ? ", better (lower is better)" : hinted > base ? ", worse (lower is better)" : ", the same");
  // the decision whose share moved most between the two runs (both jobs' result.decisions)
  await expect(result.getByTestId("simulate-why")).toContainText(/The decision that moved most: [0-9.]+% of the wakeups went “wake_affine/);
  // of the wakeups woken from another LLC than the wakee's prev CPU, the share that woke in the
  // waker's LLC, each run's as the API counts it: the hint pulls more of them to the messenger's
  const [bw, baseBw] = [wakers[0], wakers[wakers.length - 1]];
  if (bw === undefined || baseBw === undefined) throw new Error("the jobs gave no by_waker");
  expect(bw.cross_llc).toBeGreaterThan(0);
  expect(baseBw.cross_llc).toBeGreaterThan(0);
  const share = (w: ByWaker) => `${((100 * w.to_waker_llc) / w.cross_llc).toFixed(1)}%`;
  await expect(result.getByTestId("simulate-by-waker")).toContainText(
    `Woken from another LLC: ${bw.cross_llc.toLocaleString("en-US")} wakeups, ${share(bw)} of them in the waker's LLC (${baseBw.cross_llc.toLocaleString("en-US")} and ${share(baseBw)} without).`,
  );
  expect(bw.to_waker_llc / bw.cross_llc).toBeGreaterThan(baseBw.to_waker_llc / baseBw.cross_llc);
  // the pair is a published cell (the RFC's Zen3 schbench table: 8 workers, tip 53 us, wake_affine
  // 31 us, "+41.50 pct"): the real kernel's effect beside the run's, and whether the run points its way
  const published = result.getByTestId("simulate-published");
  await expect(published).toContainText("the real kernel, published:");
  const cell = published.getByTestId("simulate-published-cell");
  await expect(cell).toHaveCount(1);
  await expect(cell.locator("b")).toHaveText("+41.5% better (p99_latency_us 53 → 31)");
  await expect(cell).toContainText("schbench Wakeup Hint, AMD Zen3 2x64C/128T NPS1, 8 workers, wake_affine; published in userspace-hinting-rfc.csv");
  await expect(cell).toHaveAttribute("data-direction", hinted < base ? "same" : hinted > base ? "opposite" : "unmoved");
  await expect(cell).toContainText("; placemap calibrate runs it with duration_ms 30000 (here 300)");
  await expect(cell).toContainText(hinted < base ? "— this run points the same way" : "— this run points the other way");
  await shot(result, "simulate-published.png");
  await shot(sim, "simulate-form.png");

  // both runs are stored recordings, shown side by side: the baseline open, the hinted run beside it
  await result.getByRole("button", { name: "compare with the baseline side by side" }).click();
  await expect(page.getByTestId("compare").locator(".grid-wrap")).toHaveCount(2);
  await expect(page.locator(".rec-title")).toHaveText("sim zen3-2s-nps1 schbench seed 1");
  await expect(page.getByTestId("compare-other")).toContainText("wake_affine");
  await expect(page).toHaveURL(/[?&]cmp=/);
  // and each downloads as ftrace text from the result: as many switch lines as its recording has switches
  const view = new URL(page.url());
  const runRec = view.searchParams.get("cmp") ?? "";
  const baseRec = view.searchParams.get("rec") ?? "";
  const links = result.getByTestId("simulate-ftrace").getByRole("link");
  await expect(links).toHaveCount(2);
  expect(await links.nth(0).getAttribute("href")).toBe(`/api/recordings/${runRec}/trace.txt`);
  expect(await links.nth(1).getAttribute("href")).toBe(`/api/recordings/${baseRec}/trace.txt`);
  const got = page.waitForEvent("download");
  await links.nth(0).click();
  const lines = readFileSync(await (await got).path(), "utf8").split("\n");
  const runInfo = (await (await request.get(`/api/recordings/${runRec}`)).json()) as { events_by_kind: Record<string, number> };
  expect(lines.filter((l) => l.includes(": sched_switch: ")).length).toBe(runInfo.events_by_kind.switch);
  expect(runInfo.events_by_kind.switch).toBeGreaterThan(0);
  await expect(page.getByTestId("compare-counts").locator('tr[data-key="migrations"] td')).toHaveCount(3);
  // where each run's work sat: the fewest of the 16 LLCs that carry 90% of its busy time, each run's own
  const carrying = page.getByTestId("compare-counts").locator('tr[data-key="llc.carrying"] td');
  for (const i of [0, 1]) await expect(carrying.nth(i)).toHaveText(/^([1-9]|1[0-6])$/);
  await expect(page.getByTestId("compare-counts").locator('tr[data-key="llc.busiest"] td').nth(0)).toHaveText(/^[0-9.]+%$/);
  // each saved run's own metric: the open one's in its header, both as the comparison's first row
  // (left the baseline, right the hinted run; the change by the metric's direction)
  await expect(page.getByTestId("rec-sim-metric")).toHaveText(`p99_wakeup_latency_us ${us(base)} over ${String(baseLat.samples)} wakeups`);
  await expect(page.getByTestId("rec-sim-metric")).toHaveClass(/few-samples/);
  const metricRow = page.getByTestId("compare-sim-metric");
  await expect(metricRow.locator("th")).toHaveText("p99_wakeup_latency_us (lower is better)");
  const pct = ((hinted - base) / base) * 100;
  await expect(metricRow.locator("td")).toHaveText([us(base), us(hinted), `${pct >= 0 ? "+" : ""}${pct.toFixed(1)}%${hinted < base ? "better" : "worse"}`]);
  // why: each run's wakeups by reason, as shares of its own wakeups (GET decisions of each recording);
  // only the hinted run (right) has wakeups that went through the wake_affine hint
  const params = new URL(page.url()).searchParams;
  type Dec = { wakeup: { path: string; pick: string; count: number }[] };
  const decisions = async (id: string | null) => (await (await request.get(`/api/recordings/${id ?? ""}/decisions`)).json()) as Dec;
  const [left, right] = [await decisions(params.get("rec")), await decisions(params.get("cmp"))];
  const HINT = "wake_affine hint: the waker's LLC has an idle core";
  expect(left.wakeup.filter((w) => w.path === HINT)).toHaveLength(0);
  const hintRows = right.wakeup.filter((w) => w.path === HINT);
  expect(hintRows.length).toBeGreaterThan(0);
  const wakeups = page.getByTestId("compare-decisions").locator('table[data-kind="wakeup"]');
  const total = (d: Dec) => d.wakeup.reduce((s, w) => s + w.count, 0);
  await expect(wakeups.locator("caption")).toHaveText(`wakeups: ${total(left).toLocaleString("en-US")} left, ${total(right).toLocaleString("en-US")} right`);
  // the hint's most frequent row (a fifth of this run's wakeups: among the rows shown)
  const top = hintRows[0];
  if (!top) throw new Error("no wake_affine hint wakeups");
  const row = wakeups.locator(`tr[data-key="${top.path}\u241f${top.pick}"]`);
  await expect(row.locator("td").nth(0)).toHaveText("0.0%");
  await expect(row.locator("td").nth(1)).toHaveText(`${((top.count / total(right)) * 100).toFixed(1)}%`);
  await page.screenshot({ path: join(ARTIFACTS, "simulate-compare.png") });

  // a parameter out of the simulator's bounds (from GET /api/sim/options) is held by the form itself
  await form.getByLabel("workers").fill("0");
  await form.getByRole("button", { name: "Simulate" }).click();
  expect(await form.getByLabel("workers").evaluate((el) => (el as HTMLInputElement).validity.rangeUnderflow)).toBe(true);
  await form.getByLabel("workers").fill("4097");
  expect(await form.getByLabel("workers").evaluate((el) => (el as HTMLInputElement).validity.rangeOverflow)).toBe(true);
  await expect(sim.getByTestId("simulate-progress")).toHaveCount(0);
  await expect(result.getByTestId("simulate-value")).toHaveText(us(hinted));
});

test("simulate form: a pair that also changes a feature is no published cell, and says so", async ({ page }) => {
  test.setTimeout(180_000);
  const { sim, form } = await openSimulate(page);
  await form.getByLabel("machine").selectOption("zen3-2s-nps1");
  await form.getByLabel("workers").fill("8");
  await form.getByRole("radio", { name: "wake_affine" }).check();
  await form.getByLabel("SIS_SHORT").check();
  await form.getByLabel("simulated ms").fill("300");
  await form.getByRole("button", { name: "Simulate" }).click();
  const result = sim.getByTestId("simulate-result");
  await expect(result.getByTestId("simulate-change")).toBeVisible({ timeout: 120_000 });
  await expect(result.getByTestId("simulate-published-none")).toHaveText("no published measurement to compare: the published runs have the default features");
  await expect(result.getByTestId("simulate-published")).toHaveCount(0);
});

test("simulate form: a feature change's pair beside the feature's own published effect (STEAL on the 10-core Broadwell)", async ({ page }) => {
  test.setTimeout(180_000);
  const { sim, form } = await openSimulate(page);
  await form.getByLabel("machine").selectOption("bdw-1s-20");
  await form.getByLabel("workload").selectOption("hackbench");
  await form.getByLabel("groups").fill("1");
  await form.getByLabel("loops").fill("2000");
  await form.getByLabel("STEAL").check();
  await form.getByLabel("simulated ms").fill("5000");
  await form.getByRole("button", { name: "Simulate" }).click();
  const result = sim.getByTestId("simulate-result");
  await expect(result.getByTestId("simulate-change")).toBeVisible({ timeout: 120_000 });
  // Sistare's STEAL series: hackbench 1 process, +35.6% (placemap.sim.published, in the repo)
  const cell = result.getByTestId("simulate-published-cell");
  await expect(cell.locator("b")).toHaveText("+35.6% better");
  await expect(cell).toContainText("hackbench 1 process 100000, bdw-1s-20, 1 groups, STEAL; published in Sistare's v4 series on 4.20-rc1");
  const change = (await result.getByTestId("simulate-change").textContent()) ?? "";
  await expect(cell).toHaveAttribute("data-direction", change.includes(", better (") ? "same" : change.includes(", worse (") ? "opposite" : "unmoved");
  await expect(cell).not.toContainText("runs it with"); // the form's hackbench is the check's run
  await shot(result, "simulate-published-feature.png");
});

test("simulate form: a pair that differs from the model's run of its published cell sets the form to that run", async ({ page }) => {
  test.setTimeout(240_000);
  const { sim, form } = await openSimulate(page);
  await form.getByLabel("machine").selectOption("zen3-2s-nps1");
  await form.getByLabel("workers").fill("4");
  await form.getByLabel("cputime_us").fill("10000");
  await form.getByRole("radio", { name: "wake_affine" }).check();
  await form.getByLabel("simulated ms").fill("300");
  await form.getByRole("button", { name: "Simulate" }).click();
  const result = sim.getByTestId("simulate-result");
  const cell = result.getByTestId("simulate-published-cell");
  // the RFC's Zen3 schbench wakeup table at 4 workers (tip 41 us, wake_affine 21 us: +48.78 pct)
  await expect(cell.locator("b")).toHaveText("+48.8% better (p99_latency_us 41 → 21)", { timeout: 120_000 });
  await expect(cell).toContainText("placemap calibrate runs it with workload.cputime_us 30000 (here 10000), duration_ms 30000 (here 300)");
  await cell.getByRole("button", { name: "set the form to that run" }).click();
  await expect(form.getByLabel("cputime_us")).toHaveValue("30000");
  await expect(form.getByLabel("simulated ms")).toHaveValue("30000");
  await expect(form.getByLabel("workers")).toHaveValue("4");
  await expect(form.getByLabel("machine")).toHaveValue("zen3-2s-nps1");
  await expect(form.getByRole("radio", { name: "wake_affine" })).toBeChecked();
  await form.getByRole("button", { name: "Simulate" }).click();
  // the new pair's cell (the one before it said how it differs): the calibration's own run, so
  // nothing differs, and the way it points is this run's
  const newCell = async () => (await cell.count()) === 1 && !((await cell.textContent()) ?? "").includes("runs it with");
  await expect.poll(newCell, { timeout: 180_000 }).toBe(true);
  const change = (await result.getByTestId("simulate-change").textContent()) ?? "";
  await expect(cell).toHaveAttribute("data-direction", change.includes(", better (") ? "same" : change.includes(", worse (") ? "opposite" : "unmoved");
});

test("simulate form: a schbench run that ends within its warmup says it has no samples, not 0 us, and is not compared", async ({ page }) => {
  test.setTimeout(120_000);
  const { sim, form } = await openSimulate(page);
  await form.getByLabel("machine").selectOption("zen3-2s-nps1");
  await form.getByLabel("workers").fill("4");
  await form.getByRole("radio", { name: "wake_affine" }).check();
  await form.getByLabel("simulated ms").fill("50");
  await form.getByRole("button", { name: "Simulate" }).click();
  const result = sim.getByTestId("simulate-result");
  await expect(result.getByTestId("simulate-incomplete")).toContainText("no wakeup after schbench's 100 ms warmup", { timeout: 60_000 });
  await expect(result.getByTestId("simulate-value")).toHaveText("no samples");
  await expect(result.getByTestId("simulate-latency")).toHaveCount(0);
  // its baseline (no hint) ends within the warmup too: 0 us against 0 us is no "+0.0%, the same"
  await expectNeitherCompared(result);
  await shot(sim, "simulate-no-samples.png");
});

test("simulate form: wake hints with no wakeup from another LLC say they had nothing to choose (hackbench, 1 group, ICX)", async ({ page, request }) => {
  test.setTimeout(120_000);
  const { sim, form } = await openSimulate(page);
  await form.getByLabel("machine").selectOption("icx-2s");
  await form.getByLabel("workload").selectOption("hackbench");
  await form.getByLabel("groups").fill("1");
  await form.getByLabel("loops").fill("50");
  await form.getByRole("radio", { name: "wake_affine" }).check();
  await form.getByRole("button", { name: "Simulate" }).click();
  const result = sim.getByTestId("simulate-result");
  await expect(result.getByTestId("simulate-change")).toContainText("without the hints and feature changes", { timeout: 60_000 });
  // one group's 40 tasks all on one socket, whose LLC is the socket: no waker ran in another LLC
  // than its wakee's last one, in either run (each saved recording counts it from its events)
  await expect(result.getByTestId("simulate-by-waker")).toHaveText("No wakeup came from another LLC than the woken task's, in either run: wake_affine had nothing to choose.");
  await shot(result, "simulate-nothing-to-choose.png");
  type Rec = { id: string; name: string };
  const recs = ((await (await request.get("/api/recordings")).json()) as Rec[]).filter((r) => r.name.startsWith("sim icx-2s hackbench"));
  expect(recs.length).toBeGreaterThanOrEqual(2);
  for (const r of recs) {
    const m = (await (await request.get(`/api/recordings/${r.id}/metrics`)).json()) as { wakeups: { total: number; by_waker: { cross_llc: number; shared_llc: number } } };
    expect(m.wakeups.by_waker.cross_llc).toBe(0);
    expect(m.wakeups.by_waker.shared_llc).toBeGreaterThan(0);
  }
});

test("simulate form: a tbench run whose window has not opened measured nothing and is not compared with its baseline", async ({ page }) => {
  test.setTimeout(120_000);
  const { sim, form } = await openSimulate(page);
  await form.getByLabel("machine").selectOption("icx-2s");
  await form.getByLabel("workload").selectOption("tbench");
  await form.getByLabel("warmup_ms").fill("30");
  await form.getByRole("radio", { name: "fork_spread" }).check();
  await form.getByLabel("simulated ms").fill("20");
  await form.getByRole("button", { name: "Simulate" }).click();
  const result = sim.getByTestId("simulate-result");
  await expect(result.getByTestId("simulate-incomplete")).toContainText("the measured window had not opened", { timeout: 60_000 });
  await expect(result.getByTestId("simulate-value")).toHaveText("nothing measured");
  // both runs end within warmup_ms at 0 MB/s: that is no "+0.0%, the same"
  await expectNeitherCompared(result);
  await shot(sim, "simulate-nothing-measured.png");
});

interface CliSeeds {
  runs: { seed: number; change_pct: number | null }[];
  summary: { verdict: string; measured: number; identical: boolean };
  published: { cells: { section: string; published_pct: number; significant: boolean }[] } | null;
}

/** `placemap sim FILE --baseline --seeds n --json`: the command line's summary of the pair. */
function cliSeedsOf(file: string, n: number): CliSeeds {
  return JSON.parse(execFileSync(PLACEMAP, ["sim", file, "--baseline", "--seeds", String(n), "--json"], { encoding: "utf8" })) as CliSeeds;
}

/** The same for a scenario written here. */
function cliSeeds(scenario: Record<string, unknown>, n: number): CliSeeds {
  const file = join(mkdtempSync(join(tmpdir(), "placemap-seeds-")), "s.json");
  writeFileSync(file, JSON.stringify(scenario));
  return cliSeedsOf(file, n);
}

test("simulate form: seeds that move nothing say so, as placemap sim --seeds does (schbench on a preset)", async ({ page }) => {
  test.setTimeout(180_000);
  const { sim, form } = await openSimulate(page);
  await form.getByLabel("machine").selectOption("zen3-2s-nps1");
  await form.getByLabel("workers").fill("8");
  await form.getByRole("radio", { name: "wake_affine" }).check();
  await form.getByLabel("simulated ms").fill("300");
  await form.getByLabel("seeds").fill("3");
  await form.getByRole("button", { name: "Simulate" }).click();
  const seeds = sim.getByTestId("simulate-seeds");
  await expect(seeds.getByTestId("simulate-seeds-verdict")).toBeVisible({ timeout: 120_000 });
  const workload = { kind: "schbench", messengers: 1, workers: 8, cputime_us: 30000, sleeptime_us: 30000 };
  const cli = cliSeeds({ topology: "zen3-2s-nps1", workload, hints: ["wake_affine"], seed: 1, duration_ms: 300 }, 3);
  expect(cli.summary.identical).toBe(true); // the start CPU and the sleep jitter move nothing on a symmetric preset
  await expect(seeds.getByTestId("simulate-seeds-verdict")).toHaveText(cli.summary.verdict);
  await expect(seeds.getByTestId("simulate-seeds-same")).toContainText("every seed gave the same change");
  await expect(sim.getByTestId("simulate-cli-command")).toHaveText("bin/placemap sim scenario.json --baseline --seeds 3");
  await shot(sim, "simulate-seeds-same.png");
});

test("simulate form: the pair on several seeds says whether its change holds on every seed, as placemap sim --seeds does", async ({ page, request }) => {
  test.setTimeout(240_000);
  const { sim, form } = await openSimulate(page);
  await form.getByLabel("machine").selectOption("icx-2s");
  await form.getByLabel("workload").selectOption("hackbench");
  await form.getByLabel("groups").fill("4");
  await form.getByLabel("loops").fill("50");
  await form.getByLabel("mode").selectOption("thread");
  await form.getByLabel("ipc").selectOption("pipe");
  await form.getByRole("radio", { name: "wake_affine" }).check();
  await form.getByLabel("seed", { exact: true }).fill("2");
  await form.getByLabel("seeds").fill("4");
  await form.getByRole("button", { name: "Simulate" }).click();
  const seeds = sim.getByTestId("simulate-seeds");
  const verdict = seeds.getByTestId("simulate-seeds-verdict");
  await expect(verdict).toBeVisible({ timeout: 180_000 });

  // the command line's summary of the same pair on the same seeds (sim_pair.seed_summary), run on
  // the scenario file the result offers, with the command it names
  await expect(sim.getByTestId("simulate-cli-command")).toHaveText("bin/placemap sim scenario.json --baseline --seeds 4");
  const [download] = await Promise.all([page.waitForEvent("download"), sim.getByTestId("simulate-scenario-file").click()]);
  expect(download.suggestedFilename()).toBe("scenario.json");
  const file = join(mkdtempSync(join(tmpdir(), "placemap-download-")), "scenario.json");
  await download.saveAs(file);
  const workload = { kind: "hackbench", groups: 4, mode: "thread", ipc: "pipe", loops: 50 };
  expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ topology: "icx-2s", workload, hints: ["wake_affine"], seed: 2, duration_ms: 1000 });
  const cli = cliSeedsOf(file, 4);
  await expect(verdict).toHaveText(cli.summary.verdict);
  await expect(seeds.getByTestId("simulate-seeds-same")).toHaveCount(cli.summary.identical ? 1 : 0);
  await expect(seeds).toContainText("on 4 seeds (2..5)");
  await seeds.getByText("each seed").click();
  await expect(seeds.getByTestId("simulate-seed")).toHaveText(cli.runs.map((r) => new RegExp(`^seed ${String(r.seed)}: `)));
  // the published cell (the RFC's ICX hackbench wakeup table, 4 groups: +8.22%), read against every
  // seed's change as the command line reads it
  const [pubCell] = cli.published?.cells ?? [];
  expect(pubCell?.section).toBe("Hackbench Wakeup Hint Test");
  const ways = cli.runs.flatMap((r) => (r.change_pct === null ? [] : [r.change_pct > 0 ? "same" : r.change_pct < 0 ? "opposite" : "unmoved"]));
  const kinds = [...new Set(ways)].sort();
  const cell = sim.getByTestId("simulate-published-cell");
  await expect(cell.locator("b")).toHaveText("+8.2% better (runtime_s 4.5 → 4.13)");
  await expect(cell).toHaveAttribute("data-direction", kinds.length === 1 ? (kinds[0] ?? "") : "mixed");
  if (kinds.length > 1) await expect(cell).toContainText(`the seed decides the way this run points (${kinds.map((k) => `${k} on ${String(ways.filter((w) => w === k).length)}`).join(", ")})`);
  await expect(cell).not.toContainText("placemap calibrate runs it with"); // the calibration's own run of the cell
  await shot(sim, "simulate-seeds.png");
  // a disagreement stands out: the way in the warning colour (where the seed decides, or the run points the other way)
  const way = cell.locator(".published-way");
  const warn = await way.evaluate((el) => getComputedStyle(el).color);
  expect(warn === "rgb(161, 92, 0)").toBe(kinds.length > 1 || kinds[0] !== "same");
  await shot(sim.getByTestId("simulate-result"), "simulate-seeds-published.png");

  // the further seeds ran as unsaved jobs of the same scenario, each beside its baseline
  const jobs = ((await (await request.get("/api/sim/jobs")).json()) as { jobs: { save: boolean; scenario: { seed: number; hints?: string[]; workload: { kind: string } } }[] }).jobs;
  const extra = jobs.filter((j) => !j.save && j.scenario.workload.kind === "hackbench" && j.scenario.seed >= 3 && j.scenario.seed <= 5);
  expect(extra.map((j) => `${String(j.scenario.seed)} ${(j.scenario.hints ?? []).join()}`).sort()).toEqual(["3 ", "3 wake_affine", "4 ", "4 wake_affine", "5 ", "5 wake_affine"]);

  // a new run while further seeds still wait cancels them: they do not fill the server's queue
  await form.getByLabel("seed", { exact: true }).fill("10");
  await form.getByLabel("seeds").fill("8");
  await form.getByRole("button", { name: "Simulate" }).click();
  await expect(seeds).toContainText(/on 8 seeds \(10\.\.17\): \d+ of 8 pairs done/, { timeout: 120_000 });
  await form.getByLabel("seeds").fill("1");
  await form.getByRole("button", { name: "Simulate" }).click();
  type Listed = { id: string; status: string; save: boolean; scenario: { seed: number; workload: { kind: string } } };
  const further = async () => ((await (await request.get("/api/sim/jobs")).json()) as { jobs: Listed[] }).jobs.filter((j) => !j.save && j.scenario.seed >= 11 && j.scenario.seed <= 17);
  await expect.poll(async () => (await further()).filter((j) => j.status === "queued" || j.status === "running").length, { timeout: 60_000 }).toBe(0);
  const ended = await further();
  expect(ended).toHaveLength(14);
  expect(ended.filter((j) => j.status === "cancelled").length).toBeGreaterThan(0);
  await expect(seeds).toHaveCount(0);
});

test("simulate form: a workload on a recorded host, its real topology sent inline and rerun on the command line", async ({ page, request }) => {
  test.setTimeout(180_000);
  // a machine of the user's own: a topology supplied with an import (as a sysfs read would be),
  // imported while the form is open: offered without a reload, at the recordings list's refresh
  const machine = "e2e-own-host";
  const { sim, form } = await openSimulate(page);
  const option = form.getByLabel("machine").locator('optgroup[label="recorded hosts"] option', { hasText: machine });
  await expect(form.getByLabel("workload")).toBeVisible();
  await expect(option).toHaveCount(0);
  const up = await request.post("/api/topologies", { data: vm2Topology(machine) });
  expect(up.status()).toBe(201);
  const g4 = await importG4(request, "g4-on-own-host", ((await up.json()) as { id: string }).id);
  const recorded = (await (await request.get(`/api/recordings/${g4}/topology`)).json()) as Record<string, unknown>;
  const label = `${machine} (recorded: 2 CPUs, 1 LLC, 1 node)`;
  await expect(option).toHaveText(label);
  await form.getByLabel("machine").selectOption({ label });
  const chosen = await form.getByLabel("machine").inputValue();
  // its recording deleted once chosen: the list drops the recording, the form keeps the choice
  expect((await request.delete(`/api/recordings/${g4}`)).status()).toBe(204);
  await expect(page.getByTestId("recording-item").filter({ hasText: "g4-on-own-host" })).toHaveCount(0);
  await expect(option).toHaveText(label);
  await expect(form.getByLabel("machine")).toHaveValue(chosen);
  await form.getByLabel("workload").selectOption("hackbench");
  await form.getByLabel("groups").fill("1");
  await form.getByLabel("loops").fill("20");
  await form.getByRole("button", { name: "Simulate" }).click();
  const result = sim.getByTestId("simulate-result");
  await expect(result.getByTestId("simulate-value")).toBeVisible({ timeout: 120_000 });
  await expect(result.getByTestId("simulate-cli-command")).toHaveText("bin/placemap sim scenario.json");

  // the scenario carries the recorded topology itself, and the command line reruns it to the same result
  const [download] = await Promise.all([page.waitForEvent("download"), result.getByTestId("simulate-scenario-file").click()]);
  const file = join(mkdtempSync(join(tmpdir(), "placemap-download-")), "scenario.json");
  await download.saveAs(file);
  const scenario = JSON.parse(readFileSync(file, "utf8")) as { topology: unknown; workload: Record<string, unknown> };
  expect(scenario.topology).toEqual(recorded);
  expect(scenario.workload).toMatchObject({ kind: "hackbench", groups: 1, loops: 20 });
  const cli = JSON.parse(execFileSync(PLACEMAP, ["sim", file, "--json"], { encoding: "utf8" })) as { metric: { value: number }; counters: unknown };
  type Job = { scenario: { topology: unknown }; result: { metric: { value: number }; counters: unknown } | null };
  const jobs = ((await (await request.get("/api/sim/jobs")).json()) as { jobs: Job[] }).jobs;
  const ran = jobs.find((j) => JSON.stringify(j.scenario.topology) === JSON.stringify(recorded));
  expect(ran?.result?.counters).toEqual(cli.counters);
  expect(ran?.result?.metric.value).toBe(cli.metric.value);
  await expect(result.getByTestId("simulate-value")).toHaveText(/^[0-9.]+ ms$/);

  // the saved run replays on that machine: its 2 CPUs, its name
  await result.getByRole("button", { name: "open the run" }).click();
  await expect(page.locator(".rec-title")).toHaveText(`sim ${machine} hackbench seed 1`);
  await expect(page.getByTestId("placement-state").locator("table.llc-table tbody tr td").nth(1)).toHaveText("2");
  await shot(sim, "simulate-recorded-host.png");

  // a task of the saved run says why the simulator put it where it is: its path's reasons
  const runId = new URL(page.url()).searchParams.get("rec") ?? "";
  type Placement = { ts_ns: number; cpu: number; kind: string; reason: { path: string; pick: string } | null };
  const tasks = (await (await request.get(`/api/recordings/${runId}/tasks?q=hackbench&limit=50`)).json()) as { pid: number }[];
  const pid = tasks[0]?.pid ?? 0; // the busiest: forked or started, then woken many times
  const path = ((await (await request.get(`/api/recordings/${runId}/tasks/${pid}/path`)).json()) as { placements: Placement[] }).placements;
  const counts = new Map<string, number>(); // "kind text" -> count, kinds named as the inspector names them
  for (const p of path) {
    if (!p.reason) continue;
    const kind = p.kind === "wakeup_new" ? "fork" : p.kind === "migrate" ? "balance" : p.kind;
    const k = `${kind} ${p.reason.path} -> ${p.reason.pick}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0];
  expect(top?.[0]).toMatch(/^wakeup /); // the busiest task: woken far more often than anything else
  await page.getByTestId("task-search").fill(String(pid));
  await page.getByTestId("task-result").filter({ hasText: String(pid) }).first().click();
  const why = page.getByTestId("placement-why");
  await expect(why.getByTestId("why-counts").locator("li").first()).toHaveText(`${top?.[0] ?? ""} ×${String(top?.[1] ?? 0)}`);
  // at the end of the run: the task's last placement, with its reason
  await page.getByTestId("seek-input").fill("+1s");
  await page.getByTestId("seek-input").press("Enter");
  const last = path[path.length - 1];
  const now = page.getByTestId("why-now");
  await expect(now).toContainText(`on CPU ${String(last?.cpu)}, `);
  if (last?.reason) await expect(now).toContainText(`because ${last.reason.path} -> ${last.reason.pick}`);
  else await expect(now).toContainText("moved there by balance");
  await page.getByTestId("task-detail").screenshot({ path: join(ARTIFACTS, "task-why.png") });

  // a run saved before runs kept their reasons (session 26) lacks the two blobs: dropped here from
  // the server's database directly, the one way to make such a run now. The inspector offers to work
  // them out: a job reruns the saved scenario, checks it is the same run, and the reasons are back
  const db = join(dirname(fileURLToPath(import.meta.url)), "..", "test-results", "e2e.db");
  const drop = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"DELETE FROM derived WHERE recording_id = ? AND name IN ('reasons', 'reason_names')\", (sys.argv[2],)); c.commit()";
  execFileSync(PYTHON, ["-c", drop, db, runId]);
  await page.getByTestId("task-detail").getByRole("button", { name: "clear" }).click();
  await page.getByTestId("task-result").filter({ hasText: String(pid) }).first().click();
  const backfill = page.getByTestId("reasons-backfill");
  await expect(backfill).toContainText("this run was saved before placement reasons were kept");
  await expect(page.getByTestId("placement-why")).toHaveCount(0);
  await page.getByTestId("task-detail").screenshot({ path: join(ARTIFACTS, "task-why-backfill.png") });
  await backfill.getByRole("button", { name: "work them out" }).click();
  await expect(why.getByTestId("why-counts").locator("li").first()).toHaveText(`${top?.[0] ?? ""} ×${String(top?.[1] ?? 0)}`, { timeout: 60_000 });
  await expect(backfill).toHaveCount(0);
  type ReasonsJob = { kind: string; status: string; recording_id: string | null };
  const reasonsJobs = ((await (await request.get("/api/sim/jobs")).json()) as { jobs: ReasonsJob[] }).jobs.filter((j) => j.kind === "reasons");
  expect(reasonsJobs.map((j) => [j.status, j.recording_id])).toEqual([["done", runId]]);
  // kept now: a second request is refused, naming why
  const again = await request.post(`/api/recordings/${runId}/reasons`);
  expect(again.status()).toBe(409);
  expect(((await again.json()) as { detail: { code: string } }).detail.code).toBe("already_kept");
});
