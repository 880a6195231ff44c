/**
 * The comparison's table: both recordings' whole-run counts (the GET metrics each Player loads) side by side,
 * (left: the open recording, right: the one beside it) with the right one's change; or, switched, the counts
 * the overview's bins give up to each one's playhead (the right follows the left from its start), to watch
 * where the runs part (the mode is in the URL: &counts=playhead). Under the whole run's table, both runs'
 * wakeups by LLC pair on one colour scale (LlcPairs). Two simulated runs of the same metric
 * open the whole run's table with it (simMetric.ts). Every count is text (the heatmap's in its tooltips and its name).
 */
import type { ReactNode } from "react";
import { formatDuration } from "../../viz/time";
import type { Player } from "../engine/player";
import { usePlayerOverview, usePlayerSnapshot } from "../engine/usePlayer";
import { compareRows, formatChange, formatValue, rowClass, rowsUpTo, type CountRow } from "./counts";
import { LlcPairs } from "./LlcPairs";
import { simMetricRow, type SimMetricRow } from "./simMetric";
import { usePlayerMetrics } from "./usePlayerMetrics";


export function CompareCounts({ a: pa, b: pb, upTo, setUpTo, onSelect }: { a: Player; b: Player; upTo: boolean; setUpTo: (v: boolean) => void; onSelect: (pid: number) => void }) {
  const a = usePlayerMetrics(pa);
  const b = usePlayerMetrics(pb);
  // (the overviews may arrive after the metrics: the playhead mode waits for them)
  const ova = usePlayerOverview(pa);
  const ovb = usePlayerOverview(pb);
  if (a === "error" || b === "error") return <p className="small warn" data-testid="compare-counts-error">the counts could not be loaded</p>;
  if (a === null || b === null) return <p className="small muted">counting…</p>;
  const toggle = () => { setUpTo(!upTo); };
  if (upTo && (ova === "error" || ovb === "error"))
    return (
      <p className="small warn" data-testid="compare-counts-error">
        the counts up to the playhead could not be loaded (no overview){" "}
        <button type="button" className="linkish" onClick={toggle}>whole run</button>
      </p>
    );
  if (upTo && (ova === null || ovb === null)) return <p className="small muted" data-testid="compare-counts-waiting">counting up to the playhead…</p>;
  // only the playhead mode follows the players' snapshots (the whole run's table does not re-render during playback)
  if (upTo) return <PlayheadCounts a={pa} b={pb} toggle={toggle} />;
  const metric = simMetricRow(pa.rec?.sim_metric, pb.rec?.sim_metric);
  return (
    <>
      <CountsTable a={pa} b={pb} rows={compareRows(a, b, pa.topo, pb.topo)} caption="whole run" upTo={false} toggle={toggle} metric={metric} />
      <LlcPairs
        key={`${pa.recId}/${pb.recId}`}
        sides={[
          { label: "left", recId: pa.recId, metrics: a, topo: pa.topo, onSelect },
          { label: "right", recId: pb.recId, metrics: b, topo: pb.topo },
        ]}
      />
    </>
  );
}

function PlayheadCounts({ a: pa, b: pb, toggle }: { a: Player; b: Player; toggle: () => void }) {
  const snapA = usePlayerSnapshot(pa);
  const snapB = usePlayerSnapshot(pb);
  if (!pa.overview || !pb.overview) return null;
  const rows = rowsUpTo(pa.overview, snapA.playhead, pb.overview, snapB.playhead);
  const caption = `up to +${formatDuration(snapA.playhead - pa.tStart)} (to the end of its ${formatDuration(pa.overview.bin_ns)} overview bin)`;
  return <CountsTable a={pa} b={pb} rows={rows} caption={caption} upTo toggle={toggle} />;
}

function CountsTable({ a: pa, b: pb, rows, caption, upTo, toggle, metric = null }: { a: Player; b: Player; rows: CountRow[]; caption: string; upTo: boolean; toggle: () => void; metric?: SimMetricRow | null }) {
  const aName = pa.rec?.name ?? "";
  const bName = pb.rec?.name ?? "";
  return (
    <table className="llc-table compare-counts" data-testid="compare-counts" data-mode={upTo ? "playhead" : "run"}>
      <CountsCaption testId="compare-counts-caption" caption={caption} upTo={upTo} toggle={toggle} />
      <thead>
        <tr>
          <th scope="col" />
          <th scope="col" title={aName}>left</th>
          <th scope="col" title={bName}>right</th>
          <th scope="col">change</th>
        </tr>
      </thead>
      <tbody>
        {metric && (
          <tr data-key="sim-metric" data-testid="compare-sim-metric" className="sim-metric">
            <th scope="row">
              <span className="mono">{metric.name}</span> <span className="small">({metric.better} is better)</span>
            </th>
            <td>{metric.a}</td>
            <td>{metric.b}</td>
            <td className="change">
              {metric.change}
              {metric.verdict !== null && <div className="small">{metric.verdict}</div>}
            </td>
          </tr>
        )}
        {rows.map((r) => (
          <CountTr key={r.key} row={r}>
            <td>{formatValue(r.a, r.unit)}</td>
            <td>{formatValue(r.b, r.unit)}</td>
            <td>{formatChange(r.a, r.b, r.unit)}</td>
          </CountTr>
        ))}
      </tbody>
    </table>
  );
}

/** A count table's caption: what it counts, and the button that switches between the whole run
 * and the counts up to the playhead (the comparison's and the one recording's tables). */
export function CountsCaption({ testId, caption, upTo, toggle }: { testId: string; caption: string; upTo: boolean; toggle: () => void }) {
  return (
    <caption className="small">
      <span data-testid={testId}>{caption}</span>{" "}
      <button type="button" className="linkish" aria-pressed={upTo} onClick={toggle}>
        {upTo ? "whole run" : "up to the playhead"}
      </button>
    </caption>
  );
}

/** A count table's row: its header (what it counts on hover), indented as a part, then `children`,
 * its values (the comparison's and the one recording's tables). */
export function CountTr({ row: r, children }: { row: CountRow; children: ReactNode }) {
  return (
    <tr data-key={r.key} className={rowClass(r)}>
      <th scope="row" title={r.hint}>
        {r.label}
      </th>
      {children}
    </tr>
  );
}
