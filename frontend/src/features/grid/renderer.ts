/**
 * Canvas drawing of one grid frame: LLC heat fills, CPU cells (running task colored by process,
 * runnable count), selection and hover outlines, and migration flights. Called once per animation
 * frame by the Player; allocation-free in the steady state. Labels live in the SVG overlay.
 */
import { interpolateYlOrRd } from "d3-scale-chromatic";
import type { GridLayout } from "../../viz/layout";
import { flightPosition } from "../../viz/animate";
import { processColor, processKey } from "../../viz/colors";
import { TaskState, type ReplayState } from "../../viz/replay";

export interface Flight {
  pid: number;
  from: number;
  to: number;
  color: string;
  levelColor: string;
  startMs: number;
}

export interface FrameInput {
  layout: GridLayout;
  state: ReplayState | null;
  /** per LLC box index (layout.llcs order): utilization 0..1, NaN unknown */
  llcHeat: Float64Array;
  flights: readonly Flight[];
  nowMs: number;
  flightMs: number;
  selected: number | null;
  hoverCpu: number | null;
}

const HEAT_STEPS = 64;
const heatColors: string[] = Array.from({ length: HEAT_STEPS + 1 }, (_, i) =>
  // keep the low end near white so idle LLCs read as empty
  i === 0 ? "#f4f6f9" : interpolateYlOrRd(0.08 + (0.8 * i) / HEAT_STEPS),
);

export function heatColor(u: number): string {
  if (!Number.isFinite(u)) return "#eef1f5";
  const k = Math.round(Math.max(0, Math.min(1, u)) * HEAT_STEPS);
  return heatColors[k] ?? "#eef1f5";
}

export function taskColor(state: ReplayState, pid: number): string {
  const t = state.tasks.get(pid);
  return processColor(processKey(pid, t?.comm ?? "", state.tgidOf(pid)));
}

function truncate(ctx: CanvasRenderingContext2D, s: string, w: number): string {
  if (ctx.measureText(s).width <= w) return s;
  let n = s.length;
  while (n > 1 && ctx.measureText(s.slice(0, n) + "\u2026").width > w) n--;
  return s.slice(0, n) + "\u2026";
}

export function drawFrame(ctx: CanvasRenderingContext2D, f: FrameInput): void {
  const { layout, state } = f;
  // the context is opaque (alpha: false): paint the background instead of clearRect (which is black)
  ctx.fillStyle = "#f7f8fa";
  ctx.fillRect(0, 0, layout.width, layout.height);

  // NUMA nodes
  ctx.lineWidth = 1;
  for (const n of layout.nodes) {
    ctx.fillStyle = "#e3e7ed";
    ctx.fillRect(n.x, n.y, n.w, n.h);
    ctx.strokeStyle = "#8b95a5";
    ctx.strokeRect(n.x + 0.5, n.y + 0.5, n.w - 1, n.h - 1);
  }
  for (const n of layout.emptyNodes) {
    ctx.strokeStyle = "#8b95a5";
    ctx.setLineDash([3, 3]);
    ctx.strokeRect(n.x + 0.5, n.y + 0.5, n.w - 1, n.h - 1);
    ctx.setLineDash([]);
  }
  // LLCs with their utilization heat
  for (let i = 0; i < layout.llcs.length; i++) {
    const l = layout.llcs[i];
    if (!l) continue;
    ctx.fillStyle = heatColor(f.llcHeat[i] ?? NaN);
    ctx.fillRect(l.x, l.y, l.w, l.h);
    ctx.strokeStyle = "#6b7686";
    ctx.strokeRect(l.x + 0.5, l.y + 0.5, l.w - 1, l.h - 1);
  }

  // CPUs, in passes that batch canvas state changes (one path per style, text last)
  const fontPx = 10;
  ctx.font = `${fontPx}px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace`;
  ctx.textBaseline = "middle";
  const running = state?.running;
  // 1. cell backgrounds: idle/known white, unknown occupant grey, offline darker
  ctx.fillStyle = "#ffffff";
  ctx.beginPath();
  for (const c of layout.cpus) if (c.online && (running?.[c.cpu] ?? -1) >= 0) ctx.rect(c.x, c.y, c.w, c.h);
  ctx.fill();
  ctx.fillStyle = "#f0f1f3";
  ctx.beginPath();
  for (const c of layout.cpus) if (c.online && (running?.[c.cpu] ?? -1) < 0) ctx.rect(c.x, c.y, c.w, c.h);
  ctx.fill();
  ctx.fillStyle = "#c9ced6";
  ctx.beginPath();
  let anyOffline = false;
  for (const c of layout.cpus) {
    if (c.online) continue;
    anyOffline = true;
    ctx.rect(c.x, c.y, c.w, c.h);
  }
  ctx.fill();
  // 2. borders, and a slash through offline CPUs
  ctx.strokeStyle = "#aab3bf";
  ctx.beginPath();
  for (const c of layout.cpus) ctx.rect(c.x + 0.5, c.y + 0.5, Math.max(0, c.w - 1), Math.max(0, c.h - 1));
  ctx.stroke();
  if (anyOffline) {
    ctx.strokeStyle = "#8a93a0";
    ctx.beginPath();
    for (const c of layout.cpus) {
      if (c.online) continue;
      ctx.moveTo(c.x, c.y + c.h);
      ctx.lineTo(c.x + c.w, c.y);
    }
    ctx.stroke();
  }
  if (!state || !running) {
    drawOverlays(ctx, f);
    return;
  }
  // 3. running tasks, colored by process
  for (const c of layout.cpus) {
    const pid = running[c.cpu] ?? -1;
    if (!c.online || pid <= 0) continue;
    const inset = c.w > 14 ? 2 : 1;
    ctx.fillStyle = taskColor(state, pid);
    ctx.fillRect(c.x + inset, c.y + inset, c.w - 2 * inset, c.h - 2 * inset);
  }
  // 4. queue badges (dark boxes in one path, then their numbers) and comm text on big cells
  ctx.fillStyle = "#1d2330";
  ctx.beginPath();
  for (const c of layout.cpus) {
    const rq = state.runnable[c.cpu] ?? 0;
    if (rq <= 0) continue;
    if (c.w >= 18 && c.h >= 16) {
      const bw = badgeWidth(ctx, rq);
      // bottom-right, clear of the CPU number (top-left) and the comm text (bottom-left)
      ctx.rect(c.x + c.w - bw - 2, c.y + c.h - 14, bw, 12);
    } else {
      // tiny cells: a dark bar whose length is the queue (saturating at 4)
      ctx.rect(c.x, c.y + c.h - 3, (c.w * Math.min(rq, 4)) / 4, 3);
    }
  }
  ctx.fill();
  ctx.fillStyle = "#fff";
  for (const c of layout.cpus) {
    const rq = state.runnable[c.cpu] ?? 0;
    if (rq <= 0 || c.w < 18 || c.h < 16) continue;
    const bw = badgeWidth(ctx, rq);
    ctx.fillText(badgeLabel(rq), c.x + c.w - bw + 1, c.y + c.h - 7.5);
  }
  ctx.fillStyle = "#111";
  for (const c of layout.cpus) {
    const pid = running[c.cpu] ?? -1;
    if (pid <= 0 || c.w < 56 || c.h < 30) continue;
    const comm = state.tasks.get(pid)?.comm ?? "";
    ctx.fillText(truncate(ctx, `${comm} ${pid}`, c.w - 36), c.x + 4, c.y + c.h - 8);
  }
  drawOverlays(ctx, f);
}

const badgeWidths = new Map<number, number>();
function badgeLabel(rq: number): string {
  return rq > 99 ? "99+" : String(rq);
}
function badgeWidth(ctx: CanvasRenderingContext2D, rq: number): number {
  const k = Math.min(rq, 100);
  let w = badgeWidths.get(k);
  if (w === undefined) {
    w = ctx.measureText(badgeLabel(rq)).width + 6;
    badgeWidths.set(k, w);
  }
  return w;
}

/** Selection and hover outlines, and migration flights, over the cells. */
function drawOverlays(ctx: CanvasRenderingContext2D, f: FrameInput): void {
  const { layout, state } = f;
  // selected task: solid ring when running, dashed when queued/sleeping where it last was
  if (state && f.selected !== null) {
    const t = state.tasks.get(f.selected);
    if (t && t.cpu >= 0 && t.state !== TaskState.Dead) {
      const c = layout.byCpu[t.cpu];
      if (c) {
        ctx.lineWidth = 3;
        ctx.strokeStyle = "#000";
        if (t.state !== TaskState.Running) ctx.setLineDash([4, 3]);
        ctx.strokeRect(c.x - 1.5, c.y - 1.5, c.w + 3, c.h + 3);
        ctx.setLineDash([]);
        ctx.lineWidth = 1.5;
        ctx.strokeStyle = "#fff";
        ctx.strokeRect(c.x + 1, c.y + 1, c.w - 2, c.h - 2);
        ctx.lineWidth = 1;
      }
    }
  }
  if (f.hoverCpu !== null) {
    const c = layout.byCpu[f.hoverCpu];
    if (c) {
      ctx.lineWidth = 2;
      ctx.strokeStyle = "#2b6cb0";
      ctx.strokeRect(c.x, c.y, c.w, c.h);
      ctx.lineWidth = 1;
    }
  }

  // flights
  for (const fl of f.flights) {
    const a = layout.byCpu[fl.from];
    const b = layout.byCpu[fl.to];
    if (!a || !b) continue;
    const p = (f.nowMs - fl.startMs) / f.flightMs;
    if (p < 0 || p > 1) continue;
    const pos = flightPosition(a, b, p);
    const r = Math.max(3, Math.min(8, Math.min(a.w, a.h) * 0.35));
    ctx.globalAlpha = 0.55 * (1 - p * 0.5);
    ctx.strokeStyle = fl.levelColor;
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(a.x + a.w / 2, a.y + a.h / 2);
    // trail along the chord from origin to the current point
    ctx.lineTo(pos.x, pos.y);
    ctx.stroke();
    ctx.globalAlpha = 1;
    ctx.beginPath();
    ctx.arc(pos.x, pos.y, r, 0, Math.PI * 2);
    ctx.fillStyle = fl.color;
    ctx.fill();
    ctx.lineWidth = 2.5;
    ctx.strokeStyle = fl.levelColor;
    ctx.stroke();
    ctx.lineWidth = 1;
  }
}
