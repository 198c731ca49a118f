/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import type { Db } from './database';
import { LookupCacheStore, expiryOf, storedAnswer } from '../lookup-cache';

interface Row {
  found: number;
  answer: string | null;
  expires_at: number;
}

export function createLookupCacheStore(db: Db, now: () => number = Date.now): LookupCacheStore {
  const select = db.prepare<[string, string, number], Row>(
    'SELECT found, answer, expires_at FROM lookup_cache WHERE service = ? AND lookup_key = ? AND expires_at > ?',
  );
  const upsert = db.prepare<[string, string, number, string | null, number, number], never>(
    `INSERT INTO lookup_cache (service, lookup_key, found, answer, fetched_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (service, lookup_key) DO UPDATE SET
       found = excluded.found, answer = excluded.answer, fetched_at = excluded.fetched_at, expires_at = excluded.expires_at`,
  );
  const purge = db.prepare<[number], never>('DELETE FROM lookup_cache WHERE expires_at <= ?');

  return {
    async get(service, key) {
      const row = select.get(service, key, now());
      return row ? storedAnswer(row.found === 1, row.answer, row.expires_at) : undefined;
    },
    async put(service, key, answer) {
      const at = now();
      const expiresAt = expiryOf(answer, at);
      upsert.run(service, key, answer.found ? 1 : 0, answer.found ? answer.answer : null, at, expiresAt);
      return expiresAt;
    },
    async purgeExpired() {
      return purge.run(now()).changes;
    },
  };
}
