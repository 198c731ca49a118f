/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import type { TrackFields, TrackRecord } from '../../domain/track';
import type { Db } from './database';
import { recordJson } from '../../domain/play';
import { PLAY_COLUMNS, defaultPlay, playFromRow, playRowValues, type PlayColumns } from '../plays';
import { createPlayLogStore } from './plays';
import { createSqliteCorrections } from './corrections';
import { reportColumnValues } from '../play-reports';
import { NewTrack, TrackStore, channelNamesSql, historyUpperBound, startedPlay } from '../tracks';

interface TrackRow extends PlayColumns {
  dbid: number;
  received_seq: number;
  received_at: string;
  metadata: string;
}

/** The columns every track read selects. */
const TRACK_COLUMNS = `dbid, received_seq, received_at, metadata, ${PLAY_COLUMNS}`;

/**
 * One history page. The one upper bound is a (received_at, dbid) pair below both the cursor and
 * `until`; row values use the index as a range (sqlite.org/rowvalue.html, "Scrolling Window
 * Queries"), so SQLite reads `limit` index entries, never the table (a test checks the plan).
 */
export const HISTORY_PAGE_SQL = `SELECT ${TRACK_COLUMNS} FROM tracks
  WHERE (received_at, dbid) < (?, ?) AND received_at >= ?
  ORDER BY received_at DESC, dbid DESC LIMIT ?`;

/**
 * After a play is removed, the play it had ended (`next`, at its start) ends where the next play
 * on the channel starts, or is on air again when there is none; its listeners are counted anew.
 */
const HEAL_AFTER_REMOVAL_SQL = `UPDATE tracks SET
    ended_at = (SELECT n.started_at FROM tracks n WHERE n.channel = @channel AND n.started_at >= @started ORDER BY n.started_at, n.dbid LIMIT 1),
    end_reason = CASE WHEN EXISTS (SELECT 1 FROM tracks n WHERE n.channel = @channel AND n.started_at >= @started) THEN 'next' END,
    listeners = NULL, listeners_done = 0
  WHERE channel = @channel AND end_reason = 'next' AND ended_at = @started`;

/** The SQLite store: synchronous better-sqlite3 calls behind the asynchronous interface. */

/**
 * One transaction (docs/decisions.md "Delivery promises"): the play placed after the channel's
 * latest (plays on one channel never overlap, docs/play-log.md "Air times"), the row, the outputs'
 * change row and the Idempotency-Key's dbid.
 */
function createInsert(db: Db, plays: ReturnType<typeof createPlayLogStore>): (track: NewTrack) => TrackRecord {
  // received_at never goes below a stored one: the newest history entry is the highest dbid, the current track.
  const insertRow = db.prepare<
    [number, string, string, string, string, string, string, string, string | null, string | null, string | null, string, string, number, number],
    { dbid: number; received_at: string }
  >(
    `INSERT INTO tracks (received_seq, received_at, stored_at, metadata, started_at, channel, kind, usage, dj, show, planned_end_at,
                         recording_key, spelling_key, report_marks, report_version)
     VALUES (?, max(?, coalesce((SELECT max(received_at) FROM tracks), '')), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING dbid, received_at`,
  );
  const addChange = db.prepare<[number, string, number], never>("INSERT INTO output_changes (event, dbid, payload, created_at) VALUES ('changed', ?, ?, ?)");
  const keyStored = db.prepare<[number, string], never>('UPDATE idempotency_keys SET dbid = ? WHERE key = ? AND status IS NULL');
  return db.transaction((track: NewTrack): TrackRecord => {
    const play = track.play ?? defaultPlay(track.receivedAt);
    const { startedAt } = plays.place(play);
    const row = insertRow.get(
      track.receivedSeq,
      track.receivedAt,
      new Date().toISOString(),
      JSON.stringify(track.metadata),
      ...playRowValues(play, startedAt),
      ...reportColumnValues(track.metadata),
    );
    if (!row) throw new Error('insert returned no dbid');
    const record: TrackRecord = {
      dbid: row.dbid,
      receivedSeq: track.receivedSeq,
      receivedAt: row.received_at,
      metadata: track.metadata,
      play: startedPlay(play, startedAt),
    };
    addChange.run(row.dbid, JSON.stringify(recordJson(record)), Date.now());
    if (track.idempotencyKey !== undefined) keyStored.run(row.dbid, track.idempotencyKey);
    return record;
  });
}

export function createTrackStore(db: Db, plays: ReturnType<typeof createPlayLogStore> = createPlayLogStore(db)): TrackStore {
  const insert = createInsert(db, plays);
  const current = db.prepare<[], TrackRow>(`SELECT ${TRACK_COLUMNS} FROM tracks ORDER BY dbid DESC LIMIT 1`);
  // A channel's plays keep their order (docs/play-log.md "Air times"): its latest start is its highest dbid, read from tracks_by_channel_start.
  const currentOn = db.prepare<[string], TrackRow>(
    `SELECT ${TRACK_COLUMNS} FROM tracks WHERE channel = ? AND started_at IS NOT NULL ORDER BY started_at DESC, dbid DESC LIMIT 1`,
  );
  // The channels, one index step each (a loose index scan), not one row per track.
  const channelNames = db.prepare<[number], { channel: string }>(channelNamesSql('?'));
  const byDbid = db.prepare<[number], TrackRow>(`SELECT ${TRACK_COLUMNS} FROM tracks WHERE dbid = ?`);
  const update = db.prepare<[string, string, string, number, number, number], never>(
    'UPDATE tracks SET metadata = ?, recording_key = ?, spelling_key = ?, report_marks = ?, report_version = ? WHERE dbid = ?',
  );
  const page = db.prepare<[string, number, string, number], TrackRow>(HISTORY_PAGE_SQL);
  // Where a cursor stands: its own received_at, or that of the nearest older dbid if it was deleted.
  const cursorAt = db.prepare<[number], { received_at: string }>('SELECT received_at FROM tracks WHERE dbid <= ? ORDER BY dbid DESC LIMIT 1');
  const remove = db.prepare<[number], never>('DELETE FROM tracks WHERE dbid = ?');
  const placeOf = db.prepare<[number], { channel: string; started_at: string | null }>('SELECT channel, started_at FROM tracks WHERE dbid = ?');
  const heal = db.prepare<{ channel: string; started: string }, never>(HEAL_AFTER_REMOVAL_SQL);
  // The play the removed one ended runs on to the next play, or is on air again (docs/play-log.md "Air times").
  const removeAndHeal = db.transaction((dbid: number): boolean => {
    const place = placeOf.get(dbid);
    if (!place) return false;
    remove.run(dbid);
    if (place.started_at !== null) heal.run({ channel: place.channel, started: place.started_at });
    return true;
  });
  const maxSeq = db.prepare<[], { seq: number | null }>('SELECT max(received_seq) AS seq FROM tracks');
  const since = db.prepare<[number, number], TrackRow>(`SELECT ${TRACK_COLUMNS} FROM tracks WHERE dbid > ? ORDER BY dbid LIMIT ?`);
  const sinceOn = db.prepare<[number, string, number], TrackRow>(`SELECT ${TRACK_COLUMNS} FROM tracks WHERE dbid > ? AND channel = ? ORDER BY dbid LIMIT ?`);

  const corrections = createSqliteCorrections(db);
  /** Records with their corrections (one query for a page). */
  const withCorrections = (rows: readonly TrackRow[]): TrackRecord[] => {
    const records = rows.map(fromRow);
    const byDbid = corrections.of(records.map((record) => record.dbid));
    return records.map((record) => {
      const entries = byDbid.get(record.dbid);
      return entries ? { ...record, corrections: entries } : record;
    });
  };
  const read = (dbid: number): TrackRecord | null => {
    const row = byDbid.get(dbid);
    return row ? (withCorrections([row])[0] ?? null) : null;
  };

  let lastSeq = maxSeq.get()?.seq ?? 0;
  let writes = 0;
  let deletions = 0;

  return {
    async insert(track) {
      const record = insert(track);
      writes += 1;
      return record;
    },
    async current() {
      const row = current.get();
      return row ? fromRow(row) : null;
    },
    async since(dbid, limit, channel) {
      return (channel === undefined ? since.all(dbid, limit) : sinceOn.all(dbid, channel, limit)).map(fromRow);
    },
    async currentPerChannel(limit, channel) {
      const names = channel === undefined ? channelNames.all(limit).map((row) => row.channel) : [channel];
      return names.flatMap((name) => {
        const row = currentOn.get(name);
        return row ? [fromRow(row)] : [];
      });
    },
    async byDbid(dbid) {
      return read(dbid);
    },
    async correct(dbid, correction) {
      const outcome = corrections.correct(dbid, correction, read);
      if (outcome.kind === 'corrected' && outcome.entry) writes += 1;
      return outcome;
    },
    async updateMetadata(dbid, metadata) {
      update.run(JSON.stringify(metadata), ...reportColumnValues(metadata), dbid);
      writes += 1;
    },
    async history(query) {
      const bound = historyUpperBound(query, query.before === undefined ? undefined : cursorAt.get(query.before)?.received_at);
      if (!bound) return { records: [], more: false };
      // One row past the page tells whether there is a next one.
      const rows = page.all(bound[0], bound[1], query.since ?? '', query.limit + 1);
      return { records: withCorrections(rows.slice(0, query.limit)), more: rows.length > query.limit };
    },
    async remove(dbid) {
      const removed = removeAndHeal(dbid);
      if (removed) {
        writes += 1;
        deletions += 1;
      }
      return removed;
    },
    version() {
      return writes + plays.version();
    },
    removals() {
      return deletions;
    },
    async nextReceivedSeq() {
      lastSeq += 1;
      return lastSeq;
    },
  };
}

function fromRow(row: TrackRow): TrackRecord {
  return {
    dbid: row.dbid,
    receivedSeq: row.received_seq,
    receivedAt: row.received_at,
    metadata: JSON.parse(row.metadata) as TrackFields,
    play: playFromRow(row, row.received_at),
  };
}
