/**
 * How the CPU lanes are shown, as the page's link carries it (features/urlState, `lanes=`): hidden or
 * shown, each span or summed per pixel column, and, with a compared run, its lanes too. Shown or
 * hidden is also remembered in the browser, for a view whose link does not say.
 */
import { browserStorage } from "../layout/layoutStorage";

export interface LanesView {
  shown: boolean;
  /** summed per pixel column whatever the window holds ("busy per column") */
  summed: boolean;
  /** the compared run's lanes under the open one's (only with a compared run) */
  twin: boolean;
}

/** where the browser remembers the CPU lanes hidden */
const LANES_KEY = "placemap.lanes";

/** The lanes as a view without a link's word on them opens: shown unless this browser hid them. */
export function defaultLanesView(): LanesView {
  let shown = true;
  try {
    shown = browserStorage()?.getItem(LANES_KEY) !== "hidden";
  } catch {
    // storage refused: shown
  }
  return { shown, summed: false, twin: false };
}

/** Remember shown or hidden for the next view opened without a link's word on it. */
export function rememberLanesShown(shown: boolean): void {
  try {
    browserStorage()?.setItem(LANES_KEY, shown ? "shown" : "hidden");
  } catch {
    // storage refused: kept for this visit only
  }
}

/** `lanes=` of a link: "off" when hidden, else "busy" and/or "twin" (comma separated; the twin only
 * with a compared run), nothing for the plain lanes. */
export function formatLanes(v: LanesView, compared: boolean): string | null {
  if (!v.shown) return "off";
  const flags = [v.summed ? "busy" : "", v.twin && compared ? "twin" : ""].filter((f) => f !== "");
  return flags.length ? flags.join(",") : null;
}

/** A link's `lanes=` (see formatLanes); null for no value or one that names nothing known. */
export function parseLanes(v: string | null): LanesView | null {
  if (v === null) return null;
  if (v === "off") return { shown: false, summed: false, twin: false };
  const flags = new Set(v.split(","));
  const out = { shown: true, summed: flags.has("busy"), twin: flags.has("twin") };
  return out.summed || out.twin ? out : null;
}
