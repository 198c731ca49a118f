/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import { MAX_QUEUED_REQUESTS, type NewSongRequest, type SongRequest } from '../domain/song-request';
import type { Db } from './database';

// The song-request queue (docs/song-requests.md). SQLite here, PostgreSQL in
// store/postgres/song-requests.ts; both keep the queue across restarts.

export type AddOutcome =
  /** Queued. */
  | { state: 'added'; request: SongRequest }
  /** The same requester asked for the same track within the window: the earlier one stands. */
  | { state: 'deduped'; request: SongRequest }
  /** MAX_QUEUED_REQUESTS are waiting. */
  | { state: 'full' };

export interface SongRequestStore {
  /** Queues `request` unless its requester queued the same normalised track since `dedupeSince` (ms). */
  add(request: NewSongRequest, dedupeSince: number): Promise<AddOutcome>;
  /** The whole queue, oldest first. */
  list(): Promise<SongRequest[]>;
  /** Removes one request; null when there is no such id. */
  remove(id: number): Promise<SongRequest | null>;
  /** Removes the requests for a normalised artist and title (only `requester`'s when given). */
  removeByIdentity(normalizedArtist: string, normalizedTitle: string, requester?: string): Promise<SongRequest[]>;
  /** Empties the queue; answers what was removed. */
  clear(): Promise<SongRequest[]>;
}

export interface SongRequestRow {
  id: number | string;
  requester: string;
  artist: string | null;
  title: string | null;
  normalized_artist: string;
  normalized_title: string;
  origin: string;
  user_platform: string | null;
  external_id: string | null;
  user_input: string | null;
  requested_for: string | null;
  created_at: number | string;
}

export const REQUEST_COLUMNS =
  'id, requester, artist, title, normalized_artist, normalized_title, origin, user_platform, external_id, user_input, requested_for, created_at';

/** A row of either backend as a request (PostgreSQL answers bigint columns as strings). */
export function requestOf(row: SongRequestRow): SongRequest {
  return {
    id: Number(row.id),
    requester: row.requester,
    artist: row.artist,
    title: row.title,
    normalizedArtist: row.normalized_artist,
    normalizedTitle: row.normalized_title,
    origin: row.origin,
    userPlatform: row.user_platform,
    externalId: row.external_id,
    userInput: row.user_input,
    requestedFor: row.requested_for,
    createdAt: Number(row.created_at),
  };
}

/** The insert's values, in REQUEST_COLUMNS order without the id. */
export function insertValues(request: NewSongRequest): (string | number | null)[] {
  return [
    request.requester,
    request.artist,
    request.title,
    request.normalizedArtist,
    request.normalizedTitle,
    request.origin,
    request.userPlatform,
    request.externalId,
    request.userInput,
    request.requestedFor,
    request.createdAt,
  ];
}

export function createSongRequestStore(db: Db): SongRequestStore {
  const insert = db.prepare<(string | number | null)[], SongRequestRow>(
    `INSERT INTO song_requests (${REQUEST_COLUMNS.replace('id, ', '')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${REQUEST_COLUMNS}`,
  );
  const duplicate = db.prepare<[string, string, string, number], SongRequestRow>(
    `SELECT ${REQUEST_COLUMNS} FROM song_requests WHERE requester = ? AND normalized_artist = ? AND normalized_title = ? AND created_at >= ? ORDER BY id LIMIT 1`,
  );
  const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM song_requests');
  const all = db.prepare<[], SongRequestRow>(`SELECT ${REQUEST_COLUMNS} FROM song_requests ORDER BY id`);
  const removeOne = db.prepare<[number], SongRequestRow>(`DELETE FROM song_requests WHERE id = ? RETURNING ${REQUEST_COLUMNS}`);
  const removeIdentity = db.prepare<[string, string], SongRequestRow>(
    `DELETE FROM song_requests WHERE normalized_artist = ? AND normalized_title = ? RETURNING ${REQUEST_COLUMNS}`,
  );
  const removeIdentityOf = db.prepare<[string, string, string], SongRequestRow>(
    `DELETE FROM song_requests WHERE normalized_artist = ? AND normalized_title = ? AND requester = ? RETURNING ${REQUEST_COLUMNS}`,
  );
  const removeAll = db.prepare<[], SongRequestRow>(`DELETE FROM song_requests RETURNING ${REQUEST_COLUMNS}`);
  const add = db.transaction((request: NewSongRequest, dedupeSince: number): AddOutcome => {
    const earlier = duplicate.get(request.requester, request.normalizedArtist, request.normalizedTitle, dedupeSince);
    if (earlier) return { state: 'deduped', request: requestOf(earlier) };
    if ((count.get()?.n ?? 0) >= MAX_QUEUED_REQUESTS) return { state: 'full' };
    const row = insert.get(...insertValues(request));
    if (!row) throw new Error('song request insert returned no row');
    return { state: 'added', request: requestOf(row) };
  });
  const byId = (rows: SongRequestRow[]) => rows.map(requestOf).sort((a, b) => a.id - b.id);
  return {
    async add(request, dedupeSince) {
      return add.immediate(request, dedupeSince);
    },
    async list() {
      return all.all().map(requestOf);
    },
    async remove(id) {
      const row = removeOne.get(id);
      return row ? requestOf(row) : null;
    },
    async removeByIdentity(normalizedArtist, normalizedTitle, requester) {
      const rows =
        requester === undefined ? removeIdentity.all(normalizedArtist, normalizedTitle) : removeIdentityOf.all(normalizedArtist, normalizedTitle, requester);
      return byId(rows);
    },
    async clear() {
      return byId(removeAll.all());
    },
  };
}
