/**
 * The timeline: a context strip over the whole recording (brush it with d3-brush to zoom; a click
 * without a drag seeks) and a focus track over the zoomed window showing the event rate, the
 * migrations stacked by crossing level and, where the recording has any, the wakeups from another
 * LLC by where they woke (pulled to the waker's LLC, kept in their own, neither; from GET
 * overview). Click the focus track to seek. Under them, the CPU lanes of the same window
 * (CpuLanes: who ran on each CPU; summed per pixel column when the window is too busy, or on
 * request), which can be hidden (remembered in the browser), and with a
 * compared run open, on request, its lanes over the same time from its start. How they are shown is
 * the page's (lanesView: in its link). The
 * playhead lines move every frame through a Player frame hook (direct DOM, no React render).
 */
import { useEffect, useMemo, useRef, type MouseEvent } from "react";
import { scaleLinear } from "d3-scale";
import { area, curveStepAfter } from "d3-shape";
import { brushX, type D3BrushEvent } from "d3-brush";
import { pointer, select } from "d3-selection";
import { max } from "d3-array";
import type { Overview } from "../../client/types";
import { api } from "../../client/http";
import { CROSS_LLC, rebin, stackCrossLlc, stackMigrations, type CrossLlc } from "../../viz/overview";
import { LEVELS, levelColor } from "../../viz/colors";
import { formatDuration } from "../../viz/time";
import type { Player } from "../engine/player";
import { usePlayerField, usePlayerOverview } from "../engine/usePlayer";
import { rememberLanesShown, type LanesView } from "./lanesView";
import { CpuLanes } from "./CpuLanes";
import { SummedToggle } from "./SummedToggle";
import { useWidth } from "./useWidth";

interface Props {
  player: Player;
  /** null while it loads, "error" when GET overview failed */
  overview: Overview | null | "error";
  tStart: number;
  tEnd: number;
  /** a task picked in the CPU lanes */
  onSelect?: (pid: number | null) => void;
  /** the compared recording (side by side), following this one's time from its start */
  cmp?: Player | null;
  /** the zoomed window (absolute ns; null: the whole run), kept by the page for its URL */
  zoom: [number, number] | null;
  onZoom: (zoom: [number, number] | null) => void;
  /** how the CPU lanes are shown, kept by the page for its URL */
  lanes: LanesView;
  onLanes: (lanes: LanesView) => void;
}

const CTX_H = 30;
const RATE_H = 46;
const MIG_H = 46;
const AXIS_H = 16;
const GAP = 6;
const WAKE_H = 40;
const BASE_FOCUS_H = RATE_H + MIG_H + 4;
const CROSS_LABEL: Record<CrossLlc, string> = { to_waker_llc: "pulled to the waker's LLC", to_prev_llc: "kept in its own", elsewhere: "neither" };

function ticks(t0: number, t1: number, w: number, tStart: number): { x: number; label: string }[] {
  const span = t1 - t0;
  if (span <= 0 || w <= 0) return [];
  const target = Math.max(2, Math.floor(w / 110));
  const raw = span / target;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: { x: number; label: string }[] = [];
  const first = Math.ceil((t0 - tStart) / step) * step + tStart;
  for (let t = first; t <= t1; t += step) out.push({ x: ((t - t0) / span) * w, label: `+${formatDuration(t - tStart)}` });
  return out;
}

export function Timeline({ player, overview: ov, tStart, tEnd, onSelect, cmp = null, zoom, onZoom: setZoom, lanes: view, onLanes }: Props) {
  const overview = ov === "error" ? null : ov;
  const wrapRef = useRef<HTMLDivElement>(null);
  const brushRef = useRef<SVGGElement>(null);
  const ctxHeadRef = useRef<SVGLineElement>(null);
  const focusHeadRef = useRef<SVGLineElement>(null);
  const width = useWidth(wrapRef);
  const { shown: lanes, twin: cmpLanes, summed } = view;
  const [d0, d1] = zoom ?? [tStart, tEnd];

  const full = useMemo(() => scaleLinear().domain([tStart, Math.max(tEnd, tStart + 1)]).range([0, width]), [tStart, tEnd, width]);
  const focus = useMemo(() => scaleLinear().domain([d0, Math.max(d1, d0 + 1)]).range([0, width]), [d0, d1, width]);

  // brush on the context strip
  useEffect(() => {
    const g = brushRef.current;
    if (!g) return;
    const b = brushX<unknown>()
      .extent([
        [0, 0],
        [width, CTX_H],
      ])
      .on("end", (ev: D3BrushEvent<unknown>) => {
        if (!ev.sourceEvent) return; // programmatic moves
        const sel = ev.selection as [number, number] | null;
        if (!sel || sel[1] - sel[0] < 2) {
          // a click without a drag seeks there and keeps the zoom
          const [x] = pointer(ev.sourceEvent, g);
          player.seek(full.invert(x));
          if (zoom) b.move(select(g), [full(zoom[0]), full(zoom[1])]);
        } else setZoom([full.invert(sel[0]), full.invert(sel[1])]);
      });
    const s = select(g);
    s.call(b);
    if (zoom) b.move(s, [full(zoom[0]), full(zoom[1])]);
    return () => {
      s.on(".brush", null);
    };
  }, [width, full, zoom, player, setZoom]);

  // playhead lines, every frame
  useEffect(
    () =>
      player.onFrame((t) => {
        const xc = full(t);
        const xf = focus(t);
        ctxHeadRef.current?.setAttribute("transform", `translate(${xc.toFixed(1)},0)`);
        const fh = focusHeadRef.current;
        if (fh) {
          fh.setAttribute("transform", `translate(${xf.toFixed(1)},0)`);
          fh.style.visibility = xf < 0 || xf > width ? "hidden" : "visible";
        }
      }),
    [player, full, focus, width],
  );

  const bins = Math.max(10, Math.floor(width / 3));
  const ctxPath = useMemo(() => {
    if (!overview) return null;
    const b = rebin(overview.events, overview.t_start_ns, overview.bin_ns, tStart, tEnd, Math.floor(width / 2));
    const y = scaleLinear().domain([0, max(b, (d) => d.value) ?? 1]).range([CTX_H, 2]);
    return area<(typeof b)[number]>()
      .x((d) => full(d.t0))
      .y0(CTX_H)
      .y1((d) => y(d.value))
      .curve(curveStepAfter)(b);
  }, [overview, tStart, tEnd, width, full]);

  const focusData = useMemo(() => {
    if (!overview) return null;
    const rate = rebin(overview.events, overview.t_start_ns, overview.bin_ns, d0, d1, bins);
    const yr = scaleLinear().domain([0, max(rate, (d) => d.value) || 1]).range([RATE_H, 2]);
    const ratePath = area<(typeof rate)[number]>()
      .x((d) => focus(d.t0))
      .y0(RATE_H)
      .y1((d) => yr(d.value))
      .curve(curveStepAfter)(rate);
    const migs = stackMigrations(overview, d0, d1, bins);
    const maxM = max(migs, (d) => d.total) || 1;
    const ym = scaleLinear().domain([0, maxM]).range([0, MIG_H - 2]);
    const lost = rebin(overview.lost, overview.t_start_ns, overview.bin_ns, d0, d1, bins).filter((b) => b.value > 0);
    const binW = width / bins;
    const cross = stackCrossLlc(overview, d0, d1, bins);
    const maxC = (cross && max(cross, (d) => d.total)) || 1;
    const yc = scaleLinear().domain([0, maxC]).range([0, WAKE_H - 2]);
    const crossTotal = cross ? Math.round(cross.reduce((s, b) => s + b.total, 0)) : 0;
    return { ratePath, migs, ym, maxM, lost, binW, maxRate: max(rate, (d) => d.value) ?? 0, cross, yc, maxC, crossTotal };
  }, [overview, d0, d1, bins, focus, width]);
  // the cross-LLC wakeups' track, only for a recording that has any
  const focusH = BASE_FOCUS_H + (focusData?.cross ? WAKE_H + 4 : 0);

  const onFocusClick = (e: MouseEvent<SVGRectElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    player.seek(focus.invert(e.clientX - r.left));
  };

  const tk = ticks(d0, d1, width, tStart);
  const totalH = CTX_H + GAP + focusH + AXIS_H;
  return (
    <div className="timeline" ref={wrapRef}>
      <svg width={width} height={totalH} className="timeline-svg">
        <g className="ctx">
          <rect width={width} height={CTX_H} className="ctx-bg" />
          {ctxPath && <path d={ctxPath} className="rate-area" />}
          <line ref={ctxHeadRef} y1={0} y2={CTX_H} className="playhead" />
          <g ref={brushRef} data-testid="timeline-brush" />
        </g>
        <g transform={`translate(0,${CTX_H + GAP})`}>
          <rect width={width} height={focusH} className="focus-bg" />
          {focusData && (
            <>
              {focusData.ratePath && <path d={focusData.ratePath} className="rate-area" />}
              <g transform={`translate(0,${RATE_H + 4})`}>
                <StackedBars bins={focusData.migs} keys={LEVELS} x={focus} binW={focusData.binW} height={MIG_H} y={focusData.ym} paint={(l) => ({ fill: levelColor(l) })} />
              </g>
              {focusData.lost.map((b, i) => (
                <rect key={`lost${i}`} x={focus(b.t0)} width={Math.max(2, focusData.binW)} y={0} height={4} className="lost-mark">
                  <title>{`${Math.round(b.value)} events lost`}</title>
                </rect>
              ))}
              <text x={4} y={11} className="track-label">
                events/bin (max {Math.round(focusData.maxRate)})
              </text>
              <text x={4} y={RATE_H + 15} className="track-label">
                migrations by level (max {Math.round(focusData.maxM)})
              </text>
              {focusData.cross && (
                <g transform={`translate(0,${BASE_FOCUS_H})`} data-testid="timeline-cross-llc" data-total={focusData.crossTotal}>
                  <StackedBars bins={focusData.cross} keys={CROSS_LLC} x={focus} binW={focusData.binW} height={WAKE_H} y={focusData.yc} paint={(k) => ({ className: `cross-${k}` })} />
                  <text x={4} y={11} className="track-label">
                    wakeups from another LLC (max {Math.round(focusData.maxC)}):{" "}
                    {CROSS_LLC.map((k, i) => (
                      <tspan key={k} className={`cross-${k}-text`}>
                        {i > 0 ? " · " : ""}
                        {CROSS_LABEL[k]}
                      </tspan>
                    ))}
                  </text>
                </g>
              )}
            </>
          )}
          {!overview && (
            <text x={8} y={20} className="track-label" data-testid="overview-status">
              {ov === "error" ? "the overview could not be loaded" : "loading overview…"}
            </text>
          )}
          <line ref={focusHeadRef} y1={0} y2={focusH} className="playhead" />
          <rect width={width} height={focusH} className="hit" onClick={onFocusClick} data-testid="timeline-seek">
            <title>click to seek</title>
          </rect>
        </g>
        <g transform={`translate(0,${CTX_H + GAP + focusH})`} className="axis">
          {tk.map((t) => (
            <g key={t.x} transform={`translate(${t.x},0)`}>
              <line y2={4} />
              <text y={13} x={2}>
                {t.label}
              </text>
            </g>
          ))}
        </g>
      </svg>
      {lanes && <CpuLanes player={player} overview={overview} overviewPending={ov === null} d0={d0} d1={d1} width={width} tStart={tStart} onSelect={onSelect} summed={summed} />}
      {lanes && cmp && cmpLanes && <ComparedLanes cmp={cmp} from={d0 - tStart} to={d1 - tStart} width={width} summed={summed} />}
      <div className="timeline-hint">
        {zoom ? (
          <>
            zoomed to {formatDuration(d1 - d0)} ·{" "}
            {player.rec && (
              <>
                <a
                  href={api.traceTextUrl(player.rec.id, Math.floor(d0), Math.ceil(d1))}
                  download
                  data-testid="zoom-trace-text"
                  title="the events of the zoomed window as ftrace text, the lines cat trace prints"
                >
                  its ftrace text
                </a>{" "}
                ·{" "}
              </>
            )}
            <button type="button" className="linkish" onClick={() => { setZoom(null); }}>
              reset zoom
            </button>
          </>
        ) : (
          "drag on the top strip to zoom · click either track to seek · space plays, n steps to the next migration"
        )}{" "}
        ·{" "}
        <button type="button" className="linkish" data-testid="cpu-lanes-toggle" aria-pressed={lanes} onClick={() => { onLanes({ ...view, shown: !lanes }); rememberLanesShown(!lanes); }}>
          {lanes ? "hide CPU lanes" : "show CPU lanes"}
        </button>
        {lanes && (
          <>
            {" "}
            ·{" "}
            <SummedToggle summed={summed} onSummed={(on) => { onLanes({ ...view, summed: on }); }} testId="cpu-lanes-summed-toggle" />
          </>
        )}
        {lanes && cmp && (
          <>
            {" "}
            ·{" "}
            <button type="button" className="linkish" data-testid="cpu-lanes-other-toggle" aria-pressed={cmpLanes} onClick={() => { onLanes({ ...view, twin: !cmpLanes }); }}>
              {cmpLanes ? "hide the compared run's lanes" : "the compared run's lanes"}
            </button>
          </>
        )}
      </div>
    </div>
  );
}

/** A track's bins as bars stacked by key (bottom up, in `keys` order), each part coloured by
 * `paint`: the migrations by level and the wakeups from another LLC by where they woke. */
function StackedBars<K extends string>({
  bins,
  keys,
  x,
  binW,
  height,
  y,
  paint,
}: {
  bins: { t0: number; stack: Record<K, [number, number]>; total: number }[];
  keys: readonly K[];
  x: (t: number) => number;
  binW: number;
  height: number;
  y: (v: number) => number;
  paint: (k: K) => { fill?: string; className?: string };
}) {
  return (
    <>
      {bins.map((b, i) =>
        b.total > 0
          ? keys.map((k) => {
              const [a, c] = b.stack[k];
              if (c <= a) return null;
              return <rect key={`${String(i)}-${k}`} x={x(b.t0)} width={Math.max(1, binW - 0.5)} y={height - y(c)} height={Math.max(0.5, y(c) - y(a))} {...paint(k)} />;
            })
          : null,
      )}
    </>
  );
}

/** The compared run's CPU lanes over the same time from its start as the open run's window. */
function ComparedLanes({ cmp, from, to, width, summed }: { cmp: Player; from: number; to: number; width: number; summed: boolean }) {
  const ready = usePlayerField(cmp, "status") === "ready";
  const ov = usePlayerOverview(cmp);
  if (!ready) return null;
  return (
    <div className="cpu-lanes-other">
      <div className="cpu-lanes-note">
        the compared run, <b>{cmp.rec?.name ?? ""}</b>, over the same time from its start:
      </div>
      <CpuLanes player={cmp} overview={ov === "error" ? null : ov} overviewPending={ov === null} d0={cmp.tStart + from} d1={cmp.tStart + to} width={width} tStart={cmp.tStart} testId="cpu-lanes-other" summed={summed} />
    </div>
  );
}
