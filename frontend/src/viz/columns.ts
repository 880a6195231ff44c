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
  // interning straight from UTF-8 bytes (plain utf8 Arrow columns): no string is built for a
  // value already seen, which is most rows (a few hundred comms per chunk, 16k-65k rows)
  private readonly byHash = new Map<number, number[]>();
  private readonly raw: (Uint8Array | undefined)[] = [];

  /** Like set(), for the UTF-8 bytes [start, end) of `bytes`; decode runs only for a new value. */
  setUtf8(i: number, bytes: Uint8Array, start: number, end: number, decode: (b: Uint8Array, s: number, e: number) => string): void {
    let h = 0x811c9dc5;
    for (let k = start; k < end; k++) h = Math.imul(h ^ (bytes[k] ?? 0), 0x01000193);
    const len = end - start;
    const cands = this.byHash.get(h);
    if (cands) {
      for (const k of cands) {
        const r = this.raw[k];
        if (!r || r.length !== len) continue;
        let same = true;
        for (let j = 0; j < len; j++) {
          if (r[j] !== bytes[start + j]) {
            same = false;
            break;
          }
        }
        if (same) {
          this.idx[i] = k;
          return;
        }
      }
    }
    const s = decode(bytes, start, end);
    let k = this.map.get(s);
    if (k === undefined) {
      k = this.dict.length;
      this.dict.push(s);
      this.map.set(s, k);
    }
    this.raw[k] = bytes.slice(start, end);
    if (cands) cands.push(k);
    else this.byHash.set(h, [k]);
    this.idx[i] = k;
  }

  build(): StrColumn {
    return { dict: this.dict, idx: this.idx };
  }
}
