/**
 * The replay state machine (same rules as the backend's replay/): applies decoded event columns
 * forward from a server keyframe (GET state) to any time. Pure; no DOM, no fetch.
 *
 * Rules (backend/placemap/replay/kernel.py): wakeup_new / wakeup -> task on target_cpu, runnable
 * (a wakeup of a task still running where it is changes nothing; a dead task stays dead);
 * migrate -> task on dest_cpu (state kept); switch on cpu C: prev task on C, runnable if prev_state
 * starts with "R" (or is "0"), dead on "X"/"Z", else sleeping; next task on C, running, and C runs
 * next; fork -> child is new (CPU unknown); exit -> dead; exec with another old_pid -> the pid takes
 * the old thread's place. A task exists once an event names it (sleeping, CPU unknown); its comm is
 * the last name a row gave it. pid 0 is idle (never a task).
 * Per-CPU runnable counts are kept incrementally so a frame can read them without scanning tasks.
 */
import { Kind } from "../client/events";
import type { PlacementState, TaskStateName } from "../client/types";
import { str, type EventColumns } from "./columns";

export const TaskState = { Running: 0, Runnable: 1, Sleeping: 2, New: 3, Dead: 4 } as const;
export type TaskState = (typeof TaskState)[keyof typeof TaskState];
export const TASK_STATE_NAMES: readonly TaskStateName[] = ["running", "runnable", "sleeping", "new", "dead"];

/** running[] values besides a pid */
export const RUN_IDLE = 0;
export const RUN_UNKNOWN = -1;

export interface TaskRec {
  pid: number;
  comm: string;
  /** -1 while unknown. */
  cpu: number;
  state: TaskState;
}

export interface MigrationEvent {
  ts: number;
  pid: number;
  from: number;
  to: number;
}

function stateFromName(s: TaskStateName): TaskState {
  const i = TASK_STATE_NAMES.indexOf(s);
  return (i < 0 ? TaskState.Sleeping : i) as TaskState;
}

/** prev_state of a switch -> the state the previous task is left in. */
export function prevStateToTaskState(prev: string | null): TaskState {
  if (prev === null || prev.length === 0) return TaskState.Sleeping;
  const c = prev.charAt(0);
  if (c === "R" || prev === "0") return TaskState.Runnable;
  if (c === "X" || c === "Z") return TaskState.Dead;
  return TaskState.Sleeping;
}

export class ReplayState {
  readonly tasks = new Map<number, TaskRec>();
  /** running pid per CPU (0 = idle, -1 = unknown). */
  running: Int32Array;
  /** tasks waiting (runnable, not running) per CPU: the queue drawn on each cell. */
  runnable: Int32Array;
  /** last llc_util sample per LLC (NaN = none yet). */
  llcUtil: Float64Array;
  /** State includes every event with ts <= tNs. */
  tNs: number;
  lost = 0;
  /**
   * pid -> thread-group id, where a source recorded it (tgid is per cur_pid). Not part of GET
   * state, so a Player hands the same map from keyframe to keyframe to keep process colors stable.
   */
  tgids: Map<number, number> = new Map<number, number>();
  /**
   * Dead tasks the seeding GET state left out (its dead_tasks). A pid not in `tasks` may then be
   * one of them, so "unknown pid" is not "not appeared yet". Replay needs no more than this: an
   * event naming a left-out pid later is a late switch-out with prev_state X/Z (dead again) or a
   * fork reusing the pid (a new task), both of which a fresh record gets right.
   */
  deadLeftOut = 0;

  constructor(nCpus: number, nLlcs: number, tNs: number) {
    this.running = new Int32Array(Math.max(1, nCpus)).fill(RUN_UNKNOWN);
    this.runnable = new Int32Array(Math.max(1, nCpus));
    this.llcUtil = new Float64Array(Math.max(1, nLlcs)).fill(NaN);
    this.tNs = tNs;
  }

  /** Rebuild from a server keyframe. */
  static fromPlacementState(ps: PlacementState, nCpus: number, nLlcs: number): ReplayState {
    let maxCpu = nCpus - 1;
    for (const c of ps.cpus) maxCpu = Math.max(maxCpu, c.cpu);
    for (const t of ps.tasks) if (t.cpu !== null) maxCpu = Math.max(maxCpu, t.cpu);
    const r = new ReplayState(maxCpu + 1, nLlcs, ps.t_ns);
    for (const t of ps.tasks) {
      if (t.pid === 0) continue;
      r.setTask(t.pid, t.cpu ?? -1, stateFromName(t.state), t.comm);
    }
    for (const c of ps.cpus) {
      const rp = c.running_pid;
      r.running[c.cpu] = rp ?? RUN_UNKNOWN;
      // every task not listed is dead (GET state lists all others): one still running here has
      // exited and not yet switched out, and its final switch-out (prev_state S/D) must not revive it
      if (rp !== null && rp > 0 && !r.tasks.has(rp)) r.setTask(rp, c.cpu, TaskState.Dead, c.running_comm ?? "");
    }
    r.deadLeftOut = ps.dead_tasks;
    return r;
  }

  clone(): ReplayState {
    const r = new ReplayState(this.running.length, this.llcUtil.length, this.tNs);
    r.running.set(this.running);
    r.runnable.set(this.runnable);
    r.llcUtil.set(this.llcUtil);
    r.lost = this.lost;
    r.deadLeftOut = this.deadLeftOut;
    r.tgids = new Map(this.tgids);
    for (const [pid, t] of this.tasks) r.tasks.set(pid, { ...t });
    return r;
  }

  private ensureCpu(cpu: number): void {
    if (cpu < this.running.length) return;
    const n = Math.max(cpu + 1, this.running.length * 2);
    const run = new Int32Array(n).fill(RUN_UNKNOWN);
    run.set(this.running);
    const rq = new Int32Array(n);
    rq.set(this.runnable);
    this.running = run;
    this.runnable = rq;
  }

  /** Set a task's CPU and state, keeping runnable counts right. cpu -1 = unknown/unchanged. */
  setTask(pid: number, cpu: number, state: TaskState, comm: string | null): TaskRec | undefined {
    if (pid <= 0) return undefined;
    let t = this.tasks.get(pid);
    if (!t) {
      t = { pid, comm: comm ?? "", cpu: -1, state: TaskState.Sleeping };
      this.tasks.set(pid, t);
    } else if (t.state === TaskState.Runnable && t.cpu >= 0) {
      this.runnable[t.cpu] = (this.runnable[t.cpu] ?? 1) - 1;
    }
    if (comm !== null) t.comm = comm;
    if (cpu >= 0) {
      this.ensureCpu(cpu);
      t.cpu = cpu;
    }
    t.state = state;
    if (state === TaskState.Runnable && t.cpu >= 0) this.runnable[t.cpu] = (this.runnable[t.cpu] ?? 0) + 1;
    return t;
  }

  /** The task record of pid, created (sleeping, CPU unknown) when an event first names it. */
  private named(pid: number): TaskRec | undefined {
    if (pid <= 0) return undefined;
    let t = this.tasks.get(pid);
    if (!t) {
      t = { pid, comm: "", cpu: -1, state: TaskState.Sleeping };
      this.tasks.set(pid, t);
    }
    return t;
  }

  private setState(t: TaskRec, cpu: number, state: TaskState): void {
    if (t.state === TaskState.Runnable && t.cpu >= 0) this.runnable[t.cpu] = (this.runnable[t.cpu] ?? 1) - 1;
    if (cpu >= 0) this.ensureCpu(cpu);
    t.cpu = cpu;
    t.state = state;
    if (state === TaskState.Runnable && cpu >= 0) this.runnable[cpu] = (this.runnable[cpu] ?? 0) + 1;
  }

  /**
   * Apply rows [from, to) of cols, mirroring backend/placemap/replay/kernel.py. onMigrate is called
   * for every migrate that changes CPU (for animation). Returns the number of rows applied.
   */
  apply(cols: EventColumns, from: number, to: number, onMigrate?: (m: MigrationEvent) => void): number {
    const { kind, pid, cpu, ts } = cols;
    for (let i = from; i < to; i++) {
      const k = kind[i];
      const p = pid[i] ?? 0;
      const t = this.named(p);
      const np = cols.nextPid[i] ?? -1;
      const nt = this.named(np);
      const cp = cols.childPid[i] ?? -1;
      const ct = this.named(cp);
      const tg = cols.tgid[i] ?? -1;
      if (tg > 0) {
        const cp = cols.curPid[i] ?? 0;
        if (cp > 0) this.tgids.set(cp, tg);
      }
      switch (k) {
        case Kind.Switch: {
          const c = cpu[i] ?? -1;
          if (c < 0) break;
          this.ensureCpu(c);
          const occ = this.running[c] ?? RUN_UNKNOWN;
          if (occ > 0 && occ !== p) {
            // the switch that took `occ` off c is not in the trace (real captures have such holes):
            // it no longer runs here, and whether it slept or waits is unknown
            const ot = this.tasks.get(occ);
            if (ot && ot.state === TaskState.Running && ot.cpu === c) this.setState(ot, c, TaskState.Sleeping);
          }
          if (t) {
            const ps = prevStateToTaskState(str(cols.prevState, i));
            // a dead task stays dead (a late switch-out of an exited task does not revive it)
            const st = ps === TaskState.Sleeping && t.state === TaskState.Dead ? TaskState.Dead : ps;
            this.setState(t, c, st);
          }
          if (nt) {
            const old = nt.cpu;
            // we missed the switch that took it off `old`: that CPU's occupant is unknown
            if (old >= 0 && old !== c && this.running[old] === np) this.running[old] = RUN_UNKNOWN;
            this.setState(nt, c, TaskState.Running);
            this.running[c] = np;
          } else {
            this.running[c] = RUN_IDLE;
          }
          break;
        }
        case Kind.Waking:
          break;
        case Kind.Wakeup: {
          if (!t) break;
          const tc = cols.targetCpu[i] ?? -1;
          // a task woken before it switched out stays running where it is
          const runningHere = t.state === TaskState.Running && t.cpu >= 0 && this.running[t.cpu] === p;
          if (!runningHere) this.setState(t, tc, t.state === TaskState.Dead ? TaskState.Dead : TaskState.Runnable);
          break;
        }
        case Kind.WakeupNew:
          if (t) this.setState(t, cols.targetCpu[i] ?? -1, TaskState.Runnable);
          break;
        case Kind.Migrate: {
          if (!t) break;
          const dest = cols.destCpu[i] ?? -1;
          const oc = cols.origCpu[i] ?? -1;
          const orig = oc >= 0 ? oc : t.cpu;
          this.setState(t, dest, t.state);
          if (onMigrate && dest >= 0 && orig >= 0 && orig !== dest) onMigrate({ ts: ts[i] ?? 0, pid: p, from: orig, to: dest });
          break;
        }
        case Kind.Fork:
          if (ct) this.setState(ct, -1, TaskState.New);
          break;
        case Kind.Exit:
          if (t) this.setState(t, t.cpu, TaskState.Dead);
          break;
        case Kind.Exec: {
          const op = cols.oldPid[i] ?? -1;
          const ot = this.named(op);
          if (t && ot && ot !== t) {
            // a non-leader thread exec'd and took the leader's pid: the thread's pid is gone
            this.setState(t, ot.cpu, ot.state);
            if (ot.cpu >= 0 && this.running[ot.cpu] === op) this.running[ot.cpu] = p;
            this.setState(ot, ot.cpu, TaskState.Dead);
          }
          break;
        }
        case Kind.LlcUtil: {
          const l = cols.llc[i] ?? -1;
          const u = cols.util[i] ?? NaN;
          if (l >= 0 && l < this.llcUtil.length) this.llcUtil[l] = u;
          break;
        }
        case Kind.Lost: {
          const n = cols.lostEvents[i] ?? NaN;
          if (!Number.isNaN(n)) this.lost += n;
          break;
        }
        default:
          break;
      }
      // each task's comm = the last name a row gave it (subject, next of a switch, fork child)
      if (t) {
        const s = str(cols.comm, i);
        if (s !== null) t.comm = s;
      }
      if (nt) {
        const s = str(cols.nextComm, i);
        if (s !== null) nt.comm = s;
      }
      if (ct) {
        const s = str(cols.childComm, i);
        if (s !== null) ct.comm = s;
      }
    }
    if (to > from) this.tNs = Math.max(this.tNs, ts[to - 1] ?? this.tNs);
    return Math.max(0, to - from);
  }

  tgidOf(pid: number): number {
    return this.tgids.get(pid) ?? -1;
  }

  /** Comm of the task running on cpu ("" for idle / unknown). */
  runningComm(cpu: number): string {
    const p = this.running[cpu] ?? 0;
    if (p <= 0) return "";
    return this.tasks.get(p)?.comm ?? "";
  }

  /**
   * Per-LLC counts as the backend's GET state defines them: tasks = live tasks on the LLC's CPUs,
   * runnable = of those runnable or running, running = of those running.
   */
  llcCounts(cpuToLlc: ArrayLike<number>, nLlcs: number): { running: Int32Array; runnable: Int32Array; tasks: Int32Array } {
    const running = new Int32Array(nLlcs);
    const runnable = new Int32Array(nLlcs);
    const tasks = new Int32Array(nLlcs);
    for (const t of this.tasks.values()) {
      if (t.state === TaskState.Dead || t.cpu < 0) continue;
      const l = cpuToLlc[t.cpu] ?? -1;
      if (l < 0 || l >= nLlcs) continue;
      tasks[l] = (tasks[l] ?? 0) + 1;
      if (t.state === TaskState.Running || t.state === TaskState.Runnable) runnable[l] = (runnable[l] ?? 0) + 1;
      if (t.state === TaskState.Running) running[l] = (running[l] ?? 0) + 1;
    }
    return { running, runnable, tasks };
  }

  /**
   * Snapshot in the server's PlacementState shape (for tests and the text view), every task listed
   * as with include_dead=true (so dead_tasks is 0).
   */
  toPlacementState(cpuToLlc: ArrayLike<number>, nLlcs: number, eventIndex: number): PlacementState {
    const counts = this.llcCounts(cpuToLlc, nLlcs);
    // per CPU, like the backend: runnable counts tasks runnable or running there
    const active = new Int32Array(this.running.length);
    for (const t of this.tasks.values()) {
      if (t.cpu >= 0 && t.cpu < active.length && (t.state === TaskState.Running || t.state === TaskState.Runnable)) {
        active[t.cpu] = (active[t.cpu] ?? 0) + 1;
      }
    }
    const cpus: PlacementState["cpus"] = [];
    for (let c = 0; c < this.running.length; c++) {
      const rp = this.running[c] ?? RUN_UNKNOWN;
      cpus.push({
        cpu: c,
        running_pid: rp < 0 ? null : rp,
        running_comm: rp > 0 ? this.runningComm(c) : null,
        runnable: active[c] ?? 0,
      });
    }
    const tasks = [...this.tasks.values()]
      .sort((a, b) => a.pid - b.pid)
      .map((t) => ({ pid: t.pid, comm: t.comm, cpu: t.cpu < 0 ? null : t.cpu, state: TASK_STATE_NAMES[t.state] ?? "sleeping" }));
    const llcs = Array.from({ length: nLlcs }, (_, l) => ({
      llc: l,
      tasks: counts.tasks[l] ?? 0,
      runnable: counts.runnable[l] ?? 0,
      running: counts.running[l] ?? 0,
    }));
    return { t_ns: this.tNs, event_index: eventIndex, cpus, tasks, dead_tasks: 0, llcs };
  }
}
