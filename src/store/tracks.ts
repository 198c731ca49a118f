/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import type { NewPlay, PlayInfo } from '../domain/play';
import type { TrackFields, TrackRecord } from '../domain/track';
import type { Db } from './database';
import { recordJson } from '../domain/play';
import { PLAY_COLUMNS, createPlayLogStore, defaultPlay, playFromRow, plannedEndFor, type PlayColumns } from './plays';

interface TrackRow extends PlayColumns {
  dbid: number;
  received_seq: number;
  received_at: string;
  metadata: string;
}

export interface NewTrack {
  receivedSeq: number;
  receivedAt: string;
  metadata: TrackFields;
  /** The request's Idempotency-Key: the key's row is given the dbid in the record's own transaction. */
  idempotencyKey?: string;
  /** Its play (docs/play-log.md); without one it aired from its arrival on the main channel, as music. */
  play?: NewPlay;
}

/** The columns every track read selects. */
const TRACK_COLUMNS = `dbid, received_seq, received_at, metadata, ${PLAY_COLUMNS}`;

/** One page of GET /v1/history (docs/decisions.md "History"): newest first by received time. */
export interface HistoryQuery {
  /** At most this many records. */
  limit: number;
  /** Only records older than this dbid (in history order; it may have been deleted since). */
  before?: number;
  /** ISO 8601 UTC with milliseconds, as received_at is stored: since inclusive, until exclusive. */
  since?: string;
  until?: string;
}

export interface HistoryPage {
  records: TrackRecord[];
  /** Whether older records match the query (the page has a `next`). */
  more: boolean;
}

/** Records and dbids (docs/several-instances.md: one asynchronous interface, SQLite or PostgreSQL behind it). */
export interface TrackStore {
  /**
   * Stores one submission and returns it with its dbid. One transaction writes the row, the
   * outputs' change row (a transactional outbox: docs/decisions.md "Delivery promises") and the
   * dbid of its Idempotency-Key. The stored received_at is never older than a stored one, so
   * the newest history entry is the highest dbid (docs/decisions.md "Delivery promises").
   */
  insert(track: NewTrack): Promise<TrackRecord>;
  /** The stored record with the highest dbid (docs/decisions.md "Delivery promises"), or null when nothing is stored. */
  current(): Promise<TrackRecord | null>;
  byDbid(dbid: number): Promise<TrackRecord | null>;
  /** Records stored after `dbid`, oldest first (an instance catching up after a lost connection). */
  since(dbid: number, limit: number): Promise<TrackRecord[]>;
  /** Replaces the metadata of a stored record (e.g. a cover that arrived after the response). */
  updateMetadata(dbid: number, metadata: TrackFields): Promise<void>;
  /** Newest first; served from the (received_at, dbid) index whatever the table size. */
  history(query: HistoryQuery): Promise<HistoryPage>;
  /** Deletes one record (its image links go with it); false when there is no such dbid. */
  remove(dbid: number): Promise<boolean>;
  /**
   * Bumped by every write through this store and the play log's (on PostgreSQL also by every change
   * another instance announces): a copy of a page made at one version is current while it stays.
   */
  version(): number;
  /**
   * Bumped by every deletion (on PostgreSQL also by one another instance announces, and by a
   * reconnect, after which one may have been missed): the one change an old record still sees.
   */
  removals(): number;
  /** Next arrival number; continues after a restart (and, on PostgreSQL, across instances). */
  nextReceivedSeq(): Promise<number>;
}

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
    [number, string, string, string, string, string, string, string, string | null, string | null, string | null],
    { dbid: number; received_at: string }
  >(
    `INSERT INTO tracks (received_seq, received_at, stored_at, metadata, started_at, channel, kind, usage, dj, show, planned_end_at)
     VALUES (?, max(?, coalesce((SELECT max(received_at) FROM tracks), '')), ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING dbid, received_at`,
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
      startedAt,
      play.channel,
      play.kind,
      play.usage,
      play.dj ?? null,
      play.show ?? null,
      plannedEndFor(play, startedAt),
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
  const byDbid = db.prepare<[number], TrackRow>(`SELECT ${TRACK_COLUMNS} FROM tracks WHERE dbid = ?`);
  const update = db.prepare<[string, number], never>('UPDATE tracks SET metadata = ? WHERE dbid = ?');
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
    async since(dbid, limit) {
      return since.all(dbid, limit).map(fromRow);
    },
    async byDbid(dbid) {
      const row = byDbid.get(dbid);
      return row ? fromRow(row) : null;
    },
    async updateMetadata(dbid, metadata) {
      update.run(JSON.stringify(metadata), dbid);
      writes += 1;
    },
    async history(query) {
      const bound = historyUpperBound(query, query.before === undefined ? undefined : cursorAt.get(query.before)?.received_at);
      if (!bound) return { records: [], more: false };
      // One row past the page tells whether there is a next one.
      const rows = page.all(bound[0], bound[1], query.since ?? '', query.limit + 1);
      return { records: rows.slice(0, query.limit).map(fromRow), more: rows.length > query.limit };
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

/** Sorts after every stored received_at (ISO 8601 strings compare in time order). */
const END_OF_TIME = '\uffff';

/**
 * The (received_at, dbid) bound a history page stays below, for both backends: below `until` and
 * below the cursor, which stands at `cursorReceivedAt` (its own received_at, or that of the nearest
 * older dbid). Null when the query has a cursor with nothing at or before it.
 */
export function historyUpperBound(query: HistoryQuery, cursorReceivedAt: string | undefined): [string, number] | null {
  let bound: [string, number] = query.until === undefined ? [END_OF_TIME, Number.MAX_SAFE_INTEGER] : [query.until, 0];
  if (query.before !== undefined) {
    if (cursorReceivedAt === undefined) return null;
    if (compareKeys([cursorReceivedAt, query.before], bound) < 0) bound = [cursorReceivedAt, query.before];
  }
  return bound;
}

function compareKeys(a: readonly [string, number], b: readonly [string, number]): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] - b[1];
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

/** A play just placed: on air, its listeners not counted yet (both backends). */
export function startedPlay(play: NewPlay, startedAt: string): PlayInfo {
  const started: PlayInfo = { startedAt, endedAt: null, endReason: null, channel: play.channel, kind: play.kind, usage: play.usage, listeners: null };
  if (play.dj !== undefined) started.dj = play.dj;
  if (play.show !== undefined) started.show = play.show;
  return started;
}
