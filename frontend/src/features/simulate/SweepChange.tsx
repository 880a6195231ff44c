/**
 * A sweep's change against its baseline at each value, the model's beside the published one, on a
 * symmetric log scale (a hint's gain of +50% and its collapse of -15000% on one axis), with the zero
 * line and the 5% band within which a change counts as none: where either line crosses the band is
 * where it turns. Points only where measured (both runs complete; a published cell at that value).
 */
import { scalePoint, scaleSymlog } from "d3-scale";
import { line } from "d3-shape";
import type { SimSweepResult } from "../../client/types";
import { pctText, SIGNIFICANT_PCT } from "./sweepView";
import { XLabels } from "./XLabels";

const W = 260;
const H = 120;
const M = { left: 44, right: 8, top: 8, bottom: 22 };
const SLANT = 26; // machine names slanted below the plot (SweepChart's XLabels)

interface Pt {
  x: number | string;
  pct: number;
}

/** The tick values within [lo, hi]: 0 and the powers of ten either side, from 100 on when the
 * range spans thousands (±10 would crowd 0). */
export function symlogTicks(lo: number, hi: number): number[] {
  const out = [0];
  const span = Math.max(hi, -lo);
  for (let p = span > 1000 ? 100 : 10; p <= span * 1.0001; p *= 10) {
    if (p <= hi) out.push(p);
    if (-p >= lo) out.unshift(-p);
  }
  return out;
}

export function SweepChange({ r }: { r: SimSweepResult }) {
  const model: Pt[] = r.rows.flatMap((row) => (row.change_pct === null ? [] : [{ x: row.x, pct: row.change_pct }]));
  const pub: Pt[] = r.rows.flatMap((row) => (row.published_pct === null ? [] : [{ x: row.x, pct: row.published_pct }]));
  if (model.length + pub.length === 0) return null;
  const all = [...model, ...pub].map((p) => p.pct);
  const lo = Math.min(-10, ...all);
  const hi = Math.max(10, ...all);
  const x = scalePoint().domain(r.values.map(String)).range([M.left, W - M.right]).padding(0.3);
  const h = H + (r.ordered ? 0 : SLANT);
  const bottom = M.bottom + (r.ordered ? 0 : SLANT);
  const y = scaleSymlog().constant(10).domain([lo, hi]).range([h - bottom, M.top]);
  const px = (v: number | string) => x(String(v)) ?? 0;
  const path = line<Pt>().x((p) => px(p.x)).y((p) => y(p.pct));
  const ticks = symlogTicks(lo, hi);
  return (
    <svg className="sweep-chart" viewBox={`0 0 ${String(W)} ${String(h)}`} width="100%" role="img" aria-label={`the change against the baseline at each ${r.param}, the model's and the published one, percent better on a symmetric log scale`} data-testid="sweep-change">
      <rect className="sweep-same" x={M.left} width={W - M.left - M.right} y={y(SIGNIFICANT_PCT)} height={Math.max(1, y(-SIGNIFICANT_PCT) - y(SIGNIFICANT_PCT))} />
      <g className="sweep-axis">
        {ticks.map((v) => (
          <g key={v}>
            <line x1={M.left - 3} x2={W - M.right} y1={y(v)} y2={y(v)} className={v === 0 ? "sweep-zero" : "sweep-grid"} />
            <text x={M.left - 5} y={y(v) + 3} textAnchor="end">{v > 0 ? `+${String(v)}%` : `${String(v)}%`}</text>
          </g>
        ))}
        <XLabels values={r.values} px={px} y={h - bottom + 12} slant={!r.ordered} />
      </g>
      {/* machines run along no scale: their points are not joined */}
      {r.ordered && pub.length > 0 && <path className="sweep-pub" d={path(pub) ?? ""} />}
      {r.ordered && model.length > 0 && <path className="sweep-run" d={path(model) ?? ""} />}
      {pub.map((p) => (
        <rect key={`p${String(p.x)}`} className="sweep-pub-dot" x={px(p.x) - 3} y={y(p.pct) - 3} width={6} height={6} data-testid="sweep-change-published" data-x={p.x} data-pct={p.pct}>
          <title>{`published at ${String(p.x)} ${r.param}: ${pctText(p.pct)}`}</title>
        </rect>
      ))}
      {model.map((p) => (
        <circle key={`m${String(p.x)}`} className="sweep-dot" cx={px(p.x)} cy={y(p.pct)} r={3} data-testid="sweep-change-model" data-x={p.x} data-pct={p.pct}>
          <title>{`the model at ${String(p.x)} ${r.param}: ${pctText(p.pct)}`}</title>
        </circle>
      ))}
    </svg>
  );
}
