/**
 * The sentence the "Placement state" view says about the selected task (pure, so Vitest checks it).
 * GET state leaves out tasks that exited before t (docs/api.md), so a pid the replay does not know
 * is "not alive at this time" (not seen yet, or exited before) whenever the seed left some out, and
 * "has not appeared yet" only when nothing was left out.
 */
import type { CpuTopoIndex } from "../../viz/colors";
import { TaskState, TASK_STATE_NAMES, type ReplayState } from "../../viz/replay";

export function selectedSentence(st: ReplayState, pid: number, idx: CpuTopoIndex | null): string {
  const t = st.tasks.get(pid);
  if (!t) {
    return st.deadLeftOut > 0
      ? `Selected task ${pid} is not alive at this time (not seen yet, or it had exited).`
      : `Selected task ${pid} has not appeared yet.`;
  }
  const where =
    t.cpu < 0
      ? null
      : `CPU ${t.cpu} (LLC ${fmt(idx?.llc[t.cpu] ?? -1)}, node ${fmt(idx?.node[t.cpu] ?? -1)})`;
  if (t.state === TaskState.Dead) {
    return `Selected task ${t.pid} ${t.comm} is not alive at this time: it had exited${where === null ? "" : `, last on ${where}`}.`;
  }
  const state = TASK_STATE_NAMES[t.state] ?? "?";
  if (where === null) return `Selected task ${t.pid} ${t.comm} is not on a CPU yet (${state}).`;
  return `Selected task ${t.pid} ${t.comm} is on ${where}. State: ${state}.`;
}

function fmt(n: number): string {
  return n < 0 ? "unknown" : String(n);
}
