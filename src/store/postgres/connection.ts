import pg from 'pg';
import { StartupError } from '../../errors';
import { KEEPALIVE_IDLE_MS } from './liveness';
import { migratePostgres } from './migrations';
import { describeDatabaseError } from './connect-error';
import type { MigrationReport } from '../migrations';

// The PostgreSQL store's connections: a small query pool, migrated on open, and transactions
// on it. The LISTEN connection is separate (notifications.ts).

/** `database.poolSize` when not given: 4 + the LISTEN connection = 5 per instance, 50 for ten (docs/several-instances.md). */
const DEFAULT_POOL_SIZE = 4;
/** A cut network hangs instead of failing: these bound how long a request waits for the database. */
export const CONNECT_TIMEOUT_MS = 3000;

/** The pool, or one connection of it (a transaction's, or a report snapshot's: report-snapshot.ts). */
export type Queryable = Pick<pg.PoolClient, 'query'>;
const QUERY_TIMEOUT_MS = 5000;
/** Longest a pooled connection may sit inside a transaction waiting for svc. */
const IDLE_IN_TRANSACTION_MS = 2000;

/** The database's clock in ms since the epoch: one clock for every instance's request spacing. */
export const DB_NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/** What every part of the PostgreSQL store shares. */
export interface PostgresContext {
  pool: pg.Pool;
  /** Names this instance in its notifications, so that it ignores its own. */
  instanceId: string;
  now: () => number;
}

/**
 * Opens the pool and applies pending migrations; a database that cannot be used is a StartupError.
 * Migrations run on a connection of their own: to `directUrl` (database.listenUrl) when given, past a pooler.
 */
export async function openPostgresPool(
  url: string,
  onConnectionProblem: ((message: string) => void) | undefined,
  poolSize = DEFAULT_POOL_SIZE,
  directUrl?: string,
  onMigrated?: MigrationReport,
): Promise<pg.Pool> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    application_name: 'svc',
  });
  // An idle pooled connection that breaks is dropped by the pool; the error must not crash us.
  pool.on('error', (error) => onConnectionProblem?.(`database connection lost: ${error.message}`));
  // The pool listens for errors only on idle connections. A checked-out one can be ended by the
  // server (pg_terminate_backend, a restart) with no statement running: even in the very tick it
  // was handed over, when the server's "terminating connection" arrives in the same packet as the
  // previous statement's answer (that crashed svc). This listener stays for the
  // connection's life; the connection is then not queryable, its next statement fails, and the
  // pool drops it on release.
  pool.on('connect', (client) => client.on('error', () => undefined));

  try {
    // On a connection of its own, without the pool's query timeout: waiting for another instance's
    // migration, or running a long one, may take longer than any request should (docs/several-instances.md).
    await migrateOnOwnConnection(directUrl ?? url, onMigrated);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new StartupError(`cannot use database ${withoutPassword(directUrl ?? url)}: ${describeDatabaseError(error)}`);
  }
  return pool;
}

async function migrateOnOwnConnection(url: string, onMigrated: MigrationReport | undefined): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: 'svc migrate' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await migratePostgres(client, undefined, onMigrated);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Runs `work` in one transaction on one pooled connection; rolls back when it throws. `opening`,
 * statements without parameters (values written with client.escapeLiteral), are sent with the
 * BEGIN in the same round trip, and `work` gets their results.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient, opened: pg.QueryResult[]) => Promise<T>,
  opening: (client: pg.PoolClient) => string[] = () => [],
  { commitsItself = false }: { commitsItself?: boolean } = {},
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    // A transaction whose instance froze or lost its network must not hold its locks (a channel's
    // play placement, the insert order) for everyone: the server ends it (docs/several-instances.md
    // "Partitions and reconnects"). SET LOCAL, not a startup parameter, which PgBouncer refuses.
    const statements = opening(client);
    // A query of several statements answers one result each (pg's typings name only one).
    const begun = (await client.query(
      [`BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${IDLE_IN_TRANSACTION_MS}`, ...statements].join('; '),
    )) as unknown as pg.QueryResult | pg.QueryResult[];
    const result = await work(client, Array.isArray(begun) ? begun.slice(2) : []);
    // `commitsItself`: work sent the COMMIT with its last statement (withCommit), one round trip less.
    if (!commitsItself) await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw error;
  } finally {
    // A connection whose rollback failed is not given back to the pool.
    client.release(broken);
  }
}

/**
 * `sql` and its values as one simple query followed by COMMIT, in one round trip: a statement with
 * bound parameters goes in the extended protocol, which takes one statement per message, so its
 * COMMIT would be a second round trip (node-postgres waits for each answer before it sends the
 * next query). Why the literals are as safe as parameters:
 * - `sql` is a constant of svc's own whose every `$n` is a placeholder (no `$` in its string
 *   constants, no dollar quoting); the values are written in one pass over it, so a value that
 *   holds `$1` is never read as a placeholder;
 * - strings go through the driver's escapeLiteral: quotes and backslashes doubled, and an `E'...'`
 *   string when there is a backslash, which reads the same whatever standard_conforming_strings
 *   says; a quote, `--` or `;` inside stays inside the literal;
 * - numbers must be finite and are written as JavaScript writes them (digits, `.`, `e`, a sign);
 *   a negative one in parentheses, since `100-$1` would otherwise read `100--5`, a comment that
 *   swallows the rest of the statement and its COMMIT;
 * - null is NULL; no other type is taken.
 * test/unit/store/postgres-with-commit.test.ts compares hostile values stored this way with the same
 * values bound as parameters on a real PostgreSQL. Answers the statement's result.
 */
export async function withCommit<R extends pg.QueryResultRow>(
  client: pg.PoolClient,
  sql: string,
  values: readonly (string | number | null)[],
): Promise<pg.QueryResult<R>> {
  return (await allWithCommit<R>(client, [{ sql, values }]))[0];
}

/** A statement of svc's own and its values, for allWithCommit. */
export interface BoundStatement {
  sql: string;
  values: readonly (string | number | null)[];
}

/**
 * withCommit for several statements: all of them and the COMMIT in one round trip, one result
 * each, in order. The first that fails skips the rest and the COMMIT (the transaction is then
 * aborted, and inTransaction rolls it back).
 */
export async function allWithCommit<R extends pg.QueryResultRow>(client: pg.PoolClient, statements: readonly BoundStatement[]): Promise<pg.QueryResult<R>[]> {
  const texts = statements.map((statement) => withLiterals(client, statement.sql, statement.values));
  // A newline before each `;`: no statement's last line can swallow it.
  const results = (await client.query(`${texts.join('\n;\n')}\n; COMMIT`)) as unknown as pg.QueryResult<R>[];
  return results.slice(0, statements.length);
}

/** `sql` with each `$n` replaced by its value written as a literal (withCommit says why that is safe). */
function withLiterals(client: pg.PoolClient, sql: string, values: readonly (string | number | null)[]): string {
  const literal = (value: string | number | null): string => {
    if (value === null) return 'NULL';
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
      return value < 0 || Object.is(value, -0) ? `(${String(value)})` : String(value);
    }
    return client.escapeLiteral(value);
  };
  return sql.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index >= values.length) throw new Error(`no value for $${n}`);
    return literal(values[index] ?? null);
  });
}

/** The URL without its password, for messages. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://…';
  }
}
