/**
 * Topology notes under the grid, in real chromium against the real backend: a recording imported
 * with a topology that carries notes (one hostile) shows them collapsed, opens on a click, and
 * renders every note as text.
 */
import { expect, test } from "@playwright/test";
import { join } from "node:path";
import { ARTIFACTS, importG4, vm2Topology } from "./fixtures";

const HOSTILE = '<img src=x onerror="window.__xss=1"> & <script>window.__xss=2</script>';

test("topology notes: collapsed line, opened on click, escaped", async ({ page, request }) => {
  const topo = vm2Topology("notes-e2e", ["CPUs 2-3 were offline when the topology was read", HOSTILE]);
  const t = await request.post("/api/topologies", { data: topo });
  expect(t.status()).toBe(201);
  const tid = ((await t.json()) as { id: string }).id;
  const rid = await importG4(request, "notes-e2e", tid);

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

test("sched domains: the recording's machine as the kernel's boot log prints its domains, per CPU", async ({ page, request }) => {
  const t = await request.post("/api/topologies", { data: vm2Topology("domains-e2e") });
  expect(t.status()).toBe(201);
  const rid = await importG4(request, "domains-e2e", ((await t.json()) as { id: string }).id);

  await page.goto(`/?rec=${rid}`);
  const panel = page.getByTestId("sched-domains");
  await expect(panel.locator("summary")).toHaveText("sched domains (as the simulator builds them)");
  await expect(panel.getByTestId("sched-domains-dmesg")).toBeHidden();
  await panel.locator("summary").click();
  // the 2-CPU VM (no SMT, one LLC): one MC domain over both CPUs, as the API gives it
  const api = async (cpu: number) => ((await (await request.get(`/api/recordings/${rid}/domains?cpu=${String(cpu)}`)).json()) as { dmesg: string; params: string });
  const [zero, one] = [await api(0), await api(1)];
  expect(zero.dmesg).toBe("CPU0 attaching sched-domain(s):\n domain-0: span=0-1 level=MC\n  groups: 0:{ span=0 }, 1:{ span=1 }\n");
  await expect(panel.getByTestId("sched-domains-dmesg")).toHaveText(zero.dmesg);
  await expect(panel.getByTestId("sched-domains-params")).toHaveText(zero.params);
  await panel.getByLabel("domains of CPU").selectOption("1");
  await expect(panel.getByTestId("sched-domains-dmesg")).toHaveText(one.dmesg);
  await expect(panel.getByTestId("sched-domains-dmesg")).toContainText("groups: 1:{ span=1 }, 0:{ span=0 }");
  await panel.screenshot({ path: join(ARTIFACTS, "sched-domains.png") });
});
