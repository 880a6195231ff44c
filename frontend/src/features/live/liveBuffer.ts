/**
 * The head-following buffer of a live view: the event batches received from the viewer hub since
 * the view opened (or since the last resync), plus `origin`, the replay state just before the first
 * kept batch. origin + the kept batches rebuild the state at any time in the buffer, so scrubbing
 * back inside it and "jump to live" need no server round trip. Memory is bounded by rows: the oldest
 * batches are folded into origin (applied to it) and dropped. Pure: uses the one replay state machine
 * (viz/replay.ts), no DOM, no fetch.
 */
import type { ChunkInfo } from "../../client/types";
import { upperBound, type EventColumns } from "../../viz/columns";
import type { ReplayState } from "../../viz/replay";

export interface LiveSegment {
  /** > 0; the Player lists it as a chunk with seq = -id (stored chunks have seq >= 0) */
  id: number;
  cols: EventColumns;
  t0: number;
  t1: number;
}

export function isLiveSeq(seq: number): boolean {
  return seq < 0;
}

export class LiveBuffer {
  /** state just before segments[0] (null until a keyframe arrives) */
  origin: ReplayState | null = null;
  readonly segments: LiveSegment[] = [];
  private readonly byId = new Map<number, LiveSegment>();
  private nextId = 1;
  private rowsHeld = 0;
  /** rows dropped without being folded into origin (no origin yet) */
  droppedRows = 0;
  /** rows received in all */
  receivedRows = 0;
  /** largest ts received (-Infinity before the first row) */
  headTs = -Infinity;

  constructor(readonly maxRows: number) {}

  get rows(): number {
    return this.rowsHeld;
  }

  /** Start from a keyframe: batches entirely at or before it are dropped (it includes them). */
  setOrigin(st: ReplayState): void {
    this.origin = st;
    while (this.segments.length > 0 && (this.segments[0]?.t1 ?? Infinity) <= st.tNs) this.dropFirst();
  }

  /** Keep a received batch; returns its segment (null for an empty batch). */
  append(cols: EventColumns): LiveSegment | null {
    if (cols.length === 0) return null;
    const t0 = cols.ts[0] ?? 0;
    const t1 = cols.ts[cols.length - 1] ?? t0;
    const seg: LiveSegment = { id: this.nextId++, cols, t0, t1 };
    this.segments.push(seg);
    this.byId.set(seg.id, seg);
    this.rowsHeld += cols.length;
    this.receivedRows += cols.length;
    this.headTs = Math.max(this.headTs, t1);
    return seg;
  }

  get(id: number): LiveSegment | undefined {
    return this.byId.get(id);
  }

  /**
   * Fold the oldest batches into origin until at most maxRows are kept (the newest batch always
   * stays). Returns the ids dropped, oldest first.
   */
  trim(): number[] {
    const out: number[] = [];
    while (this.rowsHeld > this.maxRows && this.segments.length > 1) {
      const s = this.segments[0];
      if (!s) break;
      if (this.origin) {
        // rows at or before origin's time are already in it (a batch that straddles a keyframe)
        this.origin.apply(s.cols, upperBound(s.cols.ts, this.origin.tNs), s.cols.length);
      } else this.droppedRows += s.cols.length;
      out.push(s.id);
      this.dropFirst();
    }
    return out;
  }

  private dropFirst(): void {
    const s = this.segments.shift();
    if (!s) return;
    this.byId.delete(s.id);
    this.rowsHeld -= s.cols.length;
  }

  /** Earliest time the buffer can rebuild (origin's time), or null without an origin. */
  get startTs(): number | null {
    return this.origin ? this.origin.tNs : null;
  }

  /** The kept batches as chunk entries, for the Player's chunk walk. */
  infos(after = -Infinity): ChunkInfo[] {
    return this.segments.filter((s) => s.t1 > after).map((s) => segmentInfo(s));
  }
}

export function segmentInfo(s: LiveSegment): ChunkInfo {
  return { seq: -s.id, t_start_ns: s.t0, t_end_ns: s.t1, first_row: 0, rows: s.cols.length, bytes: 0 };
}
