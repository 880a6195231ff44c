/**
 * The messages between the main thread and the live decode worker (features/live/decodeWorker.ts),
 * and the worker's side of a request: decode one hub frame (an Arrow IPC stream) into EventColumns
 * and list the typed arrays' buffers so they are transferred back (moved, not copied). Pure, so
 * Vitest checks it with the real structured clone a postMessage uses.
 */
import type { EventColumns } from "../../viz/columns";

export interface DecodeRequest {
  id: number;
  /** the frame's bytes, transferred to the worker */
  bytes: ArrayBuffer;
}

export type DecodeReply =
  | { type: "ready" }
  | { type: "decoded"; id: number; cols: EventColumns; ms: number }
  | { type: "failed"; id: number; name: string; message: string };

/** Every distinct ArrayBuffer under the columns' typed arrays (a transfer list may name each once). */
export function transferables(cols: EventColumns): ArrayBuffer[] {
  const seen = new Set<ArrayBuffer>();
  for (const v of Object.values(cols) as unknown[]) {
    const arr = ArrayBuffer.isView(v) ? v : typeof v === "object" && v !== null && "idx" in v && ArrayBuffer.isView(v.idx) ? v.idx : null;
    if (arr && arr.buffer instanceof ArrayBuffer) seen.add(arr.buffer);
  }
  return [...seen];
}

/** The worker's answer to one request, with what to transfer. */
export function handleDecode(req: DecodeRequest, decode: (bytes: Uint8Array) => EventColumns): { reply: DecodeReply; transfer: ArrayBuffer[] } {
  const t0 = performance.now();
  try {
    const cols = decode(new Uint8Array(req.bytes));
    return { reply: { type: "decoded", id: req.id, cols, ms: performance.now() - t0 }, transfer: transferables(cols) };
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    return { reply: { type: "failed", id: req.id, name: err.name, message: err.message }, transfer: [] };
  }
}
