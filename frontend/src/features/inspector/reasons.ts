/**
 * The simulator's reasons in a task's path (GET tasks/{pid}/path: a simulated run's wakeups, forks
 * and balancing moves carry `reason`, a captured trace's never): the reasons by count, and the placement that
 * put the task where it is at the playhead, with its waker for a wakeup (any recording's: the CPU of
 * its sched_waking and the task running there), and the task's wakeups by where their waker ran.
 * Pure, for the inspector and its tests.
 */
import type { TaskPlacement, Topology } from "../../client/types";

/** "wake_affine_idle: prev idle -> target idle": path and pick as the decision counts print them. */
export function reasonText(p: TaskPlacement): string | null {
  return p.reason ? `${p.reason.path} -> ${p.reason.pick}` : null;
}

export interface ReasonCount {
  /** "wakeup", "fork" (a wakeup_new placement) or "balance" (a balancing move) */
  kind: string;
  text: string;
  count: number;
}

/** The placements' reasons, most frequent first (ties by kind, then text: stable). */
export function reasonCounts(placements: TaskPlacement[]): ReasonCount[] {
  const m = new Map<string, ReasonCount>();
  for (const p of placements) {
    const text = reasonText(p);
    if (text === null) continue;
    const kind = p.kind === "wakeup_new" ? "fork" : p.kind === "migrate" ? "balance" : p.kind;
    const k = `${kind}\u0000${text}`;
    const got = m.get(k);
    if (got) got.count += 1;
    else m.set(k, { kind, text, count: 1 });
  }
  return [...m.values()].sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind) || a.text.localeCompare(b.text));
}

/** The task's last placement at or before `tNs` (placements in event order), the one that put it
 * where it is then; null before the first. At one instant a moving wakeup's migrate comes before
 * its wakeup, so the wakeup, which carries the reason, is the one found. */
export function placementAt(placements: TaskPlacement[], tNs: number): TaskPlacement | null {
  let lo = 0;
  let hi = placements.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((placements[mid]?.ts_ns ?? 0) <= tNs) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 ? (placements[lo - 1] ?? null) : null;
}

/** A wakeup's waker as the path gives it: the CPU its sched_waking ran on, the task running there
 * (pid 0: an interrupt on an idle CPU) and whether that CPU shares the LLC the task woke in (null
 * where the topology does not say). */
export interface Waker {
  cpu: number;
  pid: number | null;
  comm: string | null;
  sameLlc: boolean | null;
}

/** The placement's waker; null for a placement that is not a wakeup's, or a wakeup whose
 * sched_waking the recording does not have. */
export function wakerOf(p: TaskPlacement, topo: Topology | null): Waker | null {
  if (p.waker_cpu == null) return null;
  const llc = topo?.cpus.find((c) => c.cpu === p.waker_cpu)?.llc ?? null;
  return { cpu: p.waker_cpu, pid: p.waker_pid ?? null, comm: p.waker_comm ?? null, sameLlc: llc === null || p.llc == null ? null : llc === p.llc };
}

/** A task's wakeups by where their waker ran, counted over its path (each wakeup's waker_class, as
 * the recording's whole-run counts class every wakeup). */
export interface TaskWakers {
  wakeups: number;
  /** waker in another LLC than the CPU the task last ran on, and of those where it woke */
  cross: number;
  pulled: number;
  kept: number;
  neither: number;
  /** of the wakeups whose waker is known (its LLC or another), how many on the waker's very CPU */
  known: number;
  onWakerCpu: number;
  stillRunning: number;
  unknown: number;
}

/** The task's wakeups by their waker; null when the path has no wakeup, or its recording was stored
 * before wakeups were classed (no wakeup has a class). */
export function taskWakers(placements: TaskPlacement[]): TaskWakers | null {
  const w: TaskWakers = { wakeups: 0, cross: 0, pulled: 0, kept: 0, neither: 0, known: 0, onWakerCpu: 0, stillRunning: 0, unknown: 0 };
  for (const p of placements) {
    if (p.kind !== "wakeup" || p.waker_class == null) continue;
    w.wakeups += 1;
    const c = p.waker_class;
    if (c === "still_running") w.stillRunning += 1;
    else if (c === "unknown") w.unknown += 1;
    else {
      w.known += 1;
      if (p.waker_cpu === p.cpu) w.onWakerCpu += 1;
      if (c !== "shared_llc") {
        w.cross += 1;
        if (c === "to_waker_llc") w.pulled += 1;
        else if (c === "to_prev_llc") w.kept += 1;
        else w.neither += 1;
      }
    }
  }
  return w.wakeups > 0 ? w : null;
}
