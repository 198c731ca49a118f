/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import type { Db } from './database';

// Answers of outside services, kept in SQLite with a time to live (docs/enrichment.md).
// Statements are prepared once, when the store opens.

const FOUND_TTL_MS = 7 * 24 * 60 * 60 * 1000;
const NOT_FOUND_TTL_MS = 24 * 60 * 60 * 1000;

/** A cached answer: the JSON text of what the service said, or "not found". */
export type CachedAnswer = { found: true; answer: string } | { found: false };
/** A cached answer as read back, with the time (ms since the epoch) it expires. */
export type StoredAnswer = CachedAnswer & { expiresAt: number };

export interface LookupCacheStore {
  /** The live (not expired) answer, or undefined when there is none. */
  get(service: string, key: string): Promise<StoredAnswer | undefined>;
  /** Stores an answer and returns when it expires. */
  put(service: string, key: string, answer: CachedAnswer): Promise<number>;
  /** Deletes expired rows; returns how many. */
  purgeExpired(): Promise<number>;
}

interface Row {
  found: number;
  answer: string | null;
  expires_at: number;
}

/** A stored row as an answer, for both backends: "found" with its JSON text, or "not found". */
export function storedAnswer(found: boolean, answer: string | null, expiresAt: number): StoredAnswer {
  return found && answer !== null ? { found: true, answer, expiresAt } : { found: false, expiresAt };
}

/** When an answer fetched at `at` expires. */
export function expiryOf(answer: CachedAnswer, at: number): number {
  return at + (answer.found ? FOUND_TTL_MS : NOT_FOUND_TTL_MS);
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
