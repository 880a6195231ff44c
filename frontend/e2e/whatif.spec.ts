/**
 * The what-if replay in real chromium against the real backend: a real recording (vm2-hackbench-g4,
 * uploaded with the 2-CPU VM's topology) is opened, replayed under a hint on a preset machine from
 * the form, the job's result shows beside the recorded span, and the twin opens on the preset's
 * grid with its "simulated" badge saying what it replayed. A refused scenario shows its field. The
 * recording's feature table: replayed under every toggle on its own host, then across that host and
 * a preset.
 */
import { expect, test, type Locator } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { tableFromIPC } from "apache-arrow";
import { ARTIFACTS, G4, importG4, shot, vm2Topology, waitReady } from "./fixtures";

const VM2 = vm2Topology("vm2");
const PLACEMAP = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "placemap");

test("what-if: replay a recording under a hint on another machine, open the twin", async ({ page, request }) => {
  test.setTimeout(240_000);
  const tid = ((await (await request.post("/api/topologies", { data: VM2 })).json()) as { id: string }).id;
  const up = await request.post(`/api/recordings?name=g4-whatif&topology_id=${tid}`, { data: readFileSync(G4) });
  expect(up.status()).toBe(202);
  const rid = ((await up.json()) as { id: string }).id;
  await waitReady(request, rid);

  await page.goto("/");
  const item = page.getByTestId("recording-item").filter({ hasText: "g4-whatif" });
  await item.locator("button.rec-open").click();
  const whatif = item.getByTestId("whatif");
  await whatif.getByRole("button", { name: /What if/ }).click();
  const form = whatif.getByRole("form", { name: "What-if replay" });
  await expect(form.getByLabel("topology")).toHaveValue("recorded");
  // a replay draws nothing from the seed (tests/sim/test_replay.py): no field for it here
  await expect(form.getByLabel("seed")).toHaveCount(0);
  await form.getByLabel("topology").selectOption("zen3-2s-nps1");
  await form.getByRole("radio", { name: "wake_affine" }).check();
  await form.getByRole("button", { name: "Replay" }).click();
  const result = whatif.getByTestId("whatif-result");
  await expect(result).toContainText("runtime", { timeout: 180_000 });
  await expect(result).toContainText("(recorded 787.9 ms on its host)");
  const ms = (re: RegExp, text: string): number => Number(re.exec(text)?.[1]);
  const seconds = ms(/runtime ([0-9.]+) ms/, await result.innerText()) / 1000;
  expect(seconds).toBeGreaterThan(0.05);
  expect(seconds).toBeLessThan(0.788 / 2); // 256 CPUs instead of 2
  // compared with the same replay on the same machine without the hint (run beside it)
  const change = result.getByTestId("whatif-change");
  await expect(change).toContainText("on the same machine without the changes", { timeout: 180_000 });
  const base = ms(/against ([0-9.]+) ms/, await change.innerText()) / 1000;
  expect(base).toBeGreaterThan(0.05);
  expect(base).toBeLessThan(0.788 / 2);
  expect(base).not.toBe(seconds);
  // what the real trace lacks is shown, counted (72 switches missing from vm2-hackbench-g4)
  await expect(result.getByTestId("whatif-lacked")).toContainText("switches missing 72");
  // and the decision whose share moved most between the two replays (both jobs' result.decisions)
  await expect(result.getByTestId("whatif-why")).toContainText(/The decision that moved most: [0-9.]+% of the (wakeups|forks) went “.+” \([0-9.]+% without\)/);
  // of the wakeups woken from another LLC, the share in the waker's LLC: the hint pulls most of them
  // there, the replay without it almost none (checked against the twin's own metrics below)
  const byWaker = /Woken from another LLC: ([\d,]+) wakeups, ([\d.]+)% of them in the waker's LLC \(([\d,]+) and ([\d.]+)% without\)\./.exec(await result.getByTestId("whatif-by-waker").innerText());
  if (!byWaker) throw new Error("no wakeups by their waker under the what-if result");
  const [, crossText = "", pulledText = "", baseCrossText = "", basePulledText = ""] = byWaker;
  expect(Number(pulledText)).toBeGreaterThan(Number(basePulledText) + 50);
  expect(Number(baseCrossText.replace(/,/g, ""))).toBeGreaterThan(0);
  // the what-if run's whole scenario as a file: the command line reruns the pair from it, with no
  // database (the recording's profile and the machine are in the file)
  await expect(result.getByTestId("whatif-cli-command")).toHaveText("bin/placemap sim scenario.json --baseline");
  const [download] = await Promise.all([page.waitForEvent("download"), result.getByTestId("whatif-scenario-file").click()]);
  expect(download.suggestedFilename()).toBe("scenario.json");
  const fileTwin = /\/api\/recordings\/([^/]+)\/scenario$/.exec(download.url())?.[1] ?? "";
  const file = join(mkdtempSync(join(tmpdir(), "placemap-download-")), "scenario.json");
  await download.saveAs(file);
  const whole = JSON.parse(readFileSync(file, "utf8")) as { topology: unknown; hints: unknown; workload: { profile: { tasks: unknown[] } } };
  expect(whole.topology).toBe("zen3-2s-nps1");
  expect(whole.hints).toEqual(["wake_affine"]);
  expect(whole.workload.profile.tasks.length).toBeGreaterThan(160);
  type Ran = { metric: unknown; counters: unknown; llc_util: { series: { util: number[] }[] } };
  const env = { ...process.env, PLACEMAP_DB: join(tmpdir(), "placemap-no-such-dir", "none.db") };
  const cli = JSON.parse(execFileSync(PLACEMAP, ["sim", file, "--baseline", "--json"], { encoding: "utf8", env })) as { result: Ran; baseline: Ran };
  type Job = { recording_id: string | null; status: string; scenario: { hints?: string[]; workload: { recording?: string } }; result: Ran | null };
  const jobs = ((await (await request.get("/api/sim/jobs")).json()) as { jobs: Job[] }).jobs;
  const ran = jobs.find((j) => j.recording_id === fileTwin)?.result;
  const baseRan = jobs.find((j) => j.scenario.workload.recording === rid && (j.scenario.hints ?? []).length === 0 && j.status === "done")?.result;
  expect(ran?.counters).toBeTruthy();
  expect(cli.result.counters).toEqual(ran?.counters);
  expect(cli.result.metric).toEqual(ran?.metric);
  expect(cli.baseline.counters).toEqual(baseRan?.counters);
  expect(cli.baseline.metric).toEqual(baseRan?.metric);
  // each replay's busy time per LLC, the same from the command line, drawn for both runs
  expect(cli.result.llc_util).toEqual(ran?.llc_util);
  expect(cli.baseline.llc_util).toEqual(baseRan?.llc_util);
  const heat = result.getByTestId("whatif-llc-util");
  for (const [testId, u] of [["llc-util-run", cli.result.llc_util], ["llc-util-base", cli.baseline.llc_util]] as const) {
    expect(u.series).toHaveLength(16);
    await expect(heat.getByTestId(testId).locator("rect")).toHaveCount(16 * (u.series[0]?.util.length ?? 0));
    await expect(heat.getByTestId(`${testId}-spread`)).toContainText("of the work on");
  }
  await page.screenshot({ path: join(ARTIFACTS, "whatif-form.png") });
  await shot(whatif, "whatif-result.png");

  // side by side: the twin follows the recording's time from its start, and the URL keeps the view
  await result.getByRole("button", { name: "compare side by side" }).click();
  const cmp = page.getByTestId("compare");
  await expect(cmp.locator(".grid-wrap")).toHaveCount(2);
  await expect(page.getByTestId("compare-other")).toContainText("trace of g4-whatif wake_affine");
  await page.getByTestId("seek-input").fill("+100ms");
  await page.getByTestId("seek-input").press("Enter");
  await expect(cmp.getByTestId("from-start")).toHaveText(["+100.0 ms", "+100.0 ms"]);
  await expect(page).toHaveURL(/[?&]cmp=/);
  const compareUrl = page.url();
  // beside the grids, both runs' whole-run counts, as each recording's metrics give them
  const twinId = new URL(compareUrl).searchParams.get("cmp") ?? "";
  // under the timeline, the twin's CPU lanes beside the recording's, over the same time from each
  // one's start (as far as each run goes), each as many spans as the server's lanes of its window
  const lanesOf = async (testId: string, id: string): Promise<[number, number, number]> => {
    const el = page.getByTestId(testId);
    await expect(el).toHaveAttribute("data-status", "ok");
    const t0 = Number(await el.getAttribute("data-t0"));
    const t1 = Number(await el.getAttribute("data-t1"));
    const served = tableFromIPC(await (await request.get(`/api/recordings/${id}/lanes.arrow?t0_ns=${t0}&t1_ns=${t1}&limit=100000`)).body());
    await expect(el).toHaveAttribute("data-spans", String(served.numRows));
    expect(served.numRows).toBeGreaterThan(0);
    const rec = (await (await request.get(`/api/recordings/${id}`)).json()) as { t_start_ns: number; t_end_ns: number };
    return [t0 - rec.t_start_ns, t1 - rec.t_start_ns, rec.t_end_ns - rec.t_start_ns];
  };
  const own = await lanesOf("cpu-lanes", rid);
  await expect(page.getByTestId("cpu-lanes-other")).toHaveCount(0);
  await page.getByTestId("cpu-lanes-other-toggle").click();
  // in the link, which opens the twin's lanes too (in another tab: this one keeps its what-if result)
  await expect(page).toHaveURL(/[?&]lanes=twin(&|$)/);
  const linked = await page.context().newPage();
  await linked.goto(page.url());
  await expect(linked.getByTestId("cpu-lanes-other")).toHaveAttribute("data-status", "ok");
  await expect(linked.getByTestId("cpu-lanes-other-toggle")).toHaveAttribute("aria-pressed", "true");
  await linked.close();
  const twinLanes = await lanesOf("cpu-lanes-other", twinId);
  expect(Math.abs(own[0] - twinLanes[0])).toBeLessThanOrEqual(1);
  expect(Math.abs(Math.min(own[1], twinLanes[2]) - twinLanes[1])).toBeLessThanOrEqual(1);
  // the twin ends first: past its end its lanes are shaded and say so
  expect(twinLanes[2]).toBeLessThan(own[1]);
  const other = await page.getByTestId("cpu-lanes-other-canvas").boundingBox();
  if (!other) throw new Error("no twin lanes");
  // (halfway between the twin's end and the window's)
  const endsAt = (twinLanes[2] - own[0]) / (own[1] - own[0]);
  await page.mouse.move(other.x + other.width * (endsAt + (1 - endsAt) / 2), other.y + 2);
  await expect(page.getByTestId("cpu-lanes-other-hover")).toHaveText(/^after \+\S+ \S+: after the recording's end$/);
  await page.locator(".cpu-lanes-other").screenshot({ path: join(ARTIFACTS, "whatif-twin-lanes.png") });
  await page.mouse.move(other.x + 2, other.y + 2);
  await expect(page.getByTestId("cpu-lanes-other-hover")).not.toContainText("after the recording's end");
  await expect(page.getByTestId("cpu-lanes-other")).toHaveAttribute("data-rows", "256");
  type M = { migrations: { total: number }; wakeups: { total: number } };
  const mA = (await (await request.get(`/api/recordings/${rid}/metrics`)).json()) as M;
  const mB = (await (await request.get(`/api/recordings/${twinId}/metrics`)).json()) as M;
  expect(mB.migrations.total).toBeGreaterThan(0);
  const counts = page.getByTestId("compare-counts");
  const cells = (key: string) => counts.locator(`tr[data-key="${key}"] td`);
  const n = (x: number) => x.toLocaleString("en-US");
  await expect(cells("migrations")).toHaveText([n(mA.migrations.total), n(mB.migrations.total), /^[+\u2212=]/]);
  await expect(cells("wakeups").first()).toHaveText(n(mA.wakeups.total));
  // the run-queue delay after a wakeup, the real kernel's beside the model's: each as its metrics give it
  type Lat = { wakeup_latency: { samples: number; p50_ns: number; p99_ns: number; max_ns: number } | null };
  const [latA, latB] = [((await (await request.get(`/api/recordings/${rid}/metrics`)).json()) as Lat).wakeup_latency, ((await (await request.get(`/api/recordings/${twinId}/metrics`)).json()) as Lat).wakeup_latency];
  if (latA === null || latB === null) throw new Error("no run-queue delays measured");
  expect(latA.samples).toBeGreaterThan(1000);
  const UNIT: Record<string, number> = { ns: 1, us: 1e3, ms: 1e6, s: 1e9 };
  const asNs = async (cell: Locator) => {
    const m = /^([\d.]+) (ns|us|ms|s)$/.exec((await cell.textContent()) ?? "");
    if (!m) throw new Error(`not a duration: ${(await cell.textContent()) ?? ""}`);
    return Number(m[1]) * (UNIT[m[2] ?? ""] ?? NaN);
  };
  for (const [key, field] of [["delay.p50", "p50_ns"], ["delay.p99", "p99_ns"], ["delay.max", "max_ns"]] as const) {
    await expect(cells(key)).toHaveCount(3);
    for (const [i, want] of [[0, latA[field]], [1, latB[field]]] as const) {
      // shown to three significant digits
      expect(Math.abs((await asNs(cells(key).nth(i))) - want)).toBeLessThanOrEqual(want * 0.01 + 1);
    }
  }
  // the recording's host has one LLC: none of its migrations left it
  await expect(cells("migrations.node").first()).toHaveText("0");
  await expect(cells("migrations.cross_node").first()).toHaveText("0");
  // where each run's wakeups woke against their waker's CPU (sched_waking's): the capture's one LLC
  // has no wakeup from another LLC, the twin's 16 LLCs do, each share as its own metrics count it
  type BW = { shared_llc: number; cross_llc: number; to_waker_llc: number; to_prev_llc: number; on_waker_cpu: number };
  type W = { wakeups: { total: number; by_waker: BW | null } };
  const [wA, wB] = [((await (await request.get(`/api/recordings/${rid}/metrics`)).json()) as W).wakeups, ((await (await request.get(`/api/recordings/${twinId}/metrics`)).json()) as W).wakeups];
  if (wA.by_waker === null || wB.by_waker === null) throw new Error("wakeups not counted by their waker");
  expect(wA.by_waker.cross_llc).toBe(0);
  expect(wB.by_waker.cross_llc).toBeGreaterThan(0);
  // the twin's recording counts from its events what its run counted as it decided (the result's line)
  expect(wB.by_waker.cross_llc.toLocaleString("en-US")).toBe(crossText);
  expect(((100 * wB.by_waker.to_waker_llc) / wB.by_waker.cross_llc).toFixed(1)).toBe(pulledText);
  const pct = (x: number, of: number) => `${((x / of) * 100).toFixed(1)}%`;
  await expect(cells("wakeups.waker.cross_llc")).toHaveText(["0", n(wB.by_waker.cross_llc), `+${n(wB.by_waker.cross_llc)}`]);
  await expect(cells("wakeups.waker.to_waker_llc")).toHaveText(["–", pct(wB.by_waker.to_waker_llc, wB.by_waker.cross_llc), ""]);
  await expect(cells("wakeups.waker.to_prev_llc")).toHaveText(["–", pct(wB.by_waker.to_prev_llc, wB.by_waker.cross_llc), ""]);
  // on the waker's CPU: of the wakeups whose waker is known
  const known = (w: BW) => w.shared_llc + w.cross_llc;
  await expect(cells("wakeups.waker.on_waker_cpu").nth(0)).toHaveText(pct(wA.by_waker.on_waker_cpu, known(wA.by_waker)));
  await expect(cells("wakeups.waker.on_waker_cpu").nth(1)).toHaveText(pct(wB.by_waker.on_waker_cpu, known(wB.by_waker)));
  await expect(counts.locator('tr[data-key="wakeups.waker.cross_llc"] th')).toHaveAttribute("title", /wake_affine\(\)/);
  // by LLC pair: the capture's one LLC has nothing to show; the twin's 16 LLCs, its diagonal (woke in
  // the waker's LLC) and total as its metrics' llc_pairs count them
  const pairB = ((await (await request.get(`/api/recordings/${twinId}/metrics`)).json()) as { wakeups: { llc_pairs: { llcs: number; pairs: number[][] } } }).wakeups.llc_pairs;
  expect(pairB.llcs).toBe(16);
  const sides = page.getByTestId("llc-pairs-side");
  await expect(sides.nth(0)).toHaveAttribute("data-side", "left");
  await expect(sides.nth(0).getByTestId("llc-pairs-none")).toHaveText("one LLC: every wakeup in its waker's");
  const diag = sides.nth(1).getByTestId("llc-pairs-diagonal");
  await expect(diag).toHaveAttribute("data-diagonal", String(pairB.pairs.reduce((s, [w, t, c]) => s + (w === t ? (c ?? 0) : 0), 0)));
  // one cell per pair with wakeups, as many as the API lists
  await expect(sides.nth(1).locator("rect[data-n]")).toHaveCount(pairB.pairs.length);
  await expect(diag).toHaveAttribute("data-total", String(known(wB.by_waker)));
  // why: only the twin is simulated; the real capture's side has no reasons, and the twin's wakeups
  // are counted by reason (GET decisions), as many as its metrics count
  const why = page.getByTestId("compare-decisions");
  await expect(why).toContainText("left: a captured trace; the kernel does not say why");
  const twinDec = (await (await request.get(`/api/recordings/${twinId}/decisions`)).json()) as { wakeup: { count: number }[] };
  await expect(why.locator('table[data-kind="wakeup"] caption')).toHaveText(`wakeups: – left, ${n(twinDec.wakeup.reduce((s, w) => s + w.count, 0))} right`);
  await expect(why.locator('table[data-kind="wakeup"] tbody tr').first().locator("td").first()).toHaveText("–");
  // switched to the counts up to the playhead (+100 ms on both): each recording's overview bins
  // (the Player's 2000) up to the one holding its playhead
  type Ov = { t_start_ns: number; bin_ns: number; bins: number; migrations_by_level: Record<string, number[]> };
  const upTo = async (id: string) => {
    const o = (await (await request.get(`/api/recordings/${id}/overview?bins=2000`)).json()) as Ov;
    const nb = Math.min(o.bins, Math.floor(100e6 / o.bin_ns) + 1);
    return Math.round(Object.values(o.migrations_by_level).reduce((s, xs) => s + xs.slice(0, nb).reduce((x, y) => x + y, 0), 0));
  };
  await counts.getByRole("button", { name: "up to the playhead" }).click();
  await expect(page.getByTestId("compare-counts-caption")).toContainText("up to +100.0 ms");
  await expect(page).toHaveURL(/[?&]counts=playhead/);
  const playheadUrl = page.url();
  await expect(cells("migrations")).toHaveText([n(await upTo(rid)), n(await upTo(twinId)), /^[+\u2212=]/]);
  await expect(cells("migrations.cause.wakeup")).toHaveCount(0);
  // the wakeups by their waker up to the playhead: the overview's wakeup rows summed to its bin
  const wakerUpTo = async (id: string, key: string) => {
    const o = (await (await request.get(`/api/recordings/${id}/overview?bins=2000`)).json()) as Ov & { wakeups_by_waker: Record<string, number[]> };
    const nb = Math.min(o.bins, Math.floor(100e6 / o.bin_ns) + 1);
    return Math.round((o.wakeups_by_waker[key] ?? []).slice(0, nb).reduce((x, y) => x + y, 0));
  };
  const crossAt100 = await wakerUpTo(twinId, "cross_llc");
  expect(crossAt100).toBeGreaterThan(0);
  expect(crossAt100).toBeLessThan(wB.by_waker.cross_llc);
  await expect(cells("wakeups.waker.cross_llc")).toHaveText(["0", n(crossAt100), `+${n(crossAt100)}`]);
  await expect(cells("wakeups.waker.to_waker_llc").nth(1)).toHaveText(pct(await wakerUpTo(twinId, "to_waker_llc"), crossAt100));
  await page.screenshot({ path: join(ARTIFACTS, "whatif-compare-playhead.png") });
  // at the end of both runs (the twin is shorter; a seek past the end stops there), the counts up to
  // the playhead are the whole runs'
  await page.getByTestId("seek-input").fill("+10s");
  await page.getByTestId("seek-input").press("Enter");
  await expect(page.getByTestId("compare-counts-caption")).toContainText(/up to \+78\d\.\d ms/);
  await expect(cells("wakeups.waker.cross_llc")).toHaveText(["0", n(wB.by_waker.cross_llc), `+${n(wB.by_waker.cross_llc)}`]);
  await expect(cells("wakeups.waker.to_waker_llc")).toHaveText(["–", pct(wB.by_waker.to_waker_llc, wB.by_waker.cross_llc), ""]);
  await expect(cells("wakeups.waker.on_waker_cpu").nth(0)).toHaveText(pct(wA.by_waker.on_waker_cpu, known(wA.by_waker)));
  await expect(cells("wakeups")).toHaveText([n(mA.wakeups.total), n(mB.wakeups.total), /^[+\u2212=]/]);
  await page.getByTestId("seek-input").fill("+100ms");
  await page.getByTestId("seek-input").press("Enter");
  await expect(page.getByTestId("compare-counts-caption")).toContainText("up to +100.0 ms");
  await counts.getByRole("button", { name: "whole run" }).click();
  await expect(cells("migrations")).toHaveText([n(mA.migrations.total), n(mB.migrations.total), /^[+\u2212=]/]);
  await expect(page).not.toHaveURL(/[?&]counts=/);
  await page.screenshot({ path: join(ARTIFACTS, "whatif-compare.png") });
  await page.getByTestId("compare-other").getByRole("button", { name: "close" }).click();
  await expect(page.getByTestId("compare")).toHaveCount(0);
  await expect(page).not.toHaveURL(/[?&]cmp=/);
  // the capture's one LLC has no wakeup from another LLC: its timeline has no track for them
  await expect(page.getByTestId("timeline-seek")).toHaveCount(1);
  await expect(page.getByTestId("timeline-cross-llc")).toHaveCount(0);

  await result.getByRole("button", { name: "open the what-if run" }).click();
  const twin = page.getByTestId("recording-item").filter({ has: page.getByTestId("sim-badge") }).filter({ hasText: "trace of g4-whatif wake_affine" });
  await expect(twin).toHaveCount(1);
  await expect(twin.locator(".rec-name")).toHaveText("sim zen3-2s-nps1 trace of g4-whatif wake_affine seed 1");
  await expect(twin.getByTestId("sim-rec-meta")).toContainText(`zen3-2s-nps1 · trace of recording ${rid}`);
  await expect(twin).toHaveClass(/open/);
  await expect(page.getByTestId("placement-state").locator("table.llc-table tbody tr")).toHaveCount(16);
  // the twin's timeline stacks its wakeups from another LLC by where they woke: all of them over
  // the whole run, as its metrics count them
  await expect(page.getByTestId("timeline-cross-llc")).toHaveAttribute("data-total", String(wB.by_waker.cross_llc));
  await expect(page.getByTestId("timeline-cross-llc").locator("rect.cross-to_waker_llc").first()).toBeVisible();
  // the opened twin's header offers the same whole scenario (its metadata's is shortened)
  const [again] = await Promise.all([page.waitForEvent("download"), page.getByTestId("rec-scenario-file").click()]);
  expect(again.url()).toBe(download.url());
  await page.screenshot({ path: join(ARTIFACTS, "whatif-twin.png") });
  // any stored recording compares with the open one: here the real run beside its twin, the other way round
  await expect(twin.getByTestId("compare-with-open")).toHaveCount(0);
  await item.getByTestId("compare-with-open").click();
  await expect(page.getByTestId("compare-other")).toContainText("g4-whatif");
  await expect(cells("migrations")).toHaveText([n(mB.migrations.total), n(mA.migrations.total), /^[+\u2212=]/]);
  await page.getByTestId("compare-other").getByRole("button", { name: "close" }).click();

  // the comparison's link opens the same view: both recordings at +100 ms
  await page.goto(compareUrl);
  await expect(page.getByTestId("compare").getByTestId("from-start")).toHaveText(["+100.0 ms", "+100.0 ms"]);
  // played, the twin keeps the recording's time from start (both advance at its speed)
  await page.getByTestId("speed-select").selectOption("0.1");
  await page.getByTestId("play").click();
  await page.waitForTimeout(600);
  await page.getByTestId("play").click();
  const labels = await page.getByTestId("compare").getByTestId("from-start").allInnerTexts();
  const [mainMs, twinMs] = labels.map((x) => ms(/\+([0-9.]+) ms/, x));
  expect(mainMs).toBeGreaterThan(101);
  expect(Math.abs((mainMs ?? 0) - (twinMs ?? 0))).toBeLessThan(3);

  // a link taken while the counts were up to the playhead opens them so
  await page.goto(playheadUrl);
  await expect(page.getByTestId("compare-counts-caption")).toContainText("up to +100.0 ms");
  await expect(cells("migrations")).toHaveText([n(await upTo(rid)), n(await upTo(twinId)), /^[+\u2212=]/]);

  // two hints of one category cannot be chosen (radios); a bad seed is refused by the API
  const bad = await request.post("/api/sim/jobs", {
    data: { scenario: { topology: "zen3-2s-nps1", workload: { kind: "trace", recording: rid }, seed: -1 } },
  });
  expect(bad.status()).toBe(422);
  expect(((await bad.json()) as { detail: { message: string } }).detail.message).toMatch(/^seed:/);
});

test("what-if: replay a recording on another machine recorded here, its topology sent inline", async ({ page, request }) => {
  test.setTimeout(180_000);
  // the machine the trace was taken on (2 CPUs), and another one recorded here: 4 CPUs in 2 LLCs
  const own = ((await (await request.post("/api/topologies", { data: VM2 })).json()) as { id: string }).id;
  const other = {
    ...vm2Topology("e2e-other-host"),
    cpus: [0, 1, 2, 3].map((c) => ({ cpu: c, online: true, core: c, llc: c >> 1, numa_node: 0, package: 0, smt_siblings: [c] })),
    llcs: [{ id: 0, cpus: [0, 1], numa_nodes: [0] }, { id: 1, cpus: [2, 3], numa_nodes: [0] }],
    numa_nodes: [{ id: 0, cpus: [0, 1, 2, 3] }],
  };
  const otherTid = ((await (await request.post("/api/topologies", { data: other })).json()) as { id: string }).id;
  await importG4(request, "g4-taken-on-other", otherTid);
  const rid = await importG4(request, "g4-whatif-host", own);

  await page.goto("/");
  // (the twin's name holds the recording's too: the real recording is the one without the badge)
  const item = page.getByTestId("recording-item").filter({ hasNot: page.getByTestId("sim-badge") }).filter({ hasText: "g4-whatif-host" });
  await item.locator("button.rec-open").click();
  const whatif = item.getByTestId("whatif");
  await whatif.getByRole("button", { name: /What if/ }).click();
  const form = whatif.getByRole("form", { name: "What-if replay" });
  const hosts = form.getByLabel("topology").locator('optgroup[label="other recorded hosts"] option');
  const label = "e2e-other-host (recorded: 4 CPUs, 2 LLCs, 1 node)";
  await expect(hosts.filter({ hasText: "e2e-other-host" })).toHaveText(label);
  // the recording's own machine is "recorded host", not listed again among the others
  await expect(hosts.filter({ hasText: /^vm2 / })).toHaveCount(0);
  await form.getByLabel("topology").selectOption({ label });
  await expect(form.getByLabel("topology")).toHaveAttribute("title", label); // the select cuts it
  await form.getByRole("radio", { name: "wake_affine" }).check();
  await form.getByRole("button", { name: "Replay" }).click();
  const result = whatif.getByTestId("whatif-result");
  await expect(result.getByTestId("whatif-change")).toContainText("on the same machine without the changes", { timeout: 120_000 });

  // the run was on that machine: its file holds the topology, and the twin opens on its 2 LLCs
  const [download] = await Promise.all([page.waitForEvent("download"), result.getByTestId("whatif-scenario-file").click()]);
  const file = join(mkdtempSync(join(tmpdir(), "placemap-download-")), "scenario.json");
  await download.saveAs(file);
  const whole = JSON.parse(readFileSync(file, "utf8")) as { topology: { machine: string; cpus: unknown[] }; workload: { profile: { source: string } } };
  expect(whole.topology.machine).toBe("e2e-other-host");
  expect(whole.topology.cpus).toHaveLength(4);
  expect(whole.workload.profile.source).toBe(`recording ${rid}`);
  await shot(whatif, "whatif-other-host.png");
  await result.getByRole("button", { name: "open the what-if run" }).click();
  await expect(page.locator(".rec-title")).toHaveText("sim e2e-other-host trace of g4-whatif-host wake_affine seed 1");
  await expect(page.getByTestId("placement-state").locator("table.llc-table tbody tr")).toHaveCount(2);
  // the twin's machine (a copy of e2e-other-host's) is not offered again: the host stays listed once
  await item.locator("button.rec-open").click();
  if ((await form.count()) === 0) await whatif.getByRole("button", { name: /What if/ }).click();
  await expect(hosts.filter({ hasText: "e2e-other-host" })).toHaveCount(1);
  await expect(hosts.filter({ hasText: "e2e-other-host" })).toHaveText(label);
});

test("what-if: the recording's feature table, on its own host and across machines", async ({ page, request }) => {
  test.setTimeout(180_000);
  const own = ((await (await request.post("/api/topologies", { data: VM2 })).json()) as { id: string }).id;
  const rid = await importG4(request, "g4-feature-table", own);
  // another machine recorded here, of the same 2 CPUs: a column of the table across machines
  const otherHost = "e2e-table-host";
  const otherTid = ((await (await request.post("/api/topologies", { data: vm2Topology(otherHost) })).json()) as { id: string }).id;
  const otherRid = await importG4(request, "g4-table-host", otherTid);
  const otherTopo = (await (await request.get(`/api/recordings/${otherRid}/topology`)).json()) as Record<string, unknown>;
  await page.goto("/");
  const item = page.getByTestId("recording-item").filter({ hasNot: page.getByTestId("sim-badge") }).filter({ hasText: "g4-feature-table" });
  await item.locator("button.rec-open").click();
  const whatif = item.getByTestId("whatif");
  await whatif.getByRole("button", { name: /What if/ }).click();
  const form = whatif.getByRole("form", { name: "What-if replay" });
  await expect(form.getByLabel("topology")).toHaveValue("recorded");
  // the form's own hint is not part of it: every toggle runs instead
  await form.getByRole("radio", { name: "wake_affine" }).check();
  await form.getByRole("button", { name: "Feature table" }).click();
  const table = whatif.getByTestId("whatif-table");
  await expect(table.getByTestId("toggle-bars")).toBeVisible({ timeout: 120_000 });
  type Row = { x: string; value: number; baseline: number; change_pct: number | null; published: unknown[] };
  type SweepJob = { kind: string; status: string; scenario: { hints?: string[]; topology: unknown; workload: { recording?: string } }; sweep_id: string; sweep?: { hosts?: Record<string, unknown> | null } | null; sweep_result: { rows: Row[]; panels?: { topology: string; rows: Row[] }[] } | null };
  const sweeps = async () => ((await (await request.get("/api/sim/jobs")).json()) as { jobs: SweepJob[] }).jobs.filter((j) => j.kind === "sweep" && j.scenario.workload.recording === rid && j.status === "done");
  const first = (await sweeps())[0];
  if (!first?.sweep_result) throw new Error("no finished feature table job");
  expect(first.scenario.topology).toBe("recorded");
  expect(first.scenario.hints).toEqual([]);
  const options = (await (await request.get("/api/sim/options")).json()) as { sweep_toggles: string[] };
  expect(first.sweep_result.rows.map((r) => r.x)).toEqual(options.sweep_toggles);
  expect(new Set(first.sweep_result.rows.map((r) => r.baseline)).size).toBe(1);
  expect(first.sweep_result.rows.every((r) => r.published.length === 0)).toBe(true); // no table publishes a recording
  const bars = await table.getByTestId("toggle-bar").evaluateAll((els) => els.map((e) => [e.getAttribute("data-x"), e.getAttribute("data-pct")]));
  expect(bars).toEqual(first.sweep_result.rows.map((r) => [r.x, r.change_pct === null ? "" : String(r.change_pct)]));
  // the replay on its own host, unchanged, is the baseline every toggle is read against
  const plain = (await (await request.post("/api/sim/jobs", { data: { scenario: { ...first.scenario } } })).json()) as { job_id: string };
  let got: { status: string; result: { metric: { value: number } } | null } = { status: "queued", result: null };
  await expect.poll(async () => {
    got = (await (await request.get(`/api/sim/jobs/${plain.job_id}`)).json()) as typeof got;
    return got.status;
  }, { timeout: 60_000 }).toBe("done");
  expect(got.result?.metric.value).toBe(first.sweep_result.rows[0]?.baseline);
  await expect(table.getByTestId("sweep-link")).toHaveAttribute("href", `?sweep=${first.sweep_id}`);
  await shot(whatif, "whatif-feature-table.png");
  // a toggle picked in the table becomes the form's, instead of wake_affine, to replay as the twin
  await table.getByTestId("sweep-table").getByRole("button", { name: "fork_spread" }).click();
  await expect(form.getByRole("radio", { name: "fork_spread" })).toBeChecked();
  await expect(form.getByRole("group", { name: "wake hint", exact: true }).getByRole("radio", { name: "none" })).toBeChecked();

  // across its own host and a preset: one table of every toggle on both
  await form.locator("summary", { hasText: "feature table across machines" }).click();
  const across = form.getByRole("group", { name: "feature table across" });
  await across.getByRole("checkbox", { name: "recorded", exact: true }).check();
  await form.getByRole("button", { name: "Feature table" }).click();
  await expect(whatif.getByTestId("whatif-table-error")).toHaveText("sweep across: tick 2 to 10 machines (1 ticked)");
  await across.getByRole("checkbox", { name: "zen3-2s-nps1" }).check();
  // the other recorded host, by its machine's name, its topology sent with the job
  await across.getByRole("checkbox", { name: otherHost }).check();
  await form.getByRole("button", { name: "Feature table" }).click();
  await expect(table.getByTestId("across-table")).toBeVisible({ timeout: 120_000 });
  const second = (await sweeps()).find((j) => (j.sweep_result?.panels ?? []).length > 0);
  if (!second?.sweep_result?.panels) throw new Error("no finished feature table across machines");
  expect(second.sweep_result.panels.map((p) => p.topology)).toEqual(["recorded", "zen3-2s-nps1", otherHost]);
  expect(second.sweep?.hosts).toEqual({ [otherHost]: otherTopo });
  // the recorded host's column is the feature table run on it above, and the other host's (the same 2 CPUs) is the same
  expect(second.sweep_result.panels[0]?.rows.map((r) => r.change_pct)).toEqual(first.sweep_result.rows.map((r) => r.change_pct));
  expect(second.sweep_result.panels[2]?.rows).toEqual(second.sweep_result.panels[0]?.rows);
  const cells = await table.getByTestId("across-cell").evaluateAll((els) => els.map((e) => [e.getAttribute("data-x"), e.getAttribute("data-machine"), e.getAttribute("data-pct")]));
  expect(cells).toEqual(options.sweep_toggles.flatMap((x) => second.sweep_result?.panels?.map((p) => [x, p.topology, String(p.rows.find((r) => r.x === x)?.change_pct ?? "")]) ?? []));
  await shot(table, "whatif-feature-table-across.png");
  // a cell picked sets the form's machine and toggle, to replay as the twin: fork_affine on zen3-2s-nps1, then the other host
  const replay = form.getByRole("button", { name: "Replay", exact: true });
  await page.evaluate(() => { (document.activeElement as HTMLElement | null)?.blur(); });
  await table.locator('[data-testid="across-cell"][data-x="fork_affine"][data-machine="zen3-2s-nps1"] button').click();
  await expect(form.getByLabel("topology")).toHaveValue("zen3-2s-nps1");
  // the form's Replay button takes the focus and is in sight, to replay what was picked
  await expect(replay).toBeFocused();
  await expect(replay).toBeInViewport();
  await expect(form.getByRole("radio", { name: "fork_affine" })).toBeChecked();
  await table.getByTestId("across-table").getByRole("button", { name: otherHost }).click();
  await expect(form.getByLabel("topology")).toHaveValue(`host:${otherTid}`);
  await table.getByTestId("across-table").getByRole("button", { name: "recorded", exact: true }).click();
  await expect(form.getByLabel("topology")).toHaveValue("recorded");

  // its link opens the table in the Simulate panel of a fresh page, which points to the recording
  const other = await page.context().newPage();
  await other.goto(`/?sweep=${first.sweep_id}`);
  const stored = other.getByTestId("sweep-stored");
  await expect(stored.getByTestId("toggle-bars")).toBeVisible({ timeout: 30_000 });
  await expect(other.getByTestId("simulate").getByRole("form", { name: "Simulate" }).getByLabel("sweep parameter")).toHaveValue(""); // the Simulate form does not replay recordings
  await shot(stored.getByTestId("sweep-stored-replay"), "sweep-stored-replay.png");
  await stored.getByTestId("sweep-stored-replay").getByRole("button", { name: "open the recording" }).click();
  await expect(other.locator(".rec-title")).toHaveText("g4-feature-table");
  await other.close();
});
