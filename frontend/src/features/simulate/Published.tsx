/**
 * The published cells a finished Simulate pair reproduces, under its change: what the real kernel
 * did on the machine the preset models (a hint's pair: the RFC's tables; a feature change's: the
 * features' own published effects; served by POST /api/sim/published),
 * whether this run points the same way (on every seed, when it ran on several), and where the run
 * differs from the model's own run of the cell (with a button that sets the form to that run, to
 * simulate it instead). Shows nothing when there is nothing to say (a
 * hint's pair on a server without the tables); says why when none matches.
 */
import { useEffect, useState } from "react";
import { api } from "../../client/http";
import type { PublishedCell, SimPublished } from "../../client/types";
import { errorText } from "../whatif/useJobPair";
import { differsText, effectText, waysText, whereText } from "./published";

interface Props {
  /** the scenario as its job ran it */
  scenario: Record<string, unknown>;
  /** its job's id: the cells are fetched again for another job */
  jobId: string;
  /** the change, percent better than the baseline: the pair's, or each measured seed's */
  changes: number[];
  /** the changes are seeds' */
  seeds: boolean;
  /** set the form to the model's own run of a cell the run differs from */
  onUseModelRun: (cell: PublishedCell) => void;
}

export function Published({ scenario, jobId, changes, seeds, onUseModelRun }: Props) {
  // the answer for the job it was asked for: another job's is not shown while its own loads
  const [got, setGot] = useState<{ jobId: string; pub: SimPublished | null; err: string | null } | null>(null);
  useEffect(() => {
    const ctl = new AbortController();
    api.simPublished(scenario, ctl.signal).then(
      (pub) => { setGot({ jobId, pub, err: null }); },
      (e: unknown) => { if (!ctl.signal.aborted) setGot({ jobId, pub: null, err: errorText(e) }); },
    );
    return () => { ctl.abort(); };
    // the scenario is the job's: it changes only with the job
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [jobId]);
  const pub = got?.jobId === jobId ? got.pub : null;
  const err = got?.jobId === jobId ? got.err : null;

  if (err) return <div className="error small" data-testid="simulate-published-error">published tables: {err}</div>;
  if (!pub) return null;
  if (pub.cells.length === 0) {
    if (pub.reason === null) return null; // a hint's pair on a server without the tables
    return <div className="muted" data-testid="simulate-published-none">no published measurement to compare: {pub.reason}</div>;
  }
  return (
    <div className="published" data-testid="simulate-published">
      the real kernel, published:
      <ul className="seed-list">
        {pub.cells.map((c) => {
          const way = waysText(c, changes, seeds);
          const differs = differsText(c);
          return (
            <li key={`${c.section}|${c.benchmark}`} data-testid="simulate-published-cell" data-direction={way?.data ?? ""}>
              <b>{effectText(c)}</b>
              {way && (
                <>
                  {" — "}
                  <span className="published-way">{way.text}</span>
                </>
              )}
              <div className="muted">
                {whereText(c)}; published in {c.reference}
                {differs && `; ${differs}`}
                {differs && (
                  <button type="button" className="linkish" onClick={() => { onUseModelRun(c); }}>
                    set the form to that run
                  </button>
                )}
              </div>
            </li>
          );
        })}
      </ul>
    </div>
  );
}
