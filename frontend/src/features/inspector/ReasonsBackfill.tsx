/**
 * Under a simulated run's task path when no placement has a reason: the run was saved before runs
 * kept them (session 26). Offers to work them out: POST /api/recordings/{id}/reasons starts a job
 * that reruns the run's saved scenario (seeded and deterministic: the same run), checks that the
 * rerun is the saved run, and stores the reasons; polled here, and when done the path is read
 * again (onKept). A rerun that differs (the simulator has changed since) fails, saying what differs.
 */
import { useState } from "react";
import { api } from "../../client/http";
import type { SimJob } from "../../client/types";
import { errorText, usePoller } from "../whatif/useJobPair";

export function ReasonsBackfill({ recId, onKept }: { recId: string; onKept: () => void }) {
  const [job, setJob] = useState<SimJob | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const { start } = usePoller();
  const running = job !== null && (job.status === "queued" || job.status === "running");

  const run = async () => {
    setErr(null);
    try {
      const created = await api.workOutReasons(recId);
      start(
        400,
        () => api.simJob(created.job_id),
        (j) => {
          setJob(j);
          const ended = j.status !== "queued" && j.status !== "running";
          if (j.status === "done") onKept();
          return ended;
        },
        (e) => { setErr(errorText(e)); },
      );
    } catch (e) {
      setErr(errorText(e));
    }
  };

  return (
    <div className="placement-why small" data-testid="reasons-backfill">
      <span className="muted">this run was saved before placement reasons were kept</span>{" "}
      <button type="button" className="linkish" disabled={running} onClick={() => { void run(); }} title="rerun its saved scenario (the same run: seeded and deterministic), check it is the saved run, and keep each placement's reason">
        work them out
      </button>
      {running && <progress max={1} value={job.progress} aria-label="reasons progress" data-testid="reasons-progress" />}
      {job?.status === "failed" && <div className="error" data-testid="reasons-error">{job.error?.message ?? "the job failed"}</div>}
      {err !== null && <div className="error" data-testid="reasons-error">{err}</div>}
    </div>
  );
}
