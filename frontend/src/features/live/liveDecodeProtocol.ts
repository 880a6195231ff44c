/**
 * The messages between the main thread and the live decode worker (features/live/decodeWorker.ts),
 * and the worker's side of a request: decode one hub frame (an Arrow IPC stream) into EventColumns
 * (inflated first when it is a hub frame: frameInflate.ts) and list the typed arrays' buffers so they
 * are transferred back (moved, not copied). Pure, so Vitest checks it with the real structured clone
 * a postMessage uses.
 */
import type { EventColumns } from "../../viz/columns";
import { inflateFrame } from "./frameInflate";

export interface DecodeRequest {
  id: number;
  /** the frame's bytes, transferred to the worker */
  bytes: ArrayBuffer;
  /** a hub frame (a zlib stream: inflate, then decode), not a stored chunk's plain IPC */
  inflate?: boolean;
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

type Answer = { reply: DecodeReply; transfer: ArrayBuffer[] };

function failed(id: number, e: unknown): Answer {
  const err = e instanceof Error ? e : new Error(String(e));
  return { reply: { type: "failed", id, name: err.name, message: err.message }, transfer: [] };
}

/** The worker's answer to one request of plain Arrow IPC, with what to transfer. */
export function handleDecode(req: DecodeRequest, decode: (bytes: Uint8Array) => EventColumns, bytes: Uint8Array = new Uint8Array(req.bytes), t0 = performance.now()): Answer {
  try {
    const cols = decode(bytes);
    return { reply: { type: "decoded", id: req.id, cols, ms: performance.now() - t0 }, transfer: transferables(cols) };
  } catch (e) {
    return failed(req.id, e);
  }
}

/** The worker's answer to any request: a hub frame is inflated first (ms counts both steps). */
export async function handleRequest(req: DecodeRequest, decode: (bytes: Uint8Array) => EventColumns): Promise<Answer> {
  if (!req.inflate) return handleDecode(req, decode);
  const t0 = performance.now();
  let bytes: Uint8Array;
  try {
    bytes = await inflateFrame(new Uint8Array(req.bytes));
  } catch (e) {
    return failed(req.id, e);
  }
  return handleDecode(req, decode, bytes, t0);
}
