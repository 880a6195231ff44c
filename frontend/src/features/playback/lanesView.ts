/**
 * How the CPU lanes are shown, as the page's link carries it (features/urlState, `lanes=`): hidden or
 * shown, each span or summed per pixel column, and, with a compared run, its lanes too. A link that
 * does not say had them shown, each span. Shown or hidden is also remembered in the browser, for a
 * recording opened from the list.
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

/** The lanes as a recording opened from the list shows them: shown unless this browser hid them. */
export function defaultLanesView(): LanesView {
  let shown = true;
  try {
    shown = browserStorage()?.getItem(LANES_KEY) !== "hidden";
  } catch {
    // storage refused: shown
  }
  return { shown, summed: false, twin: false };
}

/** Remember shown or hidden for the next recording opened from the list. */
export function rememberLanesShown(shown: boolean): void {
  try {
    browserStorage()?.setItem(LANES_KEY, shown ? "shown" : "hidden");
  } catch {
    // storage refused: kept for this visit only
  }
}

/** The lanes a link that does not say them had: shown, each span. */
export const PLAIN_LANES: LanesView = { shown: true, summed: false, twin: false };

/** `lanes=` of a link: "off" when hidden, "busy" when summed, "twin" with the compared run's (only
 * with a compared run), comma separated; nothing for the plain lanes (PLAIN_LANES). */
export function formatLanes(v: LanesView, compared: boolean): string | null {
  const flags = [v.shown ? "" : "off", v.summed ? "busy" : "", v.twin && compared ? "twin" : ""].filter((f) => f !== "");
  return flags.length ? flags.join(",") : null;
}

/** A link's `lanes=` (see formatLanes); null for no value or one that names nothing known. */
export function parseLanes(v: string | null): LanesView | null {
  if (v === null) return null;
  const flags = new Set(v.split(","));
  if (!["off", "busy", "twin"].some((f) => flags.has(f))) return null;
  return { shown: !flags.has("off"), summed: flags.has("busy"), twin: flags.has("twin") };
}
