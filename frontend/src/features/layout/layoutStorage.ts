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
 */
import type { LayoutStorage } from "react-resizable-panels";

/** The widest a side column is remembered, in CSS pixels; anything wider is no layout of ours. */
const MAX_PX = 100_000;

/** The library's layout (`layout`, JSON of panel id to percent) in a window `width` px wide, as the
 * JSON of the `sides`' widths in pixels; null when it is not a layout holding every side. */
export function toPixels(layout: string, sides: readonly string[], width: number): string | null {
  const pct = numbers(layout, sides, 100);
  if (pct === null || !(width > 0)) return null;
  return JSON.stringify(Object.fromEntries(sides.map((s) => [s, Math.round(((pct[s] ?? 0) * width) / 100)])));
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

/** A LayoutStorage over `backing` keeping the `sides`' pixels (see above) for a window `width()` px
 * wide; it never throws, and what the backing refuses it keeps for the visit. */
export function pixelStorage(
  backing: () => LayoutStorage | null,
  sides: readonly string[],
  center: string,
  width: () => number,
): LayoutStorage {
  const memory = new Map<string, string>();
  return {
    getItem(key: string): string | null {
      let raw: string | null = memory.get(key) ?? null;
      try {
        raw = backing()?.getItem(key) ?? raw;
      } catch {
        // storage refused: what this visit set, if anything
      }
      return toLayout(raw, sides, center, width());
    },
    setItem(key: string, value: string): void {
      const px = toPixels(value, sides, width());
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
