/**
 * The overview after the first frame, in real chromium against the real backend: GET overview is
 * held back (page.route delays the real response; the one thing stood in, to make the order
 * certain) until both recordings of a comparison show their grids, then let through. The timeline
 * and the counts up to the playhead must take it when it comes (they waited for it forever when
 * only the first frame re-rendered them); a failed overview must say so.
 */
import { expect, test } from "@playwright/test";
import { join } from "node:path";
import { ARTIFACTS, importG4, vm2Topology } from "./fixtures";

test("an overview that comes after the first frame reaches the timeline and the counts; a failed one is said", async ({ page }) => {
  const t = await page.request.post("/api/topologies", { data: vm2Topology("overview-late") });
  expect(t.status()).toBe(201);
  const tid = ((await t.json()) as { id: string }).id;
  const a = await importG4(page.request, "late-a", tid);
  const b = await importG4(page.request, "late-b", tid);

  let release: () => void = () => undefined;
  const released = new Promise<void>((r) => {
    release = r;
  });
  await page.route("**/api/recordings/*/overview*", async (route) => {
    await released;
    await route.continue();
  });
  await page.goto(`/?rec=${a}&cmp=${b}&counts=playhead`);
  await expect(page.getByTestId("compare").locator(".grid-wrap")).toHaveCount(2);
  await expect(page.getByTestId("overview-status")).toHaveText("loading overview…");
  await expect(page.getByTestId("compare-counts-waiting")).toHaveText("counting up to the playhead…");
  await page.screenshot({ path: join(ARTIFACTS, "overview-waiting.png") });
  release();
  await expect(page.getByTestId("overview-status")).toHaveCount(0);
  await expect(page.getByTestId("compare-counts-caption")).toContainText("up to +");
  await expect(page.getByTestId("compare-counts")).toHaveAttribute("data-mode", "playhead");

  // the overview refused: the timeline and the counts say so instead of loading for ever
  await page.unroute("**/api/recordings/*/overview*");
  await page.route("**/api/recordings/*/overview*", (route) => route.fulfill({ status: 500, body: "held back by the test" }));
  await page.goto(`/?rec=${a}&cmp=${b}&counts=playhead`);
  await expect(page.getByTestId("overview-status")).toHaveText("the overview could not be loaded");
  await expect(page.getByTestId("compare-counts-error")).toContainText("could not be loaded (no overview)");
  await page.screenshot({ path: join(ARTIFACTS, "overview-failed.png") });
  await page.getByTestId("compare-counts-error").getByRole("button", { name: "whole run" }).click();
  await expect(page.getByTestId("compare-counts")).toHaveAttribute("data-mode", "run");
});
