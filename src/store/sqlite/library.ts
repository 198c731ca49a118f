/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import type { Db } from './database';
import { LIBRARY_COLUMNS, entryOf, fingerprintBytes, fingerprintOf, tagsOf, underPattern, type LibraryRow, type LibraryStore } from '../library';

// The recognition library on SQLite (contract and row rules in store/library.ts).

export function createLibraryStore(db: Db, now: () => number = Date.now): LibraryStore {
  const upsert = db.prepare<(string | number | Buffer)[], LibraryRow>(
    `INSERT INTO library_tracks (path, size, mtime_ms, duration_seconds, tags, items, fingerprint, added_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, duration_seconds = excluded.duration_seconds,
       tags = excluded.tags, items = excluded.items, fingerprint = excluded.fingerprint, added_at = excluded.added_at
     RETURNING ${LIBRARY_COLUMNS}`,
  );
  const stamps = db.prepare<[], { path: string; size: number; mtime_ms: number }>('SELECT path, size, mtime_ms FROM library_tracks');
  const all = db.prepare<[], LibraryRow>(`SELECT ${LIBRARY_COLUMNS} FROM library_tracks ORDER BY id`);
  const prints = db.prepare<[], { id: number; tags: string; fingerprint: Buffer }>('SELECT id, tags, fingerprint FROM library_tracks ORDER BY id');
  const removeId = db.prepare<[number], { id: number }>('DELETE FROM library_tracks WHERE id = ? RETURNING id');
  const removePath = db.prepare<[string, string], { id: number }>("DELETE FROM library_tracks WHERE path = ? OR path LIKE ? ESCAPE '\\' RETURNING id");
  const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM library_tracks');
  return {
    async put(track) {
      const row = upsert.get(
        track.path,
        track.size,
        track.mtimeMs,
        track.durationSeconds,
        JSON.stringify(track.tags),
        track.fingerprint.length,
        fingerprintBytes(track.fingerprint),
        now(),
      );
      if (!row) throw new Error('library insert returned no row');
      return entryOf(row);
    },
    async stamps() {
      return new Map(stamps.all().map((row) => [row.path, { size: row.size, mtimeMs: row.mtime_ms }]));
    },
    async list() {
      return all.all().map(entryOf);
    },
    async fingerprints() {
      return prints.all().map((row) => ({ id: row.id, tags: tagsOf(row.tags), fingerprint: fingerprintOf(row.fingerprint) }));
    },
    async remove(selector) {
      const rows = 'id' in selector ? removeId.all(selector.id) : removePath.all(selector.path, underPattern(selector.path));
      return rows.map((row) => row.id).sort((a, b) => a - b);
    },
    async count() {
      return count.get()?.n ?? 0;
    },
  };
}
