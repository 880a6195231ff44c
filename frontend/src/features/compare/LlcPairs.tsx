/**
 * Under the whole-run counts: the wakeups by LLC pair as a heatmap, rows the LLC the waker ran in,
 * columns the LLC the task woke in (GET metrics' wakeups.llc_pairs), one per recording, side by side
 * with one colour scale when two are compared. The diagonal (outlined) is the wakeups that woke in
 * their waker's LLC, its share said above each; lines mark where a NUMA node ends. A cell's count
 * and share are in its tooltip. Nothing for a machine of one LLC; "not counted" for a recording
 * stored before the pairs were.
 */
import { scaleSequentialSqrt } from "d3-scale";
import { interpolateYlOrRd } from "d3-scale-chromatic";
import type { Metrics, Topology } from "../../client/types";
import { pairsLayout, type PairsLayout } from "../../viz/llcPairs";
import { formatValue } from "./counts";

export interface PairsSide {
  /** "left" / "right" beside another; null alone */
  label: string | null;
  metrics: Metrics;
  topo: Topology | null;
}

// px a matrix may take across: alone, or one of two side by side in the narrow side panel
const AREA_ONE = 180;
const AREA_TWO = 124;
const LABEL = 14; // px for the axis words

export function LlcPairs({ sides }: { sides: PairsSide[] }) {
  const layouts = sides.map((s) => pairsLayout(s.metrics.wakeups.llc_pairs, s.topo));
  // a side of several LLCs stored before the pairs were counted
  const uncounted = sides.map((s) => s.metrics.wakeups.llc_pairs == null && (s.topo?.llcs.length ?? 0) > 1);
  if (layouts.every((l) => l === null) && !uncounted.some(Boolean)) return null;
  const max = Math.max(1, ...layouts.map((l) => l?.max ?? 0));
  const color = scaleSequentialSqrt(interpolateYlOrRd).domain([0, max]);
  return (
    <div className="llc-pairs" data-testid="llc-pairs">
      <div className="small muted">wakeups by LLC pair: the waker's LLC (rows) against the LLC the task woke in (columns)</div>
      <div className="llc-pairs-row">
        {sides.map((s, i) => {
          const l = layouts[i] ?? null;
          const area = sides.length > 1 ? AREA_TWO : AREA_ONE;
          return (
            <figure key={i} className="llc-pairs-side" data-testid="llc-pairs-side" data-side={s.label ?? "run"} style={{ maxWidth: area + LABEL + 2 }}>
              {s.label && <figcaption className="small">{s.label}</figcaption>}
              {l ? (
                <PairsMatrix layout={l} color={color} area={area} />
              ) : (
                <p className="small muted" data-testid="llc-pairs-none">
                  {uncounted[i] ? "not counted (stored before they were; import it again)" : "one LLC: every wakeup in its waker's"}
                </p>
              )}
            </figure>
          );
        })}
      </div>
    </div>
  );
}

function PairsMatrix({ layout: l, color, area }: { layout: PairsLayout; color: (n: number) => string; area: number }) {
  const cell = Math.max(3, Math.min(14, Math.floor(area / l.llcs)));
  const side = cell * l.llcs;
  const share = l.total > 0 ? l.diagonal / l.total : null;
  return (
    <>
      <div className="small" data-testid="llc-pairs-diagonal" data-diagonal={l.diagonal} data-total={l.total}>
        in the waker's LLC: {l.diagonal.toLocaleString("en-US")} of {l.total.toLocaleString("en-US")} ({formatValue(share, "fraction")})
      </div>
      <svg width={side + LABEL + 2} height={side + LABEL + 2} className="llc-pairs-svg" role="img" aria-label={`wakeups by LLC pair, ${l.llcs} LLCs`}>
        <text x={LABEL} y={LABEL - 4} className="pairs-axis">woke in (LLC 0–{l.llcs - 1})</text>
        <text transform={`translate(${LABEL - 4},${LABEL + side}) rotate(-90)`} className="pairs-axis">waker's LLC</text>
        <g transform={`translate(${LABEL},${LABEL})`}>
          <rect width={side} height={side} className="pairs-bg" />
          {l.cells.map((c) => (
            <rect key={`${c.w}-${c.t}`} x={c.t * cell} y={c.w * cell} width={cell} height={cell} fill={color(c.n)} data-w={c.w} data-t={c.t} data-n={c.n}>
              <title>{`waker in LLC ${c.w}, woke in LLC ${c.t}: ${c.n.toLocaleString("en-US")} wakeups (${formatValue(c.share, "fraction")})`}</title>
            </rect>
          ))}
          {Array.from({ length: l.llcs }, (_, i) => (
            <rect key={`d${i}`} x={i * cell} y={i * cell} width={cell} height={cell} className="pairs-diag" />
          ))}
          {l.nodeBreaks.map((b) => (
            <g key={`n${b}`} className="pairs-node">
              <line x1={b * cell} x2={b * cell} y1={0} y2={side} />
              <line y1={b * cell} y2={b * cell} x1={0} x2={side} />
            </g>
          ))}
        </g>
      </svg>
    </>
  );
}
