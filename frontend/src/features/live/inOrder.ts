/**
 * In-order delivery of work that may finish out of order: a live feed starts decoding each hub
 * frame as it arrives (in a worker, several may be in flight) but must hand frames and status
 * messages on in arrival order, because the Player's buffer and its gap logic assume it.
 */
export class InOrder {
  private chain: Promise<void> = Promise.resolve();

  /** Queue work; deliver(result) or fail(error) runs after everything queued before it. */
  push<T>(work: Promise<T>, deliver: (v: T) => void, fail: (e: unknown) => void): void {
    // the rejection is handled in turn below: not an unhandled one meanwhile
    work.catch(() => undefined);
    this.chain = this.chain.then(() => work.then(deliver, fail)).catch(() => undefined);
  }

  /** Resolves once everything queued so far has been delivered. */
  idle(): Promise<void> {
    return this.chain;
  }
}
