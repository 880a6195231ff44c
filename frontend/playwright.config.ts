/**
 * Playwright end-to-end tests: Debian's chromium (/usr/bin/chromium) against a real
 * `bin/placemap serve` on a throwaway SQLite file, serving the built frontend (dist/).
 */
import { defineConfig } from "@playwright/test";

const port = Number(process.env.PLACEMAP_E2E_PORT ?? 8765);

export default defineConfig({
  testDir: "./e2e",
  timeout: 90_000,
  expect: { timeout: 20_000 },
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  reporter: [["list"]],
  outputDir: "test-results",
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: "/usr/bin/chromium",
      args: [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  webServer: {
    command: `mkdir -p test-results && rm -f test-results/e2e.db* && ../bin/placemap serve --port ${port} --db test-results/e2e.db`,
    url: `http://127.0.0.1:${port}/api/health`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "ignore",
    stderr: "pipe",
  },
});
