import type { EventEmitter } from 'node:events';
import pg from 'pg';
import type { ImageCategory } from '../../domain/track';
import type { StoreChange, StoreEvents } from '../store';
import { CONNECT_TIMEOUT_MS } from './connection';
import { KEEPALIVE_IDLE_MS, watchLiveness, type LivenessTiming } from './liveness';
import { watchEcho, type NotificationState } from './notification-echo';

// How instances sharing one database hear each other's changes: NOTIFY on one channel, sent
// inside the writer's transaction, and one dedicated LISTEN connection per instance that
// reconnects by itself with backoff.

export const NOTIFY_CHANNEL = 'svc_changes';
const CHANNEL = NOTIFY_CHANNEL;
const RECONNECT_FIRST_MS = 200;
/** Short: once the database answers again, the instance is current within a few seconds. */
const RECONNECT_MAX_MS = 2000;

/** Sent inside the caller's transaction, so other instances hear of a change only once it is committed. */
export function notifyChange(client: pg.PoolClient, instanceId: string, change: StoreChange) {
  return client.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify({ origin: instanceId, ...change })]);
}

/**
 * A change of one record (`change`: a statement on tracks, its values from $2; $1 is this
 * instance) and its announcement as one statement: one round trip, and others hear of it only
 * once it is committed. Answers a row per record changed.
 */
export function announced(kind: 'track' | 'deleted', change: string): string {
  return `WITH changed AS (${change} RETURNING dbid)
     SELECT dbid, pg_notify('${CHANNEL}', json_build_object('origin', $1::text, 'kind', '${kind}', 'dbid', dbid)::text) FROM changed`;
}

export interface ListenOptions {
  /** The LISTEN connection's URL: database.listenUrl, else the pool's (docs/several-instances.md "PgBouncer"). */
  url: string;
  instanceId: string;
  events: EventEmitter<StoreEvents>;
  /** The query pool, checked with the LISTEN connection (liveness.ts). */
  pool: pg.Pool;
  report: ((message: string) => void) | undefined;
  /** The silence checks' timing (liveness.ts); tests use short ones. */
  liveness?: LivenessTiming;
}

/**
 * The LISTEN connection: emits other instances' changes, 'disconnected' when it breaks or the
 * database falls silent (liveness.ts), and 'reconnected' once it listens again (backoff from
 * 200 ms doubling to 2 s).
 */
export function listenForChanges(options: ListenOptions): { ready: Promise<void>; notifications(): NotificationState; close(): Promise<void> } {
  const { url, instanceId, events, report } = options;
  let client: pg.Client | null = null;
  let closed = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let delayMs = RECONNECT_FIRST_MS;

  const onNotification = (message: pg.Notification) => {
    if (message.channel !== CHANNEL || !message.payload) return;
    const echo = ownEcho(message.payload, instanceId);
    if (echo !== undefined) {
      echoes.heard(echo);
      return;
    }
    const change = parseChange(message.payload, instanceId);
    if (change) events.emit('change', change);
  };

  const connect = async (): Promise<void> => {
    const candidate = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
      application_name: 'svc listen',
    });
    candidate.on('error', () => undefined);
    try {
      await candidate.connect();
      await candidate.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      await candidate.end().catch(() => undefined);
      throw error;
    }
    candidate.on('notification', onNotification);
    candidate.once('end', () => lost(candidate, 'connection ended'));
    candidate.on('error', (error) => lost(candidate, error.message));
    client = candidate;
  };

  const lost = (which: pg.Client, reason: string) => {
    if (closed || client !== which) return;
    client = null;
    which.removeAllListeners('notification');
    void which.end().catch(() => undefined);
    report?.(`database connection lost (${reason}); reconnecting`);
    events.emit('disconnected');
    retry();
  };

  const retry = () => {
    if (closed) return;
    retryTimer = setTimeout(() => {
      connect().then(
        () => {
          delayMs = RECONNECT_FIRST_MS;
          report?.('database connection restored');
          events.emit('reconnected');
        },
        () => {
          delayMs = Math.min(delayMs * 2, RECONNECT_MAX_MS);
          retry();
        },
      );
    }, delayMs);
    retryTimer.unref();
  };

  // A channel that answers queries but delivers nothing (notification-echo.ts): listened to anew,
  // which catches up, without calling the database unavailable: writes still work.
  const echoes = watchEcho({
    send: (sequence) => options.pool.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify({ origin: instanceId, kind: 'echo', sequence })]),
    listening: () => client !== null,
    onSilent(first) {
      if (first)
        report?.(
          'database notifications are silent: changes of other instances do not arrive (a transaction-mode pooler? set database.listenUrl); listening anew',
        );
      const silent = client;
      if (!silent || closed) return;
      client = null;
      silent.removeAllListeners('notification');
      void silent.end().catch(() => undefined);
      delayMs = RECONNECT_FIRST_MS;
      retry();
    },
    onHeard: () => report?.('database notifications arrive again'),
  });

  // Silence on either side counts as a lost connection: dropped, announced, reconnected.
  const silent = (reason: string) => (client ? lost(client, reason) : report?.(`database silent (${reason})`));
  const stopWatching = watchLiveness({ listening: () => client, pool: options.pool }, silent, options.liveness);

  return {
    ready: connect(),
    notifications: () => echoes.state(),
    async close() {
      closed = true;
      stopWatching();
      echoes.stop();
      clearTimeout(retryTimer);
      const last = client;
      client = null;
      await last?.end().catch(() => undefined);
    },
  };
}

/** The sequence of an echo this instance sent itself (notification-echo.ts), else undefined. */
function ownEcho(payload: string, instanceId: string): number | undefined {
  if (!payload.includes('"echo"')) return undefined;
  try {
    const data = JSON.parse(payload) as Record<string, unknown>;
    return data.kind === 'echo' && data.origin === instanceId && typeof data.sequence === 'number' ? data.sequence : undefined;
  } catch {
    return undefined;
  }
}

/** A notification of another instance as a change; our own (and anything unreadable) is null. */
function parseChange(payload: string, instanceId: string): StoreChange | null {
  let data: unknown;
  try {
    data = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof data !== 'object' || data === null) return null;
  const fields = data as Record<string, unknown>;
  if (fields.origin === instanceId) return null;
  if (fields.kind === 'track' && typeof fields.dbid === 'number') return { kind: 'track', dbid: fields.dbid };
  if (fields.kind === 'deleted' && typeof fields.dbid === 'number') return { kind: 'deleted', dbid: fields.dbid };
  if (fields.kind === 'image' && typeof fields.dbid === 'number' && typeof fields.key === 'string' && typeof fields.category === 'string') {
    return { kind: 'image', dbid: fields.dbid, key: fields.key, category: fields.category as ImageCategory };
  }
  return null;
}
