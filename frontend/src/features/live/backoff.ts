/**
 * Reconnect backoff for the live hub socket: exponential from a base delay up to a cap, with
 * jitter so many viewers of one server do not reconnect in lockstep after a restart. Pure (the
 * random source is injected), so the schedule is testable.
 */

export interface BackoffOptions {
  /** first delay, ms */
  baseMs: number;
  /** largest delay, ms */
  maxMs: number;
  /** fraction of the delay that is random (0 = none, 0.5 = delay in [0.5d, d]) */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 250, maxMs: 8000, jitter: 0.5 };

/** The delay before reconnect attempt `attempt` (0-based), given a random number in [0, 1). */
export function backoffDelay(attempt: number, opts: BackoffOptions, rand: number): number {
  const n = Math.max(0, Math.floor(attempt));
  // 2^n overflows to Infinity for large n; min() keeps it at the cap
  const full = Math.min(opts.maxMs, opts.baseMs * Math.pow(2, n));
  const j = Math.max(0, Math.min(1, opts.jitter));
  const r = Math.max(0, Math.min(1, rand));
  return Math.round(full * (1 - j) + full * j * r);
}

/** Attempt counter: next() gives the next delay, reset() after a connection that delivered a frame. */
export class Backoff {
  private attempt = 0;
  constructor(
    private readonly opts: BackoffOptions = DEFAULT_BACKOFF,
    private readonly random: () => number = Math.random,
  ) {}

  next(): number {
    return backoffDelay(this.attempt++, this.opts, this.random());
  }

  reset(): void {
    this.attempt = 0;
  }

  get attempts(): number {
    return this.attempt;
  }
}
