import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describeWithPeers, PEERS, peersForPart, POSTGRES_TEST_URL } from './peers';

// PostgreSQL for the tests that need it (docs/several-instances.md): the server the machine runs on
// 127.0.0.1:5432 (trust auth), or SVC_TEST_POSTGRES_URL. Each run creates its own database
// with a unique name and drops it. Without a reachable server the suites are skipped and say so
// (test/helpers/peers.ts); CI (.ci/run) always starts one, and under CI a skip is a failure.

export const ADMIN_URL = POSTGRES_TEST_URL;

/** Whether the server answers, asked once per test file (synchronously, so `describe` can be chosen). */
export function postgresReachable(): boolean {
  return PEERS.postgresql.present();
}

/**
 * Whether the suite can use PostgreSQL; when not, says so once as test/helpers/peers.ts does (a skip
 * line, or a failure under CI). For files that run on SQLite always and on PostgreSQL when it answers.
 */
export function postgresForPart(part: string): boolean {
  return peersForPart(['postgresql'], part);
}

/** `describe` when PostgreSQL is reachable; otherwise skipped with one line (a failure under CI). */
export function describeWithPostgres(name: string, body: () => void): void {
  describeWithPeers(['postgresql'], name, body);
}

export interface TestDatabase {
  url: string;
  name: string;
  /** Runs SQL as the admin user against this database (tests look at rows directly). */
  query<R extends pg.QueryResultRow>(sql: string, values?: unknown[]): Promise<R[]>;
  drop(): Promise<void>;
}

/** A fresh database with a unique name; `drop()` removes it (and ends connections still open to it). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `svc_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
  // An idle connection ended by the server (a DROP ... WITH (FORCE) elsewhere) is replaced, not a crash.
  pool.on('error', () => undefined);
  return {
    url: url.toString(),
    name,
    async query<R extends pg.QueryResultRow>(sql: string, values: unknown[] = []) {
      return (await pool.query<R>(sql, values)).rows;
    },
    async drop() {
      await pool.end();
      const dropper = new pg.Client({ connectionString: ADMIN_URL });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}
