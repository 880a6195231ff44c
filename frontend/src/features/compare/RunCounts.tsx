/**
 * The open recording's numbers when nothing is beside it: the rows the comparison's table has
 * (migrations by level and cause, wakeups by level and by where their waker ran, the run-queue delay
 * after a wakeup, CPU busy and the LLCs that carry it, switches, what was lost), one column, from its
 * own GET metrics and topology, and under them its wakeups by LLC pair (LlcPairs) (a simulated run's own metric is in the recording's header); or,
 * switched as the comparison's table is (&counts=playhead), the rows its overview's bins give up to
 * the playhead, following playback. In a panel above the inspector that can be closed. Every count
 * is text (the heatmap's in its tooltips and its name).
 */
import { formatDuration } from "../../viz/time";
import type { Player } from "../engine/player";
import { usePlayerOverview, usePlayerSnapshot } from "../engine/usePlayer";
import { CountsCaption, CountTr } from "./CompareCounts";
import { compareRows, formatValue, rowsUpTo, type CountRow } from "./counts";
import { LlcPairs } from "./LlcPairs";
import { usePlayerMetrics } from "./usePlayerMetrics";

export function RunCounts({ player, upTo, setUpTo, onSelect }: { player: Player; upTo: boolean; setUpTo: (v: boolean) => void; onSelect: (pid: number) => void }) {
  const m = usePlayerMetrics(player);
  const ov = usePlayerOverview(player);
  const toggle = () => { setUpTo(!upTo); };
  // (the playhead mode needs only the overview: it does not wait for the metrics)
  if (!upTo && m === "error") return <p className="small warn" data-testid="run-counts-error">the recording's counts could not be loaded</p>;
  if (!upTo && m === null) return <p className="small muted">counting…</p>;
  let body;
  if (!upTo)
    body = m !== null && m !== "error" && (
      <>
        <RunTable rows={compareRows(m, m, player.topo, player.topo)} caption="" upTo={false} toggle={toggle} />
        <LlcPairs key={player.recId} sides={[{ label: null, recId: player.recId, metrics: m, topo: player.topo, onSelect }]} />
      </>
    );
  else if (ov === "error")
    body = (
      <p className="small warn" data-testid="run-counts-error">
        the counts up to the playhead could not be loaded (no overview){" "}
        <button type="button" className="linkish" onClick={toggle}>whole run</button>
      </p>
    );
  else if (ov === null) body = <p className="small muted">counting up to the playhead…</p>;
  else body = <PlayheadRun player={player} toggle={toggle} />;
  return (
    <details className="panel run-counts" open data-testid="run-counts">
      <summary>{upTo ? "up to the playhead" : "whole run"}</summary>
      {body}
    </details>
  );
}

/** Follows the player's snapshots (the whole run's table does not re-render during playback). */
function PlayheadRun({ player, toggle }: { player: Player; toggle: () => void }) {
  const snap = usePlayerSnapshot(player);
  const ov = player.overview;
  if (!ov) return null;
  const rows = rowsUpTo(ov, snap.playhead, ov, snap.playhead);
  const caption = `+${formatDuration(snap.playhead - player.tStart)} (to the end of its ${formatDuration(ov.bin_ns)} overview bin)`;
  return <RunTable rows={rows} caption={caption} upTo toggle={toggle} />;
}

function RunTable({ rows, caption, upTo, toggle }: { rows: CountRow[]; caption: string; upTo: boolean; toggle: () => void }) {
  return (
    <table className="llc-table compare-counts" data-mode={upTo ? "playhead" : "run"}>
      <CountsCaption testId="run-counts-caption" caption={caption} upTo={upTo} toggle={toggle} />
      <tbody>
        {rows.map((r) => (
          <CountTr key={r.key} row={r}>
            <td>{formatValue(r.a, r.unit)}</td>
          </CountTr>
        ))}
      </tbody>
    </table>
  );
}
