/**
 * Trace time formatting and parsing. Times are absolute trace ns held as JS numbers (exact below
 * 2^53). A user may type "123456789" (ns), "1.5s", "450.5943", "12ms", "3us" or "+1.5s" (relative
 * to the recording start).
 */

export function formatNs(ns: number): string {
  // seconds with 9 decimals, like ftrace's timestamps but to the ns
  const s = Math.floor(ns / 1e9);
  const frac = Math.round(ns - s * 1e9);
  return `${s}.${String(frac).padStart(9, "0")}`;
}

/** Short relative duration: 1.23 s, 45.6 ms, 789 us, 12 ns. */
export function formatDuration(ns: number): string {
  const a = Math.abs(ns);
  if (a >= 1e9) return `${(ns / 1e9).toFixed(a >= 1e10 ? 1 : 3)} s`;
  if (a >= 1e6) return `${(ns / 1e6).toFixed(a >= 1e7 ? 1 : 2)} ms`;
  if (a >= 1e3) return `${(ns / 1e3).toFixed(a >= 1e4 ? 1 : 2)} us`;
  return `${Math.round(ns)} ns`;
}

const UNITS: Record<string, number> = { ns: 1, us: 1e3, "\u00b5s": 1e3, ms: 1e6, s: 1e9 };

/**
 * Parse a user-typed time into absolute trace ns. Bare integers are ns; bare decimals are
 * seconds; a leading "+" makes it relative to tStart. Returns null when it does not parse.
 */
export function parseTime(input: string, tStart: number): number | null {
  const m = /^\s*(\+)?\s*(\d+)(?:\.(\d+))?\s*(ns|us|\u00b5s|ms|s)?\s*$/.exec(input);
  if (!m) return null;
  const [, rel, intPart = "0", fracPart, unit] = m;
  let ns: number;
  if (unit === undefined && fracPart === undefined) {
    ns = Number(intPart);
  } else {
    const mult = UNITS[unit ?? "s"] ?? 1e9;
    // integer and fraction separately so 450.594375 s stays exact to the ns
    const frac = fracPart ?? "";
    const digits = Math.round(Math.log10(mult));
    const fracNs = Number((frac + "0".repeat(digits)).slice(0, digits) || "0");
    ns = Number(intPart) * mult + fracNs;
  }
  if (!Number.isSafeInteger(ns)) return null;
  return rel ? tStart + ns : ns;
}
