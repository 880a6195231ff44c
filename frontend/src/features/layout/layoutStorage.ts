/**
 * Where the dashboard's column widths are remembered between visits: the browser's localStorage,
 * behind a guard. react-resizable-panels parses what it reads without a try, so a value another
 * version or a hand edit left there (not JSON, not an object, a width that is no number) would
 * break the page at load: the guard hands it only a layout it can use, every width a finite
 * percentage, else nothing (the default widths). A browser that refuses storage (a private
 * window, a sandboxed frame) keeps the widths for the visit only.
 */
import type { LayoutStorage } from "react-resizable-panels";

/** `raw` when it is a layout: a JSON object of panel ids to percentages (0-100); else null. */
export function validLayout(raw: string | null): string | null {
  if (raw === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return null;
  const sizes = Object.values(parsed as Record<string, unknown>);
  if (sizes.length === 0) return null;
  const ok = sizes.every((v) => typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 100);
  return ok ? raw : null;
}

/** A LayoutStorage over `backing` that returns only valid layouts and never throws. */
export function guardedStorage(backing: () => LayoutStorage | null): LayoutStorage {
  const memory = new Map<string, string>();
  return {
    getItem(key: string): string | null {
      let raw: string | null = memory.get(key) ?? null;
      try {
        raw = backing()?.getItem(key) ?? raw;
      } catch {
        // storage refused: what this visit set, if anything
      }
      return validLayout(raw);
    },
    setItem(key: string, value: string): void {
      memory.set(key, value);
      try {
        backing()?.setItem(key, value);
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
