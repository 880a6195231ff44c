/**
 * The simulate form's further seeds: the same pair (scenario and baseline) on each seed after the
 * form's own, submitted unsaved after the saved pair and polled until every job has ended. A new
 * submission cancels the jobs of the one before that have not ended, so that clicking again does
 * not leave them filling the server's queue. Also each seed's pair as a result once it has ended.
 */
import { useRef, useState } from "react";
import { api } from "../../client/http";
import type { SimJob } from "../../client/types";
import { errorText, jobEnded, usePoller } from "../whatif/useJobPair";
import type { SeedPair, SeedResult } from "./scenario";

const POLL_MS = 500;

export interface SeedJobs {
  seed: number;
  job: SimJob | null;
  base: SimJob | null;
}

/** a seed's pair once both jobs have ended (null while one runs): both results, or why not */
export function seedResult(r: SeedJobs): SeedResult | null {
  const failed = [r.job, r.base].find((j) => j?.status === "failed" || j?.status === "cancelled");
  if (failed) return { seed: r.seed, failed: failed.error?.message ?? `the job was ${failed.status}` };
  if (r.job?.status !== "done" || r.base?.status !== "done" || !r.job.result || !r.base.result) return null;
  return { seed: r.seed, run: r.job.result, base: r.base.result };
}

export function seedResults(runs: SeedJobs[]): SeedResult[] {
  return runs.map(seedResult).filter((r): r is SeedResult => r !== null);
}

export interface SeedRuns {
  runs: SeedJobs[];
  err: string | null;
  /** Submit every pair (replacing the last submission's); [] clears. */
  submit: (pairs: SeedPair[]) => Promise<void>;
}

export function useSeedRuns(): SeedRuns {
  const [runs, setRuns] = useState<SeedJobs[]>([]);
  const [err, setErr] = useState<string | null>(null);
  const live = useRef<string[]>([]); // the last submission's job ids not seen ended yet
  const { start, stop } = usePoller();

  const submit: SeedRuns["submit"] = async (pairs) => {
    stop();
    setErr(null);
    setRuns([]);
    const stale = live.current;
    live.current = [];
    // (a job that has ended meanwhile is returned as it is; an unknown one is no matter here)
    await Promise.allSettled(stale.map((id) => api.cancelSimJob(id)));
    if (pairs.length === 0) return;
    try {
      const ids: { seed: number; job: string; base: string }[] = [];
      for (const p of pairs) {
        const j = await api.submitSimJob(p.scenario, false);
        live.current.push(j.job_id);
        const b = await api.submitSimJob(p.baseline, false);
        live.current.push(b.job_id);
        ids.push({ seed: p.seed, job: j.job_id, base: b.job_id });
      }
      setRuns(ids.map((x) => ({ seed: x.seed, job: null, base: null })));
      start(
        POLL_MS,
        () => Promise.all(ids.map(async (x) => ({ seed: x.seed, job: await api.simJob(x.job), base: await api.simJob(x.base) }))),
        (got) => {
          setRuns(got);
          live.current = got.flatMap((r) => [r.job, r.base]).filter((j) => !jobEnded(j)).map((j) => j.id);
          return got.every((r) => jobEnded(r.job) && jobEnded(r.base));
        },
        (e) => { setErr(errorText(e)); },
      );
    } catch (e) {
      setErr(errorText(e));
    }
  };
  return { runs, err, submit };
}
