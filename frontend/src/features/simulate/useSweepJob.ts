/**
 * The simulate form's sweep job: submitted unsaved after the saved pair (POST /api/sim/jobs with
 * `sweep`), polled until it ends. A new submission cancels the one before when it has not ended,
 * so that clicking again does not leave it holding the server's worker.
 */
import { useRef, useState } from "react";
import { api } from "../../client/http";
import type { SimJob, SimSweepSpec } from "../../client/types";
import { errorText, jobEnded, usePoller } from "../whatif/useJobPair";

const POLL_MS = 500;

export interface SweepJob {
  job: SimJob | null;
  err: string | null;
  /** Submit the sweep (replacing the last one); null clears. */
  submit: (scenario: Record<string, unknown>, spec: SimSweepSpec | null) => Promise<void>;
  /** Cancel the sweep running (its runs so far are lost: a sweep stores its result only once done). */
  stop: () => Promise<void>;
}

export function useSweepJob(): SweepJob {
  const [job, setJob] = useState<SimJob | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const live = useRef<string | null>(null); // the last sweep's id until it is seen ended
  const { start, stop } = usePoller();

  const submit: SweepJob["submit"] = async (scenario, spec) => {
    stop();
    setErr(null);
    setJob(null);
    const stale = live.current;
    live.current = null;
    if (stale !== null) await api.cancelSimJob(stale).catch(() => undefined); // ended meanwhile: no matter
    if (spec === null) return;
    try {
      const created = await api.submitSimJob(scenario, false, spec);
      live.current = created.job_id;
      start(
        POLL_MS,
        () => api.simJob(created.job_id),
        (got) => {
          setJob(got);
          if (!jobEnded(got)) return false;
          live.current = null;
          return true;
        },
        (e) => { setErr(errorText(e)); },
      );
    } catch (e) {
      setErr(errorText(e));
    }
  };
  return { job, err, submit, stop: () => submit({}, null) };
}
