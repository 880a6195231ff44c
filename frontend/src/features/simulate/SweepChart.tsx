/**
 * A sweep's result under the simulate form: the metric against the swept parameter, for the run and
 * its baseline (d3 scales and lines, drawn by React), with a band where the model's change turns
 * and a dashed frame where the published change turns; the change itself beside the published one
 * (SweepChange); then the reading (sweepSummary) and a
 * table of every point: the metrics, the change (on several seeds the median, and whether every
 * seed points its way), how many LLCs carry 90% of the work in the run and in its baseline (where
 * the model's turn usually comes from) and the published effect (the median where several tables publish the value,
 * each on hover); a value in the table sets the form's parameter to it; under it the scenario as a
 * file and the `placemap sim --sweep` command that reruns the sweep from it. A run that did not complete is drawn hollow and
 * not joined, and no change is read there. Machines run along no scale: their points are not joined
 * and their names slant (XLabels); toggles show as the feature table's bars instead (ToggleBars).
 * A stored sweep's link (?sweep=ID) sits at the end.
 */
import { scaleLinear, scaleLog, scalePoint } from "d3-scale";
import { line } from "d3-shape";
import type { SimLlcSpread, SimSweepResult, SimSweepRow, Topology } from "../../client/types";
import { Reproduce } from "./Reproduce";
import { SweepChange } from "./SweepChange";
import { formatMetric, metricText } from "./scenario";
import { MACHINES, pctText, sweepCsv, sweepSummary, logScale, TOGGLES } from "./sweepView";
import { ToggleBars } from "./ToggleBars";
import { XLabels } from "./XLabels";

const W = 260;
const H = 150;
const M = { left: 36, right: 8, top: 14, bottom: 28 };
/** Below the plot, machine names slanted (a machine sweep) take more room than numbers. */
const SLANT = 26;

interface Pt {
  x: number | string;
  value: number;
  complete: boolean;
}

/** A tick's label: short, in the metric's unit (the axis names the metric). */
function tickText(v: number): string {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e6) return `${String(+(v / 1e6).toPrecision(3))}M`;
  if (a >= 1e4) return `${String(+(v / 1e3).toPrecision(3))}k`;
  return String(+v.toPrecision(3));
}

function Chart({ r }: { r: SimSweepResult }) {
  const run: Pt[] = r.rows.map((row) => ({ x: row.x, value: row.value, complete: row.complete }));
  const base: Pt[] = r.baseline
    ? r.rows.flatMap((row) => (row.baseline === null ? [] : [{ x: row.x, value: row.baseline, complete: row.baseline_complete === true }]))
    : [];
  const all = [...run, ...base].map((p) => p.value);
  const log = logScale(all);
  const x = scalePoint().domain(r.values.map(String)).range([M.left, W - M.right]).padding(0.3);
  const lo = Math.min(...all);
  const hi = Math.max(...all);
  const bottom = M.bottom + (r.ordered ? 0 : SLANT);
  const h = H + (r.ordered ? 0 : SLANT);
  const y = log
    ? scaleLog().domain([lo, hi]).range([h - bottom, M.top]).nice()
    : scaleLinear().domain([Math.min(0, lo), hi === lo ? hi + 1 : hi]).range([h - bottom, M.top]).nice();
  const px = (v: number | string) => x(String(v)) ?? 0;
  const path = line<Pt>().defined((p) => p.complete).x((p) => px(p.x)).y((p) => y(p.value));
  const ticks = y.ticks(4);
  const yTicks = log && ticks.length > 6 ? ticks.filter((_, i) => i % Math.ceil(ticks.length / 5) === 0) : ticks;
  const band = (a: number | string, b: number | string) => ({ x: px(a), w: Math.max(2, px(b) - px(a)) });
  const unit = `${r.metric.name} (${r.metric.better} is better${log ? ", log scale" : ""})`;
  return (
    <svg className="sweep-chart" viewBox={`0 0 ${String(W)} ${String(h)}`} width="100%" role="img" aria-label={`${unit} at each ${r.param}: ${r.values.join(", ")}`}>
      {r.published_turns.map((t) => {
        const b = band(t.between[0] ?? 0, t.between[1] ?? 0);
        return (
          <g key={`p${t.between.join("-")}`} data-testid="sweep-published-turn" data-between={t.between.join("-")}>
            <title>{`published: the change turns between ${t.between.join(" and ")} ${r.param} (${pctText(t.from_pct)} -> ${pctText(t.to_pct)})`}</title>
            <rect className="sweep-published-turn" x={b.x} y={M.top} width={b.w} height={h - M.top - bottom} />
            <text className="sweep-band-label" x={b.x + b.w / 2} y={h - bottom - 3} textAnchor="middle">published</text>
          </g>
        );
      })}
      {r.turns.map((t) => {
        const b = band(t.between[0] ?? 0, t.between[1] ?? 0);
        return (
          <g key={`m${t.between.join("-")}`} data-testid="sweep-turn" data-between={t.between.join("-")}>
            <title>{`the change turns between ${t.between.join(" and ")} ${r.param} (${pctText(t.from_pct)} -> ${pctText(t.to_pct)})`}</title>
            <rect className="sweep-turn" x={b.x} y={M.top} width={b.w} height={h - M.top - bottom} />
            <text className="sweep-band-label" x={b.x + b.w / 2} y={M.top - 4} textAnchor="middle">turns</text>
          </g>
        );
      })}
      <g className="sweep-axis">
        {yTicks.map((v) => (
          <g key={v}>
            <line x1={M.left - 3} x2={W - M.right} y1={y(v)} y2={y(v)} className="sweep-grid" />
            <text x={M.left - 5} y={y(v) + 3} textAnchor="end">{tickText(v)}</text>
          </g>
        ))}
        <XLabels values={r.values} px={px} y={h - bottom + 12} slant={!r.ordered} />
        <text x={(M.left + W - M.right) / 2} y={h - 3} textAnchor="middle">{r.param}</text>
      </g>
      {/* machines run along no scale: their points are not joined */}
      {r.ordered && base.length > 0 && <path className="sweep-base" d={path(base) ?? ""} data-testid="sweep-base" />}
      {r.ordered && <path className="sweep-run" d={path(run) ?? ""} data-testid="sweep-run" />}
      {base.map((p) => (
        <circle key={`b${String(p.x)}`} className={p.complete ? "sweep-base-dot" : "sweep-base-dot incomplete"} cx={px(p.x)} cy={y(p.value)} r={2.5} data-testid="sweep-base-point" data-x={p.x} data-value={p.value} />
      ))}
      {r.rows.map((row) => (
        <circle key={`r${String(row.x)}`} className={row.complete ? "sweep-dot" : "sweep-dot incomplete"} cx={px(row.x)} cy={y(row.value)} r={3.5} data-testid="sweep-point" data-x={row.x} data-value={row.value}>
          <title>{`${r.param} ${String(row.x)}: ${metricText({ metric: { name: r.metric.name, value: row.value }, sim: { complete: row.complete } })}${row.baseline === null ? "" : `, baseline ${formatMetric({ name: r.metric.name, value: row.baseline })}, change ${pctText(row.change_pct)}`}`}</title>
        </circle>
      ))}
    </svg>
  );
}

/** A table cell's metric: three digits (the header gives the unit); a run that did not complete
 * is no value (its title says what it is). */
function cellText(v: number, complete: boolean): string {
  return complete ? tickText(v) : "–";
}

/** The metric's unit from its name's suffix, for the table's header. */
function unit(name: string): string {
  if (name.endsWith("_mb_s")) return " (MB/s)";
  if (name.endsWith("_per_s")) return " (/s)";
  if (name.endsWith("_us")) return " (us)";
  if (name.endsWith("_s")) return " (s)";
  return "";
}

function carrying(s: SimLlcSpread | null): string {
  return s === null ? "-" : String(s.carrying);
}

function spreadTitle(row: SimSweepRow): string {
  const one = (s: SimLlcSpread | null) =>
    s === null ? "no busy time" : `${String(s.carrying)} of ${String(s.llcs)} LLCs carry 90% of the work, the busiest ${String(Math.round(100 * s.busiest_share))}%`;
  return `with the changes: ${one(row.llc_spread)}; baseline: ${one(row.baseline_llc_spread)}`;
}

/** The sweep as a table to download (sweepView.sweepCsv), and its stored link (?sweep=ID), which
 * opens the same result again, here or for whoever it is sent to. */
export function SweepLinks({ r, id, csvTestId = "sweep-csv" }: { r: SimSweepResult; id: string | null; csvTestId?: string }) {
  return (
    <div className="small">
      as a table:{" "}
      <a href={`data:text/csv;charset=utf-8,${encodeURIComponent(sweepCsv(r))}`} download="sweep.csv" data-testid={csvTestId} title="every value's figures as CSV, for a mail or a spreadsheet">
        sweep.csv
      </a>
      {id !== null && (
        <>
          {" · "}
          <a href={`?${new URLSearchParams({ sweep: id }).toString()}`} data-testid="sweep-link" title="this result, stored: a link that opens it again, here or for whoever you send it to">
            link to this sweep
          </a>
        </>
      )}
    </div>
  );
}

interface Props {
  r: SimSweepResult;
  /** the scenario the sweep job ran (its scenario.json and command line) */
  scenario: Record<string, unknown>;
  /** set the form's parameter (or machine) to this value (to run, save and open that point as the pair) */
  onPick?: (x: number | string) => void;
  /** the stored sweep's id, for the link that opens this result again (?sweep=ID) */
  link?: string | null;
  /** a machine sweep's machines that are no preset, by name (its spec's hosts) */
  hosts?: Readonly<Record<string, Topology>> | null;
}

export function SweepChart({ r, scenario, onPick, link = null, hosts = null }: Props) {
  const name = r.metric.name;
  const toggles = r.param === TOGGLES;
  const what = r.ordered ? r.param : toggles ? "toggle" : "machine";
  const seeds = r.seeds > 1;
  return (
    <div className="sweep" data-testid="simulate-sweep">
      <div className="muted">
        {r.metric.name} ({r.metric.better} is better) {r.ordered ? `at each ${r.param}` : toggles ? "with each toggle" : "on each machine"}
        {r.baseline && !toggles ? (r.ordered ? ": the run with the changes (solid), its baseline (dashed)" : ": the run with the changes (blue), its baseline (grey)") : ""}
        {seeds ? `, on ${String(r.seeds)} seeds (the metrics are the first seed's; the change is the median)` : ""}
        {r.calibrated ? ", each as placemap calibrate runs its cell (the calibration's workload and run length)" : ""}
      </div>
      {toggles ? (
        <>
          <div className="muted" data-testid="sweep-change-legend">
            each toggle instead of the scenario&apos;s own, % better than the one baseline (no hints, default features): the model (bars) and the published effect (squares); within the band, ±5%, it counts as none
          </div>
          <ToggleBars r={r} />
        </>
      ) : (
        <>
          <Chart r={r} />
          {r.baseline && (
            <div className="muted" data-testid="sweep-change-legend">
              the change, % better than the baseline: the model (dots) and the published tables (squares); within the band, ±5%, it counts as none
            </div>
          )}
          {r.baseline && <SweepChange r={r} />}
        </>
      )}
      <div className="sweep-summary" data-testid="sweep-summary">
        {sweepSummary(r).map((s) => <div key={s}>{s}</div>)}
      </div>
      <div className="sweep-table-wrap">
        <table className="sweep-table small" data-testid="sweep-table">
          <thead>
            <tr>
              <th>{what}</th>
              <th>{r.baseline ? "run" : name}{unit(name)}</th>
              {r.baseline && <th>baseline</th>}
              {r.baseline && <th>{seeds ? "median" : "change"}</th>}
            </tr>
          </thead>
          <tbody>
            {r.rows.map((row) => (
              <tr key={row.x} data-x={row.x} data-direction={row.direction ?? "none"}>
                <td>
                  {onPick ? (
                    <button type="button" className="linkish" title={r.ordered ? `set ${r.param} to ${String(row.x)} in the form, to run this point as the saved pair` : `set the form's ${what} to ${String(row.x)}, to run it as the saved pair`} onClick={() => { onPick(row.x); }}>
                      {row.x}
                    </button>
                  ) : (
                    row.x
                  )}
                </td>
                <td title={metricText({ metric: { name, value: row.value }, sim: { complete: row.complete } })}>{cellText(row.value, row.complete)}</td>
                {r.baseline && (
                  <td title={row.baseline === null ? "" : metricText({ metric: { name, value: row.baseline }, sim: { complete: row.baseline_complete === true } })}>
                    {row.baseline === null ? "" : cellText(row.baseline, row.baseline_complete === true)}
                  </td>
                )}
                {r.baseline && <td className="sweep-change">{pctText(row.change_pct)}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {r.baseline && (
        // a second table, so that the side panel holds both: where the work ran, the published
        // effect and, on several seeds, whether every seed points one way
        <div className="sweep-table-wrap">
          <table className="sweep-table sweep-where small" data-testid="sweep-where">
            <thead>
              <tr>
                <th>{what}</th>
                <th title="the fewest LLCs that carry 90% of the busy CPU time: the run's against its baseline's">LLCs 90%</th>
                <th>published</th>
                {seeds && <th>seeds</th>}
              </tr>
            </thead>
            <tbody>
              {r.rows.map((row) => (
                <tr key={row.x}>
                  <td>{row.x}</td>
                  <td data-testid="sweep-llcs" title={spreadTitle(row)}>
                    {`${carrying(row.llc_spread)} / ${carrying(row.baseline_llc_spread)}`}
                    {/* machines differ in how many LLCs they have */}
                    {r.param === MACHINES && row.llc_spread !== null ? ` of ${String(row.llc_spread.llcs)}` : ""}
                  </td>
                  <td title={row.published.map((c) => `${c.section}, ${c.config}: ${pctText(c.published_pct)}${c.differs.length ? ` (this run differs from the model's run of the cell in ${c.differs.join(", ")})` : ""}`).join("; ")}>
                    {row.published_pct === null ? "-" : pctText(row.published_pct)}
                    {row.published.length > 1 ? ` (median of ${String(row.published.length)})` : ""}
                  </td>
                  {seeds && <td className="sweep-verdict">{row.seeds?.verdict ?? ""}</td>}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Reproduce scenario={scenario} baseline={r.baseline} seeds={r.seeds} sweep={{ param: r.param, values: r.values, calibrated: r.calibrated, hosts }} testPrefix="sweep" />
      <SweepLinks r={r} id={link} />
    </div>
  );
}
