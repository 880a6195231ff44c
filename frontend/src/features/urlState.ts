/**
 * The view in the URL: ?rec=ID&t=NS&sel=PID&speed=S (&live=1 for a live view: without t it follows
 * the head, with t it is paused there; &cmp=ID2 shows ID2 beside it at the same time from start; &counts=playhead
 * shows the counts (the recording's, or both of a comparison) up to the playhead; &sweep=ID a stored sweep's result in the Simulate panel;
 * &zoom=T0,T1 the timeline zoomed to that window, absolute ns, with its CPU lanes; &lanes=off,busy,twin (any of them)
 * the CPU lanes hidden, summed per column, with the compared run's under them: playback/lanesView), so a
 * reload (and later a share link) opens exactly the same view. Pure parse/format plus a replaceState writer.
 */

import { formatLanes, parseLanes, type LanesView } from "./playback/lanesView";

export interface ViewState {
  rec: string | null;
  /** playhead, absolute trace ns (integer) */
  t: number | null;
  sel: number | null;
  speed: number;
  /** open in live mode (follow the head of a recording still being collected) */
  live?: boolean;
  /** a second recording shown beside it at the same time from its start (a what-if twin) */
  cmp?: string;
  /** the counts up to the playhead instead of the whole run's (the open recording's, or both of a
   * comparison; only with rec) */
  counts?: "playhead";
  /** a stored sweep's result shown in the Simulate panel (GET /api/sim/sweeps/{id}) */
  sweep?: string;
  /** the timeline zoomed to [t0, t1], absolute trace ns (integers, t0 < t1; only with rec) */
  zoom?: [number, number];
  /** how the CPU lanes are shown, where the link says (only with rec; without: the browser's own) */
  lanes?: LanesView;
}

export const SPEEDS: readonly number[] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100];
export const MIN_SPEED = 0.01;
export const MAX_SPEED = 100;

export function clampSpeed(s: number): number {
  if (!Number.isFinite(s) || s <= 0) return 1;
  return Math.max(MIN_SPEED, Math.min(MAX_SPEED, s));
}

export function parseView(search: string): ViewState {
  const p = new URLSearchParams(search);
  const intOrNull = (v: string | null): number | null => {
    if (v === null || !/^\d+$/.test(v)) return null;
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : null;
  };
  const speedRaw = p.get("speed");
  return {
    rec: p.get("rec") || null,
    t: intOrNull(p.get("t")),
    sel: intOrNull(p.get("sel")),
    speed: speedRaw === null ? 1 : clampSpeed(Number(speedRaw)),
    live: p.get("live") === "1",
    cmp: p.get("cmp") || undefined,
    ...(p.get("rec") && p.get("counts") === "playhead" ? { counts: "playhead" as const } : {}),
    ...(p.get("sweep") ? { sweep: p.get("sweep") ?? "" } : {}),
    ...zoomOf(p.get("rec") ? p.get("zoom") : null),
    ...lanesOf(p.get("rec") ? p.get("lanes") : null),
  };
}

function lanesOf(v: string | null): { lanes: LanesView } | Record<string, never> {
  const lanes = parseLanes(v);
  return lanes ? { lanes } : {};
}

/** `T0,T1` (integers, T0 < T1) as the view's zoom; nothing for anything else. */
function zoomOf(v: string | null): { zoom: [number, number] } | Record<string, never> {
  const m = v === null ? null : /^(\d+),(\d+)$/.exec(v);
  if (!m) return {};
  const a = Number(m[1]);
  const b = Number(m[2]);
  return Number.isSafeInteger(a) && Number.isSafeInteger(b) && a < b ? { zoom: [a, b] } : {};
}

export function formatView(v: ViewState): string {
  const p = new URLSearchParams();
  if (v.rec) p.set("rec", v.rec);
  if (v.t !== null) p.set("t", String(Math.round(v.t)));
  if (v.sel !== null) p.set("sel", String(v.sel));
  if (v.speed !== 1) p.set("speed", String(v.speed));
  if (v.live) p.set("live", "1");
  if (v.cmp) p.set("cmp", v.cmp);
  if (v.rec && v.counts === "playhead") p.set("counts", "playhead");
  if (v.sweep) p.set("sweep", v.sweep);
  if (v.rec && v.zoom) p.set("zoom", `${String(Math.floor(v.zoom[0]))},${String(Math.ceil(v.zoom[1]))}`);
  const lanes = v.rec && v.lanes ? formatLanes(v.lanes, Boolean(v.cmp)) : null;
  if (lanes !== null) p.set("lanes", lanes);
  const s = p.toString();
  return s ? `?${s}` : "";
}
