/**
 * The viewer-hub socket of one live recording (WS /api/recordings/{id}/live, docs/api.md): JSON
 * status frames and binary frames (an Arrow IPC stream of the events of each committed batch),
 * handed on in arrival order. When the socket drops while the recording is still live it reconnects
 * with backoff (features/live/backoff.ts) and reports the drop, because the hub only sends what is
 * committed after a viewer subscribes: the events of the gap are not in the feed.
 * A binary frame's decode starts when it arrives (in the decode worker several run ahead, see
 * liveDecoder.ts) and frames are handed on in arrival order (inOrder.ts).
 */
import type { EventColumns } from "../../viz/columns";
import { Backoff } from "./backoff";
import { InOrder } from "./inOrder";

export type LiveConn = "connecting" | "open" | "reconnecting" | "ended" | "error";

export interface LiveStatus {
  status: string;
  event_count: number;
  lost_events: number;
  t_end_ns: number | null;
  /** binary frames this connection's queue dropped (the hub's drop-oldest for a slow viewer) */
  skipped: number;
}

export interface LiveFeedHandlers {
  /** first = the first status of a (re)connection (its counts are the recording's so far) */
  onStatus(s: LiveStatus, first: boolean): void;
  onBatch(cols: EventColumns): void;
  /** retryInMs is set while reconnecting */
  onConn(c: LiveConn, detail: string | null, retryInMs: number | null): void;
}

function parseStatus(text: string): { kind: "status"; s: LiveStatus } | { kind: "error"; message: string } | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null) return null;
  const o = v as Record<string, unknown>;
  const num = (x: unknown): number => (typeof x === "number" && Number.isFinite(x) ? x : 0);
  const strOr = (x: unknown, dflt: string): string => (typeof x === "string" ? x : dflt);
  if (o.type === "error") return { kind: "error", message: `${strOr(o.code, "error")}: ${strOr(o.message, "")}` };
  if (o.type !== "status") return null;
  return {
    kind: "status",
    s: {
      status: typeof o.status === "string" ? o.status : "unknown",
      event_count: num(o.event_count),
      lost_events: num(o.lost_events),
      t_end_ns: typeof o.t_end_ns === "number" ? o.t_end_ns : null,
      skipped: num(o.skipped),
    },
  };
}

export function liveUrl(recId: string, loc: { protocol: string; host: string } = window.location): string {
  const proto = loc.protocol === "https:" ? "wss:" : "ws:";
  return `${proto}//${loc.host}/api/recordings/${encodeURIComponent(recId)}/live`;
}

export class LiveFeed {
  private ws: WebSocket | null = null;
  private closed = false;
  private ended = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** frames are handed on in arrival order, whatever order their decodes finish in */
  private readonly order = new InOrder();
  private firstOfConn = true;

  constructor(
    private readonly url: string,
    private readonly decode: (bytes: Uint8Array) => Promise<EventColumns>,
    private readonly h: LiveFeedHandlers,
    private readonly backoff: Backoff = new Backoff(),
  ) {}

  start(): void {
    this.connect();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.ws?.close(1000);
    this.ws = null;
  }

  private connect(): void {
    if (this.closed) return;
    this.h.onConn(this.backoff.attempts === 0 ? "connecting" : "reconnecting", null, null);
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.url);
    } catch (e) {
      this.retry(e instanceof Error ? e.message : String(e));
      return;
    }
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    this.firstOfConn = true;
    ws.onopen = () => {
      if (!this.closed) this.h.onConn("open", null, null);
    };
    ws.onmessage = (ev: MessageEvent) => {
      const data: unknown = ev.data;
      if (typeof data === "string") {
        this.order.push(
          Promise.resolve(data),
          (text) => {
            if (this.closed) return;
            const m = parseStatus(text);
            if (!m) return;
            if (m.kind === "error") {
              this.ended = true;
              this.h.onConn("error", m.message, null);
              return;
            }
            this.backoff.reset();
            const first = this.firstOfConn;
            this.firstOfConn = false;
            if (m.s.status !== "live") this.ended = true;
            this.h.onStatus(m.s, first);
          },
          () => undefined,
        );
      } else if (data instanceof ArrayBuffer) {
        this.order.push(
          this.decode(new Uint8Array(data)),
          (cols) => {
            if (this.closed) return;
            this.backoff.reset();
            this.h.onBatch(cols);
          },
          (e: unknown) => {
            if (this.closed) return;
            this.h.onConn("error", `a live batch could not be decoded: ${e instanceof Error ? e.message : String(e)}`, null);
          },
        );
      }
    };
    ws.onclose = (ev: CloseEvent) => {
      void this.order.idle().then(() => {
        if (this.closed || this.ws !== ws) return;
        this.ws = null;
        if (this.ended) {
          this.h.onConn(ev.code === 1008 ? "error" : "ended", ev.code === 1008 ? ev.reason || "refused" : null, null);
          return;
        }
        this.retry(ev.reason || `connection closed (${ev.code})`);
      });
    };
  }

  private retry(detail: string): void {
    if (this.closed) return;
    const ms = this.backoff.next();
    this.h.onConn("reconnecting", detail, ms);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, ms);
  }
}
