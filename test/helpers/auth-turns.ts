// The failed-secret throttle as the doors use it (docs/security.md "Guessing the secret"), watched
// from a test: the server is built with short delays on a manual clock (test/helpers/manual-clock.ts)
// and the turns the throttle hands an address are read back. Frozen, the clock makes each turn's
// wait its place in the queue: turns one delay apart are waits one delay apart, whatever the load.
// That a door holds a guess until its turn comes is proven on a fake clock in
// test/unit/server/middleware/auth-throttle.test.ts.
import type { AuthThrottle, AuthThrottleOptions, AuthTurn } from '../../src/domain/auth-throttle';
import type { ManualClock } from './manual-clock';

/** The delay after a first failure in these tests (0.25 s in production), doubled up to 4 times it. */
export const QUICK_DELAY_MS = 20;

export function quickThrottle(clock: ManualClock): AuthThrottleOptions {
  return { firstDelayMs: QUICK_DELAY_MS, maxDelayMs: QUICK_DELAY_MS * 4, now: clock.now };
}

/** From now on, the turns `throttle` hands each address, in the order it handed them. */
export function recordTurns(throttle: AuthThrottle): (address: string) => AuthTurn[] {
  const spy = jest.spyOn(throttle, 'turn');
  return (address) => spy.mock.calls.flatMap((call, index) => (call[0] === address ? [spy.mock.results[index]?.value as AuthTurn] : []));
}

/** The waits of `turns` (none refused), smallest first. */
export function waitsOf(turns: AuthTurn[]): number[] {
  return turns.map((turn) => ('waitMs' in turn ? turn.waitMs : Number.NaN)).sort((a, b) => a - b);
}

/** How far apart the waits are, each from the one before (the first from 0). */
export function spacingOf(waits: number[]): number[] {
  return waits.map((wait, index) => wait - (index === 0 ? 0 : (waits[index - 1] ?? 0)));
}
