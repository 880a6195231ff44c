import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { decodeChunk } from "../../client/arrow";
import { Kind } from "../../client/events";
import { parseFtrace, readTrace } from "../../testing/ftrace";
import { rowsToIPC } from "../../testing/arrowFixture";
import { TRACES } from "../../testing/paths";
import type { EventColumns } from "../../viz/columns";
import { ReplayState, TaskState } from "../../viz/replay";
import type { CpuTopoIndex } from "../../viz/colors";
import { LiveBuffer } from "./liveBuffer";
import { TaskTrail, TRAIL_MAX } from "./liveTrail";

// a real 2-CPU hackbench capture (two cores, one LLC), cut into hub-sized batches
const rows = parseFtrace(readTrace(join(TRACES, "vm2-hackbench-g4.ftrace.txt.gz")));
const BATCH = 1500;
const cut = (rs: typeof rows): EventColumns[] =>
  Array.from({ length: Math.ceil(rs.length / BATCH) }, (_, k) => decodeChunk(rowsToIPC(rs.slice(k * BATCH, (k + 1) * BATCH))));
const batches = cut(rows);
const IDX: CpuTopoIndex = { core: Int32Array.from([0, 1]), llc: Int32Array.from([0, 0]), node: Int32Array.from([0, 0]) };

// the task with the most migrations in the capture
const migCount = new Map<number, number>();
for (const r of rows) if (r.kind === Kind.Migrate) migCount.set(r.pid, (migCount.get(r.pid) ?? 0) + 1);
const [busy = 0, busyMigs = 0] = [...migCount.entries()].sort((a, b) => b[1] - a[1])[0] ?? [];

function bufferOf(bs: EventColumns[], maxRows = 1e9): LiveBuffer {
  const buf = new LiveBuffer(maxRows);
  buf.setOrigin(new ReplayState(2, 1, 0));
  for (const b of bs) buf.append(b);
  return buf;
}

describe("TaskTrail on a real hackbench capture", () => {
  it("lists every migration of the task with its level and the placements the replay engine agrees with", () => {
    expect(busyMigs).toBeGreaterThan(3);
    const tr = TaskTrail.build(busy, bufferOf(batches), IDX);
    const migs = tr.placements.filter((p) => p.kind === "migrate");
    const want = rows.filter((r) => r.kind === Kind.Migrate && r.pid === busy);
    expect(migs.map((p) => [p.ts_ns, p.cpu])).toEqual(want.map((r) => [Number(r.ts_ns), r.dest_cpu]));
    // two cores sharing one LLC: every move between CPUs is an LLC-level move
    for (const p of migs) expect(p.level).toBe(p.cpu === -1 ? null : "llc");
    expect(tr.comm).toBe("hackbench");
    expect(tr.rowsSeen).toBe(rows.length);

    // replay the whole capture row by row: where the engine puts the task, the trail has a placement
    const all = decodeChunk(rowsToIPC(rows));
    const st = new ReplayState(2, 1, 0);
    const byTs = new Map(tr.placements.map((p) => [`${p.ts_ns}:${p.kind}`, p]));
    let lastCpu = -1;
    let moves = 0;
    for (let i = 0; i < all.length; i++) {
      st.apply(all, i, i + 1);
      const t = st.tasks.get(busy);
      if (!t || t.cpu === lastCpu) continue;
      if (t.cpu >= 0 && t.state !== TaskState.Dead) {
        const kind = ["wakeup_new", "waking", "wakeup", "migrate", "switch"][all.kind[i] ?? 0] ?? "?";
        expect(byTs.get(`${all.ts[i] ?? 0}:${kind}`)?.cpu, `row ${i}`).toBe(t.cpu);
        if (lastCpu >= 0) moves++;
      }
      lastCpu = t.cpu;
    }
    expect(moves).toBeGreaterThanOrEqual(busyMigs);
  });

  it("fed batch by batch as they arrive, it equals the trail built over the whole buffer", () => {
    const buf = new LiveBuffer(1e9);
    buf.setOrigin(new ReplayState(2, 1, 0));
    const inc = TaskTrail.build(busy, buf, IDX);
    for (const b of batches) {
      buf.append(b);
      inc.update(buf);
      inc.update(buf); // a second call scans nothing new
    }
    const once = TaskTrail.build(busy, buf, IDX);
    expect(inc.placements).toEqual(once.placements);
    expect(inc.rowsSeen).toBe(rows.length);
    expect(inc.placements.length).toBeGreaterThan(busyMigs);
  });

  it("covers only the window the buffer holds: folded batches' placements are pruned", () => {
    const full = TaskTrail.build(busy, bufferOf(batches), IDX);
    const buf = new LiveBuffer(9000);
    buf.setOrigin(new ReplayState(2, 1, 0));
    const tr = TaskTrail.build(busy, buf, IDX);
    for (const b of batches) {
      buf.append(b);
      buf.trim();
      tr.update(buf);
      tr.prune(buf.segments[0]?.t0 ?? 0);
    }
    const from = buf.segments[0]?.t0 ?? 0;
    expect(from).toBeGreaterThan(Number(rows[0]?.ts_ns ?? 0));
    expect(tr.placements.every((p) => p.ts_ns >= from)).toBe(true);
    expect(tr.placements).toEqual(full.placements.filter((p) => p.ts_ns >= from));
    expect(tr.dropped).toBe(full.placements.length - tr.placements.length);
    // what the panel says it covers: from the first batch still held
    expect(tr.since).toBe(from);
  });

  it("starts from the task as the buffer's origin knows it (a keyframe in the middle of the run)", () => {
    const all = decodeChunk(rowsToIPC(rows));
    const k = 20;
    const kt = batches[k]?.ts[0] ?? 0;
    const origin = new ReplayState(2, 1, 0);
    origin.apply(all, 0, all.ts.findIndex((t) => t > kt));
    const buf = new LiveBuffer(1e9);
    for (const b of batches.slice(k)) buf.append(b);
    buf.setOrigin(origin);
    const tr = TaskTrail.build(busy, buf, IDX);
    const full = TaskTrail.build(busy, bufferOf(batches), IDX);
    // same placements after the keyframe, levels included (it knew the task's CPU from the origin)
    expect(tr.placements).toEqual(full.placements.filter((p) => p.ts_ns > kt));
    expect(tr.since).toBe(origin.tNs);
    // without an origin yet (a view opened with sel=), it covers from the first row it read
    const early = new LiveBuffer(1e9);
    for (const b of batches.slice(k)) early.append(b);
    expect(TaskTrail.build(busy, early, IDX).since).toBe(batches[k]?.ts[0]);
  });

  it("keeps a hostile comm intact and caps the placements it keeps", () => {
    const HOSTILE = "<script>";
    const renamed = rows.map((r) => ({
      ...r,
      comm: r.pid === busy ? HOSTILE : r.comm,
      next_comm: r.next_pid === busy ? HOSTILE : r.next_comm,
      child_comm: r.child_pid === busy ? HOSTILE : r.child_comm,
    }));
    const tr = TaskTrail.build(busy, bufferOf(cut(renamed)), IDX);
    expect(tr.comm).toBe(HOSTILE);
    expect(tr.toPath()).toMatchObject({ pid: busy, comm: HOSTILE });

    // the busiest waker of the capture has more placements than a trail keeps
    const wakes = new Map<number, number>();
    for (const r of rows) if (r.kind === Kind.Wakeup) wakes.set(r.pid, (wakes.get(r.pid) ?? 0) + 1);
    const [many = 0, n = 0] = [...wakes.entries()].sort((a, b) => b[1] - a[1])[0] ?? [];
    if (n > TRAIL_MAX) {
      const big = TaskTrail.build(many, bufferOf(batches), IDX);
      expect(big.placements.length).toBe(TRAIL_MAX);
      expect(big.dropped).toBeGreaterThan(0);
      expect(big.since).toBe(big.placements[0]?.ts_ns);
    } else {
      expect(TaskTrail.build(many, bufferOf(batches), IDX).placements.length).toBeGreaterThanOrEqual(n);
    }
  });
});
