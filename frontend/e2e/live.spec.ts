/**
 * The live view against real parts: the `bin/placemap serve` playwright.config.ts starts, a token
 * from `bin/placemap token create` on the same SQLite file, the real collector
 * (`bin/placemap-collect live`) reading this machine's tracefs, and a real load (hackbench from
 * Debian rt-tests) plus a task whose comm is hostile markup. The browser opens the live recording
 * from the list and must see task placement change in the accessible "Placement state" view while
 * following the head; pause freezes it while the feed keeps buffering; scrubbing back and "jump to
 * live" move the playhead; a dropped hub connection is shown and reconnected (the drop is made by
 * closing the browser's side of the real socket through Playwright's WebSocket route, which
 * otherwise passes frames through untouched); the lost counter is visible throughout; the end of the run turns the view
 * into the stored recording, which can then be deleted from the list.
 * Needs root and a working tracefs (CI and the dev machine have both); otherwise it is skipped with
 * the reason.
 */
import { expect, test, type Browser, type Page } from "@playwright/test";
import { tableFromIPC } from "apache-arrow";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const REPO = join(here, "..", "..");
const PLACEMAP = join(REPO, "bin", "placemap");
const COLLECT = join(REPO, "bin", "placemap-collect");
// the database of the server playwright.config.ts starts (its cwd is frontend/)
const DB = join(here, "..", "test-results", "e2e.db");
const ARTIFACTS = join(here, "..", "test-artifacts");
const TRACEFS = "/sys/kernel/tracing";
const HOSTILE = "<i>x pid=1</i>"; // 14 bytes: fits a comm (15)
const RUN_S = 240; // longer than the test needs even on a loaded machine: it ends the run itself (SIGINT)

const shot = (page: Page, name: string): Promise<Buffer> => page.screenshot({ path: join(ARTIFACTS, `live-${name}.png`) });

/** Why the real collector cannot run here, or null when it can. */
function tracefsUnusable(): string | null {
  if (typeof process.getuid === "function" && process.getuid() !== 0) return "not root: the collector needs root for tracefs";
  if (!existsSync(join(TRACEFS, "events", "sched"))) {
    try {
      execFileSync("mount", ["-t", "tracefs", "nodev", TRACEFS], { stdio: "pipe" });
    } catch (e) {
      return `tracefs is not mounted at ${TRACEFS} and mounting it failed: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (!existsSync(join(TRACEFS, "events", "sched"))) return `no sched events under ${TRACEFS}`;
  }
  try {
    accessSync(join(TRACEFS, "instances"), constants.W_OK);
  } catch {
    return `${TRACEFS}/instances is not writable`;
  }
  if (!existsSync(COLLECT)) return `${COLLECT} is not built (scripts/install)`;
  return null;
}

function startGroup(cmd: string, args: string[]): ChildProcess {
  // own process group, so the cleanup ends the loads' children (hackbench forks) too
  const p = spawn(cmd, args, { detached: true, stdio: ["ignore", "ignore", "pipe"] });
  p.stderr.setEncoding("utf8");
  return p;
}

function stopGroup(p: ChildProcess | null, sig: NodeJS.Signals = "SIGKILL"): void {
  if (!p?.pid || p.exitCode !== null) return;
  try {
    process.kill(-p.pid, sig);
  } catch {
    // already gone
  }
}

function exited(p: ChildProcess): Promise<number | null> {
  return p.exitCode !== null ? Promise.resolve(p.exitCode) : new Promise((res) => p.once("exit", (code) => { res(code); }));
}

interface CpuRow {
  cpu: number;
  pid: number;
}
async function cpuRows(page: Page): Promise<CpuRow[]> {
  const items = page.getByRole("region", { name: "Placement state" }).getByTestId("cpu-list").locator("li");
  return items.evaluateAll((els) => els.map((el) => ({ cpu: Number(el.getAttribute("data-cpu")), pid: Number(el.getAttribute("data-pid")) })));
}

function playhead(page: Page): Promise<number> {
  return page.evaluate(() => (window as unknown as { __placemapStats?: { playheadNs: number } }).__placemapStats?.playheadNs ?? 0);
}

interface DecodeStats {
  liveFrames?: number;
  liveDecodeMs?: number;
  liveWorkerMs?: number;
  liveDecodeMode?: string;
  frameWorkMs?: number;
  fps?: number;
}
function decodeStats(page: Page): Promise<DecodeStats> {
  return page.evaluate(() => (window as unknown as { __placemapStats?: DecodeStats }).__placemapStats ?? {});
}

/**
 * The same live feed decoded in the worker (this page) and on the main thread (a second page
 * whose Worker is taken away, the decoder's fallback): the main thread's ms per hub frame of each,
 * one after the other over 6 s each (a second window puts the first in the background, where
 * Chrome runs it slower), printed for the report (not asserted: they depend on the machine's load).
 */
async function decodeSideBySide(page: Page, browser: Browser, url: string, baseURL: string | undefined): Promise<void> {
  const per = (a: DecodeStats, b: DecodeStats, k: "liveDecodeMs" | "liveWorkerMs"): string => {
    const n = (b.liveFrames ?? 0) - (a.liveFrames ?? 0);
    return n > 0 ? `${(((b[k] ?? 0) - (a[k] ?? 0)) / n).toFixed(3)} ms/frame over ${String(n)} frames` : "no frames";
  };
  // the run lasts RUN_S: on a slow machine it may be over by now, and an ended run is opened stored
  if ((await page.getByTestId("live-mode").getAttribute("data-mode")) !== "live") {
    console.log("live decode figures skipped: the run is no longer live");
    return;
  }
  const w0 = await decodeStats(page);
  await page.waitForTimeout(6_000);
  const w1 = await decodeStats(page);
  expect(w1.liveDecodeMode).toBe("worker");
  const ctx = await browser.newContext(baseURL ? { baseURL } : {});
  try {
    await ctx.addInitScript(() => {
      Object.defineProperty(window, "Worker", { value: undefined, configurable: true });
    });
    const main = await ctx.newPage();
    await main.goto(url);
    await expect(main.getByTestId("live-mode").or(main.getByTestId("play"))).toBeVisible({ timeout: 30_000 });
    if ((await main.getByTestId("live-mode").count()) === 0) {
      console.log("live decode figures for the main-thread fallback skipped: the run ended meanwhile");
      return;
    }
    await expect.poll(async () => (await decodeStats(main)).liveFrames ?? 0, { timeout: 30_000 }).toBeGreaterThan(0);
    const m0 = await decodeStats(main);
    await main.waitForTimeout(6_000);
    const m1 = await decodeStats(main);
    expect(m1.liveDecodeMode).toBe("main");
    expect((m1.liveFrames ?? 0) - (m0.liveFrames ?? 0)).toBeGreaterThan(0);
    console.log(
      `live decode, main-thread time per hub frame, same feed, 6 s each: worker ${per(w0, w1, "liveDecodeMs")} (worker itself ${per(w0, w1, "liveWorkerMs")}), ` +
        `frame work ${String(w1.frameWorkMs)} ms at ${String(w1.fps)} fps; main-thread decode ${per(m0, m1, "liveDecodeMs")}, frame work ${String(m1.frameWorkMs)} ms at ${String(m1.fps)} fps`,
    );
  } finally {
    await ctx.close();
    await page.bringToFront();
  }
}

async function eventsSoFar(page: Page): Promise<number> {
  const t = await page.getByTestId("live-events").innerText();
  return Number(t.replace(/[^0-9]/g, ""));
}

test("live view follows the head of a real collector run: tasks move, pause, scrub back, jump to live, end", async ({ page, baseURL, browser }) => {
  test.setTimeout(300_000);
  const why = tracefsUnusable();
  test.skip(why !== null, `real tracefs unavailable: ${why ?? ""}`);

  const [, token = ""] = execFileSync(PLACEMAP, ["token", "--db", DB, "create", "--name", "e2e-live"], { encoding: "utf8" }).trim().split("\t");
  expect(token).not.toBe("");

  let collector: ChildProcess | null = null;
  let load: ChildProcess | null = null;
  let hostile: ChildProcess | null = null;
  let collectorErr = "";
  try {
    collector = startGroup(COLLECT, ["live", "--server", baseURL ?? "", "--token", token, "--duration", `${RUN_S}s`, "--quiet"]);
    collector.stderr?.on("data", (d: string) => {
      collectorErr += d;
    });
    // a small real load, repeated for the whole run
    load = startGroup("bash", ["-c", `end=$((SECONDS+${RUN_S})); while [ $SECONDS -lt $end ]; do hackbench -g 2 -l 2000 >/dev/null 2>&1; sleep 0.2; done`]);
    // a task whose comm is markup: it must come through as text
    hostile = startGroup("bash", [
      "-c",
      `printf '%s' '${HOSTILE}' > /proc/$$/comm; end=$((SECONDS+${RUN_S})); while [ $SECONDS -lt $end ]; do for i in $(seq 1 300); do :; done; sleep 0.05; done`,
    ]);

    // every hub socket passes through untouched; hub.drop() cuts the current one from the browser's side
    const hub: { drop: (() => Promise<void>) | null } = { drop: null };
    await page.routeWebSocket(/\/api\/recordings\/[^/]+\/live$/, (ws) => {
      const server = ws.connectToServer();
      hub.drop = async () => {
        await ws.close({ code: 4000, reason: "e2e drop" });
        await server.close();
      };
    });

    // the recordings list: the live run comes first, marked LIVE with host, events so far and lost count
    await page.goto("/");
    const item = page.getByTestId("recording-item").first();
    await expect(item).toHaveAttribute("data-status", "live", { timeout: 30_000 });
    await expect(item.getByTestId("live-rec-meta")).toContainText("LIVE");
    await expect(item.getByTestId("live-rec-lost")).toHaveText(/^lost \d[\d,]*$/);
    await expect(item.getByTestId("delete-recording")).toHaveCount(0); // not while it runs
    await expect.poll(async () => Number((await item.getByTestId("live-rec-events").innerText()).replace(/[^0-9]/g, "")), { timeout: 20_000 }).toBeGreaterThan(0);
    await shot(page, "list");

    await item.locator(".rec-open").click();
    await expect(page).toHaveURL(/[?&]live=1/);
    const mode = page.getByTestId("live-mode");
    await expect(mode).toHaveAttribute("data-mode", "live");
    await expect(mode).toHaveText("LIVE");
    const lost = page.getByTestId("live-lost");
    await expect(lost).toBeVisible();
    await expect(lost).toHaveText(/^lost \d[\d,]*$/);
    await expect(page.getByTestId("live-conn")).toHaveText("connected");

    // following the head: what runs on each CPU changes while we watch
    const region = page.getByRole("region", { name: "Placement state" });
    await expect(region.getByTestId("cpu-list").locator("li").first()).toBeVisible();
    const seen = new Set<string>();
    const snapshots = new Set<string>();
    const pids = new Set<number>();
    const t0 = await playhead(page);
    for (let i = 0; i < 16 && (snapshots.size < 4 || pids.size < 3); i++) {
      const rows = await cpuRows(page);
      snapshots.add(JSON.stringify(rows));
      for (const r of rows) {
        if (r.pid > 0) {
          pids.add(r.pid);
          seen.add(`${r.cpu}:${r.pid}`);
        }
      }
      await page.waitForTimeout(400);
    }
    expect(snapshots.size).toBeGreaterThanOrEqual(4);
    expect(pids.size).toBeGreaterThanOrEqual(3);
    expect(seen.size).toBeGreaterThanOrEqual(3);
    expect(await playhead(page)).toBeGreaterThan(t0);
    await expect(region).toContainText("hackbench");
    await shot(page, "following");
    // the CPU lanes of what the server has stored so far, moving on as the run grows
    const lanes = page.getByTestId("live-lanes").getByTestId("cpu-lanes");
    await expect(lanes).toHaveAttribute("data-status", "ok", { timeout: 30_000 });
    const lanesT1 = Number(await lanes.getAttribute("data-t1"));
    await expect.poll(async () => Number(await lanes.getAttribute("data-t1")), { timeout: 30_000 }).toBeGreaterThan(lanesT1);
    // figures for the report (not asserted: they depend on the machine's load)
    const st0 = await page.evaluate(() => (window as unknown as { __placemapStats?: Record<string, unknown> }).__placemapStats ?? null);
    console.log(`live view after following: ${JSON.stringify(st0)}`);

    // the hostile comm, selected through the URL of a live view: shown as text, never as markup
    const id = new URL(page.url()).searchParams.get("rec") ?? "";
    await page.goto(`/?rec=${id}&live=1&sel=${String(hostile.pid)}`);
    await expect(mode).toHaveAttribute("data-mode", "live");
    await expect(page.getByTestId("selected-sentence")).toContainText(`${String(hostile.pid)} ${HOSTILE}`, { timeout: 30_000 });
    await expect(region.locator("i")).toHaveCount(0);
    await shot(page, "hostile-comm");

    // the hub connection drops: shown, then reconnected with backoff, counted as a gap in the feed
    const sawReconnecting = page.waitForFunction(
      () => (document.querySelector('[data-testid="live-conn"]')?.textContent ?? "").includes("reconnecting"),
      null,
      { polling: "raf", timeout: 30_000 },
    );
    if (!hub.drop) throw new Error("the live socket did not go through the route");
    await hub.drop();
    await sawReconnecting;
    await shot(page, "reconnecting");
    await expect(page.getByTestId("live-conn")).toHaveText("connected", { timeout: 30_000 });
    await expect(page.getByTestId("live-holes")).toHaveText("1 feed gap");
    await expect(mode).toHaveAttribute("data-mode", "live");
    const afterDrop = await playhead(page);
    await expect.poll(() => playhead(page), { timeout: 30_000 }).toBeGreaterThan(afterDrop);

    // pause: the view freezes, the feed keeps arriving
    await page.getByTestId("live-pause").click();
    await expect(mode).toHaveAttribute("data-mode", "paused");
    await expect(mode).toHaveText("PAUSED");
    await expect(page).toHaveURL(/[?&]t=\d+/);
    const pausedAt = await playhead(page);
    const frozen = JSON.stringify(await cpuRows(page));
    const eventsAtPause = await eventsSoFar(page);
    await expect.poll(() => eventsSoFar(page), { timeout: 20_000 }).toBeGreaterThan(eventsAtPause);
    expect(await playhead(page)).toBe(pausedAt);
    expect(JSON.stringify(await cpuRows(page))).toBe(frozen);
    await expect(lost).toBeVisible();
    await expect(page.getByTestId("live-behind")).toContainText("behind live");
    await shot(page, "paused");
    // what the lanes draw is what the server's lanes of the window they answered hold (spans, or
    // summed per column when the window is too busy): their attributes read at once, while drawn
    type Drawn = { status?: string; t0?: string; t1?: string; mode?: string; spans?: string; parts?: string };
    let drawn: Drawn = {};
    await expect
      .poll(async () => {
        drawn = await lanes.evaluate((el: HTMLElement): Drawn => Object.fromEntries(["status", "t0", "t1", "mode", "spans", "parts"].map((k) => [k, el.getAttribute(`data-${k}`) ?? undefined])));
        return drawn.status;
      }, { timeout: 30_000 })
      .toBe("ok");
    const route = drawn.mode === "busy" ? `lanes_busy.arrow?parts=${drawn.parts ?? ""}&limit=2000000&` : "lanes.arrow?";
    const answered = await page.request.get(`/api/recordings/${id}/${route}t0_ns=${drawn.t0 ?? ""}&t1_ns=${drawn.t1 ?? ""}`);
    expect(answered.status()).toBe(200);
    expect(answered.headers()["x-lanes-t1-ns"]).toBe(drawn.t1);
    expect(String(tableFromIPC(await answered.body()).numRows)).toBe(drawn.spans);
    expect(Number(drawn.spans)).toBeGreaterThan(0);
    console.log(`live lanes: ${JSON.stringify(drawn)}; ${(await page.getByTestId("live-lanes-caption").textContent()) ?? ""}`);
    await page.getByTestId("live-lanes").screenshot({ path: join(ARTIFACTS, "live-lanes.png") });
    // summed on request, which the link says; what they draw then is the server's summed columns
    await page.getByTestId("live-lanes-summed-toggle").click();
    await expect(page).toHaveURL(/[?&]lanes=busy(&|$)/);
    await expect(lanes).toHaveAttribute("data-mode", "busy");
    await expect(lanes).toHaveAttribute("data-status", "ok", { timeout: 30_000 });
    const [b0, b1, bParts, bSpans] = await lanes.evaluate((el: HTMLElement) => ["t0", "t1", "parts", "spans"].map((k) => el.getAttribute(`data-${k}`) ?? ""));
    const busyAnswer = await page.request.get(`/api/recordings/${id}/lanes_busy.arrow?parts=${bParts}&limit=2000000&t0_ns=${b0}&t1_ns=${b1}`);
    expect(busyAnswer.status()).toBe(200);
    const busyRows = tableFromIPC(await busyAnswer.body());
    expect(busyRows.numRows).toBeGreaterThan(0);
    expect(bSpans).toBe(String(busyRows.numRows));
    await page.getByTestId("live-lanes-summed-toggle").click();
    await expect(page).not.toHaveURL(/lanes=/);

    // scrub back: a click a fifth of the way along the live timeline
    const scrub = page.getByTestId("live-scrub");
    const box = await scrub.boundingBox();
    if (!box) throw new Error("no live timeline");
    await page.mouse.click(box.x + box.width * 0.2, box.y + box.height / 2);
    await expect.poll(() => playhead(page)).toBeLessThan(pausedAt);
    await expect(mode).toHaveAttribute("data-mode", "paused");
    await expect(lost).toBeVisible();
    await shot(page, "scrubbed");

    // jump to live: following again, past where we paused
    await page.getByTestId("live-jump").click();
    await expect(mode).toHaveAttribute("data-mode", "live");
    await expect.poll(() => playhead(page)).toBeGreaterThan(pausedAt);
    await expect(page).not.toHaveURL(/[?&]t=/);

    // the live inspector (the task selected through the URL above), from the events the browser
    // holds: the task's comm as text, its CPU with core / LLC / node, and its path, which grows as
    // its wakeups arrive. After the feed-gap count above, which these seconds must not disturb
    const insp = page.getByTestId("live-inspector");
    await expect(insp.getByTestId("live-task-comm")).toHaveText(HOSTILE);
    await expect(insp.locator("i")).toHaveCount(0);
    await expect(insp.getByTestId("live-task-now")).toContainText(/CPU \d+ · core \d+ · LLC \d+ · node \d+ · (running|runnable|sleeping)/);
    const placed = async (): Promise<number> => Number(await insp.getByTestId("live-path-count").getAttribute("data-placements"));
    await expect.poll(placed, { timeout: 30_000 }).toBeGreaterThan(0);
    const placedBefore = await placed();
    await expect.poll(placed, { timeout: 30_000 }).toBeGreaterThan(placedBefore);
    await expect(insp.locator("svg.path-chart")).toBeVisible();
    await expect(insp.getByTestId("live-inspector-window")).toContainText("since the live view opened");
    await shot(page, "inspector");
    // another task, picked from the live search: the URL carries it
    await insp.getByTestId("task-search").fill("hackbench");
    await insp.getByTestId("task-result").first().click();
    await expect(page).toHaveURL(/[?&]sel=\d+/);
    await expect(insp.getByTestId("live-task-comm")).toHaveText("hackbench");
    await expect(insp.getByTestId("live-task-now")).toBeVisible();
    await shot(page, "inspector-hackbench");

    // hub frames are decoded in the Web Worker, and the main-thread fallback decodes the same feed
    expect((await decodeStats(page)).liveDecodeMode).toBe("worker");
    await decodeSideBySide(page, browser, page.url(), baseURL);

    // end of the run: SIGINT ends the recording; the view says so and opens the stored recording
    stopGroup(load);
    stopGroup(hostile);
    stopGroup(collector, "SIGINT");
    expect(await exited(collector), collectorErr).toBe(0);
    await expect(mode).toHaveAttribute("data-mode", "ended", { timeout: 60_000 });
    await expect(lost).toBeVisible();
    await shot(page, "ended");
    await page.getByTestId("live-open-finished").click();
    await expect(page.getByTestId("play")).toBeVisible();
    await expect(page).not.toHaveURL(/[?&]live=1/);
    // the stored inspector takes over, with the task followed live still selected
    await expect(page.getByTestId("live-inspector")).toHaveCount(0);
    await expect(page).toHaveURL(/[?&]sel=\d+/);
    await expect(page.getByTestId("task-detail")).toContainText("placements", { timeout: 30_000 });

    // delete it from the list (confirm step first)
    const row = page.locator('li.open[data-testid="recording-item"]');
    await expect(row).toHaveAttribute("data-status", "ready");
    await row.getByTestId("delete-recording").click();
    await expect(row.getByTestId("delete-confirm")).toBeVisible();
    await shot(page, "delete-confirm");
    await row.getByTestId("delete-confirm").click();
    await expect(row).toHaveCount(0);
    const gone = await page.request.get(`/api/recordings/${id}`);
    expect(gone.status()).toBe(404);
    await expect(page.locator("main.center.empty")).toBeVisible();
  } finally {
    stopGroup(load);
    stopGroup(hostile);
    stopGroup(collector);
  }
});
