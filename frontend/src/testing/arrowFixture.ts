/**
 * Test-only: EventRow[] -> Arrow IPC stream bytes with the event schema's column types
 * (schemas/events.json), strings either plain utf8 or dictionary-encoded like the backend may send.
 */
import {
  Dictionary,
  Float32,
  Int32,
  Int64,
  Table,
  Uint8,
  Utf8,
  tableToIPC,
  vectorFromArray,
  type DataType,
  type Vector,
} from "apache-arrow";
import type { EventRow } from "../client/events";

export function rowsToIPC(rows: EventRow[], opts: { dictionary?: boolean } = {}): Uint8Array {
  const strType = (): DataType => (opts.dictionary ? new Dictionary(new Utf8(), new Int32()) : new Utf8());
  const col = (k: keyof EventRow, t: DataType): Vector =>
    vectorFromArray(
      rows.map((r) => r[k]),
      t,
    ) as Vector;
  const table = new Table({
    ts_ns: col("ts_ns", new Int64()),
    cpu: col("cpu", new Int32()),
    kind: col("kind", new Uint8()),
    cur_pid: col("cur_pid", new Int32()),
    tgid: col("tgid", new Int32()),
    pid: col("pid", new Int32()),
    comm: col("comm", strType()),
    prio: col("prio", new Int32()),
    target_cpu: col("target_cpu", new Int32()),
    orig_cpu: col("orig_cpu", new Int32()),
    dest_cpu: col("dest_cpu", new Int32()),
    prev_state: col("prev_state", strType()),
    next_pid: col("next_pid", new Int32()),
    next_comm: col("next_comm", strType()),
    next_prio: col("next_prio", new Int32()),
    child_pid: col("child_pid", new Int32()),
    child_comm: col("child_comm", strType()),
    filename: col("filename", new Utf8()),
    old_pid: col("old_pid", new Int32()),
    llc: col("llc", new Int32()),
    util: col("util", new Float32()),
    lost_events: col("lost_events", new Int64()),
  });
  return tableToIPC(table, "stream");
}
