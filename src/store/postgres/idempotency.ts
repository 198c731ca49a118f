import type pg from 'pg';
import { randomBytes } from 'node:crypto';
import { inTransaction } from './connection';
import {
  FINGERPRINT_KEY_NAME,
  IDEMPOTENCY_BOUNDS,
  IDEMPOTENCY_KEEP_MS,
  IDEMPOTENCY_TOTALS_SQL,
  RECORD_NOT_KEPT,
  claimOf,
  keysToTrim,
  oldestKeysSql,
  trimBatch,
  type IdempotencyBounds,
  type IdempotencyTotals,
  type IdempotencyRow,
  type IdempotencyStore,
} from '../idempotency';

// Idempotency keys on PostgreSQL (docs/limits-and-load.md "Idempotency and retries"; SQLite in
// store/idempotency.ts): the primary key decides which of several instances' concurrent
// requests goes ahead; the others read its row.

export function createPostgresIdempotencyStore(pool: pg.Pool, bounds: IdempotencyBounds = IDEMPOTENCY_BOUNDS): IdempotencyStore {
  // One trim at a time across instances: the totals row is locked until the oldest are deleted.
  const trim = () =>
    inTransaction(pool, async (client) => {
      for (let batch = 0; ;) {
        const now = (await client.query<IdempotencyTotals>(`${IDEMPOTENCY_TOTALS_SQL} FOR UPDATE`)).rows[0];
        if (!now || (Number(now.entries) <= bounds.maxEntries && Number(now.bytes) <= bounds.maxBytes)) return;
        batch = trimBatch(now, bounds, batch);
        const oldest = await client.query<{ key: string; counted_bytes: string }>(oldestKeysSql('$1'), [batch]);
        const keys = keysToTrim(now, oldest.rows, bounds);
        if (keys.length === 0) return;
        await client.query('DELETE FROM idempotency_keys WHERE key = ANY($1)', [keys]);
      }
    });
  let fingerprintKey: Buffer | undefined;
  return {
    async claim(key, fingerprint, now, leaseMs, owner) {
      await pool.query(`DELETE FROM idempotency_keys WHERE created_at < $1 OR (status IS NULL AND created_at < $2 AND ${RECORD_NOT_KEPT})`, [
        now - IDEMPOTENCY_KEEP_MS,
        now - leaseMs,
      ]);
      const inserted = await pool.query(
        'INSERT INTO idempotency_keys (key, fingerprint, created_at, owner) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO NOTHING',
        [key, fingerprint, now, owner ?? null],
      );
      if (inserted.rowCount === 1) return { state: 'new' };
      const row = (await pool.query<IdempotencyRow>('SELECT fingerprint, status, body, dbid, owner FROM idempotency_keys WHERE key = $1', [key])).rows[0];
      // Deleted in between (expired, or forgotten by a failed first request): ask again.
      return row ? claimOf(row) : this.claim(key, fingerprint, now, leaseMs, owner);
    },
    async answer(key, status, body) {
      await pool.query('UPDATE idempotency_keys SET status = $1, body = $2 WHERE key = $3', [status, body, key]);
      await trim();
    },
    async forget(key) {
      await pool.query(`DELETE FROM idempotency_keys WHERE key = $1 AND status IS NULL AND ${RECORD_NOT_KEPT}`, [key]);
    },
    async fingerprintKey() {
      if (!fingerprintKey) {
        // The first instance's random key wins; every other instance reads it.
        await pool.query('INSERT INTO store_keys (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [FINGERPRINT_KEY_NAME, randomBytes(32)]);
        const row = (await pool.query<{ value: Buffer }>('SELECT value FROM store_keys WHERE name = $1', [FINGERPRINT_KEY_NAME])).rows[0];
        if (!row) throw new Error('the fingerprint key could not be stored');
        fingerprintKey = row.value;
      }
      return fingerprintKey;
    },
  };
}
