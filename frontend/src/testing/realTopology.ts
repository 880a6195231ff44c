/**
 * Test-only: a real machine's Topology from ../shared/topologies (hwloc's sysfs dumps), read by the
 * project's own topology reader (bin/placemap-collect topology --sysfs-root), as the backend would.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Topology } from "../client/types";
import { REPO_ROOT, SHARED } from "./paths";

function findSysRoot(dir: string, depth = 0): string | null {
  if (existsSync(join(dir, "sys", "devices", "system", "cpu"))) return dir;
  if (depth > 4) return null;
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) {
      const r = findSysRoot(p, depth + 1);
      if (r) return r;
    }
  }
  return null;
}

export function realTopology(name: string): Topology {
  const collector = join(REPO_ROOT, "bin", "placemap-collect");
  const tar = join(SHARED, "topologies", "hwloc", "linux", `${name}.tar.bz2`);
  const dir = mkdtempSync(join(tmpdir(), "pm-topo-"));
  try {
    execFileSync("tar", ["-xjf", tar, "-C", dir], { stdio: "ignore" });
    const root = findSysRoot(dir);
    if (!root) throw new Error(`${name}: no sys/devices/system/cpu in the dump`);
    const out = execFileSync(collector, ["topology", "--sysfs-root", root, "--json", "--quiet"], { encoding: "utf8" });
    return JSON.parse(out) as Topology;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
