/**
 * The comparison's table: both recordings' whole-run counts (the GET metrics each Player loads) side by side,
 * (left: the open recording, right: the one beside it) with the right one's change. Every value is text.
 */
import { useSyncExternalStore } from "react";
import type { Metrics } from "../../client/types";
import type { Player } from "../engine/player";
import { compareRows, formatChange, formatValue } from "./counts";

/** The player's own GET metrics (it fetches them as it loads), "error" when that failed. */
function usePlayerMetrics(player: Player): Metrics | null | "error" {
  return useSyncExternalStore(player.subscribe, () => player.metrics ?? (player.metricsFailed ? "error" : null));
}

export function CompareCounts({ a: pa, b: pb }: { a: Player; b: Player }) {
  const a = usePlayerMetrics(pa);
  const b = usePlayerMetrics(pb);
  const aName = pa.rec?.name ?? "";
  const bName = pb.rec?.name ?? "";
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
