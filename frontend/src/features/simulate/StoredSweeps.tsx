/**
 * The sweeps stored here, newest first (GET /api/sim/sweeps), under the Simulate form: each named by
 * what it ran (workload, machine, hints and features), along what and across which machines, opening its result in the
 * panel (as its link ?sweep=ID does), and each can be deleted (after a confirmation; its link then
 * opens nothing). Read when the panel opens, after each sweep ends and after a delete.
 */
import { useEffect, useState } from "react";
import { api } from "../../client/http";
import type { SweepSummary } from "../../client/types";
import { errorText } from "../whatif/useJobPair";

const SHOWN = 10;

function label(s: SweepSummary): string {
  // a toggle sweep ran each toggle instead of the scenario's own: those are not what it ran
  const changes = s.param === "toggle" ? [] : [...s.hints, ...Object.entries(s.features).map(([k, v]) => (v === false ? `NO_${k}` : v === true ? k : `${k}=${String(v)}`))];
  const along = s.param === "topology" ? "machines" : s.param === "toggle" ? "toggles" : s.param;
  return `${s.workload} on ${s.topology}${changes.length ? `, ${changes.join("+")}` : ""}: ${along} ${s.values.join(", ")}${s.across.length ? ` across ${s.across.join(", ")}` : ""}${s.calibrated ? " (as calibrate runs it)" : ""}`;
}

export function StoredSweeps({ refresh, current, onOpen, onDeleted }: { refresh: string | null; current: string | null; onOpen: (id: string) => void; onDeleted: (id: string) => void }) {
  const [list, setList] = useState<SweepSummary[] | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [gone, setGone] = useState(0); // deletes so far: each reads the list again
  const remove = (id: string) => {
    api.deleteSweep(id).then(
      () => {
        setConfirming(null);
        setGone((n) => n + 1);
        onDeleted(id);
      },
      (e: unknown) => { setErr(`delete failed: ${errorText(e)}`); },
    );
  };
  useEffect(() => {
    const ctl = new AbortController();
    api.sweeps(SHOWN, ctl.signal).then(
      (got) => { setList(got.sweeps); setErr(null); },
      (e: unknown) => { if (!ctl.signal.aborted) setErr(errorText(e)); },
    );
    return () => { ctl.abort(); };
  }, [refresh, gone]);
  if (err) return <div className="error small" data-testid="stored-sweeps-error">stored sweeps: {err}</div>;
  if (!list || list.length === 0) return null;
  return (
    <details className="small stored-sweeps" data-testid="stored-sweeps">
      <summary>stored sweeps ({list.length === SHOWN ? `the ${String(SHOWN)} newest` : String(list.length)})</summary>
      <ul>
        {list.map((s) => (
          <li key={s.id} data-id={s.id}>
            <span className="muted mono">{s.created_at.replace("T", " ").slice(0, 16)}</span>{" "}
            {s.id === current ? (
              <b>{label(s)}</b>
            ) : (
              <a href={`?${new URLSearchParams({ sweep: s.id }).toString()}`} onClick={(e) => { e.preventDefault(); onOpen(s.id); }}>
                {label(s)}
              </a>
            )}{" "}
            {confirming === s.id ? (
              <span role="group" aria-label="confirm deleting this sweep">
                delete it (its link will open nothing)?{" "}
                <button type="button" className="btn danger" onClick={() => { remove(s.id); }}>Delete</button>{" "}
                <button type="button" className="btn" onClick={() => { setConfirming(null); }}>Cancel</button>
              </span>
            ) : (
              <button type="button" className="linkish" title="delete this stored sweep" onClick={() => { setConfirming(s.id); }}>delete</button>
            )}
          </li>
        ))}
      </ul>
    </details>
  );
}
