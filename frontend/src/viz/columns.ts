/**
 * Decoded event columns: the typed-array form of one Arrow chunk that replay and drawing read.
 * Pure data shape plus small helpers (binary search by time). Nullable integer columns use -1
 * for null (CPUs and pids are never negative); strings are interned (dict + per-row index, -1 null).
 * ts holds absolute trace ns as float64: exact, because trace ns stay below 2^53 (docs/api.md).
 */

export interface StrColumn {
  dict: string[];
  idx: Int32Array;
}

export interface EventColumns {
  length: number;
  ts: Float64Array;
  cpu: Int32Array;
  kind: Uint8Array;
  curPid: Int32Array;
  tgid: Int32Array;
  pid: Int32Array;
  comm: StrColumn;
  targetCpu: Int32Array;
  origCpu: Int32Array;
  destCpu: Int32Array;
  prevState: StrColumn;
  nextPid: Int32Array;
  nextComm: StrColumn;
  childPid: Int32Array;
  childComm: StrColumn;
  oldPid: Int32Array;
  llc: Int32Array;
  /** NaN for null. */
  util: Float32Array;
  /** NaN for null. */
  lostEvents: Float64Array;
}

export function str(col: StrColumn, i: number): string | null {
  const k = col.idx[i] ?? -1;
  return k < 0 ? null : (col.dict[k] ?? null);
}

/** First row index whose ts > t (rows are sorted by ts). */
export function upperBound(ts: Float64Array, t: number, lo = 0, hi = ts.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ts[mid] ?? 0) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Builds an interning string column. */
export class StrColumnBuilder {
  private readonly map = new Map<string, number>();
  readonly dict: string[] = [];
  readonly idx: Int32Array;
  constructor(n: number) {
    this.idx = new Int32Array(n).fill(-1);
  }
  set(i: number, s: string | null): void {
    if (s === null) return;
    let k = this.map.get(s);
    if (k === undefined) {
      k = this.dict.length;
      this.dict.push(s);
      this.map.set(s, k);
    }
    this.idx[i] = k;
  }
  build(): StrColumn {
    return { dict: this.dict, idx: this.idx };
  }
}
