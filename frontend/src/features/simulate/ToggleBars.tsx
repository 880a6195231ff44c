/**
 * A toggle sweep's result as the feature table it is (placement-model.md section 3: each toggle a
 * row): one bar per toggle, its change against the one baseline, percent better on a symmetric log
 * scale (a gain of +20% and a collapse of -3000% on one axis), the ±5% band within which a change
 * counts as none, and the published effect as a square where a table or a feature's own result
 * publishes the pair. The names sit left of the bars, so that thirteen toggles fit the side panel.
 */
import { scaleSymlog } from "d3-scale";
import type { SimSweepResult } from "../../client/types";
import { symlogTicks } from "./SweepChange";
import { pctText, SIGNIFICANT_PCT } from "./sweepView";

const W = 300;
const ROW = 14;
const M = { left: 112, right: 10, top: 6, bottom: 18 };

export function ToggleBars({ r }: { r: SimSweepResult }) {
  const all = r.rows.flatMap((row) => [row.change_pct, row.published_pct]).filter((v): v is number => v !== null);
  const lo = Math.min(-10, ...all);
  const hi = Math.max(10, ...all);
  const h = M.top + ROW * r.rows.length + M.bottom;
  const x = scaleSymlog().constant(10).domain([lo, hi]).range([M.left, W - M.right]);
  const zero = x(0);
  const ticks = symlogTicks(lo, hi);
  return (
    <svg className="sweep-chart toggle-bars" viewBox={`0 0 ${String(W)} ${String(h)}`} width="100%" role="img" aria-label={`the change against the baseline with each toggle, percent better (${r.metric.name}, ${r.metric.better} is better), the model's and the published one`} data-testid="toggle-bars">
      <rect className="sweep-same" x={x(-SIGNIFICANT_PCT)} width={Math.max(1, x(SIGNIFICANT_PCT) - x(-SIGNIFICANT_PCT))} y={M.top} height={ROW * r.rows.length} />
      <g className="sweep-axis">
        {ticks.map((v) => (
          <g key={v}>
            <line x1={x(v)} x2={x(v)} y1={M.top} y2={h - M.bottom + 3} className={v === 0 ? "sweep-zero" : "sweep-grid"} />
            <text x={x(v)} y={h - M.bottom + 12} textAnchor="middle">{v > 0 ? `+${String(v)}%` : `${String(v)}%`}</text>
          </g>
        ))}
      </g>
      {r.rows.map((row, i) => {
        const y = M.top + ROW * i;
        const c = row.change_pct;
        return (
          <g key={String(row.x)} data-testid="toggle-bar" data-x={row.x} data-pct={c ?? ""} data-direction={row.direction ?? "none"}>
            <title>{`${String(row.x)}: ${pctText(c)}${row.published_pct === null ? "" : `, published ${pctText(row.published_pct)}`}`}</title>
            <text className="toggle-name" x={M.left - 4} y={y + ROW - 4} textAnchor="end">{row.x}</text>
            {c !== null && (
              <rect className={`toggle-bar ${row.direction ?? ""}`} x={Math.min(zero, x(c))} width={Math.max(1, Math.abs(x(c) - zero))} y={y + 2} height={ROW - 4} />
            )}
            {row.published_pct !== null && (
              <rect className="sweep-pub-dot" x={x(row.published_pct) - 3} y={y + ROW / 2 - 3} width={6} height={6} data-testid="toggle-published" data-pct={row.published_pct} />
            )}
          </g>
        );
      })}
    </svg>
  );
}
