/**
 * A simulated run in real chromium against the real backend: submitted as an API job with save,
 * it appears in the recordings list with its "simulated" badge and scenario (as text), and opens
 * on the simulated machine's grid (the preset's LLCs and nodes in the placement text view).
 */
import { expect, test } from "@playwright/test";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "test-artifacts");

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

  await item.locator("button.rec-open").click();
  const rows = page.getByTestId("placement-state").locator("table.llc-table tbody tr");
  await expect(rows).toHaveCount(topo.llcs.length);
  for (const [i, l] of topo.llcs.entries()) {
    await expect(rows.nth(i).locator("th")).toHaveText(String(l.id));
    await expect(rows.nth(i).locator("td").nth(0)).toHaveText(l.numa_nodes.join(","));
    await expect(rows.nth(i).locator("td").nth(1)).toHaveText(String(l.cpus.length));
  }
  await page.screenshot({ path: join(ARTIFACTS, "sim-recording.png") });
});
