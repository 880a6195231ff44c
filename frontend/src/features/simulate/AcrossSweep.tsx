/**
 * A sweep across machines (sweep.across): one table of every value on every machine, the change
 * against that machine's baseline in each cell (coloured by its way beyond ±5%), the published
 * effect beneath it where a table publishes the pair, and a line above the cell where that
 * machine's change turns: a toggle sweep's feature table across machines, or a turning point as it
 * moves with the LLC's size. Under it the reading (sweepView.acrossSummary), then each machine's
 * whole sweep (SweepChart), folded, and the command line that reruns all of it. A value picked sets
 * the form's parameter or toggles, a machine picked the form's machine, a cell picked both.
 * SweepResult shows a sweep so when it ran across machines, else as its chart.
 */
import type { SimSweepResult, Topology } from "../../client/types";
import { Breakable } from "./Breakable";
import { hostLabel } from "./hosts";
import { Reproduce } from "./Reproduce";
import { SweepChart, SweepLinks } from "./SweepChart";
import { formatMetric, metricText } from "./scenario";
import { acrossCells, acrossSummary, panelsOf, pctText, TOGGLES, type AcrossCell } from "./sweepView";

interface Props {
  r: SimSweepResult;
  scenario: Record<string, unknown>;
  /** set the form's parameter (or toggles) to this value */
  onPick?: (x: number | string) => void;
  /** set the form's machine to this preset */
  onPickMachine?: (m: string) => void;
  link?: string | null;
  /** the sweep's machines that are no preset, by name (its spec's hosts): files of the command line */
  hosts?: Readonly<Record<string, Topology>> | null;
}

function cellTitle(r: SimSweepResult, x: number | string, c: AcrossCell): string {
  const row = c.row;
  if (row === null) return `${c.machine}: not run`;
  const name = r.metric.name;
  const run = metricText({ metric: { name, value: row.value }, sim: { complete: row.complete } });
  if (!r.baseline) return `${c.machine}, ${r.param} ${String(x)}: ${run}`;
  const base = row.baseline === null ? "" : `, baseline ${formatMetric({ name, value: row.baseline })}`;
  const pub = row.published_pct === null ? ", not published" : `, published ${pctText(row.published_pct)}`;
  return `${c.machine}, ${r.param} ${String(x)}: ${run}${base}: ${pctText(row.change_pct)}${pub}${c.turns ? " (the change turns here)" : ""}`;
}

/** One value on one machine; with `onPick`, a button that sets the form to both (to run that cell
 * as the saved pair, and compare its two runs side by side). */
function Cell({ r, x, c, onPick }: { r: SimSweepResult; x: number | string; c: AcrossCell; onPick?: () => void }) {
  const row = c.row;
  const cls = `across-cell ${row?.direction ?? "none"}${c.turns ? " turns" : ""}`;
  const body = (
    <>
      {row === null ? "" : r.baseline ? pctText(row.change_pct) : formatMetric({ name: r.metric.name, value: row.value })}
      {row?.published_pct != null && <div className="across-published">{pctText(row.published_pct)}</div>}
    </>
  );
  const title = cellTitle(r, x, c);
  return (
    <td className={cls} data-testid="across-cell" data-machine={c.machine} data-x={x} data-pct={row?.change_pct ?? ""} data-published={row?.published_pct ?? ""} data-direction={row?.direction ?? "none"} title={title}>
      {onPick ? (
        <button type="button" className="cell-pick" title={`${title}; set the form to it`} onClick={onPick}>{body}</button>
      ) : body}
    </td>
  );
}

export function AcrossSweep({ r, scenario, onPick, onPickMachine, link = null, hosts = null }: Props) {
  const panels = panelsOf(r);
  const toggles = r.param === TOGGLES;
  const what = toggles ? "toggle" : r.param;
  const across = panels.map((p) => p.topology ?? "");
  return (
    <div className="sweep" data-testid="across-sweep">
      <div className="muted">
        {r.metric.name} ({r.metric.better} is better) {toggles ? "with each toggle" : `at each ${r.param}`} on each of {panels.length} machines
        {r.baseline ? ": % better than the baseline on that machine, the published effect beneath where a table publishes it; a line above a cell where that machine's change turns" : ""}
        {r.seeds > 1 ? `, on ${String(r.seeds)} seeds (the median change)` : ""}
        {r.calibrated ? ", each as placemap calibrate runs its cell" : ""}
      </div>
      <div className="sweep-table-wrap">
        <table className="sweep-table across-table small" data-testid="across-table">
          <thead>
            <tr>
              <th>{what}</th>
              {across.map((m) => {
                // a machine that is no preset says what it is: "epyc (recorded: 96 CPUs, 16 LLCs, 8 nodes)"
                const host = hosts?.[m];
                const shape = host ? hostLabel(host) : m;
                return (
                  <th key={m} data-machine={m} title={shape}>
                    {onPickMachine ? (
                      <button type="button" className="linkish" title={`set the form's machine to ${shape}`} onClick={() => { onPickMachine(m); }}><Breakable text={m} /></button>
                    ) : <Breakable text={m} />}
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {acrossCells(r).map(({ x, cells }) => (
              <tr key={String(x)} data-x={x}>
                <th>
                  {onPick ? (
                    <button type="button" className="linkish" title={toggles ? `set the form's toggles to ${String(x)}` : `set ${r.param} to ${String(x)} in the form`} onClick={() => { onPick(x); }}><Breakable text={String(x)} /></button>
                  ) : <Breakable text={String(x)} />}
                </th>
                {cells.map((c) => (
                  <Cell key={c.machine} r={r} x={x} c={c} onPick={onPick && onPickMachine ? () => { onPickMachine(c.machine); onPick(x); } : undefined} />
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="sweep-summary" data-testid="across-summary">
        {acrossSummary(r).map((s) => <div key={s}>{s}</div>)}
      </div>
      {panels.map((p) => (
        <details key={p.topology} className="across-panel" data-testid="across-panel" data-machine={p.topology}>
          <summary>{p.topology}: its whole sweep</summary>
          <SweepChart r={p} scenario={{ ...scenario, topology: p.topology }} onPick={onPick} />
        </details>
      ))}
      <Reproduce scenario={scenario} baseline={r.baseline} seeds={r.seeds} sweep={{ param: r.param, values: r.values, calibrated: r.calibrated, across, hosts }} testPrefix="across" />
      <SweepLinks r={r} id={link} csvTestId="across-csv" />
    </div>
  );
}

/** A sweep's result as it reads best: across machines one table of them all (AcrossSweep), else
 * its chart (SweepChart). */
export function SweepResult(props: Props) {
  const { r, scenario, onPick, link = null, hosts = null } = props;
  return panelsOf(r).length > 0 ? <AcrossSweep {...props} /> : <SweepChart r={r} scenario={scenario} link={link} onPick={onPick} hosts={hosts} />;
}
