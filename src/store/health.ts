import { AppError, errorMessage } from '../errors';
import { throttledLog, type Logger } from '../log';

// docs/decisions.md "Hostile clients and browsers": a storage failure (disk full, a read-only file,
// an I/O error) answers 503 {"error":"Database unavailable"}, is logged once per kind per
// minute instead of a stack per request, and /v1/status says "database":"unavailable" until a
// write succeeds again.

export type DatabaseState = 'ok' | 'unavailable';

export interface StorageHealth {
  state(): DatabaseState;
  /**
   * Runs a store operation (synchronous or a promise); a storage failure becomes DATABASE_UNAVAILABLE.
   * `failsFastWhenLost` (default: `isWrite`): refused at once while the connection is lost.
   */
  run<T>(operation: () => T, isWrite: boolean, failsFastWhenLost?: boolean): T;
  /**
   * The connection to the database broke or fell silent (PostgreSQL): unavailable until it is
   * back, and writes answer 503 at once instead of waiting for their time limits
   * (docs/several-instances.md "Health checks"), so a load balancer moves them on without delay.
   */
  lost(): void;
  /** The connection is back and listening again. */
  restored(): void;
}

/**
 * SQLite result codes that mean "the storage is not usable now", not "this statement is wrong"
 * (https://www.sqlite.org/rescode.html; better-sqlite3 puts the extended name in `code`).
 */
const STORAGE_FAILURES = [
  'SQLITE_FULL',
  'SQLITE_READONLY',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
  'SQLITE_PROTOCOL',
];

/** Socket errors of a database connection (node-postgres passes Node's `code` through). */
const NETWORK_FAILURES = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND'];

/**
 * PostgreSQL SQLSTATE classes and codes that mean the server cannot serve now
 * (https://www.postgresql.org/docs/15/errcodes-appendix.html): 08 connection exception,
 * 53 insufficient resources (53100 disk full), 57P01-57P03 shutdown or not accepting connections,
 * 57P05 and 25P03 the server ended an idle session or an idle transaction (a write whose bytes
 * stalled on the way: the connection is gone, the write was not made), 25006 read-only transaction
 * (a standby, or a database set read-only).
 */
function isPostgresUnavailable(code: string): boolean {
  return /^(08|53)[0-9A-Z]{3}$/.test(code) || /^57P0[1-35]$/.test(code) || code === '25P03' || code === '25006';
}

/**
 * node-postgres reports a broken or timed-out connection with a plain Error and no code; these
 * are its messages (pg/lib/client.js, pg-pool/index.js).
 */
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error',
  'Cannot use a pool after calling end',
];

/** The primary result code of a storage failure (`SQLITE_IOERR_WRITE` -> `SQLITE_IOERR`), else undefined. */
export function storageFailureKind(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  if ('code' in error && typeof error.code === 'string') {
    const code = error.code;
    if (NETWORK_FAILURES.includes(code)) return 'postgres-connection';
    if (isPostgresUnavailable(code)) return `postgres-${code}`;
    return STORAGE_FAILURES.find((kind) => code === kind || code.startsWith(`${kind}_`));
  }
  if (error instanceof Error && PG_CONNECTION_MESSAGES.some((text) => error.message.includes(text))) return 'postgres-connection';
  return undefined;
}

/** A DATABASE_UNAVAILABLE answer: already logged (once a minute) where it happened. */
export function isStorageUnavailable(error: unknown): boolean {
  return error instanceof AppError && error.code === 'DATABASE_UNAVAILABLE';
}

/** What to do about each kind of storage failure, said in the log line beside the database's name. */
const FIXES: Readonly<Record<string, string>> = {
  SQLITE_READONLY: 'let the user svc runs as write the file, its -wal and -shm files and its folder (owner and mode), or choose another database',
  SQLITE_CANTOPEN: 'check that the file and its folder exist and the user svc runs as may write them',
  SQLITE_FULL: 'free space on its file system',
  SQLITE_IOERR: 'check the disk (the kernel log says more)',
  SQLITE_CORRUPT: 'restore a backup (docs/running.md "Backup")',
  SQLITE_NOTADB: 'restore a backup (docs/running.md "Backup")',
  'postgres-25006': 'point database at the primary, or make the database take writes',
  'postgres-53100': 'free space on the PostgreSQL server',
};

/** The fix for a kind of storage failure, or undefined when there is nothing better to say than its message. */
export function storageFix(kind: string): string | undefined {
  return FIXES[kind] ?? (kind === 'postgres-connection' ? 'check that PostgreSQL runs and is reachable' : undefined);
}

/**
 * `where` names the database (a file, or a URL without its password) in each line, so that the
 * log says what failed and where (docs/running.md "When the database fails").
 */
export function createStorageHealth(logger: Logger, now: () => number = Date.now, where?: string): StorageHealth {
  let state: DatabaseState = 'ok';
  let connectionLost = false;
  const report = throttledLog((message) => logger.error(message), 60_000, now);
  return {
    state: () => state,
    run(operation, isWrite, failsFastWhenLost = isWrite) {
      // Only the asynchronous store (PostgreSQL) loses its connection: refused as its promise would be.
      if (failsFastWhenLost && connectionLost) return Promise.reject(new AppError('DATABASE_UNAVAILABLE')) as ReturnType<typeof operation>;
      const fail = (error: unknown): never => {
        const kind = storageFailureKind(error);
        if (kind === undefined) throw error;
        state = 'unavailable';
        const fix = storageFix(kind);
        const place = where === undefined ? '' : ` (database ${where}${fix === undefined ? '' : `: ${fix}`})`;
        report(kind, `database unavailable (${kind}): ${errorMessage(error)}${place}`);
        throw new AppError('DATABASE_UNAVAILABLE', undefined, { cause: error });
      };
      try {
        const result = operation();
        if (result instanceof Promise) {
          // The asynchronous store (docs/several-instances.md): the same rules once the promise settles.
          return result.then((value: unknown) => {
            if (isWrite) state = 'ok';
            return value;
          }, fail) as ReturnType<typeof operation>;
        }
        if (isWrite) state = 'ok';
        return result;
      } catch (error) {
        return fail(error);
      }
    },
    lost() {
      state = 'unavailable';
      connectionLost = true;
    },
    restored() {
      state = 'ok';
      connectionLost = false;
    },
  };
}

/**
 * The store with every method run through `health`; the methods named in `writes` are the
 * writes whose success clears the unavailable state.
 */
export function guardStore<T extends object>(
  store: T,
  health: StorageHealth,
  writes: readonly (keyof T & string)[],
  /** Not writes, but refused at once too while the connection is lost (StorageHealth.lost). */
  failFast: readonly (keyof T & string)[] = [],
): T {
  const writeNames = new Set<PropertyKey>(writes);
  const failFastNames = new Set<PropertyKey>([...writes, ...failFast]);
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let guarded = wrapped.get(property);
      if (!guarded) {
        const isWrite = writeNames.has(property);
        const failsFast = failFastNames.has(property);
        // The method is looked up at each call, so whoever replaces it on the store (a test's
        // spy) is still called through the guard.
        guarded = (...args: unknown[]) =>
          health.run(() => (Reflect.get(target, property, target) as (...args: unknown[]) => unknown).apply(target, args), isWrite, failsFast);
        wrapped.set(property, guarded);
      }
      return guarded;
    },
  });
}
