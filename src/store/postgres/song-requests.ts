import type pg from 'pg';
import { inTransaction } from './connection';
import { REQUEST_COLUMNS, boundReached, insertValues, requestOf, type SongRequestRow, type SongRequestStore } from '../song-requests';

// The song-request queue on PostgreSQL (docs/song-requests.md; SQLite in store/song-requests.ts),
// shared by every instance. A transaction-scoped advisory lock makes the duplicate check and the
// insert one step across instances.

/** pg_advisory_xact_lock key of the queue's adds ("sreq" in ASCII). */
const ADD_LOCK = 0x73726571;

export function createPostgresSongRequestStore(pool: pg.Pool): SongRequestStore {
  const sorted = (rows: SongRequestRow[]) => rows.map(requestOf).sort((a, b) => a.id - b.id);
  return {
    async add(request, bounds) {
      return inTransaction(pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [ADD_LOCK]);
        const earlier = await client.query<SongRequestRow>(
          `SELECT ${REQUEST_COLUMNS} FROM song_requests WHERE requester = $1 AND normalized_artist = $2 AND normalized_title = $3 AND created_at >= $4 ORDER BY id LIMIT 1`,
          [request.requester, request.normalizedArtist, request.normalizedTitle, bounds.dedupeSince],
        );
        const found = earlier.rows[0];
        if (found) return { state: 'deduped', request: requestOf(found) };
        // The queue holds at most MAX_QUEUED_REQUESTS rows: these counts read a bounded table.
        const count = await client.query<{ n: string; requester: string; recent: string }>(
          'SELECT count(*) AS n, count(*) FILTER (WHERE requester = $1) AS requester, count(*) FILTER (WHERE created_at >= $2) AS recent FROM song_requests',
          [request.requester, bounds.windowSince],
        );
        const counts = count.rows[0];
        const reached = boundReached(Number(counts?.n ?? 0), Number(counts?.requester ?? 0), Number(counts?.recent ?? 0));
        if (reached) return reached;
        const inserted = await client.query<SongRequestRow>(
          `INSERT INTO song_requests (${REQUEST_COLUMNS.replace('id, ', '')}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${REQUEST_COLUMNS}`,
          insertValues(request),
        );
        const row = inserted.rows[0];
        if (!row) throw new Error('song request insert returned no row');
        return { state: 'added', request: requestOf(row) };
      });
    },
    async list() {
      return (await pool.query<SongRequestRow>(`SELECT ${REQUEST_COLUMNS} FROM song_requests ORDER BY id`)).rows.map(requestOf);
    },
    async remove(id) {
      const row = (await pool.query<SongRequestRow>(`DELETE FROM song_requests WHERE id = $1 RETURNING ${REQUEST_COLUMNS}`, [id])).rows[0];
      return row ? requestOf(row) : null;
    },
    async removeByIdentity(normalizedArtist, normalizedTitle, requester) {
      const result =
        requester === undefined
          ? await pool.query<SongRequestRow>(`DELETE FROM song_requests WHERE normalized_artist = $1 AND normalized_title = $2 RETURNING ${REQUEST_COLUMNS}`, [
              normalizedArtist,
              normalizedTitle,
            ])
          : await pool.query<SongRequestRow>(
              `DELETE FROM song_requests WHERE normalized_artist = $1 AND normalized_title = $2 AND requester = $3 RETURNING ${REQUEST_COLUMNS}`,
              [normalizedArtist, normalizedTitle, requester],
            );
      return sorted(result.rows);
    },
    async clear() {
      return sorted((await pool.query<SongRequestRow>(`DELETE FROM song_requests RETURNING ${REQUEST_COLUMNS}`)).rows);
    },
  };
}
