import { BoundedMap } from './bounded-map';

// Failed authentication, throttled per address on every door (docs/security.md "Guessing the
// secret"): after a wrong secret, each further attempt from that address waits its turn, the
// turns spaced by a delay that doubles with every failure (0.25 s, 0.5 s, ... up to 30 s). Attempts
// sent at once queue behind each other instead of being checked in parallel, so one address
// guesses at most once per delay however many connections it opens. A right secret clears the
// address. Pure: the clock is given; the caller waits and logs.

export interface AuthThrottleOptions {
  /** The wait after the first failure; doubled per further failure. */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** An attempt whose turn is further away than this is refused at once (429), not held. */
  maxWaitMs?: number;
  /** Failures older than this are forgotten. */
  forgetAfterMs?: number;
  /** Addresses remembered; the oldest are forgotten first. */
  maxAddresses?: number;
  now?: () => number;
}

interface Failures {
  count: number;
  lastAt: number;
  /** When the next attempt's turn comes. */
  nextTurnAt: number;
}

/** What an attempt must do first: wait `waitMs` (0: go on), or be refused with `retryAfterMs`. */
export type AuthTurn = { waitMs: number } | { refusedForMs: number };

export class AuthThrottle {
  private readonly failures: BoundedMap<string, Failures>;
  private readonly firstDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly maxWaitMs: number;
  private readonly forgetAfterMs: number;
  private readonly now: () => number;

  constructor(options: AuthThrottleOptions = {}) {
    this.firstDelayMs = options.firstDelayMs ?? 250;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
    this.maxWaitMs = options.maxWaitMs ?? 60_000;
    this.forgetAfterMs = options.forgetAfterMs ?? 15 * 60_000;
    this.failures = new BoundedMap({ maxEntries: options.maxAddresses ?? 10_000 });
    this.now = options.now ?? Date.now;
  }

  /** Takes the address's next turn to try a secret. */
  turn(address: string): AuthTurn {
    const entry = this.current(address);
    if (!entry) return { waitMs: 0 };
    const now = this.now();
    const turnAt = Math.max(now, entry.nextTurnAt);
    if (turnAt - now > this.maxWaitMs) return { refusedForMs: turnAt - now };
    entry.nextTurnAt = turnAt + this.delayAfter(entry.count);
    return { waitMs: turnAt - now };
  }

  /** A wrong secret from the address; answers how many it has now and the delay they earn. */
  failed(address: string): { failures: number; delayMs: number } {
    const now = this.now();
    const entry = this.current(address) ?? { count: 0, lastAt: now, nextTurnAt: now };
    entry.count += 1;
    entry.lastAt = now;
    const delayMs = this.delayAfter(entry.count);
    entry.nextTurnAt = Math.max(entry.nextTurnAt, now + delayMs);
    this.failures.set(address, entry);
    return { failures: entry.count, delayMs };
  }

  /** How many wrong secrets in a row the address has now. */
  failureCount(address: string): number {
    return this.current(address)?.count ?? 0;
  }

  /** The right secret: the address is trusted again. */
  succeeded(address: string): void {
    if (this.failures.has(address)) this.failures.set(address, { count: 0, lastAt: 0, nextTurnAt: 0 });
  }

  private current(address: string): Failures | undefined {
    const entry = this.failures.get(address);
    if (!entry || entry.count === 0) return undefined;
    if (this.now() - entry.lastAt > this.forgetAfterMs) {
      entry.count = 0;
      return undefined;
    }
    return entry;
  }

  private delayAfter(failures: number): number {
    return Math.min(this.maxDelayMs, this.firstDelayMs * 2 ** Math.max(0, failures - 1));
  }
}
