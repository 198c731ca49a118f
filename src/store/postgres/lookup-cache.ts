import { expiryOf, storedAnswer, type LookupCacheStore } from '../lookup-cache';
import type { PostgresContext } from './connection';

// The PostgreSQL side of the lookup cache: one cache for every instance sharing the database.

export function createPostgresLookupCache({ pool, now }: PostgresContext): LookupCacheStore {
  return {
    async get(service, key) {
      const result = await pool.query<{ found: boolean; answer: string | null; expires_at: string }>(
        'SELECT found, answer, expires_at FROM lookup_cache WHERE service = $1 AND lookup_key = $2 AND expires_at > $3',
        [service, key, now()],
      );
      const row = result.rows[0];
      return row ? storedAnswer(row.found, row.answer, Number(row.expires_at)) : undefined;
    },
    async put(service, key, answer) {
      const at = now();
      const expiresAt = expiryOf(answer, at);
      await pool.query(
        `INSERT INTO lookup_cache (service, lookup_key, found, answer, fetched_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (service, lookup_key) DO UPDATE SET
           found = EXCLUDED.found, answer = EXCLUDED.answer, fetched_at = EXCLUDED.fetched_at, expires_at = EXCLUDED.expires_at`,
        [service, key, answer.found, answer.found ? answer.answer : null, at, expiresAt],
      );
      return expiresAt;
    },
    async purgeExpired() {
      const result = await pool.query('DELETE FROM lookup_cache WHERE expires_at <= $1', [now()]);
      return result.rowCount ?? 0;
    },
  };
}
