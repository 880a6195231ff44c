/**
 * CPU lanes under the timeline: who ran on each CPU over the timeline's window (GET lanes.arrow),
 * one row per CPU in the grid's order, each span coloured by process as the grid colours its tasks,
 * lines where an LLC and (darker) a NUMA node end, the playhead moved every frame. A window with
 * more context switches than LIMIT (by the server's window_too_wide, or well past it in the
 * overview's estimate), or any window when `summed` is asked for, is drawn summed per pixel column
 * instead (GET lanes_busy.arrow): each column of a CPU a bar as tall as the share of it some task
 * ran (on rows under 4 px, as opaque), in the colour of the task that ran most of it, and the
 * selected task's share marked dark; past BUSY_LIMIT switches it is said, not drawn: zoom in. Hover
 * names the CPU, the task and how long it ran (summed: how busy the column was, who ran most of it,
 * the selected task's share); a click selects the task (its other CPUs' spans stay bright, the rest
 * dim). A window the answer ends before (a live recording's store, a shorter compared run) is
 * shaded past where it ends. By keyboard:
 * focus the lanes, and the first arrow puts a cursor on the top CPU at the window's middle; then
 * Up/Down move it a CPU, Left/Right a span (Home/End), the line under them says it as hover does,
 * and Enter selects its task. A span during
 * which its CPU lost events (a ring-buffer overrun) is marked with a red bar over it and said so.
 */
import { useEffect, useMemo, useRef, useState, type KeyboardEvent, type MouseEvent } from "react";
import { api, ApiError } from "../../client/http";
import { decodeLaneBusy, decodeLanes, type LaneSpans } from "../../client/arrow";
import type { Overview } from "../../client/types";
import { cpuRanges, laneRows, moveCursor, rowHeight, spanAt, spansIn, switchesIn, type LaneCursor } from "../../viz/lanes";
import { processColor, processKey } from "../../viz/colors";
import { formatDuration } from "../../viz/time";
import type { Player } from "../engine/player";
import { usePlayerField } from "../engine/usePlayer";

/** the keys that move the lanes' keyboard cursor (viz/lanes.moveCursor) */
const NAV_KEYS = new Set(["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End"]);

/** the most context switches a window is drawn with span by span (the route's limit) */
export const LIMIT = 100_000;
/** the most context switches a window is summed from (lanes_busy.arrow's default limit) */
export const BUSY_LIMIT = 10_000_000;
/** the most parts a window is summed in (the route's) */
const PARTS_MAX = 8_000;

type Loaded =
  | { status: "loading" }
  | { status: "ok"; spans: LaneSpans; t0: number; t1: number; mine: number | null }
  | { status: "wide" | "error"; message: string };

interface Props {
  player: Player;
  overview: Overview | null;
  /** the overview is still on its way: wait for it (it may say the window is too busy to ask for) */
  overviewPending: boolean;
  d0: number;
  d1: number;
  width: number;
  tStart: number;
  onSelect?: (pid: number | null) => void;
  /** the element's test id, its parts' prefixed by it (a compared run's lanes beside the open one's) */
  testId?: string;
  /** drawn summed per pixel column whatever the window holds */
  summed?: boolean;
  /** a live recording's window, moved on as it grows: the last one stays drawn, not dimmed, while
   * the next loads */
  live?: boolean;
}

export function CpuLanes({ player, overview, overviewPending, d0, d1, width, tStart, onSelect, testId = "cpu-lanes", summed = false, live = false }: Props) {
  const rec = player.rec;
  const topo = player.topo;
  const selected = usePlayerField(player, "selected");
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const headRef = useRef<HTMLDivElement>(null);
  const [got, setGot] = useState<{ key: string; windowKey: string; recId: string; loaded: Loaded } | null>(null);
  const [hover, setHover] = useState<string | null>(null);
  const [cursor, setCursor] = useState<LaneCursor | null>(null);
  // the window whose spans the server refused as too many (then summed)
  const [refused, setRefused] = useState<string | null>(null);
  // live (no overview to estimate from): the last window was too busy, so the next one, a second
  // on, starts summed; until one holds well under the limit
  const [liveBusy, setLiveBusy] = useState(false);
  const estimate = switchesIn(overview, d0, d1);
  const windowKey = `${rec?.id ?? ""}:${String(d0)}:${String(d1)}`;
  // (the overview's bins give a share of a cut bin: near the limit, the server counts)
  const busy = summed || (estimate !== null && estimate > 1.5 * LIMIT) || refused === windowKey || (live && liveBusy);
  const tooWide = estimate !== null && estimate > 2 * BUSY_LIMIT;
  const parts = Math.min(PARTS_MAX, Math.max(1, Math.round(width)));
  // (summed, each column says how much of it the selected task ran: asked again on a new selection;
  // none selected, the answer at hand serves, whichever task it was asked about)
  const shownMine = got?.windowKey === windowKey && got.loaded.status === "ok" ? got.loaded.mine : null;
  const mine = busy ? (selected ?? shownMine) : null;
  const key = `${windowKey}:${busy ? `busy${String(parts)}:${String(mine)}` : "spans"}`;

  useEffect(() => {
    if (!rec || tooWide || overviewPending) return;
    const ctl = new AbortController();
    const timer = window.setTimeout(() => {
      api
        .lanes(rec.id, d0, d1, busy ? { limit: BUSY_LIMIT, parts, pid: mine } : { limit: LIMIT }, ctl.signal)
        .then((got) => {
          const spans = busy ? decodeLaneBusy(got.bytes) : decodeLanes(got.bytes);
          if (live && spans.busy) setLiveBusy(spansIn(spans) > LIMIT / 2);
          setGot({ key, windowKey, recId: rec.id, loaded: { status: "ok", spans, t0: got.t0, t1: got.t1, mine } });
        })
        .catch((e: unknown) => {
          if (ctl.signal.aborted) return;
          const wide = e instanceof ApiError && e.code === "window_too_wide";
          if (wide && !busy) {
            setRefused(windowKey); // too many to draw one by one: summed instead
            setLiveBusy(live);
            return;
          }
          setGot({ key, windowKey, recId: rec.id, loaded: { status: wide ? "wide" : "error", message: e instanceof Error ? e.message : String(e) } });
        });
    }, 150);
    return () => {
      window.clearTimeout(timer);
      ctl.abort();
    };
  }, [rec, d0, d1, tooWide, overviewPending, key, busy, parts, windowKey, live, mine]);

  const loaded = useMemo<Loaded>(() => {
    if (tooWide) {
      const n = estimate.toLocaleString("en-US");
      return { status: "wide", message: `about ${n} context switches in this window: zoom in to under ${BUSY_LIMIT.toLocaleString("en-US")} to see who ran on each CPU` };
    }
    return got?.key === key ? got.loaded : { status: "loading" };
  }, [estimate, tooWide, got, key]);

  // while a new window of the same recording loads, the last one's spans stay drawn (dimmed) on the
  // new scale: no jump
  // (not an empty one: it would say no task ran in a window still loading)
  const shown =
    loaded.status === "loading" && got !== null && got.recId === rec?.id && got.loaded.status === "ok" && got.loaded.spans.length > 0
      ? got.loaded
      : loaded;
  const stale = shown !== loaded;
  // (the same window asked again about another task: not dimmed, its end kept)
  const sameWindow = stale && got?.windowKey === windowKey;
  // where the answer ends before the window does: a live recording's events not stored yet, or a
  // recording's end (a compared run shorter than the open one)
  // (while the next window loads, a live one's last answer still says how far the store went)
  const stored = shown.status === "ok" && (live || !stale || sameWindow) ? shown.t1 : d1;
  const afterText = live
    ? "not stored yet (a live recording's events are stored a few seconds behind its head)"
    : "after the recording's end";
  const spans = shown.status === "ok" ? shown.spans : null;
  // summed columns that know how much of them the selected task ran (not a former selection's)
  const mineShare = spans?.busy && shown.status === "ok" && selected !== null && shown.mine === selected ? spans.busy.mine : null;
  const rows = useMemo(() => laneRows(topo, spans), [topo, spans]);
  const ranges = useMemo(() => (spans ? cpuRanges(spans) : null), [spans]);
  const rowH = rowHeight(rows.cpus.length);
  const height = Math.max(1, Math.ceil(rows.cpus.length * rowH));

  const summary = useMemo(() => {
    if (!spans || shown.status !== "ok") return "";
    // (the window the server answered: within the recording, or a live one's stored chunks)
    const span = Math.max(1, shown.t1 - shown.t0);
    const busy = new Map<number, number>();
    let lost = 0;
    for (let i = 0; i < spans.length; i++) {
      lost += spans.lost[i] ?? 0;
      const c = spans.cpu[i] ?? -1;
      busy.set(c, (busy.get(c) ?? 0) + ((spans.end[i] ?? 0) - (spans.start[i] ?? 0)) * (spans.busy?.busy[i] ?? 1));
    }
    const top = [...busy].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 3);
    const busiest = top.map(([c, ns]) => `CPU ${String(c)} ${((100 * ns) / span).toFixed(0)}%`).join(", ");
    const what = spans.busy ? "column" : "span";
    // (the parts are equal, to a ns)
    const body = spans.busy
      ? `summed per ${formatDuration((spans.end[0] ?? 0) - (spans.start[0] ?? 0))} column${summed ? "" : live ? " (too many context switches to draw each span)" : ` (too many context switches to draw each span: zoom in under ${LIMIT.toLocaleString("en-US")} to see them)`}, busy on ${String(busy.size)} of ${String(rows.cpus.length)} CPUs`
      : `${String(spans.length)} spans on ${String(busy.size)} of ${String(rows.cpus.length)} CPUs`;
    return `CPU lanes over ${formatDuration(span)}, a row per CPU by node > LLC > core: ${body}; busiest ${busiest || "none"}${lost > 0 ? `; ${String(lost)} ${what}${lost === 1 ? "" : "s"} during which the CPU lost events (marked red)` : ""}`;
  }, [spans, shown, rows, summed, live]);

  // the keyboard cursor's span (-1: a gap), kept within the rows and the window
  const cur = cursor && { row: Math.min(cursor.row, rows.cpus.length - 1), t: Math.max(d0, Math.min(d1, cursor.t)) };
  const curSpan = cur && spans && ranges ? spanAt(spans, ranges, rows.cpus[cur.row] ?? -1, cur.t) : -1;
  const curRow = cur?.row ?? -1;
  const curT = cur?.t ?? 0;

  // draw
  useEffect(() => {
    const cv = canvasRef.current;
    if (!cv || !spans) return;
    const dpr = window.devicePixelRatio || 1;
    cv.width = Math.round(width * dpr);
    cv.height = Math.round(height * dpr);
    const g = cv.getContext("2d");
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);
    const span = Math.max(1, d1 - d0);
    const xOf = (t: number) => ((t - d0) / span) * width;
    for (let i = 0; i < spans.length; i++) {
      const row = rows.rowOf.get(spans.cpu[i] ?? -1);
      if (row === undefined) continue;
      const x0 = Math.max(0, xOf(spans.start[i] ?? 0));
      const x1 = Math.min(width, xOf(spans.end[i] ?? 0));
      if (x1 <= 0 || x0 >= width) continue;
      const pid = spans.pid[i] ?? 0;
      const comm = spans.comm.dict[spans.comm.idx[i] ?? -1] ?? "";
      // summed: a bar as tall as the column was busy, on rows tall enough to read a height (4 px);
      // on thinner ones as opaque as it was busy, faint but seen however little it was
      const full = Math.max(rowH - (rowH >= 4 ? 1 : 0), 0.5);
      const share = spans.busy ? (spans.busy.busy[i] ?? 1) : 1;
      const tall = spans.busy && rowH >= 4 ? Math.max(1, Math.round(share * full)) : full;
      const opaque = spans.busy && rowH < 4 ? 0.15 + 0.85 * share : 1;
      g.globalAlpha = selected === null || selected === pid ? opaque : 0.18 * opaque;
      g.fillStyle = processColor(processKey(pid, comm, spans.tgid[i] ?? -1));
      g.fillRect(x0, row * rowH + full - tall, Math.max(0.6, x1 - x0), tall);
    }
    g.globalAlpha = 1;
    // spans during which their CPU lost events: a red bar along the top of the row
    g.fillStyle = "#d62728";
    for (let i = 0; i < spans.length; i++) {
      if (!spans.lost[i]) continue;
      const row = rows.rowOf.get(spans.cpu[i] ?? -1);
      if (row === undefined) continue;
      const x0 = Math.max(0, xOf(spans.start[i] ?? 0));
      const x1 = Math.min(width, xOf(spans.end[i] ?? 0));
      if (x1 > 0 && x0 < width) g.fillRect(x0, row * rowH, Math.max(1, x1 - x0), Math.max(1, Math.min(3, rowH / 3)));
    }
    if (selected !== null) {
      // the selected task's spans over the others, dark and at least 3 px tall, so that a thin
      // row of a many-CPU machine still shows where it ran; summed, each column it ran in, as
      // tall as its share on rows of 4 px or more
      g.fillStyle = "#111";
      const h = Math.max(rowH, 3);
      for (let i = 0; i < spans.length; i++) {
        // (summed, until the columns answer for this task: where it ran most, its share there)
        const share = mineShare ? (mineShare[i] ?? 0) : spans.pid[i] === selected ? (spans.busy?.share[i] ?? 1) : 0;
        if (share <= 0) continue;
        const row = rows.rowOf.get(spans.cpu[i] ?? -1);
        if (row === undefined) continue;
        const x0 = Math.max(0, xOf(spans.start[i] ?? 0));
        const x1 = Math.min(width, xOf(spans.end[i] ?? 0));
        if (x1 <= 0 || x0 >= width) continue;
        if (spans.busy && rowH >= 4) {
          const full = rowH - 1;
          const tall = Math.max(1, Math.round(share * full));
          g.fillRect(x0, row * rowH + full - tall, Math.max(1, x1 - x0), tall);
        } else g.fillRect(x0, row * rowH + rowH / 2 - h / 2, Math.max(1, x1 - x0), h);
      }
    }
    if (stored < d1) {
      g.fillStyle = "rgba(0, 0, 0, 0.07)";
      g.fillRect(Math.max(0, xOf(stored)), 0, width - Math.max(0, xOf(stored)), height);
    }
    for (const b of rows.breaks) {
      g.fillStyle = b.kind === "node" ? "#555" : "#d8d8d8";
      g.fillRect(0, b.row * rowH - (b.kind === "node" ? 1 : 0.5), width, b.kind === "node" ? 1.5 : 1);
    }
    if (curRow >= 0) {
      // the keyboard cursor: its span outlined (in a gap, a mark at its time)
      const x0 = curSpan >= 0 ? Math.max(0, xOf(spans.start[curSpan] ?? 0)) : xOf(curT) - 1;
      const x1 = curSpan >= 0 ? Math.min(width, xOf(spans.end[curSpan] ?? 0)) : x0 + 2;
      g.strokeStyle = "#0b57d0";
      g.lineWidth = 2;
      g.strokeRect(x0, curRow * rowH - 1, Math.max(2, x1 - x0), rowH + 2);
    }
  }, [spans, rows, rowH, height, width, d0, d1, selected, curRow, curT, curSpan, stored, mineShare]);

  // playhead, every frame
  useEffect(
    () =>
      player.onFrame((t) => {
        const h = headRef.current;
        if (!h) return;
        const x = ((t - d0) / Math.max(1, d1 - d0)) * width;
        h.style.transform = `translateX(${x.toFixed(1)}px)`;
        h.style.visibility = x < 0 || x > width ? "hidden" : "visible";
      }),
    [player, d0, d1, width],
  );

  const spanUnder = (e: MouseEvent<HTMLCanvasElement>): number => {
    if (!spans || !ranges) return -1;
    const r = e.currentTarget.getBoundingClientRect();
    const row = Math.floor((e.clientY - r.top) / rowH);
    const cpu = rows.cpus[row];
    if (cpu === undefined) return -1;
    return spanAt(spans, ranges, cpu, d0 + ((e.clientX - r.left) / width) * (d1 - d0));
  };
  const spanText = (i: number): string => {
    if (!spans) return "";
    const comm = spans.comm.dict[spans.comm.idx[i] ?? -1] ?? "";
    const s = spans.start[i] ?? 0;
    const ran = (spans.end[i] ?? 0) - s;
    const lost = spans.lost[i] ? " · events were lost on this CPU during it: who ran around it may be wrong" : "";
    if (spans.busy) {
      const pct = (v: number | undefined) => `${(100 * (v ?? 0)).toFixed(0)}%`;
      const n = spans.busy.spans[i] ?? 0;
      const own = mineShare && selected !== null && selected !== spans.pid[i] && (mineShare[i] ?? 0) > 0 ? ` · the selected task ${String(selected)}: ${pct(mineShare[i])}` : "";
      return `CPU ${String(spans.cpu[i])} · busy ${pct(spans.busy.busy[i])} of the ${formatDuration(ran)} from +${formatDuration(s - tStart)} · ran most: ${comm} ${String(spans.pid[i])}, ${pct(spans.busy.share[i])}${own} · ${n.toLocaleString("en-US")} span${n === 1 ? "" : "s"}${lost}`;
    }
    return `CPU ${String(spans.cpu[i])} · ${comm} ${String(spans.pid[i])} · ran ${formatDuration(ran)} from +${formatDuration(s - tStart)}${lost}`;
  };
  const onMove = (e: MouseEvent<HTMLCanvasElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    if (d0 + ((e.clientX - r.left) / width) * (d1 - d0) > stored) {
      setHover(`after +${formatDuration(stored - tStart)}: ${afterText}`);
      return;
    }
    const i = spanUnder(e);
    setHover(spans && i >= 0 ? spanText(i) : null);
  };
  const cursorText = cur && (curSpan >= 0 ? spanText(curSpan) : `CPU ${String(rows.cpus[cur.row] ?? "?")} · idle at +${formatDuration(cur.t - tStart)}`);
  const onKey = (e: KeyboardEvent<HTMLCanvasElement>) => {
    if (!spans || !ranges) return;
    if (e.key === "Enter") {
      if (curSpan >= 0) onSelect?.(spans.pid[curSpan] ?? null);
      e.preventDefault();
      return;
    }
    if (e.key === "Escape") {
      setCursor(null);
      return;
    }
    if (!NAV_KEYS.has(e.key)) return; // (Tab and the rest keep their meaning)
    e.preventDefault();
    // the first key puts the cursor on the top CPU at the window's middle; the next ones move it
    setCursor(cur ? moveCursor(spans, ranges, rows.cpus, cur, e.key) : { row: 0, t: (d0 + d1) / 2 });
  };
  const onClick = (e: MouseEvent<HTMLCanvasElement>) => {
    const i = spanUnder(e);
    if (spans && i >= 0) onSelect?.(spans.pid[i] ?? null);
  };

  return (
    <div
      className="cpu-lanes"
      data-testid={testId}
      data-status={loaded.status}
      data-mode={shown.status === "ok" && shown.spans.busy ? "busy" : "spans"}
      data-parts={busy ? parts : undefined}
      data-mine={shown.status === "ok" && shown.spans.busy && shown.mine !== null ? shown.mine : undefined}
      data-spans={spans?.length ?? 0}
      data-rows={rows.cpus.length}
      data-t0={loaded.status === "ok" ? Math.floor(loaded.t0) : undefined}
      data-t1={loaded.status === "ok" ? Math.ceil(loaded.t1) : undefined}
    >
      {shown.status === "ok" && shown.spans.length === 0 ? (
        <div className="cpu-lanes-note" data-testid={`${testId}-note`}>
          {shown.t1 <= shown.t0 && stored < d1
            ? `CPU lanes: this window is ${afterText}`
            : overview && !(overview.by_kind.switch ?? []).some((v) => v > 0)
              ? "CPU lanes: the recording has no context switch (sched_switch), so who ran on each CPU is not known"
              : "CPU lanes: no task ran on any CPU in this window, by its context switches"}
        </div>
      ) : shown.status === "ok" ? (
        <div className={`cpu-lanes-box${stale && !live && !sameWindow ? " stale" : ""}`} style={{ width, height }}>
          <canvas
            ref={canvasRef}
            role="application"
            aria-roledescription="CPU lanes"
            aria-label={`${summary}. Arrow keys move between CPUs and spans, Enter selects the task.`}
            tabIndex={0}
            style={{ width, height }}
            onMouseMove={onMove}
            onMouseLeave={() => { setHover(null); }}
            onClick={onClick}
            onKeyDown={onKey}
            onBlur={() => { setCursor(null); }}
            data-testid={`${testId}-canvas`}
          />
          <div ref={headRef} className="cpu-lanes-head" style={{ height }} />
        </div>
      ) : (
        <div className="cpu-lanes-note" data-testid={`${testId}-note`}>
          {shown.status === "loading" ? "CPU lanes: loading…" : `CPU lanes: ${shown.message}`}
        </div>
      )}
      <div className="cpu-lanes-hover" data-testid={`${testId}-hover`} aria-live="polite">
        {hover ?? cursorText ?? (loaded.status === "ok" ? `${summary} · hover a span for its task, click to select it` : stale ? "CPU lanes: loading the new window…" : "\u00a0")}
      </div>
    </div>
  );
}
