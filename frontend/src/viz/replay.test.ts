import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { decodeChunk } from "../client/arrow";
import { Kind } from "../client/events";
import { emptyRow, parseFtrace, readTrace } from "../testing/ftrace";
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

  it("seeded without its dead tasks (GET state's default), replays to the same live state", () => {
    const full = new ReplayState(2, 1, 0);
    full.apply(cols, 0, cols.length);
    let leftOut = 0;
    for (const frac of [0.05, 0.3, 0.6, 0.9, 0.99]) {
      const k = upperBound(cols.ts, cols.ts[Math.floor(cols.length * frac)] ?? 0);
      const a = new ReplayState(2, 1, 0);
      a.apply(cols, 0, k);
      const key = a.toPlacementState(cpuToLlc, 1, k);
      const live = key.tasks.filter((t) => t.state !== "dead");
      const lean = { ...key, tasks: live, dead_tasks: key.tasks.length - live.length };
      leftOut += lean.dead_tasks;
      const b = ReplayState.fromPlacementState(JSON.parse(JSON.stringify(lean)) as typeof lean, 2, 1);
      expect(b.deadLeftOut).toBe(lean.dead_tasks);
      // replayed on in lockstep with the full replay, compared every `step` rows and at the end
      const step = 1499;
      for (let i = k; i < cols.length; i += step) {
        const j = Math.min(cols.length, i + step);
        a.apply(cols, i, j);
        b.apply(cols, i, j);
        const want = a.toPlacementState(cpuToLlc, 1, j);
        const got = b.toPlacementState(cpuToLlc, 1, j);
        // every task b knows is exactly as in the full replay; the ones it lacks are dead there
        const wantByPid = new Map(want.tasks.map((t) => [t.pid, t]));
        for (const t of got.tasks) expect(t).toEqual(wantByPid.get(t.pid));
        const gotPids = new Set(got.tasks.map((t) => t.pid));
        for (const t of want.tasks) if (!gotPids.has(t.pid)) expect(t.state).toBe("dead");
        expect(got.cpus).toEqual(want.cpus);
        expect(got.llcs).toEqual(want.llcs);
      }
    }
    expect(full.toPlacementState(cpuToLlc, 1, 0).tasks.length).toBeGreaterThan(160);
    expect(leftOut).toBeGreaterThan(100); // hackbench's exited workers: the check above had work to do
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

describe("ReplayState edge rules (as backend/placemap/replay/kernel.py)", () => {
  function run(rows: ReturnType<typeof emptyRow>[]): ReplayState {
    const r = new ReplayState(4, 1, 0);
    const c = decodeChunk(rowsToIPC(rows));
    r.apply(c, 0, c.length);
    return r;
  }
  function sw(ts: bigint, cpu: number, prev: number, prevState: string, next: number): ReturnType<typeof emptyRow> {
    const x = emptyRow(ts, cpu, Kind.Switch, prev);
    x.pid = prev;
    x.comm = `t${prev}`;
    x.prev_state = prevState;
    x.next_pid = next;
    x.next_comm = `t${next}`;
    return x;
  }
  function wake(ts: bigint, pid: number, target: number): ReturnType<typeof emptyRow> {
    const x = emptyRow(ts, target, Kind.Wakeup, 0);
    x.pid = pid;
    x.comm = `t${pid}`;
    x.target_cpu = target;
    return x;
  }

  it("a wakeup of a task still running where it is changes nothing", () => {
    const r = run([sw(1n, 2, 0, "R", 50), wake(2n, 50, 3)]);
    expect(r.tasks.get(50)).toMatchObject({ cpu: 2, state: TaskState.Running });
    expect(r.running[2]).toBe(50);
  });

  it("a dead task stays dead on a late switch-out and a wakeup", () => {
    const exit = emptyRow(2n, 1, Kind.Exit, 60);
    exit.pid = 60;
    exit.comm = "t60";
    const r = run([sw(1n, 1, 0, "R", 60), exit, sw(3n, 1, 60, "S", 0), wake(4n, 60, 1)]);
    expect(r.tasks.get(60)?.state).toBe(TaskState.Dead);
    expect(r.running[1]).toBe(0);
    expect(r.runnable[1]).toBe(0);
  });

  it("a switch whose prev is not the CPU's occupant ends the occupant's run (its switch-out is missing)", () => {
    // as in vm2-hackbench-g4 CPU 0: ==> 68 at 319.980218, then a switch with prev_pid=13137
    const r = run([sw(1n, 0, 0, "R", 68), sw(2n, 0, 13137, "R", 1808)]);
    expect(r.tasks.get(68)).toMatchObject({ cpu: 0, state: TaskState.Sleeping });
    expect(r.running[0]).toBe(1808);
    expect([...r.tasks.values()].filter((t) => t.state === TaskState.Running)).toHaveLength(1);
  });

  it("switching a task in on another CPU makes its old CPU's occupant unknown", () => {
    const r = run([sw(1n, 0, 0, "R", 70), sw(2n, 3, 0, "R", 70)]);
    expect(r.running[3]).toBe(70);
    expect(r.running[0]).toBe(-1);
    expect(r.toPlacementState([0, 0, 0, 0], 1, 2).cpus[0]?.running_pid).toBeNull();
  });

  it("seeded without dead tasks: a late X switch-out keeps a task dead, a fork reusing its pid makes a new one", () => {
    const seed = {
      t_ns: 10,
      event_index: 5,
      cpus: [
        { cpu: 0, running_pid: 90, running_comm: "exiting", runnable: 0 },
        { cpu: 1, running_pid: 0, running_comm: null, runnable: 0 },
      ],
      tasks: [{ pid: 7, comm: "parent", cpu: 1, state: "sleeping" as const }],
      dead_tasks: 2, // 90 (exited, still on CPU 0) and 91 (gone)
      llcs: [{ llc: 0, tasks: 1, runnable: 0, running: 0 }],
    };
    const r = ReplayState.fromPlacementState(seed, 2, 1);
    expect(r.tasks.get(90)).toMatchObject({ cpu: 0, state: TaskState.Dead, comm: "exiting" });
    expect(r.tasks.has(91)).toBe(false);
    const fork = emptyRow(13n, 1, Kind.Fork, 7);
    fork.pid = 7;
    fork.comm = "parent";
    fork.child_pid = 91;
    fork.child_comm = "child";
    const c = decodeChunk(rowsToIPC([sw(11n, 0, 90, "D", 0), sw(12n, 1, 91, "X", 0), fork]));
    r.apply(c, 0, 2);
    expect(r.tasks.get(90)?.state).toBe(TaskState.Dead); // final switch-out in D: still dead
    expect(r.tasks.get(91)).toMatchObject({ state: TaskState.Dead, comm: "t91" });
    expect(r.running[0]).toBe(0);
    r.apply(c, 2, 3);
    expect(r.tasks.get(91)).toMatchObject({ state: TaskState.New, comm: "child", cpu: -1 });
    expect(r.llcCounts([0, 0], 1).tasks[0]).toBe(1);
  });

  it("exec by a non-leader thread takes over the leader's place", () => {
    const ex = emptyRow(2n, 1, Kind.Exec, 81);
    ex.pid = 80;
    ex.old_pid = 81;
    ex.comm = "newprog";
    ex.filename = "/bin/newprog";
    const r = run([sw(1n, 1, 0, "R", 81), ex]);
    expect(r.tasks.get(80)).toMatchObject({ cpu: 1, state: TaskState.Running, comm: "newprog" });
    expect(r.tasks.get(81)?.state).toBe(TaskState.Dead);
    expect(r.running[1]).toBe(80);
  });

  it("numeric prev_state 0 (old formats) means preempted", () => {
    const r = run([sw(1n, 0, 0, "R", 90), sw(2n, 0, 90, "0", 0)]);
    expect(r.tasks.get(90)?.state).toBe(TaskState.Runnable);
    expect(r.runnable[0]).toBe(1);
  });

  it("learns thread-group ids from cur_pid's tgid and keeps them in clones", () => {
    const w = wake(1n, 101, 0);
    w.cur_pid = 100;
    w.tgid = 100;
    const r = run([w]);
    expect(r.tgidOf(100)).toBe(100);
    expect(r.tgidOf(101)).toBe(-1);
    expect(r.clone().tgidOf(100)).toBe(100);
  });
});
