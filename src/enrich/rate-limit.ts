import { errorMessage } from '../errors';
import { throttledLog, type Logger } from '../log';
import { sleep } from '../signals';
import type { RequestSlots } from '../store/store';

// Spacing of outbound requests per service host (docs/enrichment.md): MusicBrainz allows one
// request per second per client, AcoustID three. One FIFO queue per host, so concurrent
// submissions wait their turn instead of flooding the service.

/** Time as the limiter sees it; tests pass a manual clock instead of waiting for real seconds. */
export interface LimiterClock {
  now(): number;
  /** Calls `fire` after about `ms` milliseconds; the returned function cancels it. */
  schedule(fire: () => void, ms: number): () => void;
}

const systemClock: LimiterClock = {
  now: () => performance.now(),
  schedule(fire, ms) {
    const timer = setTimeout(fire, ms);
    // A queue waiting for its turn never keeps the process alive on its own.
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** What a service client needs of a limiter. */
export interface Limiter {
  /** Resolves when the caller may send its request; rejects on abort. */
  take(signal: AbortSignal): Promise<void>;
  /** Nobody sends before `ms` from now. */
  pauseFor(ms: number): void;
}

export class RateLimiter implements Limiter {
  private nextAt = 0;
  private readonly queue: { resolve: () => void; reject: (reason: unknown) => void; signal: AbortSignal; onAbort: () => void }[] = [];
  private cancelTimer: (() => void) | undefined;

  constructor(
    /** Minimum time between the starts of two requests. */
    readonly intervalMs: number,
    private readonly clock: LimiterClock = systemClock,
  ) {}

  /** Resolves when the caller may send its request; rejects (and leaves the queue) on abort. */
  take(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const index = this.queue.indexOf(waiter);
          if (index >= 0) this.queue.splice(index, 1);
          reject(signal.reason);
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.queue.push(waiter);
      this.pump();
    });
  }

  /** Nobody sends before `ms` from now (a 503/429 with Retry-After applies to every caller). */
  pauseFor(ms: number): void {
    this.nextAt = Math.max(this.nextAt, this.clock.now() + ms);
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.pump();
  }

  private pump(): void {
    if (this.cancelTimer) return;
    const waiter = this.queue[0];
    if (!waiter) return;
    const wait = this.nextAt - this.clock.now();
    if (wait > 0) {
      // Timers may fire a little early, so pump() checks the clock again rather than trusting them.
      this.cancelTimer = this.clock.schedule(() => {
        this.cancelTimer = undefined;
        this.pump();
      }, Math.ceil(wait));
      return;
    }
    this.queue.shift();
    waiter.signal.removeEventListener('abort', waiter.onAbort);
    this.nextAt = this.clock.now() + this.intervalMs;
    waiter.resolve();
    this.pump();
  }
}

// One limiter per host and interval for the whole process, not per server instance: the services'
// limits apply to this machine, however many servers it runs.
const processLimiters = new Map<string, RateLimiter>();

export function processRateLimiter(origin: string, intervalMs: number): RateLimiter {
  const key = `${origin} ${intervalMs}`;
  let limiter = processLimiters.get(key);
  if (!limiter) {
    limiter = new RateLimiter(intervalMs);
    processLimiters.set(key, limiter);
  }
  return limiter;
}

/**
 * The limit across instances (docs/decisions.md "Several instances"): after this
 * process's own queue, a request takes the service's turn in the database, which every instance
 * sharing it takes from, waiting while another instance holds it; as it starts, it moves the
 * next turn to a full interval after its real start. A database that cannot answer leaves the
 * process's own spacing in force.
 */
export class SharedRateLimiter implements Limiter {
  private readonly report: (kind: string, message: string) => void;

  constructor(
    private readonly local: Limiter & { readonly intervalMs: number },
    private readonly slots: RequestSlots,
    private readonly service: string,
    logger: Logger,
  ) {
    this.report = throttledLog((message) => logger.warn(message));
  }

  async take(signal: AbortSignal): Promise<void> {
    await this.local.take(signal);
    try {
      for (let waitMs = await this.slots.tryAcquire(this.service, this.local.intervalMs); waitMs > 0;) {
        await sleep(waitMs, signal);
        waitMs = await this.slots.tryAcquire(this.service, this.local.intervalMs);
      }
    } catch (error) {
      if (signal.aborted) throw error;
      this.unshared(error);
      return;
    }
    this.slots.started(this.service, this.local.intervalMs).catch((error: unknown) => this.unshared(error));
  }

  pauseFor(ms: number): void {
    this.local.pauseFor(ms);
  }

  private unshared(error: unknown): void {
    this.report('slots', `rate limit of ${this.service}: the shared turn is not available, this instance's own spacing applies: ${errorMessage(error)}`);
  }
}
