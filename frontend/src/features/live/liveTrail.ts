/**
 * The live inspector's task path: the placements of one task (every event that put it on a CPU,
 * by the backend's task-path rules in backend/placemap/replay/kernel.py: a wakeup on its target
 * CPU, a wakeup_new, a migrate, a switch-in on a CPU other than its last) over the hub batches a
 * live view holds in memory (features/live/liveBuffer.ts). A live recording has no stored task
 * paths yet, so this is how its inspector answers without the server. Pure: no DOM, no fetch.
 *
 * Incremental: the trail starts from the task as the buffer's origin knows it, scans the held
 * batches once, then each new batch once as it arrives. It keeps only the task's own replay state
 * (CPU, whether it runs there, a pending waking or fork), which is all the level and cause of its
 * placements need, so a 1M-row buffer costs one pass over a few typed arrays per selection.
 */
import { Kind, KIND_NAMES } from "../../client/events";
import type { MigrationCause, TaskPath, TaskPlacement } from "../../client/types";
import { classifyMigration, type CpuTopoIndex } from "../../viz/colors";
import { str, upperBound, type EventColumns } from "../../viz/columns";
import { prevStateToTaskState, TaskState, type ReplayState } from "../../viz/replay";
import type { LiveSegment } from "./liveBuffer";

/** Placements kept per trail (the oldest go first): a busy task wakes thousands of times a minute. */
export const TRAIL_MAX = 2000;

/** What the trail needs of a LiveBuffer (its origin and held batches). */
export interface TrailSource {
  readonly origin: ReplayState | null;
  readonly segments: readonly LiveSegment[];
}

export class TaskTrail {
  readonly pid: number;
  comm = "";
  readonly placements: TaskPlacement[] = [];
  /** placements dropped at TRAIL_MAX or because their batches left the buffer */
  dropped = 0;
  /** rows scanned (all rows of the batches seen, not just this task's) */
  rowsSeen = 0;
  /** whether the task exited within the scanned rows */
  exited = false;
  /**
   * The trail holds every placement after this time (the origin's time or its first batch, later
   * the first batch still held), bar feed gaps. It outlives a resync: the buffer restarts from
   * the new keyframe, while the batches this trail read before it stay read.
   */
  since = Infinity;
  private cpu = -1;
  private running = false;
  private waking = false;
  private wakePrev = -1;
  private forked = false;
  private lastSeg = 0;

  private constructor(pid: number, private readonly idx: CpuTopoIndex | null) {
    this.pid = pid;
  }

  /** The trail of pid from the buffer's origin through every batch it holds. */
  static build(pid: number, src: TrailSource, idx: CpuTopoIndex | null): TaskTrail {
    const tr = new TaskTrail(pid, idx);
    const o = src.origin;
    const t = o?.tasks.get(pid);
    if (o) tr.since = o.tNs;
    if (t) {
      tr.comm = t.comm;
      tr.cpu = t.cpu;
      tr.running = t.state === TaskState.Running && t.cpu >= 0 && o?.running[t.cpu] === pid;
      tr.exited = t.state === TaskState.Dead;
      tr.forked = t.state === TaskState.New;
    }
    for (const s of src.segments) {
      // rows at or before the origin's time are already in it (a batch that straddles a keyframe)
      tr.scan(s, o ? upperBound(s.cols.ts, o.tNs) : 0);
    }
    return tr;
  }

  /** Scan the batches received since the last call (each batch once, in order). */
  update(src: TrailSource): void {
    for (const s of src.segments) if (s.id > this.lastSeg) this.scan(s, 0);
  }

  /** Drop placements before t (their batches were folded out of the buffer). */
  prune(t: number): void {
    if (t > this.since) this.since = t;
    let k = 0;
    while (k < this.placements.length && (this.placements[k]?.ts_ns ?? Infinity) < t) k++;
    if (k > 0) {
      this.placements.splice(0, k);
      this.dropped += k;
    }
  }

  /** In the server's TaskPath shape, so the stored inspector's chart draws it. */
  toPath(): TaskPath {
    return { pid: this.pid, comm: this.comm, placements: this.placements.slice() };
  }

  private place(ts: number, cpu: number, kind: number, from: number, cause: MigrationCause | null): void {
    const idx = this.idx;
    this.placements.push({
      ts_ns: ts,
      cpu,
      llc: idx && cpu >= 0 && (idx.llc[cpu] ?? -1) >= 0 ? (idx.llc[cpu] ?? null) : null,
      numa_node: idx && cpu >= 0 && (idx.node[cpu] ?? -1) >= 0 ? (idx.node[cpu] ?? null) : null,
      kind: (KIND_NAMES[kind] ?? "migrate") as TaskPlacement["kind"],
      level: idx ? classifyMigration(idx, from, cpu) : null,
      cause,
    });
    if (this.placements.length > TRAIL_MAX) {
      this.placements.shift();
      this.dropped++;
      this.since = Math.max(this.since, this.placements[0]?.ts_ns ?? this.since);
    }
  }

  private scan(seg: LiveSegment, from: number): void {
    this.lastSeg = Math.max(this.lastSeg, seg.id);
    const c = seg.cols;
    if (this.since === Infinity && from < c.length) this.since = c.ts[from] ?? Infinity;
    this.rowsSeen += c.length - from;
    this.scanRows(c, from, c.length);
  }

  /** Rows [from, to) of cols: this task's part of kernel.py's placement rules. */
  scanRows(c: EventColumns, from: number, to: number): void {
    const P = this.pid;
    const { kind, pid, cpu, ts } = c;
    for (let i = from; i < to; i++) {
      const k = kind[i];
      const p = pid[i] ?? 0;
      if (k === Kind.Switch) {
        const on = cpu[i] ?? -1;
        const np = c.nextPid[i] ?? -1;
        // someone else switched on the CPU it ran on: it no longer runs there
        if (this.running && this.cpu === on && p !== P && np !== P) this.running = false;
        if (p === P) {
          this.cpu = on;
          this.running = false;
          const st = prevStateToTaskState(str(c.prevState, i));
          if (st === TaskState.Dead) this.exited = true;
          this.nameFrom(c.comm, i);
        }
        if (np === P && on >= 0) {
          if (this.cpu !== on) this.place(ts[i] ?? 0, on, Kind.Switch, this.cpu, null);
          this.cpu = on;
          this.running = true;
          this.nameFrom(c.nextComm, i);
        }
        continue;
      }
      if (p !== P) {
        if (k === Kind.Fork && (c.childPid[i] ?? -1) === P) {
          // the pid is (re)born: a new task with no CPU yet
          this.cpu = -1;
          this.running = false;
          this.waking = false;
          this.forked = true;
          this.exited = false;
          this.nameFrom(c.childComm, i);
        } else if (k === Kind.Exec && (c.oldPid[i] ?? -1) === P) {
          // a thread exec'd and took its leader's pid: this pid is gone
          this.exited = true;
          this.running = false;
        }
        continue;
      }
      this.nameFrom(c.comm, i);
      switch (k) {
        case Kind.Waking:
          this.waking = true;
          this.wakePrev = c.targetCpu[i] ?? -1;
          break;
        case Kind.Wakeup: {
          const tc = c.targetCpu[i] ?? -1;
          const prev = this.waking ? this.wakePrev : this.cpu;
          this.waking = false;
          this.place(ts[i] ?? 0, tc, k, prev, "wakeup");
          // a task woken before it switched out stays running where it is
          if (!this.running) this.cpu = tc;
          break;
        }
        case Kind.WakeupNew: {
          const tc = c.targetCpu[i] ?? -1;
          this.forked = false;
          this.place(ts[i] ?? 0, tc, k, -1, "fork");
          this.cpu = tc;
          break;
        }
        case Kind.Migrate: {
          const d = c.destCpu[i] ?? -1;
          const oc = c.origCpu[i] ?? -1;
          const cause: MigrationCause = this.waking ? "wakeup" : this.forked ? "fork" : "balance";
          this.place(ts[i] ?? 0, d, k, oc >= 0 ? oc : this.cpu, cause);
          this.cpu = d;
          break;
        }
        case Kind.Exit:
          this.exited = true;
          break;
        case Kind.Exec: {
          const op = c.oldPid[i] ?? -1;
          // a non-leader thread took this pid: the task now runs where the exec ran
          if (op >= 0 && op !== P) {
            this.cpu = cpu[i] ?? this.cpu;
            this.running = true;
            this.exited = false;
          }
          break;
        }
        default:
          break;
      }
    }
  }

  private nameFrom(col: EventColumns["comm"], i: number): void {
    const s = str(col, i);
    if (s !== null) this.comm = s;
  }
}
