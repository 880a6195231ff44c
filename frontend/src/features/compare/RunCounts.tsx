/**
 * The open recording's whole-run numbers when nothing is beside it: the rows the comparison's table
 * has (migrations by level and cause, wakeups, the run-queue delay after a wakeup, CPU busy and the
 * LLCs that carry it, switches, what was lost), one column, from its own GET metrics and topology (a
 * simulated run's own metric is in the recording's header). In a panel above the inspector that can
 * be closed. Every value is text.
 */
import { compareRows, formatValue, rowClass } from "./counts";
import { usePlayerMetrics } from "./usePlayerMetrics";
import type { Player } from "../engine/player";

export function RunCounts({ player }: { player: Player }) {
  const m = usePlayerMetrics(player);
  if (m === "error") return <p className="small warn" data-testid="run-counts-error">the recording's counts could not be loaded</p>;
  if (m === null) return <p className="small muted">counting…</p>;
  return (
    <details className="panel run-counts" open data-testid="run-counts">
      <summary>whole run</summary>
      <table className="llc-table compare-counts">
        <tbody>
          {compareRows(m, m, player.topo, player.topo).map((r) => (
            <tr key={r.key} data-key={r.key} className={rowClass(r)}>
              <th scope="row" title={r.hint}>
                {r.label}
              </th>
              <td>{formatValue(r.a, r.unit)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
