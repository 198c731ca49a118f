import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

// PostgreSQL for the tests that need it (docs/several-instances.md): the server the machine runs on
// 127.0.0.1:5432 (trust auth), or SVC_TEST_POSTGRES_URL. Each run creates its own database
// with a unique name and drops it. Without a reachable server the suites are skipped and say so;
// CI (.ci/run) always starts one.

export const ADMIN_URL = process.env.SVC_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

let reachable: boolean | undefined;

/** Whether the server answers, asked once per test file (synchronously, so `describe` can be chosen). */
export function postgresReachable(): boolean {
  if (reachable === undefined) {
    const probe = spawnSync(
      process.execPath,
      [
        '-e',
        `const pg = require('pg'); const c = new pg.Client({ connectionString: process.argv[1], connectionTimeoutMillis: 2000 }); c.connect().then(() => c.end()).then(() => process.exit(0), () => process.exit(1));`,
        ADMIN_URL,
      ],
      { cwd: __dirname, timeout: 5000 },
    );
    reachable = probe.status === 0;
  }
  return reachable;
}

/** `describe` when PostgreSQL is reachable; otherwise `describe.skip`, with a plain message why. */
export function describeWithPostgres(name: string, body: () => void): void {
  if (postgresReachable()) {
    describe(name, body);
    return;
  }
  process.stderr.write(`SKIPPED "${name}": no PostgreSQL server reachable at ${ADMIN_URL} (set SVC_TEST_POSTGRES_URL)\n`);
  describe.skip(name, body);
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
