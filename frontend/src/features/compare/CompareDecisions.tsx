/**
 * The comparison's reasons: why each simulated run placed its tasks where it did, reason by reason (GET
 * decisions of each recording), as shares of that run's wakeups, forks and balance attempts, with the
 * right one's change in percentage points. A captured trace has none (the kernel does not say why); with
 * neither side simulated the panel is not shown. Every value is text.
 */
import { useEffect, useState } from "react";
import { ApiError, api } from "../../client/http";
import type { SimDecisions } from "../../client/types";
import type { Player } from "../engine/player";
import { formatChange, formatValue } from "./counts";
import { KINDS, reasonTable } from "./decisions";

type Side = SimDecisions | "none" | "error" | null;

function useDecisions(recId: string | null): Side {
  // the answer is kept with the recording it is for: another recording reads as still loading
  const [got, setGot] = useState<{ id: string; d: Side } | null>(null);
  useEffect(() => {
    if (!recId) return;
    const ctl = new AbortController();
    api.decisions(recId, ctl.signal).then(
      (d) => { setGot({ id: recId, d }); },
      (e: unknown) => {
        if (ctl.signal.aborted) return;
        setGot({ id: recId, d: e instanceof ApiError && e.status === 404 ? "none" : "error" });
      },
    );
    return () => { ctl.abort(); };
  }, [recId]);
  return got !== null && got.id === recId ? got.d : null;
}

/** Why a side has no reasons: a capture never has them; a run simulated before they were kept lacks them. */
function noReasons(p: Player): string {
  return p.rec?.source === "simulated" ? "simulated before decisions were kept (run it again to see them)" : "a captured trace; the kernel does not say why";
}

export function CompareDecisions({ a: pa, b: pb }: { a: Player; b: Player }) {
  const a = useDecisions(pa.recId);
  const b = useDecisions(pb.recId);
  if (a === null || b === null) return null;
  if (a === "error" || b === "error") return <p className="small warn" data-testid="compare-decisions-error">the reasons could not be loaded</p>;
  if (a === "none" && b === "none") return null;
  const da = a === "none" ? null : a;
  const db = b === "none" ? null : b;
  return (
    <details open className="compare-decisions" data-testid="compare-decisions">
      <summary className="small">why: the decisions by reason</summary>
      {da === null && <p className="small muted">left: {noReasons(pa)}</p>}
      {db === null && <p className="small muted">right: {noReasons(pb)}</p>}
      {KINDS.map(({ kind, title }) => {
        const t = reasonTable(da, db, kind);
        if (t.rows.length === 0) return null;
        return (
          <table key={kind} className="llc-table compare-counts reasons" data-kind={kind}>
            <caption className="small">
              {title}: {t.aTotal === null ? "–" : t.aTotal.toLocaleString("en-US")} left, {t.bTotal === null ? "–" : t.bTotal.toLocaleString("en-US")} right
            </caption>
            <thead>
              <tr>
                <th scope="col" />
                <th scope="col">left</th>
                <th scope="col">right</th>
                <th scope="col">change</th>
              </tr>
            </thead>
            <tbody>
              {t.rows.map((r) => (
                <tr key={r.key} data-key={r.key}>
                  <th scope="row" className="reason">{r.label}</th>
                  <td title={r.a === null ? undefined : `${r.a.toLocaleString("en-US")} decisions`}>{formatValue(r.aShare, "fraction")}</td>
                  <td title={r.b === null ? undefined : `${r.b.toLocaleString("en-US")} decisions`}>{formatValue(r.bShare, "fraction")}</td>
                  <td>{formatChange(r.aShare, r.bShare, "fraction")}</td>
                </tr>
              ))}
              {t.more > 0 && (
                <tr className="part">
                  <th scope="row" className="reason muted">{t.more} more reasons</th>
                  <td colSpan={3} />
                </tr>
              )}
            </tbody>
          </table>
        );
      })}
    </details>
  );
}
