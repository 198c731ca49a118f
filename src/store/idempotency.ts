/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import { randomBytes } from 'node:crypto';
import type { Db } from './database';

// Idempotency-Key (docs/limits-and-load.md "Idempotency and retries"; the IETF httpapi draft "The
// Idempotency-Key HTTP Header Field"): the first answer to a key, kept 24 h in the store so a
// repeat gets it on any instance. SQLite here, PostgreSQL in store/postgres/idempotency.ts.

/** How long a first answer is kept. */
export const IDEMPOTENCY_KEEP_MS = 24 * 60 * 60 * 1000;

/**
 * Within those 24 h, at most this many keys and this many bytes of kept answers; past either
 * the oldest go first (docs/security.md "Idempotency keys"): 5,000 keys used to keep 295 MiB.
 */
export const IDEMPOTENCY_MAX_ENTRIES = 10_000;
export const IDEMPOTENCY_MAX_BYTES = 32 * 1024 * 1024;
/** What a row costs beside its answer's body (key, fingerprint, row overhead), counted against the bytes. */
const ROW_BYTES = 'length(key) + length(fingerprint) + 64';

/** Deletes the oldest rows past the entry and byte bounds; `$1`/`?` is the byte bound, `$2`/`?` the entry bound. */
export function trimOldestSql(placeholder: (index: number) => string): string {
  return `DELETE FROM idempotency_keys WHERE key IN (
    SELECT key FROM (
      SELECT key,
        SUM(COALESCE(length(body), 0) + ${ROW_BYTES}) OVER (ORDER BY created_at DESC, key DESC) AS bytes,
        ROW_NUMBER() OVER (ORDER BY created_at DESC, key DESC) AS position
      FROM idempotency_keys
    ) AS newest_first WHERE bytes > ${placeholder(1)} OR position > ${placeholder(2)}
  )`;
}

export interface IdempotencyBounds {
  maxEntries: number;
  maxBytes: number;
}

export const IDEMPOTENCY_BOUNDS: IdempotencyBounds = { maxEntries: IDEMPOTENCY_MAX_ENTRIES, maxBytes: IDEMPOTENCY_MAX_BYTES };

/** The name of the database's random key for idempotency fingerprints (table store_keys). */
export const FINGERPRINT_KEY_NAME = 'idempotency-fingerprint';

export type IdempotencyClaim =
  /** The key was free: this request goes ahead and must `answer` or `forget` it. */
  | { state: 'new' }
  /**
   * Another request with this key is still being processed, or died; `dbid`: it had stored its
   * record (in the record's own transaction), which a repeat is answered with.
   */
  | { state: 'pending'; fingerprint: string; dbid?: number; owner?: string }
  | { state: 'answered'; fingerprint: string; status: number; body: string };

export interface IdempotencyStore {
  /**
   * Takes the key for a request, unless it is taken. A key older than 24 h is free again, and so
   * is one still unanswered after `leaseMs` (its instance died mid-request). `owner` names the svc
   * process that takes it.
   */
  claim(key: string, fingerprint: string, now: number, leaseMs: number, owner?: string): Promise<IdempotencyClaim>;
  /** Keeps the first answer for repeats. */
  answer(key: string, status: number, body: string): Promise<void>;
  /** Frees the key: the request failed and a retry should run it again (kept when it had stored a record). */
  forget(key: string): Promise<void>;
  /**
   * This database's random key for fingerprints (HMAC-SHA-256), made on first use and the same
   * for every instance on the database: a fingerprint never reveals the secret it covers.
   */
  fingerprintKey(): Promise<Buffer>;
}

export interface IdempotencyRow {
  fingerprint: string;
  status: number | null;
  body: string | null;
  dbid: number | string | null;
  owner: string | null;
}

/**
 * A key left unanswered may be freed only when it stored no record, or that record is gone (a 408
 * took it back): a stored one is its answer (both backends).
 */
export const RECORD_NOT_KEPT = '(dbid IS NULL OR NOT EXISTS (SELECT 1 FROM tracks t WHERE t.dbid = idempotency_keys.dbid))';

/** The claim a taken key's row stands for. */
export function claimOf(row: IdempotencyRow): IdempotencyClaim {
  if (row.status === null || row.body === null) {
    return {
      state: 'pending',
      fingerprint: row.fingerprint,
      ...(row.dbid === null ? {} : { dbid: Number(row.dbid) }),
      ...(row.owner === null ? {} : { owner: row.owner }),
    };
  }
  return { state: 'answered', fingerprint: row.fingerprint, status: row.status, body: row.body };
}

export function createIdempotencyStore(db: Db, bounds: IdempotencyBounds = IDEMPOTENCY_BOUNDS): IdempotencyStore {
  const expire = db.prepare<[number, number], never>(
    `DELETE FROM idempotency_keys WHERE created_at < ? OR (status IS NULL AND created_at < ? AND ${RECORD_NOT_KEPT})`,
  );
  const insert = db.prepare<[string, string, number, string | null], never>(
    'INSERT OR IGNORE INTO idempotency_keys (key, fingerprint, created_at, owner) VALUES (?, ?, ?, ?)',
  );
  const select = db.prepare<[string], IdempotencyRow>('SELECT fingerprint, status, body, dbid, owner FROM idempotency_keys WHERE key = ?');
  const answer = db.prepare<[number, string, string], never>('UPDATE idempotency_keys SET status = ?, body = ? WHERE key = ?');
  const forget = db.prepare<[string], never>(`DELETE FROM idempotency_keys WHERE key = ? AND status IS NULL AND ${RECORD_NOT_KEPT}`);
  const trim = db.prepare<[number, number], never>(trimOldestSql(() => '?'));
  const insertKey = db.prepare<[string, Buffer], never>('INSERT OR IGNORE INTO store_keys (name, value) VALUES (?, ?)');
  const selectKey = db.prepare<[string], { value: Buffer }>('SELECT value FROM store_keys WHERE name = ?');
  let fingerprintKey: Buffer | undefined;
  const claim = db.transaction((key: string, fingerprint: string, now: number, leaseMs: number, owner: string | null): IdempotencyClaim => {
    expire.run(now - IDEMPOTENCY_KEEP_MS, now - leaseMs);
    if (insert.run(key, fingerprint, now, owner).changes === 1) return { state: 'new' };
    const row = select.get(key);
    return row ? claimOf(row) : { state: 'new' };
  });
  return {
    async claim(key, fingerprint, now, leaseMs, owner) {
      return claim.immediate(key, fingerprint, now, leaseMs, owner ?? null);
    },
    async answer(key, status, body) {
      answer.run(status, body, key);
      trim.run(bounds.maxBytes, bounds.maxEntries);
    },
    async forget(key) {
      forget.run(key);
    },
    async fingerprintKey() {
      if (!fingerprintKey) {
        insertKey.run(FINGERPRINT_KEY_NAME, randomBytes(32));
        fingerprintKey = selectKey.get(FINGERPRINT_KEY_NAME)?.value;
      }
      if (!fingerprintKey) throw new Error('the fingerprint key could not be stored');
      return fingerprintKey;
    },
  };
}
