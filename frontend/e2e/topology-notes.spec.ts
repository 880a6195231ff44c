/**
 * Topology notes under the grid, in real chromium against the real backend: a recording imported
 * with a topology that carries notes (one hostile) shows them collapsed, opens on a click, and
 * renders every note as text.
 */
import { expect, test } from "@playwright/test";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = join(here, "..", "test-artifacts");
const G4 = join(here, "..", "..", "..", "shared", "traces", "vm2-hackbench-g4.ftrace.txt.gz");
const HOSTILE = '<img src=x onerror="window.__xss=1"> & <script>window.__xss=2</script>';

test("topology notes: collapsed line, opened on click, escaped", async ({ page, request }) => {
  const topo = {
    machine: "notes-e2e",
    source: "manual",
    cpus: [0, 1].map((c) => ({ cpu: c, online: true, core: c, llc: 0, numa_node: 0, package: 0, smt_siblings: [c] })),
    llcs: [{ id: 0, cpus: [0, 1], numa_nodes: [0] }],
    numa_nodes: [{ id: 0, cpus: [0, 1] }],
    node_distances: [[10]],
    notes: ["CPUs 2-3 were offline when the topology was read", HOSTILE],
  };
  const t = await request.post("/api/topologies", { data: topo });
  expect(t.status()).toBe(201);
  const tid = ((await t.json()) as { id: string }).id;
  const up = await request.post(`/api/recordings?topology_id=${tid}&name=notes-e2e`, { data: readFileSync(G4) });
  expect(up.status()).toBeLessThan(300);
  const rid = ((await up.json()) as { id: string }).id;
  await expect
    .poll(async () => ((await (await request.get(`/api/recordings/${rid}`)).json()) as { status: string }).status, { timeout: 60_000 })
    .toBe("ready");

  await page.goto(`/?rec=${rid}`);
  const notes = page.getByTestId("topology-notes");
  await expect(notes).toBeVisible();
  await expect(notes).not.toHaveAttribute("open");
  await expect(notes.locator("summary")).toHaveText("topology notes (2): CPUs 2-3 were offline when the topology was read");
  await expect(notes.locator("li").first()).toBeHidden();
  await notes.locator("summary").click();
  await expect(notes).toHaveAttribute("open");
  await page.screenshot({ path: join(ARTIFACTS, "topology-notes-open.png") });
  await expect(notes.locator("li")).toHaveText(["CPUs 2-3 were offline when the topology was read", HOSTILE]);
  expect(await notes.locator("img, script").count()).toBe(0);
  expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
});
