import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { ImageCategory, TrackFields, TrackRecord } from '../../domain/track';
import type { ImageMimeType } from '../../domain/image';
import { StartupError, errorMessage } from '../../errors';
import { TOUCH_INTERVAL_MS, admitImage, sha256, type ImageStore, type NewLink, type StoredImage } from '../images';
import { expiryOf, storedAnswer, type LookupCacheStore } from '../lookup-cache';
import type { RequestSlots, Store, StoreChange, StoreEvents, StoreOptions } from '../store';
import { historyUpperBound, type TrackStore } from '../tracks';
import { migratePostgres } from './migrations';
import { createPostgresOutputStore } from './outputs';
import { createPostgresIdempotencyStore } from './idempotency';
import { probePostgresWrite } from './probe-write';

// The PostgreSQL store (issue 15): every instance pointing at one database shares records,
// images, the lookup cache and the request spacing, and hears the others' changes through
// LISTEN/NOTIFY on one channel. Queries run on a small pool; a dedicated connection listens and
// reconnects by itself with backoff.

const CHANNEL = 'svc_changes';
/** Advisory lock that serializes image writes (the LRU budget is one sum for every instance). */
const IMAGE_LOCK = 0x5356_4302;
const POOL_SIZE = 10;
/** A cut network hangs instead of failing: these bound how long a request waits for the database. */
const CONNECT_TIMEOUT_MS = 3000;
const QUERY_TIMEOUT_MS = 5000;
const RECONNECT_FIRST_MS = 200;
const RECONNECT_MAX_MS = 5000;

/** The database's clock in ms since the epoch: one clock for every instance's request spacing. */
const DB_NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

interface TrackRow {
  dbid: string;
  received_seq: string;
  received_at: string;
  metadata: TrackFields;
}

interface ImageRow {
  key: string;
  mime_type: ImageMimeType;
  size: number;
}

export async function openPostgresStore(url: string, options: StoreOptions): Promise<Store> {
  const now = options.now ?? Date.now;
  const instanceId = randomUUID();
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
    application_name: 'svc',
  });
  // An idle pooled connection that breaks is dropped by the pool; the error must not crash us.
  pool.on('error', (error) => options.onConnectionProblem?.(`database connection lost: ${error.message}`));

  try {
    const client = await pool.connect();
    try {
      await migratePostgres(client);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new StartupError(`cannot use database ${redactUrl(url)}: ${errorMessage(error)}`);
  }

  const transaction = async <T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw error;
    } finally {
      // A connection whose rollback failed is not given back to the pool.
      client.release(broken);
    }
  };

  /** Sent inside the caller's transaction, so other instances hear of a change only once it is committed. */
  const notify = (client: pg.PoolClient, change: StoreChange) =>
    client.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify({ origin: instanceId, ...change })]);
  /**
   * A change of one record (`change`: a statement on tracks, its values from $2; $1 is this
   * instance) and its announcement as one statement: one round trip, and others hear of it only
   * once it is committed. Answers a row per record changed.
   */
  const announced = (kind: 'track' | 'deleted', change: string) =>
    `WITH changed AS (${change} RETURNING dbid)
     SELECT dbid, pg_notify('${CHANNEL}', json_build_object('origin', $1::text, 'kind', '${kind}', 'dbid', dbid)::text) FROM changed`;

  /** Writes seen by this instance, its own and those other instances announce (TrackStore.version). */
  let writes = 0;
  const tracks: TrackStore = {
    async insert(track) {
      const result = await pool.query<{ dbid: string }>(announced('track', 'INSERT INTO tracks (received_seq, received_at, metadata) VALUES ($2, $3, $4)'), [
        instanceId,
        track.receivedSeq,
        track.receivedAt,
        JSON.stringify(track.metadata),
      ]);
      const row = result.rows[0];
      if (!row) throw new Error('insert returned no dbid');
      writes += 1;
      return { dbid: Number(row.dbid), receivedSeq: track.receivedSeq, receivedAt: track.receivedAt, metadata: track.metadata };
    },
    async current() {
      const result = await pool.query<TrackRow>('SELECT dbid, received_seq, received_at, metadata FROM tracks ORDER BY received_seq DESC, dbid DESC LIMIT 1');
      return result.rows[0] ? fromTrackRow(result.rows[0]) : null;
    },
    async byDbid(dbid) {
      const result = await pool.query<TrackRow>('SELECT dbid, received_seq, received_at, metadata FROM tracks WHERE dbid = $1', [dbid]);
      return result.rows[0] ? fromTrackRow(result.rows[0]) : null;
    },
    async since(dbid, limit) {
      const result = await pool.query<TrackRow>('SELECT dbid, received_seq, received_at, metadata FROM tracks WHERE dbid > $1 ORDER BY dbid LIMIT $2', [
        dbid,
        limit,
      ]);
      return result.rows.map(fromTrackRow);
    },
    async updateMetadata(dbid, metadata) {
      await pool.query(announced('track', 'UPDATE tracks SET metadata = $2 WHERE dbid = $3'), [instanceId, JSON.stringify(metadata), dbid]);
      writes += 1;
    },
    async count() {
      const result = await pool.query<{ n: string }>('SELECT count(*) AS n FROM tracks');
      return Number(result.rows[0]?.n ?? 0);
    },
    async history(query) {
      let cursorAt: string | undefined;
      if (query.before !== undefined) {
        const cursor = await pool.query<{ received_at: string }>('SELECT received_at FROM tracks WHERE dbid <= $1 ORDER BY dbid DESC LIMIT 1', [query.before]);
        cursorAt = cursor.rows[0]?.received_at;
      }
      const bound = historyUpperBound(query, cursorAt);
      if (!bound) return { records: [], more: false };
      // The same keyset page as SQLite's (tracks.ts HISTORY_PAGE_SQL), on the (received_at, dbid) index.
      const rows = await pool.query<TrackRow>(
        `SELECT dbid, received_seq, received_at, metadata FROM tracks
          WHERE (received_at, dbid) < ($1, $2) AND received_at >= $3
          ORDER BY received_at DESC, dbid DESC LIMIT $4`,
        [bound[0], Math.min(bound[1], Number.MAX_SAFE_INTEGER), query.since ?? '', query.limit + 1],
      );
      return { records: rows.rows.slice(0, query.limit).map(fromTrackRow), more: rows.rows.length > query.limit };
    },
    async remove(dbid) {
      const removed = Boolean((await pool.query(announced('deleted', 'DELETE FROM tracks WHERE dbid = $2'), [instanceId, dbid])).rowCount);
      if (removed) writes += 1;
      return removed;
    },
    version: () => writes,
    async nextReceivedSeq() {
      const result = await pool.query<{ seq: string }>("SELECT nextval('received_seq') AS seq");
      return Number(result.rows[0]?.seq);
    },
  };

  /**
   * Runs `select` (the image key is $1, its own values follow from $4) and marks the image as used
   * in the same round trip, at most once per TOUCH_INTERVAL_MS as SQLite's store does.
   */
  const readAndTouch = <R extends pg.QueryResultRow>(select: string, key: string, values: unknown[] = []) => {
    const at = now();
    return pool.query<R>(`WITH touched AS (UPDATE images SET last_used = $2 WHERE key = $1 AND last_used < $3) ${select}`, [
      key,
      at,
      at - TOUCH_INTERVAL_MS,
      ...values,
    ]);
  };

  const images: ImageStore = {
    async put(bytes) {
      const { key, mimeType } = admitImage(bytes, options.maxImageBytes);
      const at = now();
      await transaction(async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [IMAGE_LOCK]);
        const inserted = await client.query(
          'INSERT INTO images (key, mime_type, size, last_used) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO UPDATE SET last_used = GREATEST(images.last_used, EXCLUDED.last_used) RETURNING (xmax = 0) AS new',
          [key, mimeType, bytes.length, at],
        );
        if (!(inserted.rows[0] as { new: boolean } | undefined)?.new) return;
        await client.query('INSERT INTO image_blobs (key, bytes) VALUES ($1, $2)', [key, bytes]);
        // Least recently used first, until the others fit the budget with this one.
        await client.query(
          `DELETE FROM images WHERE key IN (
             SELECT key FROM (
               SELECT key, sum(size) OVER (ORDER BY last_used DESC, seq DESC) AS kept
                 FROM images WHERE key <> $1
             ) ranked WHERE kept > $2
           )`,
          [key, options.maxImageBytes - bytes.length],
        );
      });
      return { key, mimeType, size: bytes.length };
    },
    async get(key) {
      const result = await readAndTouch<ImageRow & { bytes: Buffer }>(
        'SELECT i.key, i.mime_type, i.size, b.bytes FROM images i JOIN image_blobs b ON b.key = i.key WHERE i.key = $1',
        key,
      );
      const row = result.rows[0];
      return row ? { ...fromImageRow(row), bytes: row.bytes } : null;
    },
    async meta(key) {
      const result = await pool.query<ImageRow>('SELECT key, mime_type, size FROM images WHERE key = $1', [key]);
      return result.rows[0] ? fromImageRow(result.rows[0]) : null;
    },
    async use(key) {
      const result = await readAndTouch<ImageRow>('SELECT key, mime_type, size FROM images WHERE key = $1', key);
      return result.rows[0] ? fromImageRow(result.rows[0]) : null;
    },
    async slice(key, offset, length) {
      // substring() of an uncompressed (EXTERNAL) bytea reads only the chunks it needs.
      const result =
        offset === 0
          ? await readAndTouch<{ part: Buffer }>('SELECT substring(bytes FROM 1 FOR $4) AS part FROM image_blobs WHERE key = $1', key, [length])
          : await pool.query<{ part: Buffer }>('SELECT substring(bytes FROM $2 FOR $3) AS part FROM image_blobs WHERE key = $1', [key, offset + 1, length]);
      return result.rows[0]?.part ?? null;
    },
    async link(links) {
      if (links.length === 0) return [];
      return transaction(async (client) => {
        const at = now();
        const added: NewLink[] = [];
        for (const entry of links) {
          // An image evicted since the caller looked is skipped, not a foreign-key failure.
          const touched = await client.query('UPDATE images SET last_used = GREATEST(last_used, $1) WHERE key = $2', [at, entry.key]);
          if (!touched.rowCount) continue;
          const inserted = await client.query(
            `INSERT INTO track_images (dbid, category, image_key, artist_key, album_key, source) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (dbid, category, image_key) DO NOTHING`,
            [entry.dbid, entry.category, entry.key, entry.artistKey, entry.albumKey, entry.source],
          );
          if (!inserted.rowCount) continue;
          added.push(entry);
          await notify(client, { kind: 'image', dbid: entry.dbid, key: entry.key, category: entry.category });
        }
        return added;
      });
    },
    async imagesOf(dbid) {
      const result = await pool.query<ImageRow & { dbid: string; category: ImageCategory; source: string }>(
        `SELECT l.dbid, l.category, l.source, i.key, i.mime_type, i.size
           FROM track_images l JOIN images i ON i.key = l.image_key
          WHERE l.dbid = $1 ORDER BY l.id`,
        [dbid],
      );
      return result.rows.map((row) => ({ ...fromImageRow(row), dbid: Number(row.dbid), category: row.category, source: row.source }));
    },
    async find(query) {
      const result =
        query.albumKey === undefined
          ? await pool.query<ImageRow>(
              `SELECT i.key, i.mime_type, i.size FROM track_images l JOIN images i ON i.key = l.image_key
              WHERE l.artist_key = $1 AND l.category = $2 GROUP BY i.key ORDER BY max(l.id) DESC`,
              [query.artistKey, query.category],
            )
          : await pool.query<ImageRow>(
              `SELECT i.key, i.mime_type, i.size FROM track_images l JOIN images i ON i.key = l.image_key
              WHERE l.artist_key = $1 AND l.album_key = $2 AND l.category = $3 GROUP BY i.key ORDER BY max(l.id) DESC`,
              [query.artistKey, query.albumKey, query.category],
            );
      return result.rows.map(fromImageRow);
    },
    async keyForUrl(url) {
      const result = await pool.query<{ image_key: string }>('SELECT image_key FROM image_urls WHERE url_sha256 = $1', [sha256(url)]);
      return result.rows[0]?.image_key ?? null;
    },
    async rememberUrl(url, key) {
      await pool.query(
        `INSERT INTO image_urls (url_sha256, image_key, fetched_at) SELECT $1, key, $3 FROM images WHERE key = $2
         ON CONFLICT (url_sha256) DO UPDATE SET image_key = EXCLUDED.image_key, fetched_at = EXCLUDED.fetched_at`,
        [sha256(url), key, now()],
      );
    },
    async totalBytes() {
      const result = await pool.query<{ total: string | null }>('SELECT sum(size) AS total FROM images');
      return Number(result.rows[0]?.total ?? 0);
    },
  };

  const lookupCache: LookupCacheStore = {
    async get(service, key) {
      const result = await pool.query<{ found: boolean; answer: string | null; expires_at: string }>(
        'SELECT found, answer, expires_at FROM lookup_cache WHERE service = $1 AND lookup_key = $2 AND expires_at > $3',
        [service, key, now()],
      );
      const row = result.rows[0];
      return row ? storedAnswer(row.found, row.answer, Number(row.expires_at)) : undefined;
    },
    async put(service, key, answer) {
      const at = now();
      const expiresAt = expiryOf(answer, at);
      await pool.query(
        `INSERT INTO lookup_cache (service, lookup_key, found, answer, fetched_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (service, lookup_key) DO UPDATE SET
           found = EXCLUDED.found, answer = EXCLUDED.answer, fetched_at = EXCLUDED.fetched_at, expires_at = EXCLUDED.expires_at`,
        [service, key, answer.found, answer.found ? answer.answer : null, at, expiresAt],
      );
      return expiresAt;
    },
    async purgeExpired() {
      const result = await pool.query('DELETE FROM lookup_cache WHERE expires_at <= $1', [now()]);
      return result.rowCount ?? 0;
    },
  };

  const knownSlots = new Set<string>();
  const requestSlots: RequestSlots = {
    async tryAcquire(service, intervalMs) {
      if (!knownSlots.has(service)) {
        await pool.query('INSERT INTO request_slots (service, next_at) VALUES ($1, 0) ON CONFLICT (service) DO NOTHING', [service]);
        knownSlots.add(service);
      }
      // Concurrent takers queue on the row lock; the WHERE is checked again on the row the first one left.
      const taken = await pool.query(`UPDATE request_slots SET next_at = ${DB_NOW_MS} + $2 WHERE service = $1 AND next_at <= ${DB_NOW_MS}`, [
        service,
        Math.ceil(intervalMs),
      ]);
      if (taken.rowCount) return 0;
      const left = await pool.query<{ wait: string }>(`SELECT next_at - ${DB_NOW_MS} AS wait FROM request_slots WHERE service = $1`, [service]);
      return Math.max(1, Number(left.rows[0]?.wait ?? 1));
    },
    async started(service, intervalMs) {
      await pool.query(`UPDATE request_slots SET next_at = GREATEST(next_at, ${DB_NOW_MS} + $2) WHERE service = $1`, [service, Math.ceil(intervalMs)]);
    },
  };

  const events = new EventEmitter<StoreEvents>();
  events.setMaxListeners(0);
  // Another instance's change, or changes missed while disconnected, make cached pages stale.
  events.on('change', () => (writes += 1));
  events.on('reconnected', () => (writes += 1));
  const listener = listenForChanges(url, instanceId, events, options.onConnectionProblem);
  try {
    await listener.ready;
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new StartupError(`cannot listen on database ${redactUrl(url)}: ${errorMessage(error)}`);
  }
  let closing: Promise<void> | undefined;

  return {
    backend: 'postgres',
    tracks,
    images,
    lookupCache,
    outputs: createPostgresOutputStore(pool),
    idempotency: createPostgresIdempotencyStore(pool),
    requestSlots,
    events,
    probeWrite: () => probePostgresWrite(pool),
    close() {
      closing ??= listener.close().then(() => pool.end());
      return closing;
    },
  };
}

/**
 * The LISTEN connection: emits other instances' changes, 'disconnected' when it breaks, and
 * 'reconnected' once it listens again (backoff from 200 ms doubling to 5 s).
 */
function listenForChanges(
  url: string,
  instanceId: string,
  events: EventEmitter<StoreEvents>,
  report: ((message: string) => void) | undefined,
): { ready: Promise<void>; close(): Promise<void> } {
  let client: pg.Client | null = null;
  let closed = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let delayMs = RECONNECT_FIRST_MS;

  const onNotification = (message: pg.Notification) => {
    if (message.channel !== CHANNEL || !message.payload) return;
    const change = parseChange(message.payload, instanceId);
    if (change) events.emit('change', change);
  };

  const connect = async (): Promise<void> => {
    const candidate = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true, application_name: 'svc listen' });
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

  return {
    ready: connect(),
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      const last = client;
      client = null;
      await last?.end().catch(() => undefined);
    },
  };
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

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://…';
  }
}

function fromTrackRow(row: TrackRow): TrackRecord {
  return { dbid: Number(row.dbid), receivedSeq: Number(row.received_seq), receivedAt: row.received_at, metadata: row.metadata };
}

function fromImageRow(row: ImageRow): StoredImage {
  return { key: row.key, mimeType: row.mime_type, size: Number(row.size) };
}
