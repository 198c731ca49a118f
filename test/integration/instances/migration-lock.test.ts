import pg from 'pg';
import { openPostgresPool } from '../../../src/store/postgres/connection';
import { until } from '../../helpers/eventually';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';

// An instance started while another one migrates waits for the migration lock past the request
// pool's 5 s query timeout (docs/several-instances.md "PgBouncer", session state): it used to exit
// with "Query read timeout" unless listenUrl was set. The lock is held here by a transaction of the
// test's own, as the migrating instance's transaction holds it; the test waits until the waiting
// instance's lock wait has lasted longer than the query timeout, read from pg_stat_activity.

/** MIGRATION_LOCK in src/store/postgres/migrations.ts. */
const MIGRATION_LOCK = 0x5356_4301;
/** QUERY_TIMEOUT_MS in src/store/postgres/connection.ts, and a second more. */
const PAST_QUERY_TIMEOUT_S = 6;

describeWithPostgres('migration lock', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('When another instance holds the migration lock longer than the query timeout, then a starting instance waits and opens once it is released', async () => {
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    let settled: 'opened' | Error | undefined;
    const opening = openPostgresPool(database.url, undefined).then(
      (pool) => {
        settled = 'opened';
        return pool;
      },
      (error: Error) => {
        settled = error;
        throw error;
      },
    );
    opening.catch(() => undefined);
    try {
      // The signal: the starting instance's lock wait, as the server reports it, is older than the timeout.
      await until(
        async () => {
          const [row] = await database.query<{ waited: number }>(
            `SELECT extract(epoch FROM now() - query_start)::float AS waited FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%'`,
          );
          return settled !== undefined || (row !== undefined && row.waited > PAST_QUERY_TIMEOUT_S);
        },
        'the starting instance waited for the lock past the query timeout',
        45_000,
      );
      expect(settled).toBeUndefined();
    } finally {
      await holder.query('COMMIT');
      await holder.end();
    }
    const pool = await opening;
    const [version] = (await pool.query<{ version: number }>('SELECT max(version) AS version FROM svc_schema')).rows;
    expect(version?.version).toBeGreaterThan(0);
    await pool.end();
  }, 60_000);
});
