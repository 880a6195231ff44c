import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { decodeChunk } from "../client/arrow";
import { Kind } from "../client/events";
import { parseFtrace, readTrace } from "../testing/ftrace";
import { rowsToIPC } from "../testing/arrowFixture";
import { TRACES } from "../testing/paths";
import { upperBound } from "./columns";
import { ReplayState, TaskState, prevStateToTaskState, type MigrationEvent } from "./replay";

const allRows = parseFtrace(readTrace(join(TRACES, "vm2-hackbench-g4.ftrace.txt.gz")));
const cols = decodeChunk(rowsToIPC(allRows));
const cpuToLlc = [0, 0];

function recount(r: ReplayState): number[] {
  const n = new Array<number>(r.runnable.length).fill(0);
  for (const t of r.tasks.values()) if (t.state === TaskState.Runnable && t.cpu >= 0) n[t.cpu] = (n[t.cpu] ?? 0) + 1;
  return n;
}

describe("ReplayState on a real 2-CPU hackbench trace", () => {
  it("parses the whole trace", () => {
    // README: 72,578 events, 629 migrations
    expect(allRows.length).toBe(72578);
    expect(allRows.filter((r) => r.kind === Kind.Migrate).length).toBe(629);
  });

  it("follows fork, wakeup_new and switch at the start", () => {
    const r = new ReplayState(2, 1, 0);
    r.apply(cols, 0, 1); // fork bash 13109 -> 13113
    expect(r.tasks.get(13113)?.state).toBe(TaskState.New);
    expect(r.tasks.get(13113)?.cpu).toBe(-1);
    r.apply(cols, 1, 2); // wakeup_new 13113 target_cpu=0
    expect(r.tasks.get(13113)).toMatchObject({ cpu: 0, state: TaskState.Runnable });
    expect(r.runnable[0]).toBe(1);
    r.apply(cols, 2, 3); // switch bash 13109 (S) ==> 13113
    expect(r.running[0]).toBe(13113);
    expect(r.tasks.get(13113)).toMatchObject({ cpu: 0, state: TaskState.Running, comm: "bash" });
    expect(r.tasks.get(13109)).toMatchObject({ cpu: 0, state: TaskState.Sleeping });
    expect(r.runnable[0]).toBe(0);
    r.apply(cols, 3, 4); // exec -> comm hackbench
    expect(r.tasks.get(13113)?.comm).toBe("hackbench");
    expect(r.tNs).toBe(Number(allRows[3]?.ts_ns));
  });

  it("keeps runnable counts equal to a recount and reports every CPU-changing migrate", () => {
    const r = new ReplayState(2, 1, 0);
    const migs: MigrationEvent[] = [];
    const step = 997;
    for (let i = 0; i < cols.length; i += step) {
      r.apply(cols, i, Math.min(cols.length, i + step), (m) => migs.push(m));
      expect(Array.from(r.runnable)).toEqual(recount(r));
    }
    const expected = allRows.filter((x) => x.kind === Kind.Migrate && x.orig_cpu !== x.dest_cpu).length;
    expect(migs.length).toBe(expected);
    expect(migs.every((m) => m.from !== m.to && m.pid > 0)).toBe(true);
    // hackbench exits all its tasks: at the end nothing hackbench is left alive
    const alive = [...r.tasks.values()].filter((t) => t.comm === "hackbench" && t.state !== TaskState.Dead);
    expect(alive.length).toBeLessThan(3);
  });

  it("reaches the same state from a keyframe as from the start", () => {
    const full = new ReplayState(2, 1, 0);
    full.apply(cols, 0, cols.length);
    for (const frac of [0.1, 0.5, 0.93]) {
      const t = cols.ts[Math.floor(cols.length * frac)] ?? 0;
      const k = upperBound(cols.ts, t);
      const a = new ReplayState(2, 1, 0);
      a.apply(cols, 0, k);
      const key = a.toPlacementState(cpuToLlc, 1, k);
      // JSON round trip like GET state
      const b = ReplayState.fromPlacementState(JSON.parse(JSON.stringify(key)) as typeof key, 2, 1);
      expect(b.toPlacementState(cpuToLlc, 1, k)).toEqual(key);
      b.apply(cols, k, cols.length);
      expect(b.toPlacementState(cpuToLlc, 1, 0)).toEqual(full.toPlacementState(cpuToLlc, 1, 0));
    }
  });

  it("maps prev_state", () => {
    expect(prevStateToTaskState("R")).toBe(TaskState.Runnable);
    expect(prevStateToTaskState("R+")).toBe(TaskState.Runnable);
    expect(prevStateToTaskState("S")).toBe(TaskState.Sleeping);
    expect(prevStateToTaskState("D")).toBe(TaskState.Sleeping);
    expect(prevStateToTaskState("X")).toBe(TaskState.Dead);
    expect(prevStateToTaskState("Z")).toBe(TaskState.Dead);
    expect(prevStateToTaskState(null)).toBe(TaskState.Sleeping);
  });
});

describe("ReplayState on the Zen3 LKML excerpt", () => {
  it("ends with two stream threads on LLC 14's CPUs 119 and 240", () => {
    const rows = parseFtrace(readTrace(join(TRACES, "zen3-2s-nps4-stream-excerpt-shortrun.ftrace.txt")));
    const c = decodeChunk(rowsToIPC(rows, { dictionary: true }));
    const r = new ReplayState(256, 16, 0);
    const migs: MigrationEvent[] = [];
    r.apply(c, 0, c.length, (m) => migs.push(m));
    expect(r.tasks.get(4392)).toMatchObject({ cpu: 240, state: TaskState.Runnable, comm: "stream" });
    expect(r.tasks.get(4406)).toMatchObject({ cpu: 119, state: TaskState.Runnable });
    expect(migs.map((m) => [m.from, m.to])).toEqual([
      [206, 152],
      [152, 136],
      [136, 240],
    ]);
  });
});
