import type pg from 'pg';
import type { EndReason } from '../../domain/play';
import type { TrackFields } from '../../domain/track';
import { PLAY_COLUMNS, PLAY_PAGE, endNotBefore, playFromRow, type LatestPlay, type PlacedPlay, type PlayColumns, type PlayLogStore } from '../plays';
import { inTransaction, type PostgresContext, type Queryable } from './connection';
import { createPostgresSessionStore } from './listener-sessions';
import { announced } from './notifications';
import { createPostgresPlayReports } from './play-reports';
import type { PlayReportQueries } from '../play-reports';

// The PostgreSQL side of the play log (store/plays.ts has the contract). Every change of a
// channel's plays takes the channel's advisory lock first, so instances sharing the database
// place their plays one after the other and never overlap.

/** Serializes the play changes of one channel across every instance, until the transaction ends. */
export function lockChannel(client: Queryable, channel: string) {
  return client.query("SELECT pg_advisory_xact_lock(hashtext('svc-play:' || $1))", [channel]);
}

/**
 * The latest play of the channel `channel` (an SQL expression) names: its highest start, then its
 * highest dbid (tracks_by_channel_start). placePlay (../plays.ts) places a new play after it.
 */
function latestPlaySql(channel: string, columns: string): string {
  return `SELECT ${columns} FROM tracks WHERE channel = ${channel} AND started_at IS NOT NULL ORDER BY started_at DESC, dbid DESC LIMIT 1`;
}

/**
 * lockChannel for each of `channels` (sorted, so that two takers never wait on each other), then
 * the latest play of each: one probe of tracks_by_channel_start per channel. Statements without
 * parameters, for inTransaction's opening round trip; latestPlays reads the second one's rows.
 */
export function lockAndReadLatest(client: Pick<pg.PoolClient, 'escapeLiteral'>, channels: readonly string[]): string[] {
  const list = `ARRAY[${channels.map((channel) => client.escapeLiteral(channel)).join(', ')}]::text[]`;
  return [
    `SELECT pg_advisory_xact_lock(hashtext('svc-play:' || c)) FROM unnest(${list}) WITH ORDINALITY AS t(c, n) ORDER BY n`,
    `SELECT c.channel, l.dbid, l.started_at, l.ended_at, l.planned_end_at FROM unnest(${list}) AS c(channel)
      CROSS JOIN LATERAL (${latestPlaySql('c.channel', 'dbid, started_at, ended_at, planned_end_at')}) l`,
  ];
}

/** The latest plays lockAndReadLatest read, by channel. */
export function latestPlays(opened: readonly pg.QueryResult[]): Map<string, LatestPlay> {
  const rows = (opened[1]?.rows ?? []) as (LatestPlay & { dbid: string; channel: string })[];
  return new Map(
    rows.map((row) => [row.channel, { dbid: Number(row.dbid), started_at: row.started_at, ended_at: row.ended_at, planned_end_at: row.planned_end_at }]),
  );
}

/**
 * The latest play's new end (PlacedPlay.previousEnd), as a data-modifying CTE of the insert's
 * statement: its parameters are $first (ended_at), $first+1 (end_reason), $first+2 (the seconds
 * cut off) and $first+3 (1 when a play ends, else NULL). The play that ends is the latest one of
 * the channel `channel` names, as the statement finds it: under the channel's lock that is the
 * play placePlay placed after, also when it was stored by an earlier statement of the same
 * transaction (whose dbid its caller does not know yet: a batch goes in one round trip).
 */
export function previousEndSql(first: number, channel: string): string {
  const [endedAt, reason, trimmed, ends] = [first, first + 1, first + 2, first + 3].map((n) => `$${n}`);
  return `UPDATE tracks SET ended_at = ${endedAt}, end_reason = ${reason}, listeners_done = false,
        trimmed_seconds = CASE WHEN ${trimmed}::double precision IS NULL THEN trimmed_seconds ELSE coalesce(trimmed_seconds, 0) + ${trimmed} END
        WHERE ${ends}::int = 1 AND dbid = (${latestPlaySql(channel, 'dbid')})`;
}

/** previousEndSql's four values. */
export function previousEndValues(placed: PlacedPlay): [string | null, string | null, number | null, 1 | null] {
  const end = placed.previousEnd;
  return end ? [end.endedAt, end.reason, end.trimmedSeconds, 1] : [null, null, null, null];
}

interface PlayPageRow extends PlayColumns {
  dbid: string;
  received_at: string;
  metadata: TrackFields;
}

export function createPostgresPlayLogStore({ pool, instanceId }: PostgresContext): PlayLogStore & PlayReportQueries {
  let writes = 0;

  return {
    ...createPostgresPlayReports(pool),
    playPages: postgresPlayPages(pool),
    async end(channel, at, reason: EndReason) {
      return inTransaction(pool, async (client) => {
        await lockChannel(client, channel);
        const onAir = await client.query<{ dbid: string; started_at: string }>(
          'SELECT dbid, started_at FROM tracks WHERE channel = $1 AND ended_at IS NULL ORDER BY started_at DESC, dbid DESC LIMIT 1',
          [channel],
        );
        const play = onAir.rows[0];
        if (!play) return null;
        // Announced: other instances re-read the record (its end shows on their /v1/last and pages).
        await client.query(announced('track', 'UPDATE tracks SET ended_at = $2, end_reason = $3, listeners_done = false WHERE dbid = $4'), [
          instanceId,
          endNotBefore(play.started_at, at),
          reason,
          play.dbid,
        ]);
        writes += 1;
        return Number(play.dbid);
      });
    },
    async endDue(now) {
      const ended = await pool.query<{ dbid: string }>(
        announced(
          'track',
          `UPDATE tracks SET ended_at = planned_end_at, end_reason = 'duration', listeners_done = false
            WHERE ended_at IS NULL AND planned_end_at IS NOT NULL AND planned_end_at <= $2`,
        ),
        [instanceId, now],
      );
      writes += ended.rows.length;
      return ended.rows.map((row) => Number(row.dbid));
    },
    async nextPlannedEnd() {
      const result = await pool.query<{ at: string | null }>('SELECT min(planned_end_at) AS at FROM tracks WHERE ended_at IS NULL');
      return result.rows[0]?.at ?? null;
    },
    async uncounted(limit) {
      const result = await pool.query<{ dbid: string; channel: string; started_at: string; ended_at: string }>(
        'SELECT dbid, channel, started_at, ended_at FROM tracks WHERE NOT listeners_done AND ended_at IS NOT NULL ORDER BY dbid LIMIT $1',
        [limit],
      );
      return result.rows.map((row) => ({ dbid: Number(row.dbid), channel: row.channel, startedAt: row.started_at, endedAt: row.ended_at }));
    },
    async recountFrom(channel, since) {
      // Plays of one channel never overlap: one that ended after `since` is the one on air then, or a later one.
      const marked = await pool.query(
        `UPDATE tracks SET listeners_done = false
          WHERE channel = $1 AND listeners_done AND ended_at > $2
            AND started_at >= coalesce((SELECT max(started_at) FROM tracks WHERE channel = $1 AND started_at <= $2), '')`,
        [channel, since],
      );
      return marked.rowCount ?? 0;
    },
    async setListeners(dbid, listeners) {
      // Every instance counts the plays that ended; the first to keep a count announces it, and
      // other instances re-read the record (its count shows on their /v1/last and pages).
      const kept = await pool.query(announced('track', 'UPDATE tracks SET listeners = $2, listeners_done = true WHERE dbid = $3 AND NOT listeners_done'), [
        instanceId,
        listeners === null ? null : JSON.stringify(listeners),
        dbid,
      ]);
      writes += kept.rowCount ?? 0;
    },
    async replaceListeners(dbid, listeners) {
      const kept = await pool.query(announced('track', 'UPDATE tracks SET listeners = $2, listeners_done = true WHERE dbid = $3'), [
        instanceId,
        JSON.stringify(listeners),
        dbid,
      ]);
      writes += kept.rowCount ?? 0;
    },
    version: () => writes,
    ...createPostgresSessionStore(pool),
  };
}

/** Optional channel conditions of the range reads: the channel is the last parameter. */
const rangeFilters = {
  channelFilter: (channel: string | undefined, index: number) => (channel === undefined ? '' : `channel = $${index} AND `),
  withChannel: (values: unknown[], channel: string | undefined) => (channel === undefined ? values : [...values, channel]),
};
/** The pages of plays read through `db` (the pool, or a report snapshot's connection). */
export function postgresPlayPages(db: Queryable): PlayLogStore['playPages'] {
  const { channelFilter, withChannel } = rangeFilters;
  return async function* playPages(range) {
    let after: [string, number] = [range.from, 0];
    for (;;) {
      const rows = await db.query<PlayPageRow>(
        `SELECT dbid, received_at, metadata, ${PLAY_COLUMNS} FROM tracks
          WHERE ${channelFilter(range.channel, 5)}(started_at, dbid) > ($1, $2) AND started_at < $3
          ORDER BY started_at, dbid LIMIT $4`,
        withChannel([after[0], after[1], range.to, PLAY_PAGE], range.channel),
      );
      if (rows.rows.length > 0)
        yield rows.rows.map((row) => ({
          dbid: Number(row.dbid),
          receivedAt: row.received_at,
          metadata: row.metadata,
          play: playFromRow(row, row.received_at),
        }));
      const last = rows.rows[rows.rows.length - 1];
      if (!last || rows.rows.length < PLAY_PAGE) return;
      after = [last.started_at ?? '', Number(last.dbid)];
    }
  };
}
