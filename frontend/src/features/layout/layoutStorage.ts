/**
 * Where the dashboard's column widths are remembered between visits: the browser's localStorage,
 * as the side columns' widths in pixels ({"column-left": 480, "column-right": 320}; the middle
 * column takes the rest), so that a reload at another window size opens them as wide as they were,
 * as a window resize during the visit keeps them. react-resizable-panels writes and reads layouts
 * as percentages of the window: the storage turns them into pixels on the way in and back into
 * percentages of the window of the moment on the way out. What it hands the library is always a
 * layout it can use: the library parses what it reads without a try, so a value another version or
 * a hand edit left there (not JSON, not an object, a width that is no number) would break the page
 * at load; such a value reads as nothing (the default widths). A browser that refuses storage (a
 * private window, a sandboxed frame) keeps the widths for the visit only.
 *
 * A folded side (0 px) keeps the width it had open beside it (`"open": {"column-left": 480}`), so
 * that unfolding it after a reload brings it back at that width: the library's own memory of it is
 * for the visit only, and without it the column came back at its minimum.
 */
import type { LayoutStorage } from "react-resizable-panels";

/** The widest a side column is remembered, in CSS pixels; anything wider is no layout of ours. */
const MAX_PX = 100_000;

/** The library's layout (`layout`, JSON of panel id to percent) in a window `width` px wide, as the
 * JSON of the `sides`' widths in pixels; null when it is not a layout holding every side. A side
 * folded in it keeps its open width from the `previous` record: the one stored beside it there, or
 * its width there when it was open. */
export function toPixels(layout: string, sides: readonly string[], width: number, previous: string | null = null): string | null {
  const pct = numbers(layout, sides, 100);
  if (pct === null || !(width > 0)) return null;
  const px: Record<string, unknown> = Object.fromEntries(sides.map((s) => [s, Math.round(((pct[s] ?? 0) * width) / 100)]));
  const before = previous === null ? null : numbers(previous, sides, MAX_PX);
  const beforeOpen = previous === null ? {} : openWidths(previous, sides);
  const open: Record<string, number> = {};
  for (const s of sides) {
    if (px[s] !== 0) continue;
    const was = beforeOpen[s] ?? before?.[s];
    if (was !== undefined && was > 0) open[s] = was;
  }
  if (Object.keys(open).length > 0) px.open = open;
  return JSON.stringify(px);
}

/** The open widths a stored record (`raw`) keeps for its folded sides, those that are a width. */
export function openWidths(raw: string | null, sides: readonly string[]): Record<string, number> {
  if (raw === null) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return {};
  }
  const open = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>).open : undefined;
  if (typeof open !== "object" || open === null || Array.isArray(open)) return {};
  const out: Record<string, number> = {};
  for (const s of sides) {
    const v = (open as Record<string, unknown>)[s];
    if (typeof v === "number" && Number.isFinite(v) && v > 0 && v <= MAX_PX) out[s] = v;
  }
  return out;
}

/** Stored side widths (`raw`, JSON of panel id to pixels) as the library's layout for a window
 * `width` px wide: each side its share of the window, `center` the rest (the sides scaled down
 * together when they would not leave it any); null when `raw` is no such record. */
export function toLayout(raw: string | null, sides: readonly string[], center: string, width: number): string | null {
  if (raw === null || !(width > 0)) return null;
  const px = numbers(raw, sides, MAX_PX);
  if (px === null) return null;
  const pct = sides.map((s) => ((px[s] ?? 0) * 100) / width);
  const total = pct.reduce((a, b) => a + b, 0);
  const scale = total > 100 ? 100 / total : 1;
  const layout: Record<string, number> = Object.fromEntries(sides.map((s, i) => [s, (pct[i] ?? 0) * scale]));
  layout[center] = 100 - Math.min(total, 100);
  return JSON.stringify(layout);
}

/** `raw` parsed when it is a JSON object giving each of `keys` a finite number in 0..max. */
function numbers(raw: string, keys: readonly string[], max: number): Record<string, number> | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return null;
  const rec = parsed as Record<string, unknown>;
  const out: Record<string, number> = {};
  for (const k of keys) {
    const v = rec[k];
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > max) return null;
    out[k] = v;
  }
  return out;
}

/** The LayoutStorage of pixelStorage, which also says the width a folded side had open. */
export interface PixelStorage extends LayoutStorage {
  /** The width in pixels side `side` had before it was folded, as stored; null when none is. */
  openWidth(side: string): number | null;
}

/** A LayoutStorage over `backing` keeping the `sides`' pixels (see above) for a window `width()` px
 * wide; it never throws, and what the backing refuses it keeps for the visit. */
export function pixelStorage(
  backing: () => LayoutStorage | null,
  sides: readonly string[],
  center: string,
  width: () => number,
): PixelStorage {
  const memory = new Map<string, string>();
  let lastKey: string | null = null; // the library's key, once it has read or written
  const read = (key: string): string | null => {
    let raw: string | null = memory.get(key) ?? null;
    try {
      raw = backing()?.getItem(key) ?? raw;
    } catch {
      // storage refused: what this visit set, if anything
    }
    return raw;
  };
  return {
    getItem(key: string): string | null {
      lastKey = key;
      return toLayout(read(key), sides, center, width());
    },
    openWidth(side: string): number | null {
      return lastKey === null ? null : (openWidths(read(lastKey), sides)[side] ?? null);
    },
    setItem(key: string, value: string): void {
      lastKey = key;
      const px = toPixels(value, sides, width(), read(key));
      if (px === null) return;
      memory.set(key, px);
      try {
        backing()?.setItem(key, px);
      } catch {
        // storage refused or full: kept for this visit only
      }
    },
  };
}

/** The browser's localStorage, or null where reading the property itself throws. */
export function browserStorage(): LayoutStorage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}
