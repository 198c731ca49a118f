// A clock the test moves by hand (docs/architecture.md "Time in tests"), for a part of svc built
// with `now` (the output queues' retries, the failed-secret throttle): a wait of svc's own is then
// proven by order, never by a duration. `readsAfter(n)` is the signal that the part looked at the
// time again: once the clock has been read `n` more times after a move, the part has made
// its decisions at the new time, and the test asserts what it did (or did not) do.

export interface ManualClock {
  /** The time the part sees (ms since the epoch); the part calls it, the test may read `at`. */
  readonly now: () => number;
  /** The time now, without counting as a read of the part. */
  readonly at: number;
  /** Moves the clock to `ms` (never back). */
  set(ms: number): void;
  /** Resolves once the part has read the clock `reads` more times from this call on (call it right after `set`). */
  readsAfter(reads: number): Promise<void>;
}

/**
 * Starts a minute ahead of the real clock by default: the rows the store stamps itself (a
 * track's change row, from which the output messages are made) are then never in its future.
 */
export function manualClock(start = Date.now() + 60_000): ManualClock {
  let at = start;
  let reads = 0;
  let waiters: { until: number; resolve: () => void }[] = [];
  return {
    now: () => {
      reads += 1;
      const due = waiters.filter((waiter) => reads >= waiter.until);
      waiters = waiters.filter((waiter) => reads < waiter.until);
      for (const waiter of due) waiter.resolve();
      return at;
    },
    get at() {
      return at;
    },
    set(ms: number) {
      if (ms < at) throw new Error(`manualClock: ${ms} is before ${at}; the clock never goes back`);
      at = ms;
    },
    readsAfter(count: number) {
      const until = reads + count;
      return new Promise<void>((resolve) => waiters.push({ until, resolve }));
    },
  };
}

/**
 * Call right after an attempt arrived: svc's next one is due at `dueAt` on `clock` (the wait it
 * was told, or its floor). The failed attempt is recorded first (two reads: its end and the next
 * look at the queue); then at `dueAt - 1` nothing more arrives while the part looks again `reads`
 * times (a send it started would be answered before its third read), and the clock moves to `dueAt`.
 */
export async function expectNothingBefore(clock: ManualClock, dueAt: number, arrived: () => number, reads = 4): Promise<void> {
  await clock.readsAfter(2);
  const before = arrived();
  clock.set(dueAt - 1);
  await clock.readsAfter(reads);
  expect(arrived()).toBe(before);
  clock.set(dueAt);
}

/**
 * The output queues' first two backoffs after a failure at `failedAt` (the 1 s base, then 2 s, each
 * halved by jitter at most): nothing arrives before the earliest moment of a try, and the try comes
 * by its latest. Resolves with the three arrivals (the failed one and the two tries).
 */
export async function expectTwoBackoffs<T>(
  clock: ManualClock,
  failedAt: number,
  receiver: { received: readonly T[]; waitFor(count: number): Promise<T[]> },
): Promise<T[]> {
  await receiver.waitFor(1);
  await expectNothingBefore(clock, failedAt + 500, () => receiver.received.length);
  clock.set(failedAt + 1000);
  await receiver.waitFor(2);
  await expectNothingBefore(clock, failedAt + 1000 + 1000, () => receiver.received.length);
  clock.set(failedAt + 1000 + 2000);
  return receiver.waitFor(3);
}

/**
 * The clock of a part that waits on it itself (the scrobblers' request spacing,
 * src/outputs/scrobbler.ts `SpacingClock`): each wait is recorded and moves the clock by its length
 * at once, so the test asserts the waits svc took, in order, without taking them.
 */
export interface WaitingClock {
  readonly now: () => number;
  readonly wait: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Every wait asked for, in order (ms). */
  readonly waits: readonly number[];
}

export function waitingClock(start = Date.now()): WaitingClock {
  let at = start;
  const waits: number[] = [];
  return {
    now: () => at,
    wait: (ms, signal) => {
      if (signal.aborted) return Promise.reject(signal.reason as Error);
      waits.push(ms);
      at += ms;
      return Promise.resolve();
    },
    waits,
  };
}
