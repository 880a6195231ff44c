/**
 * Arrow chunk decoding: one Arrow IPC stream (the event schema, schemas/events.json) -> EventColumns
 * typed arrays. Owns the Arrow-specific details: nullable columns (validity bitmaps), dictionary or
 * plain utf8 strings, and int64 timestamps converted exactly to float64 ns.
 */
import { DataType, tableFromIPC, type Data, type Table, type Vector } from "apache-arrow";

type AnyData = Data;
import { StrColumnBuilder, type EventColumns, type StrColumn } from "../viz/columns";

export class ArrowDecodeError extends Error {
  override name = "ArrowDecodeError";
}

const TWO32 = 4294967296;
const MAX_EXACT = Number.MAX_SAFE_INTEGER;

function isValid(d: AnyData, i: number): boolean {
  const bm = d.nullBitmap as Uint8Array | undefined;
  if (d.nullCount === 0 || !bm || bm.length === 0) return true;
  const j = d.offset + i;
  return ((bm[j >> 3] ?? 0) & (1 << (j & 7))) !== 0;
}

function child(table: Table, name: string, required: boolean): Vector | null {
  const v = table.getChild(name);
  if (!v && required) throw new ArrowDecodeError(`chunk has no column ${name}`);
  return v;
}

/** int64 column -> float64, exact (throws beyond 2^53). */
function int64Column(vec: Vector | null, n: number, nullValue: number): Float64Array {
  const out = new Float64Array(n).fill(nullValue);
  if (!vec) return out;
  let row = 0;
  for (const d of vec.data as AnyData[]) {
    const vals: unknown = d.values;
    if (vals instanceof BigInt64Array) {
      // read the two 32-bit halves (little-endian) instead of BigInt -> Number per row
      const i32 = new Int32Array(vals.buffer, vals.byteOffset, vals.length * 2);
      for (let i = 0; i < d.length; i++) {
        if (!isValid(d, i)) {
          row++;
          continue;
        }
        const hi = i32[2 * i + 1] ?? 0;
        const lo = (i32[2 * i] ?? 0) >>> 0;
        const v = hi * TWO32 + lo;
        if (v > MAX_EXACT || v < -MAX_EXACT) throw new ArrowDecodeError(`int64 value beyond 2^53 at row ${row}`);
        out[row++] = v;
      }
    } else {
      for (let i = 0; i < d.length; i++, row++) {
        if (!isValid(d, i)) continue;
        const v = (d.values as ArrayLike<number | bigint>)[i];
        out[row] = typeof v === "bigint" ? Number(v) : (v ?? nullValue);
      }
    }
  }
  return out;
}

function intColumn<T extends Int32Array | Uint8Array>(
  vec: Vector | null,
  n: number,
  make: (n: number) => T,
  nullValue: number,
): T {
  const out = make(n);
  if (nullValue !== 0) out.fill(nullValue);
  if (!vec) return out;
  let row = 0;
  for (const d of vec.data as AnyData[]) {
    const vals = d.values as ArrayLike<number>;
    if (d.nullCount === 0) {
      for (let i = 0; i < d.length; i++) out[row++] = vals[i] ?? nullValue;
    } else {
      for (let i = 0; i < d.length; i++, row++) if (isValid(d, i)) out[row] = vals[i] ?? nullValue;
    }
  }
  return out;
}

function floatColumn(vec: Vector | null, n: number): Float32Array {
  const out = new Float32Array(n).fill(NaN);
  if (!vec) return out;
  let row = 0;
  for (const d of vec.data as AnyData[]) {
    const vals = d.values as ArrayLike<number>;
    for (let i = 0; i < d.length; i++, row++) if (isValid(d, i)) out[row] = vals[i] ?? NaN;
  }
  return out;
}

const decoder = new TextDecoder();

function decodeUtf8(bytes: Uint8Array, start: number, end: number): string {
  // comm is <= 15 bytes and almost always ASCII: skip TextDecoder for those
  let ascii = true;
  for (let k = start; k < end; k++) {
    if ((bytes[k] ?? 0) >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return String.fromCharCode(...bytes.subarray(start, end));
  return decoder.decode(bytes.subarray(start, end));
}

function stringColumn(vec: Vector | null, n: number): StrColumn {
  const b = new StrColumnBuilder(n);
  if (!vec) return b.build();
  let row = 0;
  for (const d of vec.data as AnyData[]) {
    if (DataType.isDictionary(d.type)) {
      const dictVec = d.dictionary;
      const dictStrings: (string | null)[] = [];
      if (dictVec) for (let k = 0; k < dictVec.length; k++) dictStrings.push((dictVec.get(k) as string | null) ?? null);
      const idx = d.values as ArrayLike<number>;
      for (let i = 0; i < d.length; i++, row++) {
        if (!isValid(d, i)) continue;
        b.set(row, dictStrings[idx[i] ?? -1] ?? null);
      }
    } else if (DataType.isUtf8(d.type) || DataType.isLargeUtf8(d.type)) {
      const offs = d.valueOffsets as ArrayLike<number | bigint>;
      const bytes = d.values as Uint8Array;
      for (let i = 0; i < d.length; i++, row++) {
        if (!isValid(d, i)) continue;
        b.setUtf8(row, bytes, Number(offs[i] ?? 0), Number(offs[i + 1] ?? 0), decodeUtf8);
      }
    } else {
      // any other string-like encoding (e.g. utf8 view): go through the generic accessor
      const v = vec;
      for (let i = 0; i < d.length; i++, row++) {
        const s = v.get(row) as unknown;
        b.set(row, typeof s === "string" ? s : s === null || s === undefined ? null : JSON.stringify(s));
      }
    }
  }
  return b.build();
}

/** Decode an Arrow table of the event schema. */
export function columnsFromTable(table: Table): EventColumns {
  const n = table.numRows;
  const i32 = (k: number): Int32Array => new Int32Array(k);
  return {
    length: n,
    ts: int64Column(child(table, "ts_ns", true), n, 0),
    cpu: intColumn(child(table, "cpu", true), n, i32, -1),
    kind: intColumn(child(table, "kind", true), n, (k) => new Uint8Array(k), 255),
    curPid: intColumn(child(table, "cur_pid", false), n, i32, 0),
    tgid: intColumn(child(table, "tgid", false), n, i32, -1),
    pid: intColumn(child(table, "pid", true), n, i32, 0),
    comm: stringColumn(child(table, "comm", false), n),
    targetCpu: intColumn(child(table, "target_cpu", false), n, i32, -1),
    origCpu: intColumn(child(table, "orig_cpu", false), n, i32, -1),
    destCpu: intColumn(child(table, "dest_cpu", false), n, i32, -1),
    prevState: stringColumn(child(table, "prev_state", false), n),
    nextPid: intColumn(child(table, "next_pid", false), n, i32, -1),
    nextComm: stringColumn(child(table, "next_comm", false), n),
    childPid: intColumn(child(table, "child_pid", false), n, i32, -1),
    childComm: stringColumn(child(table, "child_comm", false), n),
    oldPid: intColumn(child(table, "old_pid", false), n, i32, -1),
    llc: intColumn(child(table, "llc", false), n, i32, -1),
    util: floatColumn(child(table, "util", false), n),
    lostEvents: int64Column(child(table, "lost_events", false), n, NaN),
  };
}

/** One Arrow IPC stream's table; ArrowDecodeError when the bytes are not one. */
function readStream(bytes: Uint8Array): Table {
  try {
    return tableFromIPC(bytes);
  } catch (e) {
    throw new ArrowDecodeError(`not an Arrow IPC stream: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Decode one Arrow IPC stream (bytes of GET chunks/{seq}). */
export function decodeChunk(bytes: Uint8Array): EventColumns {
  return columnsFromTable(readStream(bytes));
}

/** CPU lanes (GET lanes.arrow): who ran on each CPU over a window, one span per row, by CPU then
 * time (backend replay/lanes.py). */
export interface LaneSpans {
  length: number;
  cpu: Int32Array;
  start: Float64Array;
  end: Float64Array;
  pid: Int32Array;
  comm: StrColumn;
  /** -1: not recorded */
  tgid: Int32Array;
  /** 1: events were lost on its CPU during it */
  lost: Uint8Array;
  /** the lanes summed per part of the window (GET lanes_busy.arrow): each row a part of a CPU, its
   * pid the task that ran most of it */
  busy?: LaneBusy;
}

export interface LaneBusy {
  /** share of the part some task ran, (0, 1] */
  busy: Float32Array;
  /** share of the part the row's task ran */
  share: Float32Array;
  /** the spans that touched the part */
  spans: Int32Array;
  /** share of the part the task asked about ran (0 without one) */
  mine: Float32Array;
}

/** A bool column (bit-packed) -> 0/1 bytes; 0 for nulls and without the column. */
function boolColumn(vec: Vector | null, n: number): Uint8Array {
  const out = new Uint8Array(n);
  if (!vec) return out;
  let row = 0;
  for (const d of vec.data as AnyData[]) {
    const bits = d.values as Uint8Array;
    for (let i = 0; i < d.length; i++, row++) {
      const j = d.offset + i;
      if (isValid(d, i) && ((bits[j >> 3] ?? 0) & (1 << (j & 7))) !== 0) out[row] = 1;
    }
  }
  return out;
}

/** Decode one Arrow IPC stream of GET lanes.arrow. */
export function decodeLanes(bytes: Uint8Array): LaneSpans {
  return lanesOf(readStream(bytes));
}

function lanesOf(table: Table): LaneSpans {
  const n = table.numRows;
  const i32 = (k: number): Int32Array => new Int32Array(k);
  return {
    length: n,
    cpu: intColumn(child(table, "cpu", true), n, i32, -1),
    start: int64Column(child(table, "start_ns", true), n, 0),
    end: int64Column(child(table, "end_ns", true), n, 0),
    pid: intColumn(child(table, "pid", true), n, i32, 0),
    comm: stringColumn(child(table, "comm", false), n),
    tgid: intColumn(child(table, "tgid", false), n, i32, -1),
    lost: boolColumn(child(table, "lost", false), n),
  };
}

/** Decode one Arrow IPC stream of GET lanes_busy.arrow: the lanes' columns, a row per part of a CPU,
 * and the part's sums. */
export function decodeLaneBusy(bytes: Uint8Array): LaneSpans {
  const table = readStream(bytes);
  const out = lanesOf(table);
  const n = table.numRows;
  out.busy = {
    busy: floatColumn(child(table, "busy", true), n),
    share: floatColumn(child(table, "share", true), n),
    spans: intColumn(child(table, "spans", true), n, (k) => new Int32Array(k), 0),
    mine: floatColumn(child(table, "mine", false), n).map((v) => (Number.isNaN(v) ? 0 : v)),
  };
  return out;
}
