import pg from 'pg';
import { playJson } from '../../domain/play';
import type { TrackFields, TrackRecord } from '../../domain/track';
import { PLAY_COLUMNS, defaultPlay, placePlay, playFromRow, playRowValues, type PlacedPlay, type PlayColumns, type PlayLogStore } from '../plays';
import { reportColumnValues } from '../play-reports';
import type { StoreChange } from '../store';
import { channelNamesSql, historyUpperBound, startedPlay, type NewTrack, type TrackStore } from '../tracks';
import { allWithCommit, inTransaction, type BoundStatement, type PostgresContext } from './connection';
import { announced, NOTIFY_CHANNEL } from './notifications';
import { EXPAND_LOCK } from './outputs';
import { latestPlays, lockAndReadLatest, lockChannel, previousEndSql, previousEndValues } from './plays';
import { correctPostgres, postgresCorrectionsOf } from './corrections';

/**
 * With its channel (the two-key form, hashtext of the channel as the second key), held by each
 * insert until it commits: on one channel, dbids, change ids and commits come in one order on every
 * instance, so the channel's highest stored dbid is its newest committed record and its change is
 * behind every older one's; two channels never wait on each other (docs/channels.md "Order across
 * channels"; docs/decisions.md "Delivery promises").
 */
export const INSERT_LOCK = 0x5356_4304;

/** The insert lock of the channel given as parameter `$n` (tests hold it to keep a channel's insert open). */
export function insertLockSql(n: number): string {
  return `pg_advisory_xact_lock(${INSERT_LOCK}, hashtext($${n}::text))`;
}

/**
 * The row, the end of the play before it on its channel (plays.ts previousEndSql), the outputs' change row (its payload the record's JSON with the dbid put first, as
 * recordJson() in domain/play.ts makes it), the Idempotency-Key's dbid and the announcement to the
 * other instances, in the transaction that placed the play. received_at never goes below a stored
 * one; the change row shares expand()'s lock (outputs.ts).
 */
const INSERT_SQL = `WITH locked AS (SELECT ${insertLockSql(9)}, pg_advisory_xact_lock_shared(${EXPAND_LOCK})),
  track AS (
    INSERT INTO tracks (received_seq, received_at, metadata, started_at, channel, kind, usage, dj, show, planned_end_at,
                        recording_key, spelling_key, report_marks, report_version)
    SELECT $2, greatest($3::text COLLATE "C", (SELECT max(received_at) FROM tracks)), $4::json, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18 FROM locked
    RETURNING dbid, received_at
  ),
  change AS (
    INSERT INTO output_changes (event, dbid, payload, created_at)
    SELECT 'changed', dbid, '{"dbid":' || dbid || CASE WHEN $5::text = '{}' THEN '}' ELSE ',' || substr($5::text, 2) END, $6 FROM track
  ),
  key AS (UPDATE idempotency_keys k SET dbid = track.dbid FROM track WHERE k.key = $7 AND k.status IS NULL),
  ended AS (${previousEndSql(19, '$9')})
  SELECT dbid, received_at, pg_notify('${NOTIFY_CHANNEL}', json_build_object('origin', $1::text, 'kind', 'track', 'dbid', dbid)::text) FROM track`;

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

export function createPostgresTrackStore(context: PostgresContext, plays: Pick<PlayLogStore, 'version'>): PostgresTracks {
  const { pool, instanceId } = context;
  /** Writes seen by this instance, its own and those other instances announce (TrackStore.version). */
  let writes = 0;
  let deletions = 0;
  const insert = createInsertQueue(pool, instanceId);
  /** Records with their corrections (one query for a page). */
  const withCorrections = async (rows: readonly TrackRow[]): Promise<TrackRecord[]> => {
    const records = rows.map(fromTrackRow);
    const byDbid = await postgresCorrectionsOf(
      pool,
      records.map((record) => record.dbid),
    );
    return records.map((record) => {
      const entries = byDbid.get(record.dbid);
      return entries ? { ...record, corrections: entries } : record;
    });
  };
  const read = async (dbid: number): Promise<TrackRecord | null> => {
    const result = await pool.query<TrackRow>(`SELECT ${TRACK_COLUMNS} FROM tracks WHERE dbid = $1`, [dbid]);
    return (await withCorrections(result.rows))[0] ?? null;
  };
  const store: TrackStore = {
    async insert(track) {
      const record = await insert(track);
      writes += 1;
      return record;
    },
    async current() {
      const result = await pool.query<TrackRow>(`SELECT ${TRACK_COLUMNS} FROM tracks ORDER BY dbid DESC LIMIT 1`);
      return result.rows[0] ? fromTrackRow(result.rows[0]) : null;
    },
    currentPerChannel: (limit, channel) => currentPerChannel(pool, limit, channel),
    byDbid: read,
    async correct(dbid, correction) {
      const outcome = await correctPostgres(context, dbid, correction);
      if (outcome.kind !== 'corrected') return outcome;
      if (outcome.entry) writes += 1;
      const record = await read(dbid);
      return record ? { kind: 'corrected', record, entry: outcome.entry } : { kind: 'not found' };
    },
    async since(dbid, limit, channel) {
      const result =
        channel === undefined
          ? await pool.query<TrackRow>(`SELECT ${TRACK_COLUMNS} FROM tracks WHERE dbid > $1 ORDER BY dbid LIMIT $2`, [dbid, limit])
          : await pool.query<TrackRow>(`SELECT ${TRACK_COLUMNS} FROM tracks WHERE dbid > $1 AND channel = $3 ORDER BY dbid LIMIT $2`, [dbid, limit, channel]);
      return result.rows.map(fromTrackRow);
    },
    async updateMetadata(dbid, metadata) {
      await pool.query(
        announced('track', 'UPDATE tracks SET metadata = $2, recording_key = $4, spelling_key = $5, report_marks = $6, report_version = $7 WHERE dbid = $3'),
        [instanceId, JSON.stringify(metadata), dbid, ...reportColumnValues(metadata)],
      );
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
      return { records: await withCorrections(rows.rows.slice(0, query.limit)), more: rows.rows.length > query.limit };
    },
    async remove(dbid) {
      const removed = await removeAndHeal(pool, instanceId, dbid);
      if (removed) {
        writes += 1;
        deletions += 1;
      }
      return removed;
    },
    version: () => writes + plays.version(),
    removals: () => deletions,
    nextReceivedSeq: createSeqQueue(pool),
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

/** Most arrival numbers one round trip takes. */
const MOST_SEQS_AT_ONCE = 256;

/**
 * nextReceivedSeq: the arrivals that ask while one round trip for numbers is out share the next
 * one, and get its numbers in the order they asked (arrival order), one query for all of them.
 */
function createSeqQueue(pool: PostgresContext['pool']): () => Promise<number> {
  const waiting: { resolve: (seq: number) => void; reject: (error: unknown) => void }[] = [];
  let running = false;
  const drain = async () => {
    running = true;
    while (waiting.length > 0) {
      const batch = waiting.splice(0, MOST_SEQS_AT_ONCE);
      try {
        const result = await pool.query<{ seq: string }>("SELECT nextval('received_seq') AS seq FROM generate_series(1, $1) ORDER BY seq", [batch.length]);
        batch.forEach((pending, index) => {
          const seq = result.rows[index]?.seq;
          if (seq === undefined) pending.reject(new Error('no arrival number returned'));
          else pending.resolve(Number(seq));
        });
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    running = false;
  };
  return () =>
    new Promise<number>((resolve, reject) => {
      waiting.push({ resolve, reject });
      if (!running) void drain();
    });
}

/** Most tracks one insert transaction stores: bounds how long it holds the insert order. */
const MOST_PER_BATCH = 32;

interface PendingInsert {
  track: NewTrack;
  resolve: (record: TrackRecord) => void;
  reject: (error: unknown) => void;
}

/**
 * The inserts of one instance, one transaction at a time per channel: the tracks of a channel
 * submitted while one commits are stored together in the next, in the order they arrived. The insert order (INSERT_LOCK) and a
 * channel's lock are held until COMMIT, so one transaction per track held them for its round trips
 * and its commit's flush each: writes went one by one, whatever the number of instances
 * (docs/several-instances.md "Write throughput"). A batch that the server refused is stored track
 * by track, so one bad track fails alone.
 */
export function createInsertQueue(pool: PostgresContext['pool'], instanceId: string): (track: NewTrack) => Promise<TrackRecord> {
  /** One queue per channel, while it has tracks waiting: two channels' transactions never wait on each other. */
  const queues = new Map<string, PendingInsert[]>();
  const drain = async (waiting: PendingInsert[], channel: string) => {
    while (waiting.length > 0) {
      const batch = waiting.splice(0, MOST_PER_BATCH);
      await settleBatch(pool, instanceId, batch);
    }
    queues.delete(channel);
  };
  return (track) =>
    new Promise<TrackRecord>((resolve, reject) => {
      const channel = (track.play ?? defaultPlay(track.receivedAt)).channel;
      const waiting = queues.get(channel);
      if (waiting) {
        waiting.push({ track, resolve, reject });
        return;
      }
      const started = [{ track, resolve, reject }];
      queues.set(channel, started);
      void drain(started, channel);
    });
}

async function settleBatch(pool: PostgresContext['pool'], instanceId: string, batch: PendingInsert[]): Promise<void> {
  try {
    const records = await insertTracks(
      pool,
      instanceId,
      batch.map((pending) => pending.track),
    );
    batch.forEach((pending, index) => pending.resolve(records[index]));
  } catch (error) {
    // Refused by the server: rolled back for sure, so each track alone gets its own answer. A
    // lost connection leaves the outcome unknown: every track gets the error (and its client retries).
    if (batch.length > 1 && error instanceof pg.DatabaseError) {
      for (const pending of batch) await settleBatch(pool, instanceId, [pending]);
      return;
    }
    for (const pending of batch) pending.reject(error);
  }
}

/**
 * The channels' locks, each play's placing after its channel's latest one and the inserts are one
 * transaction: plays on one channel never overlap, whichever instance stores them (docs/play-log.md
 * "Air times"). Every channel of the batch is locked first, in one order, so two batches never wait
 * on each other's channels. Two round trips for the whole batch: BEGIN with the locks and the
 * latest plays, then every insert and the COMMIT (the locks are held for no round trip per track).
 */
async function insertTracks(pool: PostgresContext['pool'], instanceId: string, tracks: readonly NewTrack[]): Promise<TrackRecord[]> {
  const plays = tracks.map((track) => track.play ?? defaultPlay(track.receivedAt));
  const channels = [...new Set(plays.map((play) => play.channel))].sort();
  return inTransaction(
    pool,
    async (client, opened) => {
      // Each channel's latest play: read with the locks, then the batch's own tracks as they are placed.
      const latest = latestPlays(opened);
      const statements: BoundStatement[] = [];
      const started = tracks.map((track, index) => {
        const play = plays[index];
        const placed = placePlay(latest.get(play.channel), play.startedAt);
        const values = playRowValues(play, placed.startedAt);
        // Its dbid is not known before the batch is sent: previousEndSql finds the play by its channel.
        latest.set(play.channel, { dbid: 0, started_at: placed.startedAt, ended_at: null, planned_end_at: values[6] });
        const started = startedPlay(play, placed.startedAt);
        statements.push({ sql: INSERT_SQL, values: insertValues(instanceId, track, started, placed, values) });
        return started;
      });
      const results = await allWithCommit<{ dbid: string; received_at: string }>(client, statements);
      return tracks.map((track, index) => {
        const row = results[index]?.rows[0];
        if (!row) throw new Error('insert returned no dbid');
        return { dbid: Number(row.dbid), receivedSeq: track.receivedSeq, receivedAt: row.received_at, metadata: track.metadata, play: started[index] };
      });
    },
    (client) => lockAndReadLatest(client, channels),
    { commitsItself: true },
  );
}

/** INSERT_SQL's values for one track. */
function insertValues(
  instanceId: string,
  track: NewTrack,
  started: ReturnType<typeof startedPlay>,
  placed: PlacedPlay,
  values: ReturnType<typeof playRowValues>,
): (string | number | null)[] {
  // recordJson() without the dbid, which the statement puts first.
  const payload = { ...track.metadata, ...playJson(started) };
  return [
    instanceId,
    track.receivedSeq,
    track.receivedAt,
    JSON.stringify(track.metadata),
    JSON.stringify(payload),
    Date.now(),
    track.idempotencyKey ?? null,
    ...values,
    ...reportColumnValues(track.metadata),
    ...previousEndValues(placed),
  ];
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

/** Deletes a record; the play it had ended runs on to the next play, or is on air again (docs/play-log.md "Air times"). */
async function removeAndHeal(pool: PostgresContext['pool'], instanceId: string, dbid: number): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    const place = (await client.query<{ channel: string; started_at: string | null }>('SELECT channel, started_at FROM tracks WHERE dbid = $1', [dbid]))
      .rows[0];
    if (!place) return false;
    await lockChannel(client, place.channel);
    await client.query(announced('deleted', 'DELETE FROM tracks WHERE dbid = $2'), [instanceId, dbid]);
    // The play the removed one had ended runs on to the next play, or is on air again (docs/play-log.md "Air times").
    if (place.started_at !== null) {
      await client.query(
        `UPDATE tracks SET
            ended_at = (SELECT n.started_at FROM tracks n WHERE n.channel = $1 AND n.started_at >= $2 ORDER BY n.started_at, n.dbid LIMIT 1),
            end_reason = CASE WHEN EXISTS (SELECT 1 FROM tracks n WHERE n.channel = $1 AND n.started_at >= $2) THEN 'next' END,
            listeners = NULL, listeners_done = false
          WHERE channel = $1 AND end_reason = 'next' AND ended_at = $2`,
        [place.channel, place.started_at],
      );
    }
    return true;
  });
}

/** Each channel's current record (the contract in ../tracks.ts), one indexed query per channel. */
async function currentPerChannel(pool: pg.Pool, limit: number, channel?: string): Promise<TrackRecord[]> {
  const names = channel === undefined ? (await pool.query<{ channel: string }>(channelNamesSql('$1'), [limit])).rows.map((row) => row.channel) : [channel];
  const records: TrackRecord[] = [];
  // A channel's plays keep their order (docs/play-log.md "Air times"): its latest start is its highest dbid (tracks_by_channel_start).
  for (const name of names) {
    const result = await pool.query<TrackRow>(
      `SELECT ${TRACK_COLUMNS} FROM tracks WHERE channel = $1 AND started_at IS NOT NULL ORDER BY started_at DESC, dbid DESC LIMIT 1`,
      [name],
    );
    if (result.rows[0]) records.push(fromTrackRow(result.rows[0]));
  }
  return records;
}
