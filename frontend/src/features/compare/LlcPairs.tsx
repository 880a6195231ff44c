/**
 * Under the whole-run counts: the wakeups by LLC pair as a heatmap, rows the LLC the waker ran in,
 * columns the LLC the task woke in (GET metrics' wakeups.llc_pairs), one per recording, side by side
 * with one colour scale when two are compared. The diagonal (outlined) is the wakeups that woke in
 * their waker's LLC, its share said above each; lines mark where a NUMA node ends. A cell's count
 * and share are in its tooltip, and the heatmap's accessible name says the diagonal's share and the
 * pairs most wakeups crossed. A cell clicked (or Enter on it) lists the tasks behind it, most often
 * woken first (GET llc-pairs/{waker}/{llc}/tasks); in the open recording each name selects the task
 * in the inspector. Nothing for a machine of one LLC; "not counted" where a stored chunk kept them
 * from being counted.
 */
import { useEffect, useState, type KeyboardEvent } from "react";
import { scaleSequentialSqrt } from "d3-scale";
import { interpolateYlOrRd } from "d3-scale-chromatic";
import { api, ApiError } from "../../client/http";
import type { LlcPairTasks, Metrics, Topology } from "../../client/types";
import { pairsLayout, pairsSummary, type PairsLayout } from "../../viz/llcPairs";
import { plural } from "../../viz/words";
import { formatValue } from "./counts";

export interface PairsSide {
  /** "left" / "right" beside another; null alone */
  label: string | null;
  recId: string;
  metrics: Metrics;
  topo: Topology | null;
  /** selects a task in the inspector (the open recording's side only) */
  onSelect?: (pid: number) => void;
}

interface Picked {
  side: number;
  w: number;
  t: number;
}

// px a matrix may take across: alone, or one of two side by side in the narrow side panel
const AREA_ONE = 180;
const AREA_TWO = 124;
const LABEL = 14; // px for the axis words
// the tasks a picked cell lists, most often woken first
const PAIR_TASKS = 12;
// the lightest colour a cell with a wakeup gets: 0.08 up the scale, visible on white (as the grid's heat)
const FLOOR = 0.08;

export function LlcPairs({ sides }: { sides: PairsSide[] }) {
  const [picked, setPicked] = useState<Picked | null>(null);
  const layouts = sides.map((s) => pairsLayout(s.metrics.wakeups.llc_pairs, s.topo));
  // null: a stored chunk kept them from being counted (a missing field reads the same)
  const uncounted = sides.map((s) => s.metrics.wakeups.llc_pairs == null);
  if (layouts.every((l) => l === null) && !uncounted.some(Boolean)) return null;
  const max = Math.max(1, ...layouts.map((l) => l?.max ?? 0));
  const scale = scaleSequentialSqrt([0, max], (t) => interpolateYlOrRd(FLOOR + (1 - FLOOR) * t));
  const area = sides.length > 1 ? AREA_TWO : AREA_ONE;
  return (
    <div className="llc-pairs" data-testid="llc-pairs">
      <div className="small muted">wakeups by LLC pair: the waker's LLC (rows) against the LLC the task woke in (columns)</div>
      <div className="llc-pairs-row">
        {sides.map((s, i) => {
          const l = layouts[i] ?? null;
          return (
            <figure key={s.label ?? "run"} className="llc-pairs-side" data-testid="llc-pairs-side" data-side={s.label ?? "run"} style={{ maxWidth: area + LABEL + 2 }}>
              {s.label && <figcaption className="small">{s.label}</figcaption>}
              {l ? (
                <>
                  <PairsMatrix layout={l} color={scale} area={area} picked={picked?.side === i ? picked : null} onPick={(w, t) => { setPicked(picked?.side === i && picked.w === w && picked.t === t ? null : { side: i, w, t }); }} />
                  {picked?.side === i && <PairTasks recId={s.recId} w={picked.w} t={picked.t} onSelect={s.onSelect} />}
                </>
              ) : (
                <p className="small muted" data-testid="llc-pairs-none">
                  {uncounted[i] ? "not counted (a stored chunk could not be read)" : "one LLC: every wakeup in its waker's"}
                </p>
              )}
            </figure>
          );
        })}
      </div>
    </div>
  );
}

function PairsMatrix({ layout: l, color, area, picked, onPick }: { layout: PairsLayout; color: (n: number) => string; area: number; picked: Picked | null; onPick: (w: number, t: number) => void }) {
  // whole pixels while they fit (at most 14), fractions of one for a machine of more LLCs than pixels
  const cell = l.llcs <= area ? Math.min(14, Math.floor(area / l.llcs)) : area / l.llcs;
  const side = cell * l.llcs;
  const share = l.total > 0 ? l.diagonal / l.total : null;
  // the diagonal's outline, one path however many LLCs
  const diag = Array.from({ length: l.llcs }, (_, i) => `M${i * cell},${i * cell}h${cell}v${cell}h${-cell}z`).join("");
  return (
    <>
      <div className="small" data-testid="llc-pairs-diagonal" data-diagonal={l.diagonal} data-total={l.total}>
        in the waker's LLC: {l.diagonal.toLocaleString("en-US")} of {l.total.toLocaleString("en-US")} ({formatValue(share, "fraction")})
      </div>
      <svg width={side + LABEL + 2} height={side + LABEL + 2} className="llc-pairs-svg" role="group" aria-label={pairsSummary(l)}>
        <text x={LABEL} y={LABEL - 4} className="pairs-axis">woke in (LLC 0–{l.llcs - 1})</text>
        <text transform={`translate(${LABEL - 4},${LABEL + side}) rotate(-90)`} className="pairs-axis">waker's LLC</text>
        <g transform={`translate(${LABEL},${LABEL})`}>
          <rect width={side} height={side} className="pairs-bg" />
          {l.cells.map((c) => (
            <rect
              key={`${c.w}-${c.t}`}
              x={c.t * cell}
              y={c.w * cell}
              width={cell}
              height={cell}
              fill={color(c.n)}
              className={picked?.w === c.w && picked.t === c.t ? "pairs-cell picked" : "pairs-cell"}
              data-w={c.w}
              data-t={c.t}
              data-n={c.n}
              tabIndex={0}
              role="button"
              aria-label={`waker in LLC ${c.w}, woke in LLC ${c.t}: ${plural(c.n, "wakeup")}; list its tasks`}
              aria-pressed={picked?.w === c.w && picked.t === c.t}
              onClick={() => { onPick(c.w, c.t); }}
              onKeyDown={(e: KeyboardEvent) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); onPick(c.w, c.t); } }}
            >
              <title>{`waker in LLC ${c.w}, woke in LLC ${c.t}: ${c.n.toLocaleString("en-US")} wakeups (${formatValue(c.share, "fraction")})`}</title>
            </rect>
          ))}
          <path d={diag} className="pairs-diag" />
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

/** The tasks behind the picked cell, most often woken first; each name selects the task where the
 * side is the open recording's. */
function PairTasks({ recId, w, t, onSelect }: { recId: string; w: number; t: number; onSelect?: ((pid: number) => void) | undefined }) {
  // the answer kept with the cell it is for: another cell's reads as still listing
  const key = `${recId}/${w}/${t}`;
  const [answer, setAnswer] = useState<{ key: string; got: LlcPairTasks | { error: string } } | null>(null);
  useEffect(() => {
    const ctl = new AbortController();
    api.llcPairTasks(recId, w, t, PAIR_TASKS, ctl.signal).then(
      (got) => { setAnswer({ key, got }); },
      (e: unknown) => {
        if (ctl.signal.aborted) return;
        console.warn(e);
        // the server's reason where it gives one (a recording stored before wakers were kept)
        setAnswer({ key, got: { error: e instanceof ApiError ? e.message : "its tasks could not be listed" } });
      },
    );
    return () => { ctl.abort(); };
  }, [key, recId, w, t]);
  const got = answer?.key === key ? answer.got : null;
  const head = `LLC ${w} → ${t}`;
  if (got === null)
    return (
      <p className="small muted" data-testid="llc-pair-tasks" aria-live="polite">
        {head}: listing…
      </p>
    );
  if ("error" in got)
    return (
      <p className="small warn" data-testid="llc-pair-tasks" aria-live="polite">
        {head}: {got.error}
      </p>
    );
  const more = got.tasks.reduce((s, x) => s + x.wakeups, 0) < got.wakeups;
  return (
    <div className="small llc-pair-tasks" data-testid="llc-pair-tasks" aria-live="polite">
      {head}: {plural(got.wakeups, "wakeup")}{more ? ", the tasks woken most" : ""}
      <ul>
        {got.tasks.map((x) => (
          <li key={x.pid} data-pid={x.pid}>
            {onSelect ? (
              <button type="button" className="linkish" onClick={() => { onSelect(x.pid); }}>
                {x.pid} {x.comm}
              </button>
            ) : (
              <span>
                {x.pid} {x.comm}
              </span>
            )}{" "}
            {x.wakeups.toLocaleString("en-US")}
          </li>
        ))}
      </ul>
    </div>
  );
}
