// One download per URL in flight, and at most N downloads at a time (decisions.md "Hostile
// clients": `images.maxConcurrentDownloads`). Twenty submissions of the same new track wait for
// one download of its cover; a burst of new tracks queues instead of opening a socket each.

interface Flight<T> {
  promise: Promise<T>;
  controller: AbortController;
  waiters: number;
}

/** A counting semaphore whose waiters can give up (their signal aborts) without taking a slot. */
export class Slots {
  private free: number;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(readonly size: number) {
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

  /** Slots in use and callers waiting (tests, status). */
  usage(): { busy: number; queued: number } {
    return { busy: this.size - this.free, queued: this.waiting.length };
  }
}

/**
 * Runs `work(key)` once for all concurrent callers of the same key. Each caller may give up with
 * its own signal; the shared work is cancelled only when the last caller has given up.
 */
export class SharedFlights<T> {
  private readonly flights = new Map<string, Flight<T>>();

  constructor(private readonly work: (key: string, signal: AbortSignal) => Promise<T>) {}

  run(key: string, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    let flight = this.flights.get(key);
    if (!flight) {
      const controller = new AbortController();
      const promise = this.work(key, controller.signal).finally(() => {
        if (this.flights.get(key) === created) this.flights.delete(key);
      });
      // A flight every caller left must not end in an unhandled rejection.
      promise.catch(() => undefined);
      const created: Flight<T> = { promise, controller, waiters: 0 };
      flight = created;
      this.flights.set(key, flight);
    }
    return this.join(key, flight, signal);
  }

  /** Keys with a flight in progress. */
  get size(): number {
    return this.flights.size;
  }

  private join(key: string, flight: Flight<T>, signal: AbortSignal | undefined): Promise<T> {
    flight.waiters += 1;
    if (!signal) return flight.promise;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        flight.waiters -= 1;
        if (flight.waiters === 0) {
          if (this.flights.get(key) === flight) this.flights.delete(key);
          flight.controller.abort(signal.reason);
        }
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      flight.promise.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }
}
