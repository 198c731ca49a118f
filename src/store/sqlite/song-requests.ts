/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import type { NewSongRequest } from '../../domain/song-request';
import type { Db } from './database';
import { AddOutcome, REQUEST_COLUMNS, SongRequestRow, SongRequestStore, boundReached, insertValues, requestOf, type AddBounds } from '../song-requests';

export function createSongRequestStore(db: Db): SongRequestStore {
  const insert = db.prepare<(string | number | null)[], SongRequestRow>(
    `INSERT INTO song_requests (${REQUEST_COLUMNS.replace('id, ', '')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${REQUEST_COLUMNS}`,
  );
  const duplicate = db.prepare<[string, string, string, number], SongRequestRow>(
    `SELECT ${REQUEST_COLUMNS} FROM song_requests WHERE requester = ? AND normalized_artist = ? AND normalized_title = ? AND created_at >= ? ORDER BY id LIMIT 1`,
  );
  // The queue holds at most MAX_QUEUED_REQUESTS rows: these counts read a bounded table.
  const count = db.prepare<[string, number], { n: number; requester: number; recent: number }>(
    'SELECT count(*) AS n, coalesce(sum(requester = ?), 0) AS requester, coalesce(sum(created_at >= ?), 0) AS recent FROM song_requests',
  );
  const all = db.prepare<[], SongRequestRow>(`SELECT ${REQUEST_COLUMNS} FROM song_requests ORDER BY id`);
  const removeOne = db.prepare<[number], SongRequestRow>(`DELETE FROM song_requests WHERE id = ? RETURNING ${REQUEST_COLUMNS}`);
  const removeIdentity = db.prepare<[string, string], SongRequestRow>(
    `DELETE FROM song_requests WHERE normalized_artist = ? AND normalized_title = ? RETURNING ${REQUEST_COLUMNS}`,
  );
  const removeIdentityOf = db.prepare<[string, string, string], SongRequestRow>(
    `DELETE FROM song_requests WHERE normalized_artist = ? AND normalized_title = ? AND requester = ? RETURNING ${REQUEST_COLUMNS}`,
  );
  const removeAll = db.prepare<[], SongRequestRow>(`DELETE FROM song_requests RETURNING ${REQUEST_COLUMNS}`);
  const add = db.transaction((request: NewSongRequest, bounds: AddBounds): AddOutcome => {
    const earlier = duplicate.get(request.requester, request.normalizedArtist, request.normalizedTitle, bounds.dedupeSince);
    if (earlier) return { state: 'deduped', request: requestOf(earlier) };
    const counts = count.get(request.requester, bounds.windowSince);
    const reached = boundReached(counts?.n ?? 0, counts?.requester ?? 0, counts?.recent ?? 0);
    if (reached) return reached;
    const row = insert.get(...insertValues(request));
    if (!row) throw new Error('song request insert returned no row');
    return { state: 'added', request: requestOf(row) };
  });
  const byId = (rows: SongRequestRow[]) => rows.map(requestOf).sort((a, b) => a.id - b.id);
  return {
    async add(request, bounds) {
      return add.immediate(request, bounds);
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
