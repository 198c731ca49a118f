// At most N downloads at a time (docs/decisions.md "Hostile clients and browsers": `images.maxConcurrentDownloads`):
// a burst of new tracks queues instead of opening a socket each, and one host gets at most half
// of them, so a slow host cannot hold every slot (docs/limits-and-load.md "Cover downloads").
// One download per URL in flight is SharedFlights (signals.ts).

/** A counting semaphore whose waiters can give up (their signal aborts) without taking a slot. */
export class Slots {
  private free: number;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`slots must be a positive integer, got ${size}`);
    this.free = size;
  }

  /** Someone is waiting for a slot: a download that crawls should give its slot up. */
  contended(): boolean {
    return this.waiting.length > 0;
  }

  /** No slot is taken (nothing to keep this semaphore for). */
  idle(size: number): boolean {
    return this.free === size;
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

/** Slots per host (a URL's host and port), each host at most `perHost` at a time; idle hosts are forgotten. */
export class HostSlots {
  private readonly hosts = new Map<string, Slots>();

  constructor(private readonly perHost: number) {}

  async acquire(host: string, signal: AbortSignal): Promise<() => void> {
    let slots = this.hosts.get(host);
    if (!slots) {
      slots = new Slots(this.perHost);
      this.hosts.set(host, slots);
    }
    const held = slots;
    try {
      const release = await held.acquire(signal);
      return () => {
        release();
        this.forgetIfIdle(host, held);
      };
    } catch (error) {
      this.forgetIfIdle(host, held);
      throw error;
    }
  }

  private forgetIfIdle(host: string, slots: Slots): void {
    if (slots.idle(this.perHost) && !slots.contended() && this.hosts.get(host) === slots) this.hosts.delete(host);
  }
}

/**
 * Whether a download that holds a slot moves too slowly to keep it while others wait: after
 * `graceMs`, fewer bytes than `minBytesPerSecond` for the time it has held the slot.
 */
export function crawling(heldMs: number, bytes: number, rule: { graceMs: number; minBytesPerSecond: number }): boolean {
  return heldMs >= rule.graceMs && bytes < (rule.minBytesPerSecond * heldMs) / 1000;
}
