// The one "poll until" of the tests (docs/architecture.md "Working on it"): where no event or
// marker message says that something happened, read again every POLL_MS until it has.

const POLL_MS = 20;

const pause = (ms = POLL_MS) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads until `done` accepts the value or `timeoutMs` passes; answers the last value read (the test's expect says what was wrong). */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await pause();
    value = await read();
  }
  return value;
}

/**
 * Waits until `condition` holds; fails naming `what` once `timeoutMs` has passed. `pollMs` for a
 * reading that must stay rare (e.g. one that allocates while the test waits for the heap to settle).
 */
export async function until(condition: () => boolean | Promise<boolean>, what = 'the condition held', timeoutMs = 20_000, pollMs = POLL_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await pause(pollMs);
  }
}
