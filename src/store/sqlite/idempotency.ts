/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import { randomBytes } from 'node:crypto';
import type { Db } from './database';
import {
  FINGERPRINT_KEY_NAME,
  IDEMPOTENCY_BOUNDS,
  IDEMPOTENCY_KEEP_MS,
  IdempotencyBounds,
  IdempotencyClaim,
  IdempotencyRow,
  IdempotencyStore,
  IDEMPOTENCY_TOTALS_SQL,
  IdempotencyTotals,
  RECORD_NOT_KEPT,
  claimOf,
  keysToTrim,
  oldestKeysSql,
  trimBatch,
} from '../idempotency';

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
  const totals = db.prepare<[], IdempotencyTotals>(IDEMPOTENCY_TOTALS_SQL);
  const oldest = db.prepare<[number], { key: string; counted_bytes: number }>(oldestKeysSql('?'));
  const drop = db.prepare<[string], never>('DELETE FROM idempotency_keys WHERE key = ?');
  const trim = db.transaction(() => {
    for (let batch = 0; ;) {
      const now = totals.get();
      if (!now || (Number(now.entries) <= bounds.maxEntries && Number(now.bytes) <= bounds.maxBytes)) return;
      batch = trimBatch(now, bounds, batch);
      const keys = keysToTrim(now, oldest.all(batch), bounds);
      for (const key of keys) drop.run(key);
      if (keys.length === 0) return;
    }
  });
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
      trim.immediate();
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
