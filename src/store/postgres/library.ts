import type pg from 'pg';
import { LIBRARY_COLUMNS, entryOf, fingerprintBytes, fingerprintOf, tagsOf, underPattern, type LibraryRow, type LibraryStore } from '../library';

// The recognition library on PostgreSQL (contract and row rules in store/library.ts), shared by
// every instance.

export function createPostgresLibraryStore(pool: pg.Pool, now: () => number = Date.now): LibraryStore {
  return {
    async put(track) {
      const result = await pool.query<LibraryRow>(
        `INSERT INTO library_tracks (path, size, mtime_ms, duration_seconds, tags, items, fingerprint, added_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, duration_seconds = excluded.duration_seconds,
           tags = excluded.tags, items = excluded.items, fingerprint = excluded.fingerprint, added_at = excluded.added_at
         RETURNING ${LIBRARY_COLUMNS}`,
        [
          track.path,
          track.size,
          track.mtimeMs,
          track.durationSeconds,
          JSON.stringify(track.tags),
          track.fingerprint.length,
          fingerprintBytes(track.fingerprint),
          now(),
        ],
      );
      const row = result.rows[0];
      if (!row) throw new Error('library insert returned no row');
      return entryOf(row);
    },
    async stamps() {
      const result = await pool.query<{ path: string; size: string; mtime_ms: string }>('SELECT path, size, mtime_ms FROM library_tracks');
      return new Map(result.rows.map((row) => [row.path, { size: Number(row.size), mtimeMs: Number(row.mtime_ms) }]));
    },
    async list() {
      const result = await pool.query<LibraryRow>(`SELECT ${LIBRARY_COLUMNS} FROM library_tracks ORDER BY id`);
      return result.rows.map(entryOf);
    },
    async fingerprints() {
      const result = await pool.query<{ id: string; tags: string; fingerprint: Buffer }>('SELECT id, tags, fingerprint FROM library_tracks ORDER BY id');
      return result.rows.map((row) => ({ id: Number(row.id), tags: tagsOf(row.tags), fingerprint: fingerprintOf(row.fingerprint) }));
    },
    async remove(selector) {
      const result =
        'id' in selector
          ? await pool.query<{ id: string }>('DELETE FROM library_tracks WHERE id = $1 RETURNING id', [selector.id])
          : await pool.query<{ id: string }>("DELETE FROM library_tracks WHERE path = $1 OR path LIKE $2 ESCAPE '\\' RETURNING id", [
              selector.path,
              underPattern(selector.path),
            ]);
      return result.rows.map((row) => Number(row.id)).sort((a, b) => a - b);
    },
    async count() {
      const result = await pool.query<{ n: string }>('SELECT count(*) AS n FROM library_tracks');
      return Number(result.rows[0]?.n ?? 0);
    },
  };
}
