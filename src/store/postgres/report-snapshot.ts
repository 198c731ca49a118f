import type pg from 'pg';
import { AppError } from '../../errors';
import { reportReadsOf, type ReportSnapshot, type ReportSnapshots } from '../report-snapshot';
import { createPostgresPlayReports } from './play-reports';
import { postgresPlayPages } from './plays';
import { createSessionPages } from './listener-sessions';

// Report snapshots of the PostgreSQL play log (store/play-reports.ts ReportSnapshot, docs/reports.md
// "One snapshot"): each report reads on one pooled connection inside a REPEATABLE READ READ ONLY
// transaction, so every query of the report sees the log as it was at the transaction's first
// query, whatever this or another instance writes meanwhile. A read-only transaction takes no
// row locks; it only keeps the rows it can still see from being vacuumed until it ends.

/**
 * How long the snapshot's connection may sit idle between two of the report's queries before the
 * server ends it: a check streamed to a reader that stopped reading holds it, and a snapshot
 * abandoned for longer gives its connection back to the pool.
 */
const IDLE_SNAPSHOT_MS = 60_000;

/**
 * Snapshots held at once: half the pool (`database.poolSize`, 4 by default), at least one, so
 * that reports never take the connections that plays and submissions are written on.
 */
const heldAtOnce = (pool: pg.Pool): number => Math.max(1, Math.floor((pool.options.max ?? 4) / 2));

export function createPostgresReportSnapshots(pool: pg.Pool): ReportSnapshots {
  const cap = heldAtOnce(pool);
  let held = 0;
  return {
    async reportSnapshot(): Promise<ReportSnapshot> {
      if (held >= cap) throw new AppError('SERVER_BUSY', `Server busy: ${held} reports are being made; ask again when one is done`);
      held++;
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        held--;
        throw error;
      }
      try {
        // The snapshot is taken at the report's first query (a SET takes none); both in one round trip.
        await client.query(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL idle_in_transaction_session_timeout = ${IDLE_SNAPSHOT_MS}`);
      } catch (error) {
        held--;
        client.release(error instanceof Error ? error : true);
        throw error;
      }
      let released = false;
      return {
        reads: reportReadsOf(createPostgresPlayReports(client), {
          playPages: postgresPlayPages(client),
          sessionPages: createSessionPages(client).sessionPages,
        }),
        async release() {
          if (released) return;
          released = true;
          held--;
          // A connection whose COMMIT failed (the server ended the transaction) is not given back to the pool.
          const failed = await client.query('COMMIT').then(
            () => undefined,
            (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
          );
          client.release(failed);
        },
      };
    },
  };
}
