import { describe, expect, it } from "vitest";
import { ReplayState, TaskState } from "../../viz/replay";
import { selectedSentence } from "./selectedSentence";

const idx = { core: Int32Array.from([0, 1]), llc: Int32Array.from([0, 0]), node: Int32Array.from([0, 0]) };

function seeded(deadTasks: number): ReplayState {
  return ReplayState.fromPlacementState(
    {
      t_ns: 5,
      event_index: 3,
      cpus: [{ cpu: 0, running_pid: 0, running_comm: null, runnable: 0 }],
      tasks: [{ pid: 12, comm: "hackbench", cpu: 1, state: "running" }],
      dead_tasks: deadTasks,
      llcs: [{ llc: 0, tasks: 1, runnable: 1, running: 1 }],
    },
    2,
    1,
  );
}

describe("selectedSentence", () => {
  it("says a live task's CPU, LLC, node and state", () => {
    expect(selectedSentence(seeded(0), 12, idx)).toBe("Selected task 12 hackbench is on CPU 1 (LLC 0, node 0). State: running.");
  });

  it("does not claim 'not appeared yet' for a pid that may have exited before t", () => {
    expect(selectedSentence(seeded(3), 99, idx)).toBe("Selected task 99 is not alive at this time (not seen yet, or it had exited).");
    expect(selectedSentence(seeded(0), 99, idx)).toBe("Selected task 99 has not appeared yet.");
  });

  it("says an exited task is not alive, and where it last ran", () => {
    const st = seeded(0);
    st.setTask(40, 0, TaskState.Dead, "worker");
    expect(selectedSentence(st, 40, idx)).toBe("Selected task 40 worker is not alive at this time: it had exited, last on CPU 0 (LLC 0, node 0).");
    st.setTask(41, -1, TaskState.Dead, "w2");
    expect(selectedSentence(st, 41, idx)).toBe("Selected task 41 w2 is not alive at this time: it had exited.");
  });
});
