import type { TrackFields, TrackRecord } from '../../domain/track';
import type { StoreChange } from '../store';
import { historyUpperBound, type NewTrack, type TrackStore } from '../tracks';
import type { PostgresContext } from './connection';
import { announced, NOTIFY_CHANNEL } from './notifications';
import { EXPAND_LOCK } from './outputs';

/**
 * Held by each insert until it commits: dbids, change ids and commits come in one order on every
 * instance, so the highest stored dbid is the newest committed record and its change is behind
 * every older one's (docs/decisions.md "Delivery promises").
 */
const INSERT_LOCK = 0x5356_4304;

/**
 * One statement, so one transaction: the row, the outputs' change row (its payload built as
 * trackPayload() in store/outputs.ts does), the Idempotency-Key's dbid and the announcement to the other instances.
 * received_at never goes below a stored one; the change row shares expand()'s lock (outputs.ts).
 */
const INSERT_SQL = `WITH locked AS (SELECT pg_advisory_xact_lock(${INSERT_LOCK}), pg_advisory_xact_lock_shared(${EXPAND_LOCK})),
  track AS (
    INSERT INTO tracks (received_seq, received_at, metadata)
    SELECT $2, greatest($3::text COLLATE "C", (SELECT max(received_at) FROM tracks)), $4::json FROM locked
    RETURNING dbid, received_at
  ),
  change AS (
    INSERT INTO output_changes (event, dbid, payload, created_at)
    SELECT 'changed', dbid, '{"dbid":' || dbid || CASE WHEN $5::text = '{}' THEN '}' ELSE ',' || substr($5::text, 2) END, $6 FROM track
  ),
  key AS (UPDATE idempotency_keys k SET dbid = track.dbid FROM track WHERE k.key = $7 AND k.status IS NULL)
  SELECT dbid, received_at, pg_notify('${NOTIFY_CHANNEL}', json_build_object('origin', $1::text, 'kind', 'track', 'dbid', dbid)::text) FROM track`;

// The PostgreSQL side of TrackStore: every change of a record is announced to the other
// instances in the same statement (notifications.ts).

interface TrackRow {
  dbid: string;
  received_seq: string;
  received_at: string;
  metadata: TrackFields;
}

export interface PostgresTracks {
  store: TrackStore;
  /** Another instance's change, or changes missed while disconnected: cached pages are stale. */
  /** Another instance changed something (a reconnect: anything may have changed). */
  markStale: (change?: StoreChange) => void;
}

export function createPostgresTrackStore({ pool, instanceId }: PostgresContext): PostgresTracks {
  /** Writes seen by this instance, its own and those other instances announce (TrackStore.version). */
  let writes = 0;
  let deletions = 0;
  const store: TrackStore = {
    async insert(track) {
      const record = await insertTrack(pool, instanceId, track);
      writes += 1;
      return record;
    },
    async current() {
      const result = await pool.query<TrackRow>('SELECT dbid, received_seq, received_at, metadata FROM tracks ORDER BY dbid DESC LIMIT 1');
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
      if (removed) {
        writes += 1;
        deletions += 1;
      }
      return removed;
    },
    version: () => writes,
    removals: () => deletions,
    async nextReceivedSeq() {
      const result = await pool.query<{ seq: string }>("SELECT nextval('received_seq') AS seq");
      return Number(result.rows[0]?.seq);
    },
  };
  return {
    store,
    markStale: (change?: StoreChange) => {
      writes += 1;
      // No change given: a reconnect, after which a deletion may have been missed.
      if (!change || change.kind === 'deleted') deletions += 1;
    },
  };
}

async function insertTrack(pool: PostgresContext['pool'], instanceId: string, track: NewTrack): Promise<TrackRecord> {
  const metadata = JSON.stringify(track.metadata);
  const result = await pool.query<{ dbid: string; received_at: string }>(INSERT_SQL, [
    instanceId,
    track.receivedSeq,
    track.receivedAt,
    metadata,
    metadata,
    Date.now(),
    track.idempotencyKey ?? null,
  ]);
  const row = result.rows[0];
  if (!row) throw new Error('insert returned no dbid');
  const dbid = Number(row.dbid);
  return { dbid, receivedSeq: track.receivedSeq, receivedAt: row.received_at, metadata: track.metadata };
}

function fromTrackRow(row: TrackRow): TrackRecord {
  return { dbid: Number(row.dbid), receivedSeq: Number(row.received_seq), receivedAt: row.received_at, metadata: row.metadata };
}
