// The track store's contract (docs/architecture.md "Adding a storage backend") and the rules both
// backends share: the history keyset bound and a new play's start. The bodies are
// sqlite/tracks.ts and postgres/tracks.ts.

import type { CorrectionOutcome } from '../domain/correction';
import type { NewPlay, PlayInfo } from '../domain/play';
import type { TrackFields, TrackRecord } from '../domain/track';
import type { RecordCorrection } from './corrections';

export interface NewTrack {
  receivedSeq: number;
  receivedAt: string;
  metadata: TrackFields;
  /** The request's Idempotency-Key: the key's row is given the dbid in the record's own transaction. */
  idempotencyKey?: string;
  /** Its play (docs/play-log.md); without one it aired from its arrival on the main channel, as music. */
  play?: NewPlay;
}

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
  /**
   * Each channel's current record (the highest dbid of the channel), at most `limit` channels
   * (docs/channels.md "Now playing per channel"): read at start, and when a channel's current one
   * is deleted (`channel` given).
   */
  currentPerChannel(limit: number, channel?: string): Promise<TrackRecord[]>;
  /** The record with its corrections. */
  byDbid(dbid: number): Promise<TrackRecord | null>;
  /** Records stored after `dbid`, oldest first (an instance catching up after a lost connection); with `channel`, that channel's only. */
  since(dbid: number, limit: number, channel?: string): Promise<TrackRecord[]>;
  /** Replaces the metadata of a stored record (e.g. a cover that arrived after the response). */
  updateMetadata(dbid: number, metadata: TrackFields): Promise<void>;
  /**
   * Corrects a record and its play in one transaction (store/corrections.ts), keeping the audit
   * entry: refused when the end is not after the start, or when the play would overlap another
   * of its channel (that one's dbid is answered). Changed air times clear the listener count,
   * which is counted again from the stored sessions.
   */
  correct(dbid: number, correction: RecordCorrection): Promise<CorrectionOutcome<TrackRecord>>;
  /** Newest first; served from the (received_at, dbid) index whatever the table size. Records carry their corrections. */
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

/** Every channel of the log in order, one index step each (a loose index scan), at most `limit` (the placeholder) of them. */
export function channelNamesSql(limit: string): string {
  return `WITH RECURSIVE names(channel) AS (
      SELECT min(channel) FROM tracks
      UNION ALL
      SELECT (SELECT min(t.channel) FROM tracks t WHERE t.channel > names.channel) FROM names WHERE names.channel IS NOT NULL
    )
    SELECT channel FROM names WHERE channel IS NOT NULL LIMIT ${limit}`;
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

/** A play just placed: on air, its listeners not counted yet (both backends). */
export function startedPlay(play: NewPlay, startedAt: string): PlayInfo {
  const started: PlayInfo = { startedAt, endedAt: null, endReason: null, channel: play.channel, kind: play.kind, usage: play.usage, listeners: null };
  if (play.dj !== undefined) started.dj = play.dj;
  if (play.show !== undefined) started.show = play.show;
  return started;
}
