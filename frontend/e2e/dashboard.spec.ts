/**
 * Dashboard screens against the real backend (playwright.config.ts starts `bin/placemap serve` on a
 * throwaway SQLite file): upload with progress and import polling, the lost/skipped badge, seeking
 * by exact time, task search + selection, the accessible "Placement state" view checked against
 * the server's own GET state (the browser replays Arrow chunks forward from a keyframe), the URL
 * reopening the same view, and hostile comms rendering as text.
 */
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { tableFromIPC } from "apache-arrow";
import { formatDuration } from "../src/viz/time";

const here = dirname(fileURLToPath(import.meta.url));
const TRACES = join(here, "..", "..", "..", "shared", "traces");
const G4 = join(TRACES, "vm2-hackbench-g4.ftrace.txt.gz");
const ARTIFACTS = join(here, "..", "test-artifacts");
const shot = (page: Page, name: string): Promise<Buffer> => page.screenshot({ path: join(ARTIFACTS, `e2e-${name}.png`) });

interface Rec {
  id: string;
  name: string;
  status: string;
}
interface LlcState {
  llc: number;
  tasks: number;
  runnable: number;
  running: number;
}
interface StateJson {
  t_ns: number;
  llcs: LlcState[];
  tasks: { pid: number; comm: string; cpu: number | null; state: string }[];
}

async function uploadViaUi(page: Page, name: string, buffer: Buffer): Promise<void> {
  await page.goto("/");
  await page.getByTestId("upload-input").setInputFiles({ name, mimeType: "application/octet-stream", buffer });
  const item = page.getByTestId("recording-item").filter({ hasText: name });
  await expect(item).toHaveAttribute("data-status", "ready", { timeout: 60_000 });
}

async function recId(request: APIRequestContext, name: string): Promise<string> {
  const recs = (await (await request.get("/api/recordings")).json()) as Rec[];
  const r = recs.find((x) => x.name === name);
  if (!r) throw new Error(`no recording ${name}`);
  return r.id;
}

async function llcTable(page: Page): Promise<LlcState[]> {
  const rows = page.getByRole("region", { name: "Placement state" }).locator("tbody tr");
  const n = await rows.count();
  const out: LlcState[] = [];
  for (let i = 0; i < n; i++) {
    const cells = (await rows.nth(i).locator("th, td").allInnerTexts()).map((s) => Number(s.trim()));
    const [llc = -1, , , running = -1, runnable = -1, tasks = -1] = cells;
    out.push({ llc, running, runnable, tasks });
  }
  return out;
}

interface Stats {
  frames: number;
  fps: number;
  playheadNs: number;
  firstFrameMs: number | null;
}
function stats(page: Page): Promise<Stats | null> {
  return page.evaluate(() => (window as unknown as { __placemapStats?: Stats }).__placemapStats ?? null);
}

test.describe.configure({ mode: "serial" });

test("upload, badge, seek, select, text view matches the server, URL reopens the view", async ({ page, request }) => {
  const name = "g4-dashboard.ftrace.txt.gz";
  await uploadViaUi(page, name, readFileSync(G4));
  const item = page.getByTestId("recording-item").filter({ hasText: name });
  // 12 header comment lines skipped, nothing lost
  await expect(item).toContainText("lost 0 · skipped 12");
  await item.getByRole("button").first().click();

  const view = page.getByRole("region", { name: "Placement state" });
  await expect(view).toBeVisible();
  await expect(page.getByTestId("loss-badge")).toContainText("lost 0");

  await shot(page, "opened");

  // the recording's events as ftrace text, downloaded from its header: the kernel's own lines
  const download = page.waitForEvent("download");
  await page.getByTestId("rec-trace-text").click();
  const file = await download;
  expect(file.suggestedFilename()).toBe("g4-dashboard.ftrace.txt");
  const text = readFileSync(await file.path(), "utf8").split("\n").filter((l) => l !== "" && !l.startsWith("#"));
  expect(text).toHaveLength(72_578);
  expect(text[1]).toBe("            bash-13109   [000]    319.952374000: sched_wakeup_new: comm=bash pid=13113 prio=120 target_cpu=000");

  // zoomed by a brush on the timeline: the window's lines, as many as the kernel's own file has there
  const brush = page.getByTestId("timeline-brush");
  const box = await brush.boundingBox();
  if (!box) throw new Error("no timeline");
  await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.43, box.y + box.height / 2, { steps: 4 });
  await page.mouse.up();
  const windowLink = page.getByTestId("zoom-trace-text");
  await expect(windowLink).toBeVisible();
  await shot(page, "zoomed-trace-text");
  const href = new URL((await windowLink.getAttribute("href")) ?? "", "http://x");
  const t0 = Number(href.searchParams.get("t0_ns"));
  const t1 = Number(href.searchParams.get("t1_ns"));
  expect(t1 - t0).toBeGreaterThan(0);
  const zoomed = page.waitForEvent("download");
  await windowLink.click();
  const part = readFileSync(await (await zoomed).path(), "utf8").split("\n").filter((l) => l !== "" && !l.startsWith("#"));
  const nsOf = (l: string, re: RegExp): number => {
    const m = re.exec(l);
    if (!m) throw new Error(`no timestamp: ${l}`);
    return Number(m[1]) * 1e9 + Number(m[2]) * (m[2]?.length === 6 ? 1e3 : 1);
  };
  const kernel = gunzipSync(readFileSync(G4)).toString("utf8").split("\n").filter((l) => l !== "" && !l.startsWith("#"));
  const inWindow = kernel.filter((l) => {
    const t = nsOf(l, /\s(\d+)\.(\d{6}): /);
    return t >= t0 && t <= t1;
  });
  expect(inWindow.length).toBeGreaterThan(100);
  expect(part).toHaveLength(inWindow.length);
  for (const l of part) {
    const t = nsOf(l, /\s(\d+)\.(\d{9}): /);
    expect(t >= t0 && t <= t1, l).toBe(true);
  }

  // the whole run's numbers beside the grid, as the recording's metrics give them: the real kernel's
  // run-queue delay after a wakeup among them (p99 to three significant digits)
  await expect(page).toHaveURL(/[?&]rec=/);
  const rid = new URL(page.url()).searchParams.get("rec") ?? "";
  type M = { migrations: { total: number }; wakeup_latency: { samples: number; p99_ns: number } | null };
  const mt = (await (await request.get(`/api/recordings/${rid}/metrics`)).json()) as M;
  if (mt.wakeup_latency === null) throw new Error("the g4 capture's run-queue delays were not measured");
  const runCounts = page.getByTestId("run-counts");
  await expect(runCounts.locator('tr[data-key="migrations"] td')).toHaveText(mt.migrations.total.toLocaleString("en-US"));
  const p99 = (await runCounts.locator('tr[data-key="delay.p99"] td').textContent()) ?? "";
  const pm = /^([\d.]+) (ns|us|ms|s)$/.exec(p99);
  if (!pm) throw new Error(`not a duration: ${p99}`);
  const scale: Record<string, number> = { ns: 1, us: 1e3, ms: 1e6, s: 1e9 };
  expect(Math.abs(Number(pm[1]) * (scale[pm[2] ?? ""] ?? NaN) - mt.wakeup_latency.p99_ns)).toBeLessThanOrEqual(mt.wakeup_latency.p99_ns * 0.01);

  // ground truth from the kernel's own text, not from our server: the first sched_switch that
  // switches a hackbench child in names the CPU it runs on at that instant
  const line = gunzipSync(readFileSync(G4))
    .toString("utf8")
    .split("\n")
    .find((l) => /sched_switch: .* ==> next_comm=hackbench next_pid=\d+/.test(l) && l.includes("prev_comm=npm exec"));
  const m = line?.match(/\[(\d{3})\] \S+\s+(\d+)\.(\d{6}): sched_switch: .*next_pid=(\d+)/);
  if (!m) throw new Error("g4 lost its first hackbench switch-in line");
  const [, cpuText = "", secs = "", usecs = "", pidText = ""] = m;
  await page.getByTestId("seek-input").fill(`${secs}${usecs}000`);
  await page.getByTestId("seek-input").press("Enter");
  await page.getByTestId("task-search").fill(pidText);
  await page.getByTestId("task-result").filter({ hasText: pidText }).first().click();
  await expect(page.getByTestId("selected-sentence")).toContainText(
    `Selected task ${pidText} hackbench is on CPU ${Number(cpuText)} (LLC 0, node 0)`,
  );
  await shot(page, "kernel-truth-selected");

  // seek by an exact time in seconds (a server keyframe) ...
  await page.getByTestId("seek-input").fill("320.3s");
  await page.getByTestId("seek-input").press("Enter");
  await expect(page.getByTestId("time-display")).toHaveText("320.300000000");
  // ... then forward by ns: replayed in the browser from Arrow chunks
  const t2 = 320_312_345_678;
  await page.getByTestId("seek-input").fill(String(t2));
  await page.getByTestId("seek-button").click();
  await expect(page.getByTestId("time-display")).toHaveText("320.312345678");
  await expect(page).toHaveURL(new RegExp(`t=${t2}`));

  const id = await recId(request, name);
  const server = (await (await request.get(`/api/recordings/${id}/state?t_ns=${t2}`)).json()) as StateJson;
  await expect.poll(() => llcTable(page)).toEqual(server.llcs.map((l) => ({ llc: l.llc, running: l.running, runnable: l.runnable, tasks: l.tasks })));

  // select a task through the search and read the sentence
  const task = server.tasks.find((t) => t.comm === "hackbench" && t.cpu !== null && t.state !== "dead");
  if (!task) throw new Error("no live hackbench task at t2");
  await page.getByTestId("task-search").fill(String(task.pid));
  await page.getByTestId("task-result").filter({ hasText: String(task.pid) }).first().click();
  const sentence = `Selected task ${task.pid} hackbench is on CPU ${task.cpu} (LLC 0, node 0)`;
  await expect(page.getByTestId("selected-sentence")).toContainText(sentence);
  await expect(page.getByTestId("task-detail")).toContainText("placements");
  // a captured trace keeps no reasons (the kernel does not say why): no "why" shows
  await expect(page.getByTestId("placement-why")).toHaveCount(0);
  await shot(page, "seek-select");
  await expect(page).toHaveURL(new RegExp(`sel=${task.pid}`));

  // the URL reopens exactly this view
  await page.reload();
  await expect(page.getByTestId("time-display")).toHaveText("320.312345678");
  await expect(page.getByTestId("selected-sentence")).toContainText(sentence);

  // play / pause, with measured frames exposed for the benchmark
  await page.getByTestId("speed-select").selectOption("0.01");
  await page.getByTestId("play").click();
  await expect(page.getByTestId("play")).toHaveAttribute("data-state", "playing");
  await expect.poll(() => stats(page).then((s) => s?.frames ?? 0)).toBeGreaterThan(10);
  await page.getByTestId("play").click();
  await expect(page.getByTestId("play")).toHaveAttribute("data-state", "paused");
  await expect(page).toHaveURL(/speed=0\.01/);
  await shot(page, "played");

  // step to the next migration moves the playhead forward
  const before = (await stats(page))?.playheadNs ?? 0;
  await page.getByTestId("next-migration").click();
  await expect.poll(() => stats(page).then((s) => s?.playheadNs ?? 0)).toBeGreaterThan(before);

  // who woke it: at the selected task's first wakeup, the inspector names the CPU of its
  // sched_waking and the task running there, as the kernel's own last sched_waking line for it
  // before that wakeup says; the name selects that task in turn
  type Pl = { ts_ns: number; kind: string; cpu: number };
  const placements = ((await (await request.get(`/api/recordings/${id}/tasks/${task.pid}/path`)).json()) as { placements: Pl[] }).placements;
  const woke = placements.find((p) => p.kind === "wakeup");
  if (!woke) throw new Error(`task ${task.pid} has no wakeup`);
  let waking: RegExpExecArray | null = null;
  for (const l of kernel) {
    const m = /^\s*(.+)-(\d+)\s+\[(\d+)\] \S+\s+(\d+)\.(\d{6}): sched_waking: comm=\S+ pid=(\d+) /.exec(l);
    if (m && Number(m[6]) === task.pid && Number(m[4]) * 1e9 + Number(m[5]) * 1e3 <= woke.ts_ns) waking = m;
  }
  if (!waking) throw new Error(`no sched_waking of ${task.pid} before its wakeup`);
  const [, wComm = "", wPid = "", wCpu = ""] = waking;
  await page.getByTestId("seek-input").fill(String(woke.ts_ns));
  await page.getByTestId("seek-button").click();
  const wakerText = Number(wPid) === 0 ? `by an interrupt on idle CPU ${String(Number(wCpu))} (the same LLC)` : `from CPU ${String(Number(wCpu))} (the same LLC), where ${wComm} ${wPid} ran`;
  await expect(page.getByTestId("why-now")).toContainText(`at the playhead: on CPU ${String(woke.cpu)}, woken there at +`);
  await expect(page.getByTestId("waker")).toContainText(wakerText);
  await page.getByTestId("task-detail").screenshot({ path: join(ARTIFACTS, "e2e-waker.png") });
  if (Number(wPid) !== 0) {
    await page.getByTestId("waker-select").click();
    await expect(page.getByTestId("selected-sentence")).toContainText(`Selected task ${wPid} `);
    await expect(page).toHaveURL(new RegExp(`sel=${wPid}`));
  }
});

test("CPU lanes: who ran on each CPU as the kernel's switch lines say, and a span selects its task", async ({ page, request }) => {
  const id = await recId(request, "g4-dashboard.ftrace.txt.gz");
  await page.goto(`/?rec=${id}`);
  const lanes = page.getByTestId("cpu-lanes");
  await expect(lanes).toHaveAttribute("data-status", "ok");
  await expect(lanes).toHaveAttribute("data-rows", "2");
  // zoomed to a window: as many spans as the server's lanes of that window
  const box = await page.getByTestId("timeline-brush").boundingBox();
  if (!box) throw new Error("no timeline");
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.505, box.y + box.height / 2, { steps: 4 });
  await page.mouse.up();
  await expect(page.getByTestId("zoom-trace-text")).toBeVisible();
  await expect(lanes).toHaveAttribute("data-status", "ok");
  const t0 = Number(await lanes.getAttribute("data-t0"));
  const t1 = Number(await lanes.getAttribute("data-t1"));
  expect(t1 - t0).toBeGreaterThan(0);
  expect(t1 - t0).toBeLessThan(20_000_000);
  const bytes = await (await request.get(`/api/recordings/${id}/lanes.arrow?t0_ns=${t0}&t1_ns=${t1}&limit=100000`)).body();
  const served = tableFromIPC(bytes);
  await expect(lanes).toHaveAttribute("data-spans", String(served.numRows));
  expect(served.numRows).toBeGreaterThan(2);
  await shot(page, "cpu-lanes");

  // ground truth from the kernel's own lines: at the window's middle, CPU 0 (the top row) runs the
  // next_pid of its last sched_switch before then; hovering there names it, a click selects it
  const mid = (t0 + t1) / 2;
  let runs = -1;
  for (const l of gunzipSync(readFileSync(G4)).toString("utf8").split("\n")) {
    const m = /\[000\] \S+\s+(\d+)\.(\d{6}): sched_switch: .*next_pid=(\d+)/.exec(l);
    if (!m) continue;
    if (Number(m[1]) * 1e9 + Number(m[2]) * 1e3 > mid) break;
    runs = Number(m[3]);
  }
  expect(runs).toBeGreaterThan(0);
  const canvas = page.getByTestId("cpu-lanes-canvas");
  const cb = await canvas.boundingBox();
  if (!cb) throw new Error("no lanes canvas");
  await page.mouse.move(cb.x + cb.width / 2, cb.y + 3);
  await expect(page.getByTestId("cpu-lanes-hover")).toContainText(new RegExp(`^CPU 0 · \\S+ ${runs} · ran `));
  await page.mouse.click(cb.x + cb.width / 2, cb.y + 3);
  await expect(page.getByTestId("selected-sentence")).toContainText(`Selected task ${runs} `);
  await expect(page).toHaveURL(new RegExp(`sel=${runs}`));

  // by keyboard: the first arrow puts the cursor on CPU 0 at the window's middle (the same task);
  // Right moves it to CPU 0's next span as the server lists them, whose task Enter selects
  await page.mouse.move(cb.x + cb.width / 2, cb.y + cb.height + 40); // (hover off: the line says the cursor)
  await canvas.focus();
  await page.keyboard.press("ArrowRight");
  const hoverLine = page.getByTestId("cpu-lanes-hover");
  await expect(hoverLine).toContainText(new RegExp(`^CPU 0 · \\S+ ${runs} · ran `));
  const cpu = served.getChild("cpu")?.toArray() as Int32Array;
  const start = served.getChild("start_ns")?.toArray() as BigInt64Array;
  const pid = served.getChild("pid")?.toArray() as Int32Array;
  const next = [...cpu.keys()].find((i) => cpu[i] === 0 && Number(start[i]) > mid);
  if (next === undefined) throw new Error("CPU 0 has no span after the window's middle");
  await page.keyboard.press("ArrowRight");
  await expect(hoverLine).toContainText(new RegExp(`^CPU 0 · \\S+ ${pid[next]} · ran `));
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("selected-sentence")).toContainText(`Selected task ${pid[next]} `);

  // hidden, which the link says and the browser remembers, and shown again
  await page.getByTestId("cpu-lanes-toggle").click();
  await expect(lanes).toHaveCount(0);
  // (the zoom is in the link: the reload opens the same window)
  await expect(page).toHaveURL(new RegExp(`zoom=${t0}%2C${t1}&lanes=off$`));
  await page.reload();
  await expect(page.getByTestId("cpu-lanes-toggle")).toHaveText("show CPU lanes");
  await expect(lanes).toHaveCount(0);
  // the link says it to a browser that never hid them (a fresh context)
  const fresh = await page.context().browser()?.newContext({ baseURL: new URL(page.url()).origin });
  if (!fresh) throw new Error("no browser");
  const other = await fresh.newPage();
  await other.goto(page.url());
  await expect(other.getByTestId("zoom-trace-text")).toBeVisible();
  await expect(other.getByTestId("cpu-lanes-toggle")).toHaveText("show CPU lanes");
  await expect(other.getByTestId("cpu-lanes")).toHaveCount(0);
  await fresh.close();
  // a link that does not say had them shown: shown, though this browser hid them
  await page.goto(page.url().replace("&lanes=off", ""));
  await expect(lanes).toHaveAttribute("data-status", "ok");
  await expect(page).not.toHaveURL(/lanes=/);
  // a recording opened from the list: as this browser last had them (hidden)
  await page.goto("/");
  await page.getByTestId("recording-item").filter({ hasText: "g4-dashboard.ftrace.txt.gz" }).first().click();
  await expect(page.getByTestId("cpu-lanes-toggle")).toHaveText("show CPU lanes");
  await expect(lanes).toHaveCount(0);
  await expect(page).toHaveURL(/[?&]lanes=off(&|$)/);
  await page.goto(`/?rec=${id}&zoom=${t0},${t1}&lanes=off`);
  await expect(page.getByTestId("zoom-trace-text")).toBeVisible();
  await page.getByTestId("cpu-lanes-toggle").click();
  await expect(page.getByTestId("cpu-lanes")).toHaveAttribute("data-status", "ok");
  await expect(page.getByTestId("cpu-lanes")).toHaveAttribute("data-t0", String(t0));
  await expect(page.getByTestId("cpu-lanes")).toHaveAttribute("data-t1", String(t1));
  await expect(page.getByTestId("cpu-lanes")).toHaveAttribute("data-spans", String(served.numRows));
});

test("CPU lanes summed per column: each column's busy share and who ran most of it, as the kernel's switch lines say", async ({ page, request }) => {
  const id = await recId(request, "g4-dashboard.ftrace.txt.gz");
  await page.goto(`/?rec=${id}`);
  const lanes = page.getByTestId("cpu-lanes");
  await expect(lanes).toHaveAttribute("data-status", "ok");
  await expect(lanes).toHaveAttribute("data-mode", "spans");
  await page.getByTestId("cpu-lanes-summed-toggle").click();
  await expect(lanes).toHaveAttribute("data-mode", "busy");
  await expect(lanes).toHaveAttribute("data-status", "ok");
  // in the link: the view it opens is summed too
  await expect(page).toHaveURL(/[?&]lanes=busy(&|$)/);
  await page.goto(`/?rec=${id}&lanes=busy`);
  await expect(lanes).toHaveAttribute("data-mode", "busy");
  await expect(lanes).toHaveAttribute("data-status", "ok");
  await expect(page.getByTestId("cpu-lanes-summed-toggle")).toHaveText("each span");
  const t0 = Number(await lanes.getAttribute("data-t0"));
  const t1 = Number(await lanes.getAttribute("data-t1"));
  const parts = Number(await lanes.getAttribute("data-parts"));
  expect(parts).toBeGreaterThan(100);
  const served = tableFromIPC(await (await request.get(`/api/recordings/${id}/lanes_busy.arrow?t0_ns=${t0}&t1_ns=${t1}&parts=${parts}`)).body());
  await expect(lanes).toHaveAttribute("data-spans", String(served.numRows));
  await expect(page.getByTestId("cpu-lanes-hover")).toContainText(/summed per \S+ ms column, busy on 2 of 2 CPUs/);

  // hover CPU 0 at the middle: the line names the column's busy share, the task that ran most of
  // it and how many spans it holds, each worked out here from CPU 0's own sched_switch lines
  const canvas = page.getByTestId("cpu-lanes-canvas");
  const cb = await canvas.boundingBox();
  if (!cb) throw new Error("no lanes canvas");
  await page.mouse.move(cb.x + cb.width / 2, cb.y + 3);
  const hover = page.getByTestId("cpu-lanes-hover");
  await expect(hover).toContainText(/^CPU 0 · busy \d+% of the /);
  const said = /^CPU 0 · busy (\d+)% of the \S+ \S+ from (\+\S+ \S+) · ran most: (\S+) (\d+), (\d+)% · ([\d,]+) spans?/.exec((await hover.textContent()) ?? "");
  if (!said) throw new Error(`hover: ${(await hover.textContent()) ?? ""}`);
  // the column the pointer is over: the one of CPU 0 starting where the line says (to 0.1 ms, and
  // the columns are over 1 ms apart)
  const tStart = ((await (await request.get(`/api/recordings/${id}`)).json()) as { t_start_ns: number }).t_start_ns;
  const cpu = served.getChild("cpu")?.toArray() as Int32Array;
  const start = served.getChild("start_ns")?.toArray() as BigInt64Array;
  const end = served.getChild("end_ns")?.toArray() as BigInt64Array;
  const under = [...cpu.keys()].filter((i) => cpu[i] === 0 && `+${formatDuration(Number(start[i]) - tStart)}` === said[2]);
  expect(under).toHaveLength(1);
  const col = under[0] ?? -1;
  expect(Math.abs(Number(start[col]) - (t0 + t1) / 2)).toBeLessThan(2 * (Number(end[col]) - Number(start[col])));
  const sw: [number, number][] = []; // CPU 0's switches: when, next_pid
  for (const l of gunzipSync(readFileSync(G4)).toString("utf8").split("\n")) {
    const m = /\[000\] \S+\s+(\d+)\.(\d{6}): sched_switch: .*next_pid=(\d+)/.exec(l);
    if (m) sw.push([Number(m[1]) * 1e9 + Number(m[2]) * 1e3, Number(m[3])]);
  }
  // what ran in column i by those lines: each switch's next_pid until CPU 0's next switch (idle,
  // 0, is no task)
  const truth = (i: number): { ran: Map<number, number>; spans: number; top: number; width: number } => {
    const a = Number(start[i]);
    const b = Number(end[i]);
    const ran = new Map<number, number>();
    let spans = 0;
    for (let k = 0; k < sw.length; k++) {
      const [s0, pid] = sw[k] ?? [0, 0];
      const s1 = sw[k + 1]?.[0] ?? t1;
      if (pid === 0 || s1 <= a || s0 >= b) continue;
      spans++;
      ran.set(pid, (ran.get(pid) ?? 0) + Math.min(s1, b) - Math.max(s0, a));
    }
    const [top] = [...ran].sort((x, y) => y[1] - x[1] || x[0] - y[0])[0] ?? [0];
    return { ran, spans, top, width: b - a };
  };
  const here = truth(col);
  const pctOf = (ns: number, w: number): number => Math.round((100 * ns) / w);
  const busy = [...here.ran.values()].reduce((x, y) => x + y, 0);
  expect([Number(said[1]), Number(said[4]), Number(said[5]), Number(said[6]?.replace(/,/g, ""))]).toEqual([pctOf(busy, here.width), here.top, pctOf(here.ran.get(here.top) ?? 0, here.width), here.spans]);
  await page.mouse.click(cb.x + cb.width / 2, cb.y + 3);
  const sel = Number(said[4]);
  await expect(page.getByTestId("selected-sentence")).toContainText(`Selected task ${String(sel)} `);
  // selected, each column is asked how much of it that task ran: one of CPU 0's where another
  // task ran most (its neighbours too, so the pointer cannot miss) names the selected task's share
  await expect(lanes).toHaveAttribute("data-mine", String(sel));
  const hidden = (i: number): boolean => cpu[i] === 0 && (truth(i).ran.get(sel) ?? 0) > 0 && truth(i).top !== sel;
  // (and next to each other: an idle column has no row)
  const cands = [...cpu.keys()].filter((i) => hidden(i - 1) && hidden(i) && hidden(i + 1) && end[i - 1] === start[i] && end[i] === start[i + 1]);
  expect(cands.length).toBeGreaterThan(0);
  const pick = cands[Math.floor(cands.length / 2)] ?? -1;
  const mid = (Number(start[pick]) + Number(end[pick])) / 2;
  await page.mouse.move(cb.x + ((mid - t0) / (t1 - t0)) * cb.width, cb.y + 3);
  await expect(hover).toContainText(`the selected task ${String(sel)}: `);
  const saidMine = /from (\+\S+ \S+) · .* · the selected task \d+: (\d+)%/.exec((await hover.textContent()) ?? "");
  const over = [...cpu.keys()].find((i) => cpu[i] === 0 && `+${formatDuration(Number(start[i]) - tStart)}` === saidMine?.[1]) ?? -1;
  const there = truth(over);
  expect(Number(saidMine?.[2])).toBe(pctOf(there.ran.get(sel) ?? 0, there.width));
  expect(Math.abs(over - pick)).toBeLessThanOrEqual(1);
  await shot(page, "cpu-lanes-summed");
  // and back to each span, which the link no longer says
  await page.getByTestId("cpu-lanes-summed-toggle").click();
  await expect(lanes).toHaveAttribute("data-mode", "spans");
  await expect(lanes).toHaveAttribute("data-status", "ok");
  await expect(page).not.toHaveURL(/lanes=/);
});

test("a run too busy to draw span by span is summed per column, and a zoom draws its spans again", async ({ page, request }) => {
  test.setTimeout(180_000);
  // a simulated hackbench with over 100,000 context switches, saved as a recording
  const scenario = { topology: "zen3-2s-nps1", workload: { kind: "hackbench", groups: 2, loops: 4000 }, seed: 1, duration_ms: 1000 };
  const jid = ((await (await request.post("/api/sim/jobs", { data: { scenario, save: true } })).json()) as { job_id: string }).job_id;
  let rid = "";
  await expect
    .poll(async () => {
      const job = (await (await request.get(`/api/sim/jobs/${jid}`)).json()) as { status: string; recording_id: string | null };
      rid = job.recording_id ?? "";
      return job.status;
    }, { timeout: 120_000 })
    .toBe("done");
  const rec = (await (await request.get(`/api/recordings/${rid}`)).json()) as { t_start_ns: number; t_end_ns: number; events_by_kind: Record<string, number> };
  expect(rec.events_by_kind.switch ?? 0).toBeGreaterThan(100_000);
  // the server's own count refuses the spans
  const refused = await request.get(`/api/recordings/${rid}/lanes.arrow?t0_ns=${rec.t_start_ns}&t1_ns=${rec.t_end_ns}`);
  expect(refused.status()).toBe(422);
  expect(((await refused.json()) as { detail: { code: string } }).detail.code).toBe("window_too_wide");

  await page.goto(`/?rec=${rid}`);
  const lanes = page.getByTestId("cpu-lanes");
  await expect(lanes).toHaveAttribute("data-status", "ok", { timeout: 30_000 });
  await expect(lanes).toHaveAttribute("data-mode", "busy");
  await expect(lanes).toHaveAttribute("data-rows", "256");
  const t0 = Number(await lanes.getAttribute("data-t0"));
  const t1 = Number(await lanes.getAttribute("data-t1"));
  const parts = Number(await lanes.getAttribute("data-parts"));
  const served = tableFromIPC(await (await request.get(`/api/recordings/${rid}/lanes_busy.arrow?t0_ns=${t0}&t1_ns=${t1}&parts=${parts}`)).body());
  expect(served.numRows).toBeGreaterThan(parts);
  await expect(lanes).toHaveAttribute("data-spans", String(served.numRows));
  await expect(page.getByTestId("cpu-lanes-hover")).toContainText("too many context switches to draw each span: zoom in under 100,000 to see them");
  await shot(page, "cpu-lanes-busy-run");

  // a narrow zoom: spans again, as many as the server's lanes of that window
  const box = await page.getByTestId("timeline-brush").boundingBox();
  if (!box) throw new Error("no timeline");
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.52, box.y + box.height / 2, { steps: 4 });
  await page.mouse.up();
  await expect(lanes).toHaveAttribute("data-mode", "spans");
  await expect(lanes).toHaveAttribute("data-status", "ok");
  const z0 = Number(await lanes.getAttribute("data-t0"));
  const z1 = Number(await lanes.getAttribute("data-t1"));
  expect(z1 - z0).toBeLessThan((t1 - t0) / 10);
  const spans = tableFromIPC(await (await request.get(`/api/recordings/${rid}/lanes.arrow?t0_ns=${z0}&t1_ns=${z1}`)).body());
  await expect(lanes).toHaveAttribute("data-spans", String(spans.numRows));
  expect(spans.numRows).toBeGreaterThan(0);

  // without the overview to estimate from (its request refused here: the one thing stood in), the
  // page asks for the whole run's spans, and the server's refusal has them summed
  await page.route("**/api/recordings/*/overview*", (route) => route.fulfill({ status: 500, body: "held back by the test" }));
  await page.goto(`/?rec=${rid}`);
  await expect(lanes).toHaveAttribute("data-status", "ok", { timeout: 30_000 });
  await expect(lanes).toHaveAttribute("data-mode", "busy");
  await expect(lanes).toHaveAttribute("data-spans", String(served.numRows));
});

test("a perf.data uploads as it is", async ({ page }) => {
  const name = "vm2-hackbench-g2.perf.data";
  await uploadViaUi(page, name, readFileSync(join(TRACES, name)));
  const item = page.getByTestId("recording-item").filter({ hasText: name });
  // the events its own perf script text holds, read from the binary file
  await expect(item).toContainText("9,903 events on 2 CPUs");
  await expect(item).toContainText("perfdata");
  await expect(item).toContainText("lost 0 · skipped 0");
  await shot(page, "perfdata-uploaded");
});

test("a trace uploaded on the machine it was recorded on: its CPUs in their LLCs, its wakeups by their waker's", async ({ page, request }) => {
  // the real Zen3 NPS4 excerpt with the short-task patch (LKML): on its preset, 16 LLCs; its six
  // wakeups all come from another LLC than the woken thread's, and the poster's own marks
  // ("*LLC: 9 -> 3", "1 -> 14"...) show three of them pulled to the waker's LLC
  const name = "zen3-2s-nps4-stream-excerpt-shortrun.ftrace.txt";
  const body = readFileSync(join(TRACES, name));
  const marks = body.toString("utf8").split("\n").filter((l) => /sched_migrate_task: .*\*LLC: \d+ -> \d+/.test(l));
  expect(marks).toHaveLength(3);
  await page.goto("/");
  await page.getByTestId("upload-machine").selectOption("preset:zen3-2s-nps4");
  await page.getByTestId("upload-input").setInputFiles({ name, mimeType: "application/octet-stream", buffer: body });
  const item = page.getByTestId("recording-item").filter({ hasText: name });
  await expect(item).toHaveAttribute("data-status", "ready", { timeout: 60_000 });
  await item.locator("button.rec-open").click();
  await expect(page.getByText(/256 CPUs · 16 LLCs · 8 nodes · topology preset/)).toBeVisible();
  // the excerpt has no sched_switch line: its CPU lanes say so, nothing drawn
  await expect(page.getByTestId("cpu-lanes-note")).toHaveText("CPU lanes: the recording has no context switch (sched_switch), so who ran on each CPU is not known");
  const runCounts = page.getByTestId("run-counts");
  await expect(runCounts.locator('tr[data-key="wakeups.waker.cross_llc"] td')).toHaveText("6");
  await expect(runCounts.locator('tr[data-key="wakeups.waker.to_waker_llc"] td')).toHaveText(`${((100 * marks.length) / 6).toFixed(1)}%`);
  // under them, by LLC pair: the marked pulls on the diagonal (woke in the waker's LLC), and every
  // cell the API's llc_pairs count, CPU 60 (LLC 7) waking two threads in LLC 14 among them
  const pairs = runCounts.getByTestId("llc-pairs");
  await expect(pairs.getByTestId("llc-pairs-diagonal")).toHaveText(`in the waker's LLC: ${marks.length} of 6 (50.0%)`);
  const rid0 = await recId(request, name);
  const api = ((await (await request.get(`/api/recordings/${rid0}/metrics`)).json()) as { wakeups: { llc_pairs: { llcs: number; pairs: number[][] } } }).wakeups.llc_pairs;
  expect(api.llcs).toBe(16);
  const want = api.pairs.map((x) => x.join(":"));
  const got = await pairs.locator("rect[data-n]").evaluateAll((els) => els.map((e) => [e.getAttribute("data-w"), e.getAttribute("data-t"), e.getAttribute("data-n")].join(":")));
  expect(got).toEqual(want);
  expect(got).toContain("7:14:2");
  await expect(pairs.locator('rect[data-w="7"][data-t="14"] title')).toHaveText("waker in LLC 7, woke in LLC 14: 2 wakeups (33.3%)");
  // drawn in the waker's row (y) and the wakee's column (x)
  const cell = pairs.locator('rect[data-w="7"][data-t="14"]');
  const [x, y] = [Number(await cell.getAttribute("x")), Number(await cell.getAttribute("y"))];
  expect(x / y).toBe(14 / 7);
  // the cell clicked lists its tasks: the two threads the poster's "*LLC: 14" lines have CPU 60 wake
  const woken = body
    .toString("utf8")
    .split("\n")
    .map((l) => /\[060\] .*sched_waking: comm=stream pid=(\d+) .*\*LLC: 14/.exec(l)?.[1])
    .filter((p): p is string => p !== undefined)
    .sort();
  expect(woken).toEqual(["4392", "4406"]);
  await cell.click();
  const list = pairs.getByTestId("llc-pair-tasks");
  await expect(list).toContainText("LLC 7 → 14: 2 wakeups");
  await expect(list.locator("li")).toHaveText(woken.map((p) => `${p} stream 1`));
  // a name selects the task in the inspector
  await list.locator('li[data-pid="4406"] button').click();
  await expect(page).toHaveURL(/[?&]sel=4406/);
  // Enter on another cell lists its tasks instead: the main thread's pull into LLC 3
  await pairs.locator('rect[data-w="3"][data-t="3"]').press("Enter");
  await expect(list).toContainText("LLC 3 → 3: 1 wakeup");
  await expect(list.locator("li")).toHaveText(["4392 stream 1"]);
  await shot(page, "uploaded-on-its-machine");
  // on a machine without its CPUs (20 of them) the import fails, naming the CPUs it lacks
  await page.getByTestId("upload-machine").selectOption("preset:bdw-1s-20");
  await page.getByTestId("upload-input").setInputFiles({ name: "on-bdw.txt", mimeType: "application/octet-stream", buffer: body });
  const bad = page.getByTestId("recording-item").filter({ hasText: "on-bdw.txt" });
  await expect(bad).toHaveAttribute("data-status", "failed", { timeout: 60_000 });
  await expect(bad).toContainText("the trace names CPU 23, 31, 38, 60, 70, 84, 95, 97 and 10 more, which the machine bdw-1s-20 given for it does not have");
  const rid = await recId(request, name);
  const topo = (await (await request.get(`/api/recordings/${rid}/topology`)).json()) as { machine: string };
  expect(topo.machine).toBe("zen3-2s-nps4");
});

test("a topology file read on the page gives the machine: g4 on two LLCs counts wakeups from the other one", async ({ page, request }) => {
  // `placemap-collect topology --json` of a host; here the g4 VM's two CPUs laid on two LLCs
  const two = {
    machine: "vm2-two-llcs",
    source: "manual",
    cpus: [0, 1].map((c) => ({ cpu: c, online: true, core: c, llc: c, numa_node: 0, package: 0, smt_siblings: [c] })),
    llcs: [0, 1].map((l) => ({ id: l, cpus: [l], numa_nodes: [0] })),
    numa_nodes: [{ id: 0, cpus: [0, 1] }],
    node_distances: [[10]],
  };
  await page.goto("/");
  // "a topology file…" opens the browser's file chooser
  const pick = async (name: string, body: string) => {
    const [chooser] = await Promise.all([page.waitForEvent("filechooser"), page.getByTestId("upload-machine-pick").click()]);
    await chooser.setFiles({ name, mimeType: "application/json", buffer: Buffer.from(body) });
  };
  // not JSON, then JSON the server's topology schema refuses: each named (an alert), nothing chosen
  await pick("broken.json", "{cpus: ");
  await expect(page.getByTestId("upload-machine-error")).toContainText("topology file broken.json: not JSON");
  await expect(page.getByRole("alert")).toContainText("broken.json");
  await pick("bad.json", JSON.stringify({ machine: "x", cpus: "many" }));
  await expect(page.getByTestId("upload-machine-error")).toContainText("topology file bad.json: ");
  await expect(page.getByTestId("upload-machine")).toHaveValue("");
  // choosing a machine clears the error
  await page.getByTestId("upload-machine").selectOption("preset:icx-2s");
  await expect(page.getByTestId("upload-machine-error")).toHaveCount(0);
  await pick("two-llcs.json", JSON.stringify(two));
  await expect(page.getByTestId("upload-machine-error")).toHaveCount(0);
  await expect(page.getByTestId("upload-machine").locator("option:checked")).toHaveText("vm2-two-llcs (two-llcs.json: 2 CPUs, 2 LLCs, 1 node)");
  const name = "g4-two-llcs.ftrace.txt.gz";
  await page.getByTestId("upload-input").setInputFiles({ name, mimeType: "application/octet-stream", buffer: readFileSync(G4) });
  const item = page.getByTestId("recording-item").filter({ hasText: name });
  await expect(item).toHaveAttribute("data-status", "ready", { timeout: 60_000 });
  await item.locator("button.rec-open").click();
  await expect(page.getByText(/2 CPUs · 2 LLCs · 1 node · topology manual/)).toBeVisible();
  const rid = await recId(request, name);
  expect(((await (await request.get(`/api/recordings/${rid}/topology`)).json()) as { machine: string }).machine).toBe("vm2-two-llcs");
  // every wakeup whose waker ran on the other CPU now comes from another LLC, as its metrics count it
  type BW = { cross_llc: number; to_waker_llc: number };
  const bw = ((await (await request.get(`/api/recordings/${rid}/metrics`)).json()) as { wakeups: { by_waker: BW } }).wakeups.by_waker;
  expect(bw.cross_llc).toBeGreaterThan(1000);
  const runCounts = page.getByTestId("run-counts");
  await expect(runCounts.locator('tr[data-key="wakeups.waker.cross_llc"] td')).toHaveText(bw.cross_llc.toLocaleString("en-US"));
  await expect(runCounts.locator('tr[data-key="wakeups.waker.to_waker_llc"] td')).toHaveText(`${((100 * bw.to_waker_llc) / bw.cross_llc).toFixed(1)}%`);
  await shot(page, "uploaded-with-topology-file");
  // the timeline stacks those wakeups by where they woke, all of them over the whole run
  await expect(page.getByTestId("timeline-cross-llc")).toHaveAttribute("data-total", String(bw.cross_llc));
  // switched to the counts up to the playhead: at +100 ms the overview's wakeup rows (the Player's
  // 2000 bins) summed to the bin holding it; at the end, the whole run's
  const cell = (key: string) => runCounts.locator(`tr[data-key="${key}"] td`);
  type Ov = { bin_ns: number; bins: number; wakeups_by_waker: Record<string, number[]> };
  const o = (await (await request.get(`/api/recordings/${rid}/overview?bins=2000`)).json()) as Ov;
  const upTo = (key: string) => Math.round((o.wakeups_by_waker[key] ?? []).slice(0, Math.min(o.bins, Math.floor(100e6 / o.bin_ns) + 1)).reduce((x, y) => x + y, 0));
  expect(upTo("cross_llc")).toBeGreaterThan(0);
  expect(upTo("cross_llc")).toBeLessThan(bw.cross_llc);
  await runCounts.getByRole("button", { name: "up to the playhead" }).click();
  await page.getByTestId("seek-input").fill("+100ms");
  await page.getByTestId("seek-input").press("Enter");
  await expect(page.getByTestId("run-counts-caption")).toContainText("+100.0 ms");
  await expect(page).toHaveURL(/[?&]counts=playhead/);
  await expect(cell("wakeups.waker.cross_llc")).toHaveText(upTo("cross_llc").toLocaleString("en-US"));
  await expect(cell("wakeups.waker.to_waker_llc")).toHaveText(`${((100 * upTo("to_waker_llc")) / upTo("cross_llc")).toFixed(1)}%`);
  await expect(cell("migrations.cause.wakeup")).toHaveCount(0);
  await shot(page, "run-counts-playhead");
  // a link taken so opens the same counts
  await page.reload();
  await expect(page.getByTestId("run-counts-caption")).toContainText("+100.0 ms");
  await expect(cell("wakeups.waker.cross_llc")).toHaveText(upTo("cross_llc").toLocaleString("en-US"));
  await page.getByTestId("seek-input").fill("+10s");
  await page.getByTestId("seek-input").press("Enter");
  await expect(cell("wakeups.waker.cross_llc")).toHaveText(bw.cross_llc.toLocaleString("en-US"));
  await expect(cell("wakeups.waker.to_waker_llc")).toHaveText(`${((100 * bw.to_waker_llc) / bw.cross_llc).toFixed(1)}%`);
  await runCounts.getByRole("button", { name: "whole run" }).click();
  await expect(page).not.toHaveURL(/[?&]counts=/);
  await expect(cell("migrations.cause.wakeup")).toHaveCount(1);
  // a task's own wakeups by their waker (its path's classes): the busiest task's, as its path counts them
  await page.getByTestId("task-result").first().click();
  const pid = Number(new URL(page.url()).searchParams.get("sel"));
  type P = { kind: string; cpu: number; waker_cpu: number | null; waker_class: string | null };
  const path = ((await (await request.get(`/api/recordings/${rid}/tasks/${pid}/path`)).json()) as { placements: P[] }).placements;
  const woken = path.filter((p) => p.kind === "wakeup");
  const crossed = woken.filter((p) => ["to_waker_llc", "to_prev_llc", "elsewhere"].includes(p.waker_class ?? ""));
  const pulled = woken.filter((p) => p.waker_class === "to_waker_llc").length;
  expect(woken.length).toBeGreaterThan(10);
  expect(woken.every((p) => p.waker_class !== null)).toBe(true);
  expect(crossed.length).toBeGreaterThan(0);
  const line = page.getByTestId("task-wakers");
  await expect(line).toHaveAttribute("data-cross", String(crossed.length));
  await expect(line).toHaveAttribute("data-pulled", String(pulled));
  await expect(line).toContainText(`${woken.length.toLocaleString("en-US")} wakeups: ${crossed.length.toLocaleString("en-US")} from another LLC (${pulled.toLocaleString("en-US")} pulled to the waker's LLC`);
  await shot(page, "task-wakers");
  // listed by how often each task was woken from another LLC: the tasks a wake hint would move
  await page.getByTestId("task-order").selectOption("cross_llc");
  type T = { pid: number; cross_llc: number; pulled: number };
  const top = ((await (await request.get(`/api/recordings/${rid}/tasks?order=cross_llc&limit=30`)).json()) as T[]);
  expect(top[0]?.cross_llc ?? 0).toBeGreaterThanOrEqual(top[1]?.cross_llc ?? 0);
  // every row in the API's order (the busiest-first list is another order)
  await expect(page.getByTestId("task-results").locator("li")).toHaveCount(top.length);
  await expect.poll(() => page.getByTestId("task-results").locator("li").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-pid"))))).toEqual(top.map((t) => t.pid));
  const byEvents = ((await (await request.get(`/api/recordings/${rid}/tasks?limit=30`)).json()) as T[]).map((t) => t.pid);
  expect(byEvents).not.toEqual(top.map((t) => t.pid));
  await expect(page.getByTestId("task-result").first().getByTestId("task-result-cross")).toContainText(`${String(top[0]?.cross_llc)} from another LLC (${String(top[0]?.pulled)} pulled)`);
  await expect(page.getByTestId("task-order-uncounted")).toHaveCount(0);
  // its machine is a machine recorded here now, which the later specs' "across machines" lists count:
  // the recording goes, and with it the machine from those lists
  expect((await request.delete(`/api/recordings/${rid}`)).ok()).toBe(true);
});

test("hostile comms render as text", async ({ page }) => {
  // a real trace excerpt with one task renamed to markup, as a kernel could print it
  const text = gunzipSync(readFileSync(G4)).toString("utf8").split("\n").slice(0, 3000).join("\n");
  const hostile = text.replaceAll("rcu_preempt", "<svg/onload=1>");
  const name = "<img src=x onerror=alert(1)>.txt";
  await uploadViaUi(page, name, Buffer.from(hostile + "\n"));
  await page.getByTestId("recording-item").filter({ hasText: name }).getByRole("button").first().click();
  await expect(page.getByRole("region", { name: "Placement state" })).toBeVisible();
  // to the end of the recording (clamped), where the task exists
  await page.getByTestId("seek-input").fill("+10s");
  await page.getByTestId("seek-input").press("Enter");
  await page.getByTestId("task-search").fill("svg");
  const result = page.getByTestId("task-result").first();
  await expect(result).toContainText("<svg/onload=1>");
  await result.click();
  await expect(page.getByTestId("selected-sentence")).toContainText("<svg/onload=1>");
  // nothing was parsed as markup
  expect(await page.locator("svg[onload], img[onerror]").count()).toBe(0);
  await shot(page, "hostile-comm");
  await expect(page.locator(".rec-title")).toHaveText(name);
});

test("a failed import shows its error", async ({ page }) => {
  await page.goto("/");
  // random bytes are no trace: the import fails with a named reason, kept on the recording
  const junk = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256));
  const name = "not-a-trace.bin";
  await page.getByTestId("upload-input").setInputFiles({ name, mimeType: "application/octet-stream", buffer: junk });
  const item = page.getByTestId("recording-item").filter({ hasText: name });
  await expect(item).toHaveAttribute("data-status", "failed", { timeout: 60_000 });
  await expect(item.getByTestId("import-error")).not.toBeEmpty();
  await expect(item.getByRole("button").first()).toBeDisabled();
  await shot(page, "failed-import");
});
