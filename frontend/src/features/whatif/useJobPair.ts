/**
 * A simulator job and, beside it, its baseline (the same scenario without the changes), submitted
 * together and polled until both have ended. Shared by the what-if replay and the simulate form,
 * with the poll itself (usePoller), which the simulate form's further seeds use too.
 */
import { useEffect, useRef, useState } from "react";
import { api } from "../../client/http";
import type { SimJob } from "../../client/types";

const POLL_MS = 300;

export function jobEnded(j: SimJob | null): boolean {
  return j !== null && (j.status === "done" || j.status === "failed" || j.status === "cancelled");
}

export interface JobPair {
  job: SimJob | null;
  base: SimJob | null;
  err: string | null;
  /** Submit `scenario` (saved) and `baseline` (when not null; saved when `saveBase`); `onDone` runs
   * once when the main job is done. */
  submit: (scenario: Record<string, unknown>, baseline: Record<string, unknown> | null, saveBase: boolean, onDone?: (j: SimJob) => void) => Promise<void>;
}

/** Why a request failed, as text. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export interface Poller {
  /** Poll `fetch` every `ms` (replacing any poll running) until `take` says everything has ended,
   * or a fetch fails (then `fail`). */
  start: <T>(ms: number, fetch: () => Promise<T>, take: (got: T) => boolean, fail: (e: unknown) => void) => void;
  stop: () => void;
}

/** One interval poll, stopped when the component unmounts. */
export function usePoller(): Poller {
  const poll = useRef<ReturnType<typeof setInterval> | null>(null);
  const stop = () => {
    if (poll.current) clearInterval(poll.current);
    poll.current = null;
  };
  useEffect(() => stop, []);
  const start: Poller["start"] = (ms, fetch, take, fail) => {
    stop();
    poll.current = setInterval(() => {
      void fetch().then(
        (got) => {
          if (take(got)) stop();
        },
        (e: unknown) => {
          stop();
          fail(e);
        },
      );
    }, ms);
  };
  return { start, stop };
}

export function useJobPair(): JobPair {
  const [job, setJob] = useState<SimJob | null>(null);
  const [base, setBase] = useState<SimJob | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const { start, stop } = usePoller();

  const submit: JobPair["submit"] = async (scenario, baseline, saveBase, onDone) => {
    stop();
    setErr(null);
    setJob(null);
    setBase(null);
    try {
      const created = await api.submitSimJob(scenario, true);
      const b = baseline ? await api.submitSimJob(baseline, saveBase) : null;
      let done = false;
      start(
        POLL_MS,
        () => Promise.all([api.simJob(created.job_id), b ? api.simJob(b.job_id) : Promise.resolve(null)]),
        ([j, bj]) => {
          setJob(j);
          setBase(bj);
          if (j.status === "done" && !done) {
            done = true;
            onDone?.(j);
          }
          return jobEnded(j) && (b === null || jobEnded(bj));
        },
        (e) => { setErr(errorText(e)); },
      );
    } catch (e) {
      setErr(errorText(e));
    }
  };
  return { job, base, err, submit };
}
