// Browser benchmark: first frame of a 1M-event recording after navigation, and playback frame
// rate on a synthetic 384-CPU, 2,000-task recording, measured by headless Debian chromium
// with requestAnimationFrame. Baseline in the same run: the frame rate of an empty rAF loop on
// the same page (what this headless chromium can do at all), and the time to load the page shell.
//
// Starts its own `bin/placemap serve` on a temporary SQLite file, imports the synthetic
// recordings through the real upload API, then drives the real page.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "frontend", "package.json"));
const { chromium } = require("@playwright/test");

const port = 8799;
const base = `http://127.0.0.1:${port}`;
const work = mkdtempSync(join(tmpdir(), "placemap-febench-"));

function gen(events, name) {
  const trace = join(work, `${name}.ftrace.txt`);
  const topo = join(work, `${name}.topology.json`);
  execFileSync("python3", [join(root, "bench", "make_synthetic.py"), "--events", String(events), trace, topo]);
  return { trace, topo };
}

async function waitHealthy() {
  for (let i = 0; i < 200; i++) {
    try { if ((await fetch(`${base}/api/health`)).ok) return; } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("server did not start");
}

async function upload({ trace, topo }, name) {
  const t = await (await fetch(`${base}/api/topologies`, { method: "POST", headers: { "content-type": "application/json" }, body: readFileSync(topo) })).json();
  const r = await fetch(`${base}/api/recordings?name=${name}&topology_id=${t.id}`, { method: "POST", body: readFileSync(trace) });
  if (r.status !== 202) throw new Error(`upload ${name}: ${r.status} ${await r.text()}`);
  const rec = await r.json();
  for (;;) {
    const cur = await (await fetch(`${base}/api/recordings/${rec.id}`)).json();
    if (cur.status === "ready") return cur;
    if (cur.status === "failed") throw new Error(`import ${name} failed: ${cur.error}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

const server = spawn(join(root, "bin", "placemap"), ["serve", "--port", String(port), "--db", join(work, "bench.db")], { stdio: "ignore" });
try {
  await waitHealthy();
  const big = await upload(gen(1_000_000, "one-million"), "one-million");
  const busy = await upload(gen(300_000, "busy-384"), "busy-384");
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });

  // Baseline: the page shell, and an empty rAF loop's frame rate in this browser.
  let t0 = Date.now();
  await page.goto(`${base}/`);
  await page.waitForLoadState("load");
  const shellMs = Date.now() - t0;
  const rafBaseline = await page.evaluate(() => new Promise((resolve) => {
    let n = 0; const start = performance.now();
    const tick = () => { n++; if (performance.now() - start < 3000) requestAnimationFrame(tick); else resolve(n / ((performance.now() - start) / 1000)); };
    requestAnimationFrame(tick);
  }));

  // First frame of the 1M-event recording: navigation start -> the app reports its first drawn frame.
  const firsts = [];
  for (let i = 0; i < 5; i++) {
    await page.goto("about:blank");
    await page.goto(`${base}/?rec=${big.id}`);
    const ms = await page.waitForFunction(() => window.__placemapStats?.firstFrameMs ?? null, null, { timeout: 30_000 });
    firsts.push(await ms.jsonValue());
  }
  firsts.sort((a, b) => a - b);

  // Playback fps on the 384-CPU, 2,000-task recording.
  await page.goto(`${base}/?rec=${busy.id}&speed=1`);
  await page.waitForFunction(() => window.__placemapStats?.firstFrameMs != null, null, { timeout: 30_000 });
  await page.getByTestId("play").click();
  await page.waitForTimeout(1000);
  const before = await page.evaluate(() => ({ frames: window.__placemapStats.frames, t: performance.now() }));
  await page.waitForTimeout(5000);
  const after = await page.evaluate(() => ({ frames: window.__placemapStats.frames, t: performance.now() }));
  const fps = (after.frames - before.frames) / ((after.t - before.t) / 1000);
  await browser.close();

  const med = firsts[Math.floor(firsts.length / 2)];
  console.log(`frontend: page shell load                      ${shellMs} ms`);
  console.log(`frontend: first frame, 1M-event recording      median ${med.toFixed(0)} ms, worst ${firsts.at(-1).toFixed(0)} ms of ${firsts.length} (target < 1500 ms)`);
  console.log(`frontend: empty rAF loop (baseline)            ${rafBaseline.toFixed(1)} fps`);
  console.log(`frontend: playback, 384 CPUs / 2,000 tasks     ${fps.toFixed(1)} fps (${(fps / rafBaseline * 100).toFixed(0)}% of baseline; target 60)`);
} finally {
  server.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
}
