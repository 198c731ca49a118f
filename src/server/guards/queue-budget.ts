// docs/decisions.md "Hostile clients and browsers", limits.maxQueuedBytes: one process-wide budget for
// bytes handed to sockets whose readers have not taken them yet. A reply that would go over it
// waits for room instead of piling up in memory, so a thousand readers that stop reading cost
// the budget, not a thousand images.

export class QueueBudget {
  private used = 0;
  private readonly waiting: { bytes: number; admit: () => void }[] = [];

  constructor(readonly maxBytes: number) {}

  /** Resolves once `bytes` fit (at once when the budget is empty: a chunk larger than it still goes). */
  reserve(bytes: number): Promise<void> {
    if (this.waiting.length === 0 && this.fits(bytes)) {
      this.used += bytes;
      return Promise.resolve();
    }
    return new Promise((admit) => this.waiting.push({ bytes, admit }));
  }

  /**
   * Like `reserve`, but gives up after `ms`: resolves false (nothing reserved) when no room came
   * in time, so a reply can be refused with 503 instead of waiting behind readers that never read.
   */
  reserveWithin(bytes: number, ms: number): Promise<boolean> {
    if (this.waiting.length === 0 && this.fits(bytes)) {
      this.used += bytes;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const entry = {
        bytes,
        admit: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        const index = this.waiting.indexOf(entry);
        if (index >= 0) this.waiting.splice(index, 1);
        resolve(false);
      }, ms);
      timer.unref();
      this.waiting.push(entry);
    });
  }

  /** Counts bytes that cannot wait (a WebSocket fragment already being sent); they still delay others. */
  take(bytes: number): void {
    this.used += bytes;
  }

  /** Whether `bytes` more would stay within the budget now. */
  hasRoomFor(bytes: number): boolean {
    return this.used + bytes <= this.maxBytes;
  }

  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
    // First come, first served: a large chunk is not starved by small ones behind it.
    let next = this.waiting[0];
    while (next && this.fits(next.bytes)) {
      this.waiting.shift();
      this.used += next.bytes;
      next.admit();
      next = this.waiting[0];
    }
  }

  private fits(bytes: number): boolean {
    return this.used === 0 || this.used + bytes <= this.maxBytes;
  }
}
