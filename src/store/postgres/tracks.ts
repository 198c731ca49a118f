import type { TrackFields, TrackRecord } from '../../domain/track';
import { PLAY_COLUMNS, defaultPlay, playFromRow, plannedEndFor, type PlayColumns, type PlayLogStore } from '../plays';
import type { StoreChange } from '../store';
import { historyUpperBound, startedPlay, type TrackStore } from '../tracks';
import { inTransaction, type PostgresContext } from './connection';
import { announced } from './notifications';
import { lockChannel, placePostgresPlay } from './plays';

// The PostgreSQL side of TrackStore: every change of a record is announced to the other
// instances in the same statement (notifications.ts).

interface TrackRow extends PlayColumns {
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

/** The columns every track read selects. */
const TRACK_COLUMNS = `dbid, received_seq, received_at, metadata, ${PLAY_COLUMNS}`;

export function createPostgresTrackStore({ pool, instanceId }: PostgresContext, plays: Pick<PlayLogStore, 'version'>): PostgresTracks {
  /** Writes seen by this instance, its own and those other instances announce (TrackStore.version). */
  let writes = 0;
  let deletions = 0;
  const store: TrackStore = {
    async insert(track) {
      const play = track.play ?? defaultPlay(track.receivedAt);
      // The channel's lock, the placing after its latest play and the insert are one transaction:
      // plays on one channel never overlap, whichever instance stores them (docs/play-log.md).
      const record = await inTransaction(pool, async (client) => {
        await lockChannel(client, play.channel);
        const { startedAt } = await placePostgresPlay(client, play);
        const result = await client.query<{ dbid: string }>(
          announced(
            'track',
            'INSERT INTO tracks (received_seq, received_at, metadata, started_at, channel, kind, usage, dj, show, planned_end_at) VALUES ($2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
          ),
          [
            instanceId,
            track.receivedSeq,
            track.receivedAt,
            JSON.stringify(track.metadata),
            startedAt,
            play.channel,
            play.kind,
            play.usage,
            play.dj ?? null,
            play.show ?? null,
            plannedEndFor(play, startedAt),
          ],
        );
        const row = result.rows[0];
        if (!row) throw new Error('insert returned no dbid');
        return {
          dbid: Number(row.dbid),
          receivedSeq: track.receivedSeq,
          receivedAt: track.receivedAt,
          metadata: track.metadata,
          play: startedPlay(play, startedAt),
        };
      });
      writes += 1;
      return record;
    },
    async current() {
      const result = await pool.query<TrackRow>(`SELECT ${TRACK_COLUMNS} FROM tracks ORDER BY received_seq DESC, dbid DESC LIMIT 1`);
      return result.rows[0] ? fromTrackRow(result.rows[0]) : null;
    },
    async byDbid(dbid) {
      const result = await pool.query<TrackRow>(`SELECT ${TRACK_COLUMNS} FROM tracks WHERE dbid = $1`, [dbid]);
      return result.rows[0] ? fromTrackRow(result.rows[0]) : null;
    },
    async since(dbid, limit) {
      const result = await pool.query<TrackRow>(`SELECT ${TRACK_COLUMNS} FROM tracks WHERE dbid > $1 ORDER BY dbid LIMIT $2`, [dbid, limit]);
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
        `SELECT ${TRACK_COLUMNS} FROM tracks
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
    version: () => writes + plays.version(),
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

function fromTrackRow(row: TrackRow): TrackRecord {
  return {
    dbid: Number(row.dbid),
    receivedSeq: Number(row.received_seq),
    receivedAt: row.received_at,
    metadata: row.metadata,
    play: playFromRow(row, row.received_at),
  };
}
