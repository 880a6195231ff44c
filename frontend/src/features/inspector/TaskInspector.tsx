/**
 * Task inspector: search tasks by comm substring or exact pid (GET tasks), select one, and see its
 * path across CPUs and LLCs over time (GET tasks/{pid}/path) as a small D3 chart with the playhead.
 * The selected task is highlighted in the grid by the Player. The placement at the playhead says how
 * the task got there, a wakeup's waker with it, whose task can be selected in turn (PlacementNow); a
 * simulated run's placements say why (PlacementWhy), and one saved before runs kept their reasons
 * offers to work them out (ReasonsBackfill).
 */
import { useEffect, useMemo, useRef, useState } from "react";
import { scaleLinear } from "d3-scale";
import type { TaskInfo, TaskPath, TaskPlacement, Topology } from "../../client/types";
import { api } from "../../client/http";
import { LEVELS, levelColor } from "../../viz/colors";
import { formatDuration } from "../../viz/time";
import type { Player } from "../engine/player";
import { usePlayerField } from "../engine/usePlayer";
import { placementAt, reasonCounts, reasonText, taskWakers, wakerOf } from "./reasons";
import { ReasonsBackfill } from "./ReasonsBackfill";

interface Props {
  player: Player;
  recId: string;
  topo: Topology | null;
  tStart: number;
  tEnd: number;
  selected: number | null;
  onSelect: (pid: number | null) => void;
  /** a simulated run: its placements have the simulator's reasons, or can have them (ReasonsBackfill) */
  simulated?: boolean;
}

const W = 284;
const H = 170;
const M = { l: 34, r: 6, t: 6, b: 18 };

/** A task path as a small D3 chart (also drawn by the live inspector, features/live). */
export function PathChart({
  path,
  topo,
  tStart,
  tEnd,
  player,
  t0 = tStart,
}: {
  path: TaskPath;
  topo: Topology | null;
  tStart: number;
  tEnd: number;
  player: Player;
  /** time the axis labels count from (the recording's start; the chart may show a later window) */
  t0?: number;
}) {
  const headRef = useRef<SVGLineElement>(null);
  // y: CPUs in (node, LLC, cpu) order so LLC bands are contiguous
  const { yOf, bands, nRows } = useMemo(() => {
    const cpus = (topo?.cpus ?? []).slice().sort((a, b) => (a.numa_node ?? 1e9) - (b.numa_node ?? 1e9) || (a.llc ?? 1e9) - (b.llc ?? 1e9) || a.cpu - b.cpu);
    const pos = new Map<number, number>();
    cpus.forEach((c, i) => pos.set(c.cpu, i));
    for (const p of path.placements) if (!pos.has(p.cpu)) pos.set(p.cpu, pos.size);
    const bandList: { llc: number; y0: number; y1: number }[] = [];
    cpus.forEach((c, i) => {
      const last = bandList[bandList.length - 1];
      if (last && last.llc === (c.llc ?? -1)) last.y1 = i + 1;
      else bandList.push({ llc: c.llc ?? -1, y0: i, y1: i + 1 });
    });
    return { yOf: pos, bands: bandList, nRows: Math.max(1, pos.size) };
  }, [topo, path]);
  const x = scaleLinear().domain([tStart, Math.max(tEnd, tStart + 1)]).range([M.l, W - M.r]);
  const y = scaleLinear().domain([0, nRows]).range([M.t, H - M.b]);
  const rowH = (H - M.t - M.b) / nRows;

  useEffect(
    () =>
      player.onFrame((t) => {
        headRef.current?.setAttribute("transform", `translate(${x(t).toFixed(1)},0)`);
      }),
    [player, x],
  );

  const pts = path.placements;
  const segs = pts.map((p, i) => {
    const next = pts[i + 1];
    const yy = y((yOf.get(p.cpu) ?? 0) + 0.5);
    return { p, x0: x(p.ts_ns), x1: x(next ? next.ts_ns : tEnd), y: yy, yNext: next ? y((yOf.get(next.cpu) ?? 0) + 0.5) : yy, next };
  });
  return (
    <svg width={W} height={H} className="path-chart" role="img" aria-label={`Path of task ${path.pid} across CPUs over time`}>
      {bands.map((b, i) => (
        <g key={`${b.llc}-${b.y0}`}>
          <rect x={M.l} width={W - M.l - M.r} y={y(b.y0)} height={Math.max(0.5, y(b.y1) - y(b.y0))} className={i % 2 ? "band-a" : "band-b"} />
          {y(b.y1) - y(b.y0) >= 9 && (
            <text x={M.l - 3} y={(y(b.y0) + y(b.y1)) / 2 + 3} className="axis-lbl" textAnchor="end">
              L{b.llc}
            </text>
          )}
        </g>
      ))}
      {segs.map(({ p, x0, x1, y: yy, yNext, next }, i) => (
        <g key={i}>
          <line x1={x0} x2={x1} y1={yy} y2={yy} className="path-seg" strokeWidth={Math.max(1.5, Math.min(4, rowH))} />
          {next && next.cpu !== p.cpu && (
            <line x1={x1} x2={x1} y1={yy} y2={yNext} stroke={next.level ? levelColor(next.level) : "#888"} strokeWidth={1.5} />
          )}
          <circle cx={x0} cy={yy} r={2.2} fill={p.level ? levelColor(p.level) : "#555"}>
            <title>{`${p.kind} → CPU ${p.cpu} (LLC ${p.llc ?? "?"}, node ${p.numa_node ?? "?"})${p.level ? `, ${p.level}` : ""}${p.cause ? `, ${p.cause}` : ""} at +${formatDuration(p.ts_ns - t0)}`}</title>
          </circle>
        </g>
      ))}
      {/* after the path, with a halo, so the path never hides which row is which CPU */}
      {rowH >= 9 &&
        [...yOf.entries()].map(([cpu, row]) => (
          <text key={`c${cpu}`} x={W - M.r - 2} y={y(row + 0.5) - 3} className="axis-lbl halo" textAnchor="end">
            cpu {cpu}
          </text>
        ))}
      <line ref={headRef} y1={M.t} y2={H - M.b} className="playhead" />
      <text x={M.l} y={H - 4} className="axis-lbl">
        {tStart === t0 ? "+0" : `+${formatDuration(tStart - t0)}`}
      </text>
      <text x={W - M.r} y={H - 4} className="axis-lbl" textAnchor="end">
        +{formatDuration(tEnd - t0)}
      </text>
    </svg>
  );
}

export function TaskInspector({ player, recId, topo, tStart, tEnd, selected, onSelect, simulated = false }: Props) {
  const [q, setQ] = useState("");
  // the list's order: busiest first, or most often woken from another LLC first (the tasks a wake hint would move)
  const [order, setOrder] = useState<"events" | "cross_llc">("events");
  const [results, setResults] = useState<TaskInfo[]>([]);
  const [err, setErr] = useState<string | null>(null);
  // the path with the recording it is of: another recording's task of the same pid is another task
  const [path, setPath] = useState<{ recId: string; path: TaskPath } | null>(null);
  const [pathErr, setPathErr] = useState<string | null>(null);
  // bumped when a run's reasons have been worked out, so that the path is read again with them
  const [reasonsKept, setReasonsKept] = useState(0);

  useEffect(() => {
    const ctl = new AbortController();
    const term = q.trim();
    const timer = setTimeout(() => {
      api.tasks(recId, term, 30, ctl.signal, order).then(
        (r) => {
          setResults(r);
          setErr(null);
        },
        (e: unknown) => {
          if (!ctl.signal.aborted) setErr(e instanceof Error ? e.message : String(e));
        },
      );
    }, 200);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [q, recId, order]);

  useEffect(() => {
    const ctl = new AbortController();
    if (selected !== null) {
      api.taskPath(recId, selected, ctl.signal).then(
        (p) => {
          setPath({ recId, path: p });
          setPathErr(null);
        },
        (e: unknown) => {
          if (!ctl.signal.aborted) setPathErr(e instanceof Error ? e.message : String(e));
        },
      );
    }
    return () => {
      ctl.abort();
    };
  }, [recId, selected, reasonsKept]);

  const shownPath = path && path.recId === recId && path.path.pid === selected ? path.path : null;
  const byLevel = useMemo(() => {
    const m = new Map<string, number>();
    for (const p of shownPath?.placements ?? []) if (p.level) m.set(p.level, (m.get(p.level) ?? 0) + 1);
    return m;
  }, [shownPath]);

  return (
    <section className="panel inspector" aria-label="Task inspector">
      <h2>Task inspector</h2>
      <TaskSearch value={q} onChange={setQ} placeholder="comm or pid" />
      <label className="small muted task-order">
        order{" "}
        <select value={order} onChange={(e) => { setOrder(e.target.value === "cross_llc" ? "cross_llc" : "events"); }} data-testid="task-order">
          <option value="events">busiest first</option>
          <option value="cross_llc">most woken from another LLC first</option>
        </select>
      </label>
      {err && <div className="error small">{err}</div>}
      {order === "cross_llc" && results.length > 0 && results.every((t) => t.cross_llc == null) && (
        <div className="small warn" data-testid="task-order-uncounted">
          this recording's tasks' wakeups from another LLC could not be counted (a stored chunk could not be read): busiest first
        </div>
      )}
      <ul className="task-results" data-testid="task-results">
        {results.map((t) => (
          <li key={t.pid} data-pid={t.pid}>
            <button type="button" className={`task-btn ${t.pid === selected ? "sel" : ""}`} onClick={() => { onSelect(t.pid === selected ? null : t.pid); }} data-testid="task-result">
              <span className="mono">{t.pid}</span> <span className="comm">{t.comm}</span>
              <span className="muted small">
                {" "}
                · {t.migrations} migr · {t.events} ev
                {t.cross_llc != null && t.cross_llc > 0 && (
                  <span data-testid="task-result-cross" title="woken from another LLC than the one it last ran in (pulled to the waker's LLC)">
                    {" "}
                    · {t.cross_llc} from another LLC ({t.pulled ?? 0} pulled)
                  </span>
                )}
              </span>
            </button>
          </li>
        ))}
      </ul>
      {selected !== null && (
        <div className="task-detail" data-testid="task-detail">
          <div className="td-head">
            <b>
              {shownPath?.comm ?? player.state?.tasks.get(selected)?.comm ?? "?"} ({selected})
            </b>
            <button type="button" className="linkish" onClick={() => { onSelect(null); }}>
              clear
            </button>
          </div>
          {pathErr && <div className="error small">{pathErr}</div>}
          {shownPath && (
            <>
              <div className="muted small">
                {shownPath.placements.length} placements · {LEVELS.map((l) => `${l} ${byLevel.get(l) ?? 0}`).join(" · ")}
              </div>
              <TaskWakerLine placements={shownPath.placements} />
              <PathChart path={shownPath} topo={topo} tStart={tStart} tEnd={tEnd} player={player} />
              <PlacementNow placements={shownPath.placements} player={player} tStart={tStart} topo={topo} onSelect={onSelect} />
              <PlacementWhy placements={shownPath.placements} />
              {simulated && shownPath.placements.length > 0 && shownPath.placements.every((p) => p.reason == null) && (
                <ReasonsBackfill recId={recId} onKept={() => { setReasonsKept((n) => n + 1); }} />
              )}
            </>
          )}
        </div>
      )}
    </section>
  );
}

/** The task's wakeups by where their waker ran (over its whole path), the whole-run panel's rows
 * for this one task: how often it was woken from another LLC and pulled to its waker's. */
function TaskWakerLine({ placements }: { placements: TaskPlacement[] }) {
  const w = useMemo(() => taskWakers(placements), [placements]);
  if (w === null) return null;
  const n = (x: number) => x.toLocaleString("en-US");
  const pct = (x: number, of: number) => (of > 0 ? ` (${((100 * x) / of).toFixed(1)}%)` : "");
  return (
    <div className="muted small" data-testid="task-wakers" data-cross={w.cross} data-pulled={w.pulled} data-on-waker={w.onWakerCpu}>
      {n(w.wakeups)} wakeups: {n(w.cross)} from another LLC
      {w.cross > 0 && ` (${n(w.pulled)} pulled to the waker's LLC, ${n(w.kept)} kept in its own${w.neither > 0 ? `, ${n(w.neither)} in neither` : ""})`}
      {`, ${n(w.onWakerCpu)} on the waker's CPU${pct(w.onWakerCpu, w.known)}`}
      {w.stillRunning > 0 && `, ${n(w.stillRunning)} while it ran`}
      {w.unknown > 0 && `, ${n(w.unknown)} waker unknown`}
    </div>
  );
}

/** How a placement put the task on its CPU, in a few words. */
function placedBy(p: TaskPlacement): string {
  if (p.kind === "wakeup_new") return "forked there";
  if (p.kind === "wakeup") return "woken there";
  return `moved there by ${p.cause ?? "a migration"}`;
}

/**
 * How the task got where it is at the playhead: its placement then, a wakeup's waker with it (the
 * CPU of its sched_waking and the task running there, a button that selects that task), and the
 * simulator's reason where the recording keeps one.
 */
function PlacementNow({
  placements,
  player,
  tStart,
  topo,
  onSelect,
}: {
  placements: TaskPlacement[];
  player: Player;
  tStart: number;
  topo: Topology | null;
  onSelect: (pid: number | null) => void;
}) {
  const playhead = usePlayerField(player, "playhead");
  // a simulated run's path: a placement without its reason says so (a captured trace has none)
  const hasReasons = useMemo(() => placements.some((p) => p.reason != null), [placements]);
  if (placements.length === 0) return null;
  const at = placementAt(placements, playhead);
  const why = at ? reasonText(at) : null;
  const waker = at ? wakerOf(at, topo) : null;
  const where = waker?.sameLlc == null ? "" : waker.sameLlc ? " (the same LLC)" : " (another LLC)";
  return (
    <div className="placement-why small" data-testid="placement-now">
      <div data-testid="why-now">
        {at === null ? (
          "at the playhead: not placed yet"
        ) : (
          <>
            at the playhead: on CPU {at.cpu}, {placedBy(at)} at +{formatDuration(at.ts_ns - tStart)}
            {waker !== null && (
              <span data-testid="waker">
                {waker.pid === 0 ? (
                  ` by an interrupt on idle CPU ${String(waker.cpu)}${where}`
                ) : (
                  <>
                    {` from CPU ${String(waker.cpu)}${where}`}
                    {waker.pid !== null &&
                      (waker.comm !== null ? (
                        <>
                          , where{" "}
                          <button type="button" className="linkish" data-testid="waker-select" title="select the task that ran on the waker's CPU" onClick={() => { onSelect(waker.pid); }}>
                            {waker.comm} {waker.pid}
                          </button>{" "}
                          ran
                        </>
                      ) : (
                        // a pid no event of the recording names (running since before the capture): no task to select
                        `, where pid ${String(waker.pid)} ran`
                      ))}
                  </>
                )}
              </span>
            )}
            {why !== null ? (
              <>
                , because <span className="mono">{why}</span>
              </>
            ) : hasReasons ? (
              " (no reason kept for this move)"
            ) : null}
          </>
        )}
      </div>
    </div>
  );
}

/**
 * Why the simulator put the task where it is (a simulated run's path carries its reasons; a
 * captured trace's none, and then nothing shows): the task's reasons by count.
 */
function PlacementWhy({ placements }: { placements: TaskPlacement[] }) {
  const counts = useMemo(() => reasonCounts(placements), [placements]);
  if (counts.length === 0) return null;
  const total = counts.reduce((n, c) => n + c.count, 0);
  return (
    <div className="placement-why small" data-testid="placement-why">
      <div className="muted">the simulator's reasons, {total.toLocaleString()} placements:</div>
      <ol className="why-counts" data-testid="why-counts">
        {counts.slice(0, 4).map((c) => (
          <li key={`${c.kind} ${c.text}`}>
            {c.kind} <span className="mono">{c.text}</span> ×{c.count.toLocaleString()}
          </li>
        ))}
      </ol>
    </div>
  );
}

/** The task search box of both inspectors (stored and live). */
export function TaskSearch({ value, onChange, placeholder }: { value: string; onChange: (q: string) => void; placeholder: string }) {
  return (
    <input
      type="search"
      data-testid="task-search"
      aria-label="Search tasks by comm or pid"
      placeholder={placeholder}
      value={value}
      onChange={(e) => { onChange(e.target.value); }}
    />
  );
}
