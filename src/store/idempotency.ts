// Idempotency-Key (docs/limits-and-load.md "Idempotency and retries"; the IETF httpapi draft "The
// Idempotency-Key HTTP Header Field"): the first answer to a key, kept 24 h in the store so a
// repeat gets it on any instance. The contract and the row rules both backends share; the bodies
// are sqlite/idempotency.ts and postgres/idempotency.ts.

/** How long a first answer is kept. */
export const IDEMPOTENCY_KEEP_MS = 24 * 60 * 60 * 1000;

/**
 * Within those 24 h, at most this many keys and this many bytes of kept answers; past either
 * the oldest go first (docs/security.md "Idempotency keys"): 5,000 keys used to keep 295 MiB.
 */
export const IDEMPOTENCY_MAX_ENTRIES = 10_000;
export const IDEMPOTENCY_MAX_BYTES = 32 * 1024 * 1024;
/**
 * What each row counts against the byte bound is its column counted_bytes (its answer, key and
 * fingerprint, 64 for the row; SQLite migration 18, PostgreSQL 15), and table idempotency_totals
 * keeps the keys and bytes of all of them. Trimming reads the totals and, only past a bound, the
 * oldest rows from the index on (created_at, key), as many as the keys over the bound (at least
 * one), then twice as many up to TRIM_BATCH: its work grows with what it deletes, never with the
 * keys kept.
 */
export const IDEMPOTENCY_TOTALS_SQL = 'SELECT entries, bytes FROM idempotency_totals WHERE id = 1';
/** The oldest rows first; `$1`/`?` is the batch size. */
export const oldestKeysSql = (placeholder: string): string => `SELECT key, counted_bytes FROM idempotency_keys ORDER BY created_at, key LIMIT ${placeholder}`;
export const TRIM_BATCH = 100;

export interface IdempotencyTotals {
  entries: number | string;
  bytes: number | string;
}

/** How many of the oldest rows to read for the next step of a trim (trimBatch(totals, bounds, previous)). */
export function trimBatch(totals: IdempotencyTotals, bounds: IdempotencyBounds, previous = 0): number {
  const over = Number(totals.entries) - bounds.maxEntries;
  return Math.min(TRIM_BATCH, Math.max(1, over, previous * 2));
}

/** The oldest keys to delete so that what is left fits both bounds (none when it fits already). */
export function keysToTrim(totals: IdempotencyTotals, oldest: readonly { key: string; counted_bytes: number | string }[], bounds: IdempotencyBounds): string[] {
  let entries = Number(totals.entries);
  let bytes = Number(totals.bytes);
  const drop: string[] = [];
  for (const row of oldest) {
    if (entries <= bounds.maxEntries && bytes <= bounds.maxBytes) break;
    drop.push(row.key);
    entries -= 1;
    bytes -= Number(row.counted_bytes);
  }
  return drop;
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
