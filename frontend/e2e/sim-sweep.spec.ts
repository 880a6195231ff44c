/**
 * The simulate form's sweep in real chromium against the real backend: schbench with wake_affine on
 * zen3-2s-nps1 at 4-32 workers, each beside its baseline, drawn as a chart whose points are the
 * sweep job's results and the command line's (`placemap sim --sweep --json` on the job's scenario),
 * with the model's turn (16 to 32 workers) and the published one (8 to 16); values the form refuses
 * submit nothing. A sweep over machines: tbench with fork_affine on zen3-2s-nps1 and icx-2s, where the
 * hint hurts the first and leaves the second unmoved, in the model as in the published tables. A
 * sweep over toggles: every hint and feature change on its own against one baseline, as bars. The
 * same across zen3-2s-nps1 and icx-2s: one table of every toggle on both machines, stored and
 * opened again from its link; and across a recorded host (a real VM's topology) beside a preset.
 */
import { expect, test, type APIRequestContext, type Locator, type Page } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { importG4, openSimulate, shot, vm2Topology } from "./fixtures";

const PLACEMAP = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "placemap");

interface Spread { carrying: number }
interface Row { x: number | string; value: number; baseline: number | null; change_pct: number | null; published_pct: number | null; published: { differs: string[] }[]; llc_spread: Spread | null; baseline_llc_spread: Spread | null }
interface Sweep { calibrated: boolean; across?: string[]; panels?: (Sweep & { topology: string })[]; rows: Row[]; turns: { between: number[] }[]; published_turns: { between: number[] }[]; onset: unknown; published_onset: unknown }
interface Job { id: string; kind: string; status: string; scenario: Record<string, unknown>; sweep?: { hosts?: Record<string, unknown> | null } | null; sweep_result: Sweep | null; created_at: string }

async function jobs(request: APIRequestContext): Promise<Job[]> {
  return ((await (await request.get("/api/sim/jobs")).json()) as { jobs: Job[] }).jobs;
}

/** Run the form's sweep across machines: its table once shown, the finished job and its result. */
async function runAcross(sim: Locator, form: Locator, request: APIRequestContext): Promise<{ view: Locator; sweepJob: Job; got: Sweep & { panels: NonNullable<Sweep["panels"]> } }> {
  await form.getByRole("button", { name: "Simulate", exact: true }).click();
  const view = sim.getByTestId("across-sweep");
  await expect(view).toBeVisible({ timeout: 200_000 });
  const sweepJob = (await jobs(request)).find((j) => j.kind === "sweep");
  const got = sweepJob?.sweep_result;
  if (!sweepJob || !got?.panels) throw new Error("no finished sweep job");
  return { view, sweepJob, got: { ...got, panels: got.panels } };
}

/** The Simulate form, opened, on schbench (its default) on zen3-2s-nps1 for 1000 simulated ms. */
async function openSchbench(page: Page): Promise<{ sim: Locator; form: Locator }> {
  const { sim, form } = await openSimulate(page);
  await form.getByLabel("machine").selectOption("zen3-2s-nps1");
  await expect(form.getByLabel("workload")).toHaveValue("schbench");
  await form.getByLabel("simulated ms").fill("1000");
  return { sim, form };
}

/** The Simulate form, opened, on tbench with fork_affine on zen3-2s-nps1. */
async function openTbenchForkAffine(page: Page): Promise<{ sim: Locator; form: Locator }> {
  const { sim, form } = await openSimulate(page);
  await form.getByLabel("machine").selectOption("zen3-2s-nps1");
  await form.getByLabel("workload").selectOption("tbench");
  await form.getByRole("radio", { name: "fork_affine" }).check();
  return { sim, form };
}

test("a sweep: the metric at each value, where the change turns and where the published one does", async ({ page, request }) => {
  test.setTimeout(240_000);
  const { sim, form } = await openSchbench(page);
  await form.getByRole("radio", { name: "wake_affine" }).check();
  // the workload's integer parameters can be swept, or the machine, or the toggles
  const options = await form.getByLabel("sweep parameter").locator("option").allTextContents();
  expect(options).toEqual(["none", "messengers", "workers", "cputime_us", "sleeptime_us", "machines", "toggles"]);
  await form.getByLabel("sweep parameter").selectOption("workers");

  // one value is no sweep: the form says so, naming the parameter, and submits nothing at all
  const before = (await jobs(request)).length;
  await form.getByLabel("sweep values").fill("4");
  await form.getByRole("button", { name: "Simulate", exact: true }).click();
  await expect(sim.getByTestId("sweep-error")).toHaveText("sweep workers: give 2 to 10 different values (1 given)");
  await page.waitForTimeout(500);
  expect((await jobs(request)).length).toBe(before);

  await form.getByLabel("sweep values").fill("32, 4 16,8");
  await form.getByRole("button", { name: "Simulate", exact: true }).click();
  const chart = sim.getByTestId("simulate-sweep");
  await expect(chart).toBeVisible({ timeout: 180_000 });
  await expect(sim.getByTestId("sweep-error")).toHaveCount(0);

  const sweepJob = (await jobs(request)).find((j) => j.kind === "sweep");
  expect(sweepJob?.status).toBe("done");
  const got = sweepJob?.sweep_result;
  if (!sweepJob || !got) throw new Error("no finished sweep job");
  // the points drawn are the job's results, in order
  const points = chart.getByTestId("sweep-point");
  await expect(points).toHaveCount(4);
  const drawn = await points.evaluateAll((els) => els.map((e) => [Number(e.getAttribute("data-x")), Number(e.getAttribute("data-value"))]));
  expect(drawn).toEqual(got.rows.map((r) => [r.x, r.value]));
  const bases = await chart.getByTestId("sweep-base-point").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-value"))));
  expect(bases).toEqual(got.rows.map((r) => r.baseline));
  // and the command line's: the command the chart names, on the scenario file it offers
  const command = chart.getByTestId("sweep-cli-command");
  await expect(command).toHaveText("bin/placemap sim scenario.json --baseline --sweep workers=4,8,16,32");
  const [download] = await Promise.all([page.waitForEvent("download"), chart.getByTestId("sweep-scenario-file").click()]);
  const file = join(mkdtempSync(join(tmpdir(), "placemap-sweep-")), "scenario.json");
  await download.saveAs(file);
  expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(sweepJob.scenario);
  const args = (await command.innerText()).split(/\s+/).slice(1).map((a) => (a === "scenario.json" ? file : a));
  const cli = JSON.parse(execFileSync(PLACEMAP, [...args, "--json"], { encoding: "utf8" })) as Sweep;
  expect(cli.rows.map((r) => [r.x, r.value, r.baseline, r.change_pct])).toEqual(got.rows.map((r) => [r.x, r.value, r.baseline, r.change_pct]));
  expect(cli.turns).toEqual(got.turns);
  expect(cli.published_turns).toEqual(got.published_turns);
  expect([cli.onset, cli.published_onset]).toEqual([got.onset, got.published_onset]);

  // the model turns between 16 and 32 workers, the published tables between 8 and 16
  await expect(chart.getByTestId("sweep-turn")).toHaveAttribute("data-between", "16-32");
  await expect(chart.getByTestId("sweep-published-turn")).toHaveAttribute("data-between", "8-16");
  await expect(chart.getByTestId("sweep-summary")).toContainText("the change turns between 16 and 32 workers: better");
  await expect(chart.getByTestId("sweep-summary")).toContainText("published: it turns between 8 and 16 workers");
  await expect(chart.getByTestId("sweep-summary")).toContainText("the change first passes 5% at 4 workers: better");
  const rows = chart.getByTestId("sweep-table").locator("tbody tr");
  await expect(rows).toHaveCount(4);
  await expect(rows.nth(3)).toHaveAttribute("data-direction", "worse");
  await expect(rows.nth(2)).toHaveAttribute("data-direction", "better");
  // the change beside the published one, where each is measured
  const changes = await chart.getByTestId("sweep-change-model").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-pct"))));
  expect(changes).toEqual(got.rows.map((r) => r.change_pct));
  const published = await chart.getByTestId("sweep-change-published").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-x"))));
  expect(published).toEqual([4, 8, 16, 32]); // every value is a cell of the Zen3 schbench wakeup table
  // at 16 workers wake_affine holds the work on one LLC (the messenger's), where tip spreads it
  const at16 = got.rows[2];
  await expect(chart.getByTestId("sweep-llcs").nth(2)).toHaveText(`1 / ${String(at16?.baseline_llc_spread?.carrying)}`);
  expect(at16?.llc_spread?.carrying).toBe(1);
  // a value in the table sets the form's parameter to it, to run that point as the saved pair
  await expect(form.getByLabel("workers")).toHaveValue("16");
  await rows.nth(3).getByRole("button", { name: "32" }).click();
  await expect(form.getByLabel("workers")).toHaveValue("32");
  await shot(chart, "sweep.png");
  await shot(sim, "sweep-panel.png");
});

test("a sweep without hints or feature changes: the curve alone, nothing to compare", async ({ page, request }) => {
  test.setTimeout(180_000);
  const { sim, form } = await openSchbench(page);
  await form.getByLabel("sweep parameter").selectOption("workers");
  await form.getByLabel("sweep values").fill("8 4");
  await form.getByRole("button", { name: "Simulate", exact: true }).click();
  const chart = sim.getByTestId("simulate-sweep");
  await expect(chart).toBeVisible({ timeout: 120_000 });
  const sweepJob = (await jobs(request)).find((j) => j.kind === "sweep");
  const got = sweepJob?.sweep_result;
  if (!got) throw new Error("no finished sweep job");
  expect(got.rows.map((r) => [r.x, r.baseline])).toEqual([[4, null], [8, null]]);
  const drawn = await chart.getByTestId("sweep-point").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-value"))));
  expect(drawn).toEqual(got.rows.map((r) => r.value));
  await expect(chart.getByTestId("sweep-base-point")).toHaveCount(0);
  await expect(chart.getByTestId("sweep-change")).toHaveCount(0);
  await expect(chart.getByTestId("sweep-turn")).toHaveCount(0);
  await expect(chart.getByTestId("sweep-summary")).toHaveText("p99_wakeup_latency_us at each of 2 workers values (nothing to compare: no hints or feature changes)");
  await expect(chart.getByTestId("sweep-cli-command")).toHaveText("bin/placemap sim scenario.json --sweep workers=4,8");
});

test("a sweep over machines: where the hint helps and hurts, beside the published tables", async ({ page, request }) => {
  test.setTimeout(180_000);
  const { sim, form } = await openTbenchForkAffine(page);
  await form.getByLabel("clients").fill("32");
  await form.getByLabel("simulated ms").fill("150");
  await form.getByLabel("sweep parameter").selectOption("topology");
  const presets = form.getByRole("group", { name: "sweep presets" });
  // the form's own machine starts ticked; one machine is no sweep, and nothing is submitted
  await expect(presets.getByRole("checkbox", { name: "zen3-2s-nps1" })).toBeChecked();
  const before = (await jobs(request)).length;
  await form.getByRole("button", { name: "Simulate", exact: true }).click();
  await expect(sim.getByTestId("sweep-error")).toHaveText("sweep machines: tick 2 to 10 machines (1 ticked)");
  await page.waitForTimeout(500);
  expect((await jobs(request)).length).toBe(before);

  await presets.getByRole("checkbox", { name: "icx-2s" }).check();
  await form.getByRole("button", { name: "Simulate", exact: true }).click();
  const chart = sim.getByTestId("simulate-sweep");
  await expect(chart).toBeVisible({ timeout: 120_000 });
  const sweepJob = (await jobs(request)).find((j) => j.kind === "sweep");
  const got = sweepJob?.sweep_result;
  if (!sweepJob || !got) throw new Error("no finished sweep job");
  expect(got.rows.map((r) => r.x)).toEqual(["zen3-2s-nps1", "icx-2s"]);
  // the points are the job's, each machine's own, and not joined: machines run along no scale
  const drawn = await chart.getByTestId("sweep-point").evaluateAll((els) => els.map((e) => [e.getAttribute("data-x"), Number(e.getAttribute("data-value"))]));
  expect(drawn).toEqual(got.rows.map((r) => [r.x, r.value]));
  await expect(chart.getByTestId("sweep-run")).toHaveCount(0);
  await expect(chart.getByTestId("sweep-turn")).toHaveCount(0);
  await expect(chart.getByTestId("sweep-summary")).toHaveText(
    "the change, beyond 5%: worse on zen3-2s-nps1; same on icx-2s" + "published: worse on zen3-2s-nps1; same on icx-2s",
  );
  // Zen3's sixteen LLCs against ICX's two
  await expect(chart.getByTestId("sweep-llcs").nth(0)).toContainText(" of 16");
  await expect(chart.getByTestId("sweep-llcs").nth(1)).toContainText(" of 2");
  // the command line prints the same
  const command = chart.getByTestId("sweep-cli-command");
  await expect(command).toHaveText("bin/placemap sim scenario.json --baseline --sweep topology=zen3-2s-nps1,icx-2s");
  const [download] = await Promise.all([page.waitForEvent("download"), chart.getByTestId("sweep-scenario-file").click()]);
  const file = join(mkdtempSync(join(tmpdir(), "placemap-sweep-")), "scenario.json");
  await download.saveAs(file);
  const args = (await command.innerText()).split(/\s+/).slice(1).map((a) => (a === "scenario.json" ? file : a));
  const cli = JSON.parse(execFileSync(PLACEMAP, [...args, "--json"], { encoding: "utf8" })) as Sweep;
  expect(cli.rows.map((r) => [r.x, r.value, r.baseline])).toEqual(got.rows.map((r) => [r.x, r.value, r.baseline]));
  // a machine in the table sets the form's machine to it
  await chart.getByTestId("sweep-table").getByRole("button", { name: "icx-2s" }).click();
  await expect(form.getByLabel("machine")).toHaveValue("icx-2s");
  await shot(chart, "sweep-machines.png");

  // stored: the page's URL and the result's link open the same result, in a fresh page too
  const id = (await (await request.get(`/api/sim/jobs/${sweepJob.id}`)).json() as { sweep_id: string }).sweep_id;
  await expect(page).toHaveURL(new RegExp(`[?&]sweep=${id}`));
  await expect(chart.getByTestId("sweep-link")).toHaveAttribute("href", `?sweep=${id}`);
  const other = await page.context().newPage();
  await other.goto(`/?sweep=${id}`);
  const stored = other.getByTestId("sweep-stored");
  await expect(stored).toBeVisible({ timeout: 30_000 });
  const again = await stored.getByTestId("sweep-point").evaluateAll((els) => els.map((e) => [e.getAttribute("data-x"), Number(e.getAttribute("data-value"))]));
  expect(again).toEqual(drawn);
  await expect(stored.getByTestId("sweep-summary")).toHaveText((await chart.getByTestId("sweep-summary").textContent()) ?? "");
  await expect(stored.getByTestId("sweep-cli-command")).toHaveText(await command.innerText());
  // and the form as it ran it, to run it again
  const otherForm = other.getByTestId("simulate").getByRole("form", { name: "Simulate" });
  await expect(otherForm.getByLabel("workload")).toHaveValue("tbench");
  await expect(otherForm.getByLabel("clients")).toHaveValue("32");
  await expect(otherForm.getByRole("radio", { name: "fork_affine" })).toBeChecked();
  await expect(otherForm.getByLabel("sweep parameter")).toHaveValue("topology");
  await expect(otherForm.getByRole("group", { name: "sweep presets" }).getByRole("checkbox", { name: "icx-2s" })).toBeChecked();
  await shot(other.getByTestId("simulate"), "sweep-stored.png");
  // a link whose sweep is not stored here says so
  await other.goto("/?sweep=nosuchsweep");
  await expect(other.getByTestId("sweep-error")).toContainText("the sweep of this link");
  await expect(other.getByTestId("sweep-error")).toContainText("nosuchsweep");
  await other.close();
});

test("a sweep over toggles: the feature table, each toggle against one baseline", async ({ page, request }) => {
  test.setTimeout(180_000);
  // another sweep stored before it, to open from the list afterwards
  const small = { topology: "icx-2s", workload: { kind: "schbench", messengers: 1, workers: 2 }, hints: ["wake_hold"], seed: 1, duration_ms: 200 };
  const created = (await (await request.post("/api/sim/jobs", { data: { scenario: small, sweep: { values: [2, 4], baseline: true } } })).json()) as { job_id: string };
  let before: Job | null = null;
  await expect.poll(async () => {
    before = (await (await request.get(`/api/sim/jobs/${created.job_id}`)).json()) as Job;
    return before.status;
  }, { timeout: 60_000 }).toBe("done");
  const beforeId = (before as unknown as { sweep_id: string }).sweep_id;
  const { sim, form } = await openSchbench(page);
  await form.getByRole("radio", { name: "wake_affine" }).check(); // replaced by each toggle in turn
  await form.getByLabel("sweep parameter").selectOption("toggle");
  const ticks = form.getByRole("group", { name: "sweep toggles" }).getByRole("checkbox");
  const names = await form.getByRole("group", { name: "sweep toggles" }).locator("label").allTextContents();
  const options = (await (await request.get("/api/sim/options")).json()) as { sweep_toggles: string[] };
  expect(names.map((n) => n.trim())).toEqual(options.sweep_toggles);
  for (const t of await ticks.all()) await expect(t).toBeChecked(); // every toggle to start with
  // and a combination the published tables have, typed
  await form.getByLabel("sweep combinations").fill("fork_affine+wake_affine");
  const values = [...options.sweep_toggles, "fork_affine+wake_affine"];
  await form.getByRole("button", { name: "Simulate", exact: true }).click();
  const chart = sim.getByTestId("simulate-sweep");
  await expect(chart).toBeVisible({ timeout: 150_000 });
  const sweepJob = (await jobs(request)).find((j) => j.kind === "sweep");
  const got = sweepJob?.sweep_result;
  if (!sweepJob || !got) throw new Error("no finished sweep job");
  expect(got.rows.map((r) => r.x)).toEqual(values);
  expect(new Set(got.rows.map((r) => r.baseline)).size).toBe(1); // one baseline for all
  // one bar per toggle, each the job's change; a square where the pair is published
  const bars = await chart.getByTestId("toggle-bar").evaluateAll((els) => els.map((e) => [e.getAttribute("data-x"), Number(e.getAttribute("data-pct"))]));
  expect(bars).toEqual(got.rows.map((r) => [r.x, r.change_pct]));
  const pub = await chart.getByTestId("toggle-published").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-pct"))));
  expect(pub).toEqual(got.rows.flatMap((r) => (r.published_pct === null ? [] : [r.published_pct])));
  expect(pub.length).toBeGreaterThan(0); // the Zen3 schbench tables publish the hints at 16 workers
  await expect(chart.getByTestId("sweep-cli-command")).toHaveText(`bin/placemap sim scenario.json --baseline --sweep toggle=${values.join(",")}`);
  // the combination's published cell at 16 workers (the combination table): the collapse
  expect(got.rows.at(-1)?.published_pct).toBeLessThan(-1000);
  // a toggle picked in the table becomes the form's, instead of wake_affine
  await chart.getByTestId("sweep-table").getByRole("button", { name: "wake_hold" }).click();
  await expect(form.getByRole("radio", { name: "wake_hold" })).toBeChecked();
  await shot(chart.getByTestId("toggle-bars"), "sweep-toggles.png");
  await shot(sim, "sweep-toggles-panel.png");
  // the stored sweeps, newest first: this one, then the one stored before it, which opens here
  const list = sim.getByTestId("stored-sweeps");
  await list.locator("summary").click();
  const items = list.locator("li");
  await expect(items.first()).toContainText("schbench on zen3-2s-nps1: toggles fork_affine, fork_spread");
  const older = list.locator(`li[data-id="${beforeId}"]`);
  await expect(older).toContainText("schbench on icx-2s, wake_hold: workers 2, 4");
  await shot(list, "stored-sweeps.png");
  await older.getByRole("link").click();
  await expect(page).toHaveURL(new RegExp(`[?&]sweep=${beforeId}`));
  const stored = sim.getByTestId("sweep-stored");
  await expect(stored).toBeVisible({ timeout: 30_000 });
  await expect(stored.getByTestId("sweep-point")).toHaveCount(2);
  await expect(sim.getByTestId("toggle-bars")).toHaveCount(0); // the feature table gave way to it
  // deleted, after a confirmation: it leaves the list, the panel and the URL, and its link finds nothing
  const item = list.locator(`li[data-id="${beforeId}"]`);
  await item.getByRole("button", { name: "delete" }).click();
  await shot(list, "stored-sweeps-delete.png");
  await item.getByRole("group", { name: "confirm deleting this sweep" }).getByRole("button", { name: "Delete" }).click();
  await expect(item).toHaveCount(0);
  await expect(sim.getByTestId("sweep-stored")).toHaveCount(0);
  await expect(page).not.toHaveURL(new RegExp(`sweep=${beforeId}`));
  expect((await request.get(`/api/sim/sweeps/${beforeId}`)).status()).toBe(404);
  // one toggle is no sweep
  await form.getByLabel("sweep parameter").selectOption("none");
  await form.getByLabel("sweep parameter").selectOption("toggle");
  for (const t of (await ticks.all()).slice(1)) await t.uncheck();
  await form.getByLabel("sweep combinations").fill("");
  await form.getByRole("button", { name: "Simulate", exact: true }).click();
  await expect(sim.getByTestId("sweep-error")).toHaveText(`sweep toggles: tick or type 2 to ${String(options.sweep_toggles.length + 3)} toggles (1 given)`);
  // a combination the server does not take is refused naming it, and nothing runs
  await form.getByLabel("sweep combinations").fill("fork_affine+fork_spread");
  await form.getByRole("button", { name: "Simulate", exact: true }).click();
  await expect(sim.getByTestId("sweep-error")).toContainText("sweep.values: 'fork_affine+fork_spread': only one fork hint at a time");
});

test("a sweep as calibrate runs it: each point with the calibration's workload and run length", async ({ page, request }) => {
  test.setTimeout(120_000);
  const { sim, form } = await openTbenchForkAffine(page);
  // offered only along the parameter the tables vary
  await form.getByLabel("sweep parameter").selectOption("warmup_ms");
  await expect(form.getByLabel("as calibrate runs it")).toHaveCount(0);
  await form.getByLabel("sweep parameter").selectOption("clients");
  await form.getByLabel("sweep values").fill("4,256");
  await form.getByLabel("as calibrate runs it").check();
  await shot(form.getByRole("group", { name: "sweep", exact: true }), "sweep-calibrated-form.png");
  await form.getByRole("button", { name: "Simulate", exact: true }).click();
  const chart = sim.getByTestId("simulate-sweep");
  await expect(chart).toBeVisible({ timeout: 90_000 });
  const sweepJob = (await jobs(request)).find((j) => j.kind === "sweep");
  if (!sweepJob?.sweep_result) throw new Error("no finished sweep job");
  const got = sweepJob.sweep_result;
  expect(got.calibrated).toBe(true);
  // every published cell is now the model's own run of it: nothing differs
  expect(got.rows.flatMap((r) => r.published.map((c) => c.differs))).toEqual([[], []]);
  await expect(chart.getByTestId("sweep-cli-command")).toHaveText("bin/placemap sim scenario.json --baseline --sweep clients=4,256 --calibrated");
  await expect(chart).toContainText("each as placemap calibrate runs its cell");
});

test("a sweep across machines: the feature table on zen3-2s-nps1 and icx-2s in one table", async ({ page, request }) => {
  test.setTimeout(240_000);
  const { sim, form } = await openTbenchForkAffine(page);
  await form.getByLabel("clients").fill("32");
  await form.getByLabel("simulated ms").fill("150");
  await form.getByLabel("sweep parameter").selectOption("toggle");
  const across = form.getByRole("group", { name: "sweep across" });
  // none ticked to start with (the form's machine alone); one machine is no table, and nothing is submitted
  for (const t of await across.getByRole("checkbox").all()) await expect(t).not.toBeChecked();
  await across.getByRole("checkbox", { name: "icx-2s" }).check();
  const before = (await jobs(request)).length;
  await form.getByRole("button", { name: "Simulate", exact: true }).click();
  await expect(sim.getByTestId("sweep-error")).toHaveText("sweep across: tick 2 to 10 machines (1 ticked)");
  await page.waitForTimeout(500);
  expect((await jobs(request)).length).toBe(before);

  await across.getByRole("checkbox", { name: "zen3-2s-nps1" }).check();
  await shot(across, "sweep-across-form.png");
  const { view, sweepJob, got } = await runAcross(sim, form, request);
  expect(got.across).toEqual(["zen3-2s-nps1", "icx-2s"]);
  const options = (await (await request.get("/api/sim/options")).json()) as { sweep_toggles: string[] };
  // a cell per toggle and machine: the job's change on that machine, and its published effect
  const cells = await view.getByTestId("across-cell").evaluateAll((els) =>
    els.map((e) => [e.getAttribute("data-x"), e.getAttribute("data-machine"), e.getAttribute("data-pct"), e.getAttribute("data-published")]),
  );
  const want = options.sweep_toggles.flatMap((x) =>
    got.panels.map((p) => {
      const r = p.rows.find((row) => row.x === x);
      return [x, p.topology, String(r?.change_pct ?? ""), String(r?.published_pct ?? "")];
    }),
  );
  expect(cells).toEqual(want);
  // fork_affine: worse on zen3's sixteen LLCs, as published; icx's two hold the clients either way
  const forkAffine = view.locator('[data-testid="across-cell"][data-x="fork_affine"]');
  await expect(forkAffine.nth(0)).toHaveAttribute("data-direction", "worse");
  expect(Number(await forkAffine.nth(0).getAttribute("data-published"))).toBeLessThan(-5);
  await expect(forkAffine.nth(1)).toHaveAttribute("data-direction", "same");
  await expect(view.getByTestId("across-summary")).toContainText("zen3-2s-nps1: ");
  await expect(view.getByTestId("across-summary")).toContainText("the model points the published way on");
  // the command line runs the same across both machines
  const command = view.getByTestId("across-cli-command");
  await expect(command).toHaveText(`bin/placemap sim scenario.json --baseline --sweep toggle=${options.sweep_toggles.join(",")} --across zen3-2s-nps1,icx-2s`);
  const [download] = await Promise.all([page.waitForEvent("download"), view.getByTestId("across-scenario-file").click()]);
  const file = join(mkdtempSync(join(tmpdir(), "placemap-across-")), "scenario.json");
  await download.saveAs(file);
  const args = (await command.innerText()).split(/\s+/).slice(1).map((a) => (a === "scenario.json" ? file : a));
  const cli = JSON.parse(execFileSync(PLACEMAP, [...args, "--json"], { encoding: "utf8" })) as Sweep;
  expect(cli.panels?.map((p) => p.rows.map((r) => r.change_pct))).toEqual(got.panels.map((p) => p.rows.map((r) => r.change_pct)));
  // the table as CSV: a row per toggle, each machine's four columns
  const [csvDownload] = await Promise.all([page.waitForEvent("download"), view.getByTestId("across-csv").click()]);
  expect(csvDownload.suggestedFilename()).toBe("sweep.csv");
  const csvFile = join(mkdtempSync(join(tmpdir(), "placemap-csv-")), "sweep.csv");
  await csvDownload.saveAs(csvFile);
  const csv = readFileSync(csvFile, "utf8").trimEnd().split("\n").map((l) => l.split(","));
  expect(csv[0]?.slice(0, 5)).toEqual(["toggle", "zen3-2s-nps1 throughput_mb_s", "zen3-2s-nps1 baseline", "zen3-2s-nps1 change_pct", "zen3-2s-nps1 published_pct"]);
  expect(csv.slice(1).map((l) => [l[0], Number(l[3]), Number(l[7])])).toEqual(
    options.sweep_toggles.map((x) => [x, ...got.panels.map((p) => p.rows.find((r) => r.x === x)?.change_pct)]),
  );
  // each machine's whole sweep, folded: its feature table's bars
  const zen3 = view.locator('[data-testid="across-panel"][data-machine="zen3-2s-nps1"]');
  await zen3.locator("summary").click();
  await expect(zen3.getByTestId("toggle-bar")).toHaveCount(options.sweep_toggles.length);
  await zen3.locator("summary").click();
  await shot(view, "sweep-across.png");
  // a machine picked sets the form's, a toggle the form's toggles
  await view.getByTestId("across-table").getByRole("button", { name: "icx-2s" }).click();
  await expect(form.getByLabel("machine")).toHaveValue("icx-2s");
  await view.getByTestId("across-table").getByRole("button", { name: "fork_spread" }).click();
  await expect(form.getByRole("radio", { name: "fork_spread" })).toBeChecked();
  // a cell picked sets both: wake_hold on zen3-2s-nps1, to run as the saved pair; the form's
  // Simulate button, out of sight above the table, is brought into view and takes the focus
  const cell = view.locator('[data-testid="across-cell"][data-x="wake_hold"][data-machine="zen3-2s-nps1"] button');
  const submit = form.getByRole("button", { name: "Simulate", exact: true });
  await cell.scrollIntoViewIfNeeded();
  await expect(submit).not.toBeInViewport();
  await cell.click();
  await expect(submit).toBeFocused();
  await expect(submit).toBeInViewport();
  await expect(form.getByLabel("machine")).toHaveValue("zen3-2s-nps1");
  await expect(form.getByRole("radio", { name: "wake_hold" })).toBeChecked();
  await expect(form.getByRole("group", { name: "fork hint", exact: true }).getByRole("radio", { name: "none" })).toBeChecked();

  // stored: a fresh page at its link shows the same table, with the form as it ran
  const id = (await (await request.get(`/api/sim/jobs/${sweepJob.id}`)).json() as { sweep_id: string }).sweep_id;
  await expect(page).toHaveURL(new RegExp(`[?&]sweep=${id}`));
  const other = await page.context().newPage();
  await other.goto(`/?sweep=${id}`);
  const stored = other.getByTestId("sweep-stored");
  await expect(stored.getByTestId("across-table")).toBeVisible({ timeout: 30_000 });
  const again = await stored.getByTestId("across-cell").evaluateAll((els) => els.map((e) => [e.getAttribute("data-x"), e.getAttribute("data-machine"), e.getAttribute("data-pct"), e.getAttribute("data-published")]));
  expect(again).toEqual(cells);
  const otherForm = other.getByTestId("simulate").getByRole("form", { name: "Simulate" });
  await expect(otherForm.getByLabel("sweep parameter")).toHaveValue("toggle");
  const ticked = otherForm.getByRole("group", { name: "sweep across" });
  await expect(ticked.getByRole("checkbox", { name: "zen3-2s-nps1" })).toBeChecked();
  await expect(ticked.getByRole("checkbox", { name: "icx-2s" })).toBeChecked();
  await expect(ticked.getByRole("checkbox", { name: "zen3-2s-nps4" })).not.toBeChecked();
  const list = other.getByTestId("stored-sweeps");
  await list.locator("summary").click();
  await expect(list.locator(`li[data-id="${id}"]`)).toContainText("across zen3-2s-nps1, icx-2s");
  await other.close();
});

test("a sweep across a recorded host beside a preset: its topology sent, named, reproduced and restored", async ({ page, request }) => {
  test.setTimeout(240_000);
  // the user's own machine: a real 2-CPU VM's topology, supplied with the import of a trace from it
  const machine = "e2e-sweep-host";
  const up = await request.post("/api/topologies", { data: vm2Topology(machine) });
  expect(up.status()).toBe(201);
  const g4 = await importG4(request, "g4-sweep-host", ((await up.json()) as { id: string }).id);
  const recorded = (await (await request.get(`/api/recordings/${g4}/topology`)).json()) as Record<string, unknown>;
  const { sim, form } = await openTbenchForkAffine(page);
  await form.getByLabel("clients").fill("8");
  await form.getByLabel("simulated ms").fill("150");
  await form.getByLabel("sweep parameter").selectOption("toggle");
  // two toggles of all (ticked to start with)
  const toggles = form.getByRole("group", { name: "sweep toggles" });
  for (const t of await toggles.getByRole("checkbox").all()) await t.uncheck();
  await toggles.getByRole("checkbox", { name: "fork_spread" }).check();
  await toggles.getByRole("checkbox", { name: "wake_hold" }).check();
  const across = form.getByRole("group", { name: "sweep across" });
  // listed after the presets, by its machine's name, marked recorded
  const host = across.getByRole("checkbox", { name: machine });
  await expect(host).toBeVisible({ timeout: 30_000 });
  await expect(across.locator("label", { hasText: machine })).toHaveText(`${machine} recorded`);
  await host.check();
  await across.getByRole("checkbox", { name: "zen3-2s-nps1" }).check();
  await shot(form.locator("fieldset").filter({ hasText: "across machines" }), "sweep-across-host-form.png");
  const { view, sweepJob, got } = await runAcross(sim, form, request);
  // the presets' order, then the hosts'; the host's topology sent as recorded, named by its machine
  expect(got.across).toEqual(["zen3-2s-nps1", machine]);
  expect(sweepJob.sweep?.hosts).toEqual({ [machine]: recorded });
  const cells = await view.getByTestId("across-cell").evaluateAll((els) => els.map((e) => [e.getAttribute("data-x"), e.getAttribute("data-machine"), e.getAttribute("data-pct")]));
  expect(cells).toEqual(["fork_spread", "wake_hold"].flatMap((x) => got.panels.map((p) => [x, p.topology, String(p.rows.find((r) => r.x === x)?.change_pct ?? "")])));
  // on the VM's one LLC: each run's work on its one LLC
  const onHost = got.panels.find((p) => p.topology === machine);
  expect(onHost?.rows.map((r) => r.llc_spread?.carrying)).toEqual([1, 1]);
  // the command line names the host by its topology file, offered beside scenario.json, and gives the same table
  const command = view.getByTestId("across-cli-command");
  await expect(command).toHaveText(`bin/placemap sim scenario.json --baseline --sweep toggle=fork_spread,wake_hold --across zen3-2s-nps1,${machine}.json`);
  const dir = mkdtempSync(join(tmpdir(), "placemap-host-"));
  const [scenarioFile] = await Promise.all([page.waitForEvent("download"), view.getByTestId("across-scenario-file").click()]);
  await scenarioFile.saveAs(join(dir, "scenario.json"));
  const [hostFile] = await Promise.all([page.waitForEvent("download"), view.getByTestId("across-host-file").click()]);
  expect(hostFile.suggestedFilename()).toBe(`${machine}.json`);
  await hostFile.saveAs(join(dir, `${machine}.json`));
  expect(JSON.parse(readFileSync(join(dir, `${machine}.json`), "utf8"))).toEqual(recorded);
  const args = (await command.innerText()).split(/\s+/).slice(1);
  const cli = JSON.parse(execFileSync(PLACEMAP, [...args, "--json"], { encoding: "utf8", cwd: dir })) as Sweep;
  expect(cli.panels?.map((p) => [p.topology, p.rows.map((r) => r.change_pct)])).toEqual(got.panels.map((p) => [p.topology, p.rows.map((r) => r.change_pct)]));
  // its header says what the machine is
  await expect(view.locator(`th[data-machine="${machine}"]`)).toHaveAttribute("title", `${machine} (recorded: 2 CPUs, 1 LLC, 1 node)`);
  // the host picked becomes the form's machine: the recorded host, not a preset of that name
  await view.getByTestId("across-table").getByRole("button", { name: machine }).click();
  await expect(form.getByLabel("machine")).toHaveValue(/^host:/);
  await expect(form.getByLabel("machine").locator("option:checked")).toHaveText(`${machine} (recorded: 2 CPUs, 1 LLC, 1 node)`);
  await shot(view, "sweep-across-host.png");

  // its recording deleted, the stored sweep's link still opens the table with the host ticked, from the sweep's own copy
  expect((await request.delete(`/api/recordings/${g4}`)).status()).toBe(204);
  const id = (await (await request.get(`/api/sim/jobs/${sweepJob.id}`)).json() as { sweep_id: string }).sweep_id;
  const other = await page.context().newPage();
  await other.goto(`/?sweep=${id}`);
  const stored = other.getByTestId("sweep-stored");
  await expect(stored.getByTestId("across-table")).toBeVisible({ timeout: 30_000 });
  const otherForm = other.getByTestId("simulate").getByRole("form", { name: "Simulate" });
  const ticked = otherForm.getByRole("group", { name: "sweep across" });
  await expect(ticked.getByRole("checkbox", { name: machine })).toBeChecked();
  await expect(ticked.getByRole("checkbox", { name: "zen3-2s-nps1" })).toBeChecked();
  await expect(stored.getByTestId("across-host-file")).toHaveText(`${machine}.json`);
  await other.close();
});

test("a sweep can be stopped: the job is cancelled and nothing is stored", async ({ page, request }) => {
  test.setTimeout(120_000);
  const stored = async () => ((await (await request.get("/api/sim/sweeps", { params: { limit: 200 } })).json()) as { sweeps: unknown[] }).sweeps.length;
  const before = await stored();
  const { sim, form } = await openTbenchForkAffine(page);
  await form.getByLabel("clients").fill("256");
  await form.getByLabel("simulated ms").fill("5000");
  await form.getByLabel("sweep parameter").selectOption("toggle");
  // every toggle on all eight machines: minutes of work
  for (const box of await form.getByRole("group", { name: "sweep across" }).getByRole("checkbox").all()) await box.check();
  await form.getByRole("button", { name: "Simulate", exact: true }).click();
  await expect(sim.getByTestId("sweep-progress")).toBeVisible({ timeout: 30_000 });
  const running = (await jobs(request)).find((j) => j.kind === "sweep" && (j.status === "queued" || j.status === "running"));
  if (!running) throw new Error("no sweep job queued or running");
  await shot(sim.getByTestId("sweep-progress").locator(".."), "sweep-stop.png");
  await sim.getByRole("button", { name: "stop the sweep" }).click();
  await expect(sim.getByTestId("sweep-progress")).toHaveCount(0);
  await expect.poll(async () => ((await (await request.get(`/api/sim/jobs/${running.id}`)).json()) as Job).status).toBe("cancelled");
  expect(await stored()).toBe(before);
  await expect(sim.getByTestId("across-sweep")).toHaveCount(0);
  // the saved pair's long runs, cancelled too, so that the tests after this one do not wait behind them
  for (const j of await jobs(request)) if (j.status === "queued" || j.status === "running") await request.delete(`/api/sim/jobs/${j.id}`);
});
