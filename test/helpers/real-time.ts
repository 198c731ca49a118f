// The one wait on the clock the tests may make (docs/architecture.md "Time in tests"): where a real peer
// needs real time to pass (an Icecast listener must overlap a play by a second, a DJ program polls
// its history every second), the test waits here and says why. Every other wait is for a signal
// (test/helpers/eventually.ts). Each wait is recorded, and `npm test` prints the suite's total
// (test/run-tests.js), which must stay under 10 s; .ci/check-test-timing.js fails on any fixed wait
// of 100 ms or more outside this file.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

/** Waits `ms` of real time because `why` (a peer's own clock); the wait counts toward the suite's total. */
export async function waitRealTime(ms: number, why: string): Promise<void> {
  if (why.trim() === '') throw new Error('waitRealTime: say why the real peer needs real time');
  const dir = process.env.SVC_TEST_REAL_TIME_DIR;
  if (dir !== undefined && dir !== '') {
    const test = expect.getState().currentTestName ?? '';
    appendFileSync(join(dir, `${process.pid}.jsonl`), `${JSON.stringify({ ms, why, test })}\n`);
  }
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** A short pause that proves nothing (a poll's interval, a yield to the event loop); under 100 ms. */
export function sleep(ms: number): Promise<void> {
  if (ms >= 100) throw new Error(`sleep(${ms}): a wait of 100 ms or more is a fixed wait; wait for a signal or use waitRealTime(ms, why)`);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Fails naming `what` when `promise` has not settled within `ms`: a hang guard, not a timing goal (keep it ≥ 5 s). */
export async function withinHangGuard<T>(promise: Promise<T>, what: string, ms = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`hang guard: ${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, guard]);
  } finally {
    clearTimeout(timer);
  }
}
