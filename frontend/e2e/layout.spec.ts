/**
 * The dashboard's resizable columns, in real chromium against a real server: a splitter dragged and
 * moved by keys, the widths remembered across a reload and put back by a double click, a saved layout
 * that is no layout ignored, and what a wider side panel is for: a sweep across every preset whose
 * table scrolls sideways at the default width and fits once the panel is wider.
 */
import { expect, test, type Locator, type Page } from "@playwright/test";
import { importG4, openSimulate, shot, vm2Topology } from "./fixtures";

async function width(el: Locator): Promise<number> {
  const box = await el.boundingBox();
  if (!box) throw new Error("not laid out");
  return box.width;
}

/** The window resized to `width`, once the columns have been laid out again (the library does it
 * from a ResizeObserver, after the resize). */
async function resize(page: Page, width: number): Promise<void> {
  await page.setViewportSize({ width, height: 800 });
  await expect.poll(() => page.evaluate(() => Math.round(document.getElementById("placemap-columns")?.getBoundingClientRect().width ?? 0))).toBe(width);
  await page.evaluate(() => new Promise((done) => { requestAnimationFrame(() => { requestAnimationFrame(done); }); }));
}

/** Drag the separator `sep` by `dx` pixels with the mouse. */
async function drag(page: Page, sep: Locator, dx: number): Promise<void> {
  const box = await sep.boundingBox();
  if (!box) throw new Error("no separator");
  const x = box.x + box.width / 2;
  const y = box.y + box.height / 2;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + dx / 2, y, { steps: 4 });
  await page.mouse.move(x + dx, y, { steps: 4 });
  await page.mouse.up();
}

test("the side columns resize by drag and by keys, are remembered, and reset by a double click", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto("/");
  const left = page.locator("aside.left");
  const right = page.locator("aside.right");
  const leftSep = page.getByRole("separator", { name: "width of the side panel" });
  const rightSep = page.getByRole("separator", { name: "width of the inspector" });
  expect(await width(left)).toBeCloseTo(250, -1);
  expect(await width(right)).toBeCloseTo(320, -1);
  // untouched, nothing is kept: a wider window opens at the same default pixels, not the same shares
  await resize(page, 1600);
  await page.reload();
  await expect(page.getByTestId("simulate")).toBeVisible();
  expect(await width(left)).toBeCloseTo(250, -1);
  expect(await width(right)).toBeCloseTo(320, -1);
  await resize(page, 1280);

  await drag(page, leftSep, 230);
  const dragged = await width(left);
  expect(dragged).toBeGreaterThan(470);
  expect(dragged).toBeLessThan(490);
  // the right column keeps its pixels; the middle gave them
  expect(await width(right)).toBeCloseTo(320, -1);
  await drag(page, rightSep, -80);
  expect(await width(right)).toBeGreaterThan(390);

  // by keys: the focused splitter moves with the arrows, and says where it is
  await leftSep.focus();
  await page.keyboard.press("ArrowLeft");
  const keyed = await width(left);
  expect(keyed).toBeLessThan(dragged - 5);
  await expect(leftSep).toHaveAttribute("aria-valuenow", /\d/);
  await page.keyboard.press("Home"); // folds it
  await expect.poll(() => width(page.getByTestId("column-left"))).toBe(0);
  await page.keyboard.press("Enter"); // unfolds it, at the width it had
  expect(Math.abs((await width(left)) - keyed)).toBeLessThan(2);

  // remembered: a reload opens at the same widths (a drag the middle column's minimum does not stop:
  // one it stops is granted further when the window widens, as the library keeps what was asked)
  await drag(page, leftSep, 100);
  const saved = await width(left);
  const savedRight = await width(right);
  await page.reload();
  await expect(page.getByTestId("simulate")).toBeVisible();
  expect(Math.abs((await width(left)) - saved)).toBeLessThan(3);
  expect(Math.abs((await width(right)) - savedRight)).toBeLessThan(3);
  // in pixels: a reload in a wider window opens them as wide as they were, as a resize keeps them
  await resize(page, 1600);
  expect(Math.abs((await width(left)) - saved)).toBeLessThan(3);
  await page.reload();
  await expect(page.getByTestId("simulate")).toBeVisible();
  expect(Math.abs((await width(left)) - saved)).toBeLessThan(3);
  expect(Math.abs((await width(right)) - savedRight)).toBeLessThan(3);
  await resize(page, 1280);

  // a double click puts the default width back, and that is remembered too
  await leftSep.dblclick();
  await expect.poll(async () => Math.round(await width(left))).toBeGreaterThan(245);
  expect(await width(left)).toBeLessThan(255);
  await page.reload();
  await expect(page.getByTestId("simulate")).toBeVisible();
  expect(await width(left)).toBeCloseTo(250, -1);
});

test("an open recording's grid follows its column as the side panel widens", async ({ page, request }) => {
  const up = await request.post("/api/topologies", { data: vm2Topology("e2e-columns") });
  const rid = await importG4(request, "g4-columns", ((await up.json()) as { id: string }).id);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`/?rec=${rid}`);
  const wrap = page.locator(".center .grid-wrap");
  const canvas = wrap.locator("canvas");
  await expect(canvas).toBeVisible();
  const before = await width(wrap);
  // the canvas is laid out at its wrapper's size (GridView's ResizeObserver)
  await expect.poll(async () => Math.abs((await width(canvas)) - before)).toBeLessThanOrEqual(1);
  await drag(page, page.getByRole("separator", { name: "width of the side panel" }), 200);
  await expect.poll(async () => Math.round(await width(wrap))).toBeLessThan(before - 190);
  const after = await width(wrap);
  await expect.poll(async () => Math.abs((await width(canvas)) - after)).toBeLessThanOrEqual(1);
  await page.screenshot({ path: "test-artifacts/columns-recording.png" });
});

test("a saved layout that is no layout is ignored: the page opens at the default widths", async ({ page }) => {
  await page.goto("/");
  const left = page.locator("aside.left");
  await drag(page, page.getByRole("separator", { name: "width of the side panel" }), 150);
  const keys = await page.evaluate(() => Object.keys(window.localStorage).filter((k) => k.includes("placemap-columns")));
  expect(keys.length).toBeGreaterThan(0);
  // what is stored: the side columns' pixels
  const stored = await page.evaluate((k) => window.localStorage.getItem(k), keys[0] ?? "");
  const px = JSON.parse(stored ?? "{}") as Record<string, number>;
  expect(Object.keys(px)).toEqual(["column-left", "column-right"]);
  expect(Math.abs((px["column-left"] ?? 0) - (await width(page.getByTestId("column-left"))))).toBeLessThanOrEqual(1);
  expect(Math.abs((px["column-right"] ?? 0) - (await width(page.getByTestId("column-right"))))).toBeLessThanOrEqual(1);
  for (const bad of ["{not json", "null", "[400, 320]", '{"column-left": "wide", "column-right": 320}', '{"column-left": 1e999, "column-right": 320}', '{"column-left": 400}']) {
    await page.evaluate(({ ks, v }) => { for (const k of ks) window.localStorage.setItem(k, v); }, { ks: keys, v: bad });
    await page.reload();
    await expect(page.getByTestId("simulate"), bad).toBeVisible();
    expect(await width(left), bad).toBeCloseTo(250, -1);
  }
});

test("a sweep across all eight presets scrolls sideways in the default side panel and fits a wider one", async ({ page }) => {
  test.setTimeout(240_000);
  await page.setViewportSize({ width: 1400, height: 900 });
  const { sim, form } = await openSimulate(page);
  await form.getByLabel("machine").selectOption("zen3-2s-nps1");
  await form.getByLabel("workload").selectOption("tbench");
  await form.getByRole("radio", { name: "fork_affine" }).check();
  await form.getByLabel("simulated ms").fill("40");
  await form.getByLabel("sweep parameter").selectOption("clients");
  await form.getByLabel("values").fill("4, 16");
  const across = form.getByRole("group", { name: "sweep across" });
  const presets = ["zen3-2s-nps1", "zen3-2s-nps2", "zen3-2s-nps4", "zen4-9654-2s", "icx-2s", "spr-2s-224", "bdw-1s-20", "hsw-8s-288"];
  for (const m of presets) await across.getByRole("checkbox", { name: m }).check();
  await form.getByRole("button", { name: "Simulate", exact: true }).click();
  const view = sim.getByTestId("across-sweep");
  await expect(view).toBeVisible({ timeout: 200_000 });
  await expect(view.getByTestId("across-cell")).toHaveCount(2 * presets.length);
  const wrap = view.getByTestId("across-table").locator("xpath=..");
  const overflow = () => wrap.evaluate((el) => el.scrollWidth - el.clientWidth);
  await shot(view, "sweep-across-eight-narrow.png");
  expect(await overflow()).toBeGreaterThan(0);
  await drag(page, page.getByRole("separator", { name: "width of the side panel" }), 400);
  await expect.poll(overflow).toBeLessThanOrEqual(0);
  await shot(view, "sweep-across-eight-wide.png");
  await page.screenshot({ path: "test-artifacts/columns-wide-left.png" });
});

/** A folded column (`column`, its content `body`) stays folded across a reload, and Enter on its
 * splitter `sep` unfolds it at `px` wide. */
async function unfoldedAfterReload(page: Page, sep: Locator, column: Locator, body: Locator, px: number): Promise<void> {
  await page.reload();
  await expect.poll(() => width(column)).toBe(0);
  await sep.focus();
  await page.keyboard.press("Enter");
  await expect.poll(async () => Math.abs((await width(body)) - px)).toBeLessThanOrEqual(2);
}

test("a side column folds away when dragged past its minimum, and comes back", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto("/");
  const left = page.locator("aside.left");
  const right = page.locator("aside.right");
  const center = page.locator("main.center");
  const leftSep = page.getByRole("separator", { name: "width of the side panel" });
  const rightSep = page.getByRole("separator", { name: "width of the inspector" });
  const full = await width(center);
  const leftColumn = page.getByTestId("column-left");
  const rightColumn = page.getByTestId("column-right");
  await drag(page, leftSep, -240);
  await expect.poll(() => width(leftColumn)).toBe(0);
  await expect(page.getByTestId("simulate")).not.toBeVisible();
  // folded, it is inert: the keyboard cannot reach what it hides
  await expect(leftColumn.locator(".column-body")).toHaveAttribute("inert", "");
  await expect(leftSep).toHaveClass(/folded/);
  await expect(leftSep).toHaveAttribute("title", /folded/);
  // and stays folded, and inert, across a reload
  await page.reload();
  await expect.poll(() => width(leftColumn)).toBe(0);
  await expect(leftColumn.locator(".column-body")).toHaveAttribute("inert", "");
  await drag(page, rightSep, 300);
  await expect.poll(() => width(rightColumn)).toBe(0);
  // the grid's column has the window, but for the two splitters
  expect(await width(center)).toBeGreaterThan(full + 250 + 320 - 12); // the folded grips are 4 px wider each
  await page.screenshot({ path: "test-artifacts/columns-folded.png" });
  // Enter on the side panel's splitter unfolds it; a double click on the inspector's
  await leftSep.focus();
  await page.keyboard.press("Enter");
  await expect.poll(() => width(left)).toBeGreaterThanOrEqual(199);
  await expect(page.getByTestId("simulate")).toBeVisible();
  await expect(leftColumn.locator(".column-body")).not.toHaveAttribute("inert", "");
  await rightSep.dblclick();
  await expect.poll(async () => Math.abs((await width(right)) - 320)).toBeLessThanOrEqual(2);
  // Enter on the inspector's splitter folds the inspector, and that is remembered; Enter again unfolds
  // it at the width it had, after a reload too (neither its default nor its minimum)
  await drag(page, rightSep, -90);
  const open = await width(right);
  expect(open).toBeGreaterThan(400);
  await rightSep.focus();
  await page.keyboard.press("Enter");
  await expect.poll(() => width(rightColumn)).toBe(0);
  await unfoldedAfterReload(page, rightSep, rightColumn, right, open);
  // the side panel the same, folded by a drag
  await drag(page, leftSep, 180);
  const leftOpen = await width(left);
  expect(leftOpen).toBeGreaterThan(370);
  await drag(page, leftSep, -leftOpen);
  await expect.poll(() => width(leftColumn)).toBe(0);
  await unfoldedAfterReload(page, leftSep, leftColumn, left, leftOpen);
  // and one never set by hand unfolds at its default width
  await page.evaluate(() => { window.localStorage.clear(); });
  await page.reload();
  await rightSep.focus();
  await page.keyboard.press("Enter");
  await expect.poll(() => width(rightColumn)).toBe(0);
  await page.keyboard.press("Enter");
  await expect.poll(async () => Math.abs((await width(right)) - 320)).toBeLessThanOrEqual(2);
});
