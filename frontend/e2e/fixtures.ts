/**
 * What several end-to-end specs share: the real `vm2-hackbench-g4` ftrace (../shared/traces), the
 * 2-CPU VM's topology it was recorded on, where screenshots go, importing the trace under a
 * topology until the recording is ready, opening the Simulate panel, and screenshots of an element.
 */
import { expect, type APIRequestContext, type Locator, type Page } from "@playwright/test";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const ARTIFACTS = join(here, "..", "test-artifacts");
export const G4 = join(here, "..", "..", "..", "shared", "traces", "vm2-hackbench-g4.ftrace.txt.gz");

/** The 2-CPU VM (one core each, one LLC, one node) as a manual topology named `machine`. */
export function vm2Topology(machine: string, notes?: string[]): Record<string, unknown> {
  return {
    machine,
    source: "manual",
    cpus: [0, 1].map((c) => ({ cpu: c, online: true, core: c, llc: 0, numa_node: 0, package: 0, smt_siblings: [c] })),
    llcs: [{ id: 0, cpus: [0, 1], numa_nodes: [0] }],
    numa_nodes: [{ id: 0, cpus: [0, 1] }],
    node_distances: [[10]],
    ...(notes === undefined ? {} : { notes }),
  };
}

/** Wait until the recording's import has ended ready. */
export async function waitReady(request: APIRequestContext, rid: string): Promise<void> {
  await expect
    .poll(async () => ((await (await request.get(`/api/recordings/${rid}`)).json()) as { status: string }).status, { timeout: 60_000 })
    .toBe("ready");
}

/** Upload the g4 trace as recording `name` under topology `tid`; its id once it is ready. */
export async function importG4(request: APIRequestContext, name: string, tid: string): Promise<string> {
  const up = await request.post(`/api/recordings?topology_id=${tid}&name=${name}`, { data: readFileSync(G4) });
  expect(up.status()).toBeLessThan(300);
  const rid = ((await up.json()) as { id: string }).id;
  await waitReady(request, rid);
  return rid;
}

/** The dashboard's Simulate panel, opened: the panel and its form. */
export async function openSimulate(page: Page): Promise<{ sim: Locator; form: Locator }> {
  await page.goto("/");
  const sim = page.getByTestId("simulate");
  await sim.getByRole("button", { name: /Simulate/ }).click();
  return { sim, form: sim.getByRole("form", { name: "Simulate" }) };
}

/** A screenshot of what `el` shows, from a page tall enough that nothing scrolls (an element's own
 * screenshot inside the scrolled side panel comes out as the page's top, under the sticky header). */
export async function shot(el: Locator, name: string): Promise<void> {
  const page = el.page();
  const size = page.viewportSize();
  await page.setViewportSize({ width: size?.width ?? 1280, height: 4000 });
  const box = await el.boundingBox();
  if (box) await page.screenshot({ path: join(ARTIFACTS, name), clip: box });
  if (size) await page.setViewportSize(size);
}
