/**
 * The comparison's table: both recordings' whole-run counts (GET metrics of each) side by side,
 * (left: the open recording, right: the one beside it) with the right one's change. Every value is text.
 */
import { useEffect, useState } from "react";
import { api } from "../../client/http";
import type { Metrics } from "../../client/types";
import { compareRows, formatChange, formatValue } from "./counts";

function useMetrics(recId: string): Metrics | null | "error" {
  // keyed by id, so a stale answer for another recording reads as still loading
  const [got, setGot] = useState<{ id: string; m: Metrics | "error" } | null>(null);
  useEffect(() => {
    const ctl = new AbortController();
    api.metrics(recId, ctl.signal).then(
      (m) => {
        setGot({ id: recId, m });
      },
      () => {
        if (!ctl.signal.aborted) setGot({ id: recId, m: "error" });
      },
    );
    return () => {
      ctl.abort();
    };
  }, [recId]);
  return got !== null && got.id === recId ? got.m : null;
}

export function CompareCounts({ aId, bId, aName, bName }: { aId: string; bId: string; aName: string; bName: string }) {
  const a = useMetrics(aId);
  const b = useMetrics(bId);
  if (a === "error" || b === "error") return <p className="small warn" data-testid="compare-counts-error">the counts could not be loaded</p>;
  if (a === null || b === null) return <p className="small muted">counting…</p>;
  return (
    <table className="llc-table compare-counts" data-testid="compare-counts">
      <caption className="small">whole run</caption>
      <thead>
        <tr>
          <th scope="col" />
          <th scope="col" title={aName}>left</th>
          <th scope="col" title={bName}>right</th>
          <th scope="col">change</th>
        </tr>
      </thead>
      <tbody>
        {compareRows(a, b).map((r) => (
          <tr key={r.key} data-key={r.key} className={r.part ? "part" : undefined}>
            <th scope="row">{r.label}</th>
            <td>{formatValue(r.a, r.unit)}</td>
            <td>{formatValue(r.b, r.unit)}</td>
            <td>{formatChange(r.a, r.b, r.unit)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
