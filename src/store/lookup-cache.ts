import type { Db } from './database';

// Answers of outside services, kept in SQLite with a time to live (issue 5 "Cache").
// Statements are prepared once, when the store opens.

export const FOUND_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const NOT_FOUND_TTL_MS = 24 * 60 * 60 * 1000;

/** A cached answer: the JSON text of what the service said, or null for "not found". */
export type CachedAnswer = { found: true; answer: string } | { found: false };

export interface LookupCacheStore {
  /** The live (not expired) answer, or undefined when there is none. */
  get(service: string, key: string): CachedAnswer | undefined;
  put(service: string, key: string, answer: CachedAnswer): void;
  /** Deletes expired rows; returns how many. */
  purgeExpired(): number;
}

interface Row {
  found: number;
  answer: string | null;
}

export function createLookupCacheStore(db: Db, now: () => number = Date.now): LookupCacheStore {
  const select = db.prepare<[string, string, number], Row>(
    'SELECT found, answer FROM lookup_cache WHERE service = ? AND lookup_key = ? AND expires_at > ?',
  );
  const upsert = db.prepare<[string, string, number, string | null, number, number], never>(
    `INSERT INTO lookup_cache (service, lookup_key, found, answer, fetched_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (service, lookup_key) DO UPDATE SET
       found = excluded.found, answer = excluded.answer, fetched_at = excluded.fetched_at, expires_at = excluded.expires_at`,
  );
  const purge = db.prepare<[number], never>('DELETE FROM lookup_cache WHERE expires_at <= ?');

  return {
    get(service, key) {
      const row = select.get(service, key, now());
      if (!row) return undefined;
      return row.found === 1 && row.answer !== null ? { found: true, answer: row.answer } : { found: false };
    },
    put(service, key, answer) {
      const at = now();
      if (answer.found) upsert.run(service, key, 1, answer.answer, at, at + FOUND_TTL_MS);
      else upsert.run(service, key, 0, null, at, at + NOT_FOUND_TTL_MS);
    },
    purgeExpired() {
      return purge.run(now()).changes;
    },
  };
}
