import { describe, expect, it } from "vitest";
import type { TaskPlacement } from "../../client/types";
import type { Topology } from "../../client/types";
import { placementAt, reasonCounts, reasonText, taskWakers, wakerOf } from "./reasons";

function pl(ts: number, kind: string, cpu: number, why?: [string, string]): TaskPlacement {
  return { ts_ns: ts, cpu, llc: 0, numa_node: 0, kind, level: null, cause: null, reason: why ? { path: why[0], pick: why[1] } : null } as TaskPlacement;
}

const IDLE: [string, string] = ["wake_affine_idle: prev idle", "target idle"];
const PATH = [
  pl(10, "wakeup_new", 3, ["PKG: idlest group", "idlest CPU"]),
  pl(20, "wakeup", 3, IDLE),
  pl(30, "migrate", 5), // a wakeup's move (or a run saved before balancing moves kept theirs)
  pl(35, "migrate", 6, ["periodic balance at MC", "pulled"]),
  pl(40, "wakeup", 5, IDLE),
  pl(50, "wakeup", 9, ["wake_affine_weight: prev more loaded", "idle core found"]),
];

describe("placement reasons", () => {
  it("reads a reason as the decision counts print it, and none where there is none", () => {
    expect(reasonText(PATH[1] as TaskPlacement)).toBe("wake_affine_idle: prev idle -> target idle");
    expect(reasonText(PATH[2] as TaskPlacement)).toBeNull();
  });

  it("counts the reasons by kind, most frequent first", () => {
    expect(reasonCounts(PATH)).toEqual([
      { kind: "wakeup", text: "wake_affine_idle: prev idle -> target idle", count: 2 },
      { kind: "balance", text: "periodic balance at MC -> pulled", count: 1 },
      { kind: "fork", text: "PKG: idlest group -> idlest CPU", count: 1 },
      { kind: "wakeup", text: "wake_affine_weight: prev more loaded -> idle core found", count: 1 },
    ]);
    expect(reasonCounts([pl(1, "wakeup", 0), pl(2, "migrate", 1)])).toEqual([]); // a captured trace
  });

  it("finds the placement that put the task where it is at a time", () => {
    expect(placementAt(PATH, 5)).toBeNull();
    expect(placementAt(PATH, 10)?.ts_ns).toBe(10);
    expect(placementAt(PATH, 29)?.ts_ns).toBe(20);
    expect(placementAt(PATH, 32)?.reason).toBeNull(); // a move without its reason
    expect(placementAt(PATH, 35)?.reason?.path).toBe("periodic balance at MC");
    expect(placementAt(PATH, 1e12)?.ts_ns).toBe(50);
    // a moving wakeup: its migrate, then its wakeup at the same instant; the wakeup explains it
    const moving = [pl(10, "wakeup_new", 3, IDLE), pl(20, "migrate", 7), pl(20, "wakeup", 7, IDLE)];
    expect(placementAt(moving, 20)?.kind).toBe("wakeup");
  });
});

describe("a wakeup's waker", () => {
  // two LLCs: CPUs 0-1 in LLC 0, CPUs 2-3 in LLC 1
  const topo = { cpus: [0, 1, 2, 3].map((cpu) => ({ cpu, llc: cpu < 2 ? 0 : 1 })) } as unknown as Topology;
  const woken = (cpu: number, llc: number | null, waker: [number, number | null, string | null] | null) =>
    ({ ...pl(10, "wakeup", cpu), llc, waker_cpu: waker?.[0] ?? null, waker_pid: waker?.[1] ?? null, waker_comm: waker?.[2] ?? null }) as TaskPlacement;

  it("names the waker's CPU, its task and whether it shares the LLC the task woke in", () => {
    expect(wakerOf(woken(1, 0, [2, 77, "hackbench"]), topo)).toEqual({ cpu: 2, pid: 77, comm: "hackbench", sameLlc: false });
    expect(wakerOf(woken(1, 0, [0, 0, null]), topo)).toEqual({ cpu: 0, pid: 0, comm: null, sameLlc: true });
  });

  it("has none for a placement without one, and no LLC where the topology does not say", () => {
    expect(wakerOf(woken(1, 0, null), topo)).toBeNull();
    expect(wakerOf(woken(1, 0, [9, 5, null]), topo)?.sameLlc).toBeNull(); // CPU 9 outside the topology
    expect(wakerOf(woken(1, null, [2, 5, null]), topo)?.sameLlc).toBeNull();
    expect(wakerOf(woken(1, 0, [2, 5, null]), null)?.sameLlc).toBeNull();
  });
});

describe("a task's wakeups by their waker", () => {
  const w = (ts: number, cpu: number, wakerCpu: number | null, cls: TaskPlacement["waker_class"], kind = "wakeup"): TaskPlacement =>
    ({ ...pl(ts, kind, cpu), waker_cpu: wakerCpu, waker_class: cls });

  it("counts each wakeup once by its class, and those on the waker's very CPU of the known ones", () => {
    const got = taskWakers([
      w(1, 3, null, null, "wakeup_new"),
      w(2, 3, 3, "shared_llc"), // on the waker's CPU
      w(3, 4, 3, "shared_llc"),
      w(4, 9, 9, "to_waker_llc"), // pulled, onto the waker's CPU
      w(5, 10, 9, "to_waker_llc"),
      w(6, 3, 9, "to_prev_llc"),
      w(7, 12, 9, "elsewhere"),
      w(8, 3, 3, "still_running"), // no choice: not counted on the waker's CPU
      w(9, 3, null, "unknown"),
      w(10, 5, 4, null, "migrate"),
    ]);
    expect(got).toEqual({ wakeups: 8, cross: 4, pulled: 2, kept: 1, neither: 1, known: 6, onWakerCpu: 2, stillRunning: 1, unknown: 1 });
  });

  it("has nothing to say without a classed wakeup (stored before they were classed)", () => {
    expect(taskWakers([w(1, 3, null, null, "wakeup_new"), w(2, 3, 3, null)])).toBeNull();
  });
});
