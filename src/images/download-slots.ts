// At most N downloads at a time (docs/decisions.md "Hostile clients and browsers": `images.maxConcurrentDownloads`):
// a burst of new tracks queues instead of opening a socket each. One download per URL in flight
// is SharedFlights (signals.ts).

/** A counting semaphore whose waiters can give up (their signal aborts) without taking a slot. */
export class Slots {
  private free: number;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`slots must be a positive integer, got ${size}`);
    this.free = size;
  }

  /** Resolves with a release function once a slot is free. */
  acquire(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        const next = this.waiting.shift();
        if (next) next.grant();
        else this.free += 1;
      };
      if (this.free > 0) {
        this.free -= 1;
        return resolve(release);
      }
      const entry = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(entry);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }
}
