/** Test-only: where ../shared lives (beside the repo root, as in CI). */
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
/** repo root = frontend/src/testing/../../.. */
export const REPO_ROOT = join(here, "..", "..", "..");
export const SHARED = join(REPO_ROOT, "..", "shared");
export const TRACES = join(SHARED, "traces");
