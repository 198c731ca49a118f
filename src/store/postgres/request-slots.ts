import type pg from 'pg';
import type { RequestSlots } from '../store';
import { DB_NOW_MS } from './connection';

// The outbound request spacing shared by every instance: one row per service holding its next
// allowed start, on the database's clock.

export function createPostgresRequestSlots(pool: pg.Pool): RequestSlots {
  const knownSlots = new Set<string>();
  return {
    async tryAcquire(service, intervalMs) {
      if (!knownSlots.has(service)) {
        await pool.query('INSERT INTO request_slots (service, next_at) VALUES ($1, 0) ON CONFLICT (service) DO NOTHING', [service]);
        knownSlots.add(service);
      }
      // Concurrent takers queue on the row lock; the WHERE is checked again on the row the first one left.
      const taken = await pool.query(`UPDATE request_slots SET next_at = ${DB_NOW_MS} + $2 WHERE service = $1 AND next_at <= ${DB_NOW_MS}`, [
        service,
        Math.ceil(intervalMs),
      ]);
      if (taken.rowCount) return 0;
      const left = await pool.query<{ wait: string }>(`SELECT next_at - ${DB_NOW_MS} AS wait FROM request_slots WHERE service = $1`, [service]);
      return Math.max(1, Number(left.rows[0]?.wait ?? 1));
    },
    async started(service, intervalMs) {
      await pool.query(`UPDATE request_slots SET next_at = GREATEST(next_at, ${DB_NOW_MS} + $2) WHERE service = $1`, [service, Math.ceil(intervalMs)]);
    },
  };
}
