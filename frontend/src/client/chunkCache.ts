/**
 * LRU of decoded Arrow chunks for one recording, bounded by total rows. Concurrent requests for
 * the same chunk share one fetch; evicted chunks are simply fetched again (the HTTP cache holds the
 * immutable bytes).
 */
import type { EventColumns } from "../viz/columns";

export type ChunkLoader = (seq: number) => Promise<EventColumns>;

export class ChunkLRU {
  private readonly cache = new Map<number, EventColumns>();
  private readonly inflight = new Map<number, Promise<EventColumns>>();
  private rows = 0;

  constructor(
    private readonly loader: ChunkLoader,
    private readonly maxRows: number,
  ) {}

  /** Decoded chunk if resident (marks it most recently used). */
  peek(seq: number): EventColumns | undefined {
    const c = this.cache.get(seq);
    if (c) {
      this.cache.delete(seq);
      this.cache.set(seq, c);
    }
    return c;
  }

  has(seq: number): boolean {
    return this.cache.has(seq);
  }

  isLoading(seq: number): boolean {
    return this.inflight.has(seq);
  }

  get(seq: number): Promise<EventColumns> {
    const c = this.peek(seq);
    if (c) return Promise.resolve(c);
    let p = this.inflight.get(seq);
    if (!p) {
      p = this.loader(seq).then(
        (cols) => {
          this.inflight.delete(seq);
          this.insert(seq, cols);
          return cols;
        },
        (e: unknown) => {
          this.inflight.delete(seq);
          throw e;
        },
      );
      this.inflight.set(seq, p);
    }
    return p;
  }

  private insert(seq: number, cols: EventColumns): void {
    const old = this.cache.get(seq);
    if (old) this.rows -= old.length;
    this.cache.set(seq, cols);
    this.rows += cols.length;
    // evict least recently used, but never the chunk just inserted
    for (const [k, v] of this.cache) {
      if (this.rows <= this.maxRows || k === seq) break;
      this.cache.delete(k);
      this.rows -= v.length;
    }
  }

  get residentRows(): number {
    return this.rows;
  }

  get size(): number {
    return this.cache.size;
  }
}
