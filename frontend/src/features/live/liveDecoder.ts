/**
 * Decoding of live hub frames (zlib streams of Arrow IPC: frameInflate.ts) for the Player: in a Web
 * Worker (decodeWorker.ts) when the browser can start one, so a busy feed does not take the main
 * thread's time from animation; otherwise (or when the worker fails to start) on the main thread
 * with the lazily loaded Arrow decoder. The decoded columns come back as transferred typed arrays
 * (moved, not copied). Order: answers carry their request's id and may finish out of order
 * (inflating is asynchronous); LiveFeed delivers frames in arrival order whatever order their
 * decodes finish in. Counts the main thread's ms spent per frame (posting and receiving in
 * worker mode, the whole decode otherwise) for window.__placemapStats.
 */
import type { EventColumns } from "../../viz/columns";
import { inflateFrame } from "./frameInflate";
import type { DecodeReply, DecodeRequest } from "./liveDecodeProtocol";

export type DecodeMode = "starting" | "worker" | "main";

/** A worker that has not said it is ready by then is given up on (the main thread decodes). */
const START_TIMEOUT_MS = 5000;

interface Pending {
  /** a hub frame (inflated first, counted in the stats), not a stored chunk */
  frame: boolean;
  resolve: (c: EventColumns) => void;
  reject: (e: Error) => void;
  /** kept until the worker is ready (then transferred to it) */
  bytes: Uint8Array | null;
}

/** The decode worker, or null where the browser cannot start one (then the main thread decodes). */
export function startDecodeWorker(): Worker | null {
  if (typeof Worker === "undefined") return null;
  try {
    return new Worker(new URL("./decodeWorker.ts", import.meta.url), { type: "module", name: "placemap-live-decode" });
  } catch {
    return null;
  }
}

export class LiveDecoder {
  mode: DecodeMode;
  /** frames decoded, main-thread ms spent on them, worker ms spent on them */
  frames = 0;
  mainMs = 0;
  workerMs = 0;
  /** why the worker is not used (null while it is, or when none was offered) */
  workerFailure: string | null = null;
  private worker: Worker | null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    worker: Worker | null,
    private readonly loadMain: () => Promise<(bytes: Uint8Array) => EventColumns>,
  ) {
    this.worker = worker;
    this.mode = worker ? "starting" : "main";
    if (worker) {
      worker.onmessage = (ev: MessageEvent) => {
        this.onReply(ev);
      };
      worker.onerror = (ev: ErrorEvent) => {
        ev.preventDefault();
        this.giveUp(ev.message || "the decode worker failed");
      };
      this.timer = setTimeout(() => {
        if (this.mode === "starting") this.giveUp(`the decode worker did not start within ${START_TIMEOUT_MS} ms`);
      }, START_TIMEOUT_MS);
    }
  }

  /** Decode one hub frame; frame=false for a stored chunk (plain Arrow IPC, not counted). */
  decode(bytes: Uint8Array, frame = true): Promise<EventColumns> {
    if (this.mode === "main") return this.decodeMain(bytes, frame);
    const id = ++this.nextId;
    return new Promise<EventColumns>((resolve, reject) => {
      const starting = this.mode === "starting";
      this.pending.set(id, { frame, resolve, reject, bytes: starting ? bytes : null });
      if (!starting) this.post(id, bytes, frame);
    });
  }

  close(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.worker?.terminate();
    this.worker = null;
    this.pending.clear();
  }

  private async decodeMain(bytes: Uint8Array, frame: boolean): Promise<EventColumns> {
    const decode = await this.loadMain();
    const t0 = performance.now();
    const cols = decode(frame ? await inflateFrame(bytes) : bytes);
    if (frame) {
      this.mainMs += performance.now() - t0;
      this.frames++;
    }
    return cols;
  }

  private post(id: number, bytes: Uint8Array, frame: boolean): void {
    const w = this.worker;
    if (!w) return;
    const t0 = performance.now();
    // a whole socket frame is transferred as is; a view into a larger buffer is copied first
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
    const buf = whole ? bytes.buffer : bytes.slice().buffer;
    const req: DecodeRequest = { id, bytes: buf, inflate: frame };
    w.postMessage(req, [buf]);
    this.mainMs += performance.now() - t0;
  }

  private onReply(ev: MessageEvent): void {
    const t0 = performance.now();
    // reading data deserializes the reply: the transferred column buffers are moved, the comm dictionaries copied
    const m = ev.data as DecodeReply;
    if (m.type === "ready") {
      if (this.timer !== null) clearTimeout(this.timer);
      this.timer = null;
      this.mode = "worker";
      for (const [id, p] of this.pending) {
        if (p.bytes) this.post(id, p.bytes, p.frame);
        p.bytes = null;
      }
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.type === "decoded") {
      if (p.frame) {
        this.frames++;
        this.workerMs += m.ms;
        this.mainMs += performance.now() - t0;
      }
      p.resolve(m.cols);
    } else {
      const e = new Error(m.message);
      e.name = m.name;
      p.reject(e);
    }
  }

  /** The worker cannot be used: decode on the main thread from now on (frames not yet sent too). */
  private giveUp(why: string): void {
    if (this.mode === "main") return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.mode = "main";
    this.workerFailure = why;
    this.worker?.terminate();
    this.worker = null;
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const p of waiting) {
      // frames already handed to the worker are gone with it: their batches are a hole in the feed
      if (p.bytes) this.decodeMain(p.bytes, p.frame).then(p.resolve, p.reject);
      else p.reject(new Error(`the decode worker failed: ${why}`));
    }
  }
}
