/**
 * Migration flight animation: where a task flying from one CPU rect to another is at progress
 * p in [0, 1]. Eased, with a slight arc so crossings between distant nodes read as arcs, not
 * lines hidden under the grid. Pure.
 */
import type { Rect } from "./layout";

export interface Point {
  x: number;
  y: number;
}

export function easeInOutCubic(p: number): number {
  const t = Math.max(0, Math.min(1, p));
  return t < 0.5 ? 4 * t * t * t : 1 - Math.pow(-2 * t + 2, 3) / 2;
}

/** Position at progress p of a flight from the center of a to the center of b. */
export function flightPosition(a: Rect, b: Rect, p: number): Point {
  const ax = a.x + a.w / 2;
  const ay = a.y + a.h / 2;
  const bx = b.x + b.w / 2;
  const by = b.y + b.h / 2;
  const e = easeInOutCubic(p);
  const dx = bx - ax;
  const dy = by - ay;
  const dist = Math.hypot(dx, dy);
  // arc height grows with distance; perpendicular offset peaks mid-flight
  const bulge = Math.min(60, dist * 0.2) * Math.sin(Math.PI * e);
  const nx = dist > 0 ? -dy / dist : 0;
  const ny = dist > 0 ? dx / dist : 0;
  return { x: ax + dx * e + nx * bulge, y: ay + dy * e + ny * bulge };
}

/** Flight progress from wall-clock times (ms). */
export function flightProgress(startMs: number, nowMs: number, durationMs: number): number {
  if (durationMs <= 0) return 1;
  return Math.max(0, Math.min(1, (nowMs - startMs) / durationMs));
}
