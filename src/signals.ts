// Small AbortSignal helpers, importable from any layer.

/** `AbortSignal.any` only exists from Node 20.3; svc supports every Node 20. */
export function anySignal(signals: readonly AbortSignal[]): AbortSignal {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([...signals]);
  const controller = new AbortController();
  const already = signals.find((signal) => signal.aborted);
  if (already) {
    controller.abort(already.reason);
    return controller.signal;
  }
  const onAbort = (event: Event) => {
    controller.abort((event.target as AbortSignal).reason);
    for (const signal of signals) signal.removeEventListener('abort', onAbort);
  };
  for (const signal of signals) signal.addEventListener('abort', onAbort);
  return controller.signal;
}

/**
 * Resolves after `ms`; rejects with the signal's reason as soon as it aborts. `unref`: the wait
 * alone does not keep the process alive (a shutdown's grace period).
 */
export function sleep(ms: number, signal?: AbortSignal, { unref = false }: { unref?: boolean } = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (unref) timer.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A time limit combined with the signals of whoever asked; `dispose()` once the work is done. */
export interface Deadline {
  /** Aborts when the time is up (reason: a DOMException named TimeoutError) or a parent aborts (its reason). */
  readonly signal: AbortSignal;
  /** True when this deadline's own timer fired (not a parent). */
  timedOut(): boolean;
  /** Stops the timer and lets go of the parents. */
  dispose(): void;
}

/**
 * Not `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: on Node 20 the combined signal holds
 * its sources weakly and the timeout signal's timer holds it weakly too, so a garbage collection
 * can drop the timeout before it fires and the limit silently never holds (nodejs/node#57736).
 * Here the timer's callback owns the controller, and the timer lives in the event loop's timer
 * list until it fires or is cleared, so the limit holds whatever the collector does.
 */
export function deadlineSignal(
  ms: number,
  parents: readonly AbortSignal[] = [],
  timeoutReason: () => unknown = () => new DOMException(`no answer within ${ms} ms`, 'TimeoutError'),
): Deadline {
  const controller = new AbortController();
  let fired = false;
  const onParentAbort = (event: Event) => {
    controller.abort((event.target as AbortSignal).reason);
    dispose();
  };
  const timer = setTimeout(() => {
    fired = true;
    controller.abort(timeoutReason());
    dispose();
  }, ms);
  // Like AbortSignal.timeout: a pending limit alone does not keep the process alive.
  timer.unref();
  function dispose(): void {
    clearTimeout(timer);
    for (const parent of parents) parent.removeEventListener('abort', onParentAbort);
  }
  const alreadyAborted = parents.find((parent) => parent.aborted);
  if (alreadyAborted) {
    controller.abort(alreadyAborted.reason);
    dispose();
  } else {
    for (const parent of parents) parent.addEventListener('abort', onParentAbort, { once: true });
  }
  return { signal: controller.signal, timedOut: () => fired, dispose };
}

/** Runs `work` under a deadlineSignal and disposes of it once the work has settled. */
export async function withDeadline<T>(ms: number, parents: readonly AbortSignal[], work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const deadline = deadlineSignal(ms, parents);
  try {
    return await work(deadline.signal);
  } finally {
    deadline.dispose();
  }
}

interface Flight<T> {
  promise: Promise<T>;
  controller: AbortController;
  waiters: number;
}

/**
 * One piece of work per key for all concurrent callers: twenty submissions of the same track
 * share one lookup or one download. Each caller may give up with its own signal; the shared work
 * is cancelled (its signal aborts) only when the last caller has given up.
 */
export class SharedFlights<T> {
  private readonly flights = new Map<string, Flight<T>>();

  /** Joins the flight for `key`, starting `work` when there is none. */
  run(key: string, work: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    let flight = this.flights.get(key);
    if (!flight) {
      const controller = new AbortController();
      const promise = work(controller.signal).finally(() => {
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
