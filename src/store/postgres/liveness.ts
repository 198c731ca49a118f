import type pg from 'pg';

// Notice silence (docs/several-instances.md "Partitions and reconnects"): a network that stops
// passing bytes breaks no connection, so nothing fails by itself: a LISTEN connection then hears
// nothing while the instance answers "database: ok" with a stale track. Every few seconds the
// LISTEN connection and the pool each run a query with a time limit; one that does not answer in
// time is silence, and the caller drops the LISTEN connection and reconnects (which announces
// 'disconnected', then 'reconnected' and a catch-up). TCP keepalive on every connection is the
// second line, for a peer that is gone for good.

/** How often both are asked. Silence is noticed within CHECK_INTERVAL_MS + CHECK_TIMEOUT_MS (< 5 s). */
const CHECK_INTERVAL_MS = 1500;
/** A check that takes longer is silence; a healthy local database answers `SELECT 1` in a millisecond. */
const CHECK_TIMEOUT_MS = 2000;

/** The checks' timing, from whoever opens the store (StoreOptions.liveness); tests notice silence in milliseconds. */
export interface LivenessTiming {
  /** Between the end of one round and the start of the next (default CHECK_INTERVAL_MS). */
  intervalMs?: number;
  /** A check that takes longer is silence (default CHECK_TIMEOUT_MS). */
  timeoutMs?: number;
}
/** TCP keepalive probes start after this much idle time (the kernel's default is two hours). */
export const KEEPALIVE_IDLE_MS = 1000;

export interface LivenessProbes {
  /** The LISTEN connection, or null while it reconnects (then only the pool is asked). */
  listening(): pg.Client | null;
  pool: pg.Pool;
}

/** Starts checking; `onSilent` is called with the reason once per failed round. Returns the stop function. */
export function watchLiveness(probes: LivenessProbes, onSilent: (reason: string) => void, timing: LivenessTiming = {}): () => void {
  const intervalMs = timing.intervalMs ?? CHECK_INTERVAL_MS;
  const timeoutMs = timing.timeoutMs ?? CHECK_TIMEOUT_MS;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const round = async () => {
    const client = probes.listening();
    // A pool with callers waiting is busy, not silent: their own time limits report a dead one.
    const askPool = probes.pool.waitingCount === 0;
    const checks: Promise<string | null>[] = [];
    if (client) checks.push(answersInTime(client.query('SELECT 1'), 'the LISTEN connection', timeoutMs));
    if (askPool) checks.push(answersInTime(probes.pool.query('SELECT 1'), 'the connection pool', timeoutMs));
    const silent = (await Promise.all(checks)).find((reason) => reason !== null);
    if (silent && !stopped) onSilent(silent);
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void round().finally(schedule), intervalMs);
    timer.unref();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** null when `query` answered within `timeoutMs`, else why not. */
async function answersInTime(query: Promise<unknown>, what: string, timeoutMs: number): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`${what} did not answer within ${timeoutMs} ms`), timeoutMs);
  });
  const answered = query.then(
    () => null,
    (error: unknown) => `${what} failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  try {
    return await Promise.race([answered, late]);
  } finally {
    clearTimeout(timer);
  }
}
