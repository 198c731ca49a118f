// A LISTEN connection can look healthy and hear nothing (docs/several-instances.md "PgBouncer"):
// through a transaction-mode pooler, LISTEN runs on a server connection the pooler then hands to
// others, and no NOTIFY ever reaches this client, while every query still answers. So each
// instance sends itself a small notification now and then, through its query pool as every real
// change goes, and expects to hear it on its LISTEN connection. One that does not come back in
// time means the channel is silent: /v1/status says so and the caller listens anew (catching up).
// Pure timing logic around two callbacks; no SQL here.

/** An echo is sent this often (when none is outstanding). */
export const ECHO_INTERVAL_MS = 2000;
/** An echo not heard within this long: the channel is silent. */
export const ECHO_TIMEOUT_MS = 5000;

export type NotificationState = 'ok' | 'silent';

export interface EchoOptions {
  /** Sends one echo through the query pool; a failure (the database away) is not silence. */
  send(sequence: number): Promise<unknown>;
  /** Whether a LISTEN connection is up (no echoes while it reconnects). */
  listening(): boolean;
  /** An echo was not heard in time; `first`: the channel was heard before this one (a new silence). */
  onSilent(first: boolean): void;
  /** An echo came back after a silence. */
  onHeard(): void;
  intervalMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

export interface EchoWatch {
  /** Call with the sequence of an echo of ours heard on the LISTEN connection. */
  heard(sequence: number): void;
  state(): NotificationState;
  stop(): void;
}

export function watchEcho(options: EchoOptions): EchoWatch {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? ECHO_TIMEOUT_MS;
  let sequence = 0;
  let outstanding: { sequence: number; sentAt: number } | null = null;
  let state: NotificationState = 'ok';

  const tick = () => {
    if (!options.listening()) {
      outstanding = null;
      return;
    }
    if (outstanding && now() - outstanding.sentAt > timeoutMs) {
      outstanding = null;
      const first = state === 'ok';
      state = 'silent';
      options.onSilent(first);
    }
    if (outstanding) return;
    sequence += 1;
    const sent = { sequence, sentAt: now() };
    outstanding = sent;
    options.send(sent.sequence).catch(() => {
      // Not sent: the database is away, which the liveness checks report; ask again next time.
      if (outstanding === sent) outstanding = null;
    });
  };
  const timer = setInterval(tick, options.intervalMs ?? ECHO_INTERVAL_MS);
  timer.unref();

  return {
    heard(heardSequence) {
      if (outstanding?.sequence === heardSequence) outstanding = null;
      if (state === 'silent') {
        state = 'ok';
        options.onHeard();
      }
    },
    state: () => state,
    stop: () => clearInterval(timer),
  };
}
