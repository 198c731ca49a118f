import { AppError } from '../../../src/errors';
import { createStorageHealth, guardStore, isStorageUnavailable, storageFailureKind } from '../../../src/store/health';
import { silentLogger } from '../../helpers/silent-logger';

// docs/decisions.md "Hostile clients and browsers", storage failures, with injected SQLite errors
// shaped like better-sqlite3's SqliteError (`code` holds the extended result code name).

function sqliteError(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}

describe('storage health', () => {
  it('When a code is a storage failure, then its primary kind is named; statement errors are not failures', () => {
    expect(storageFailureKind(sqliteError('SQLITE_FULL', 'database or disk is full'))).toBe('SQLITE_FULL');
    expect(storageFailureKind(sqliteError('SQLITE_READONLY_DBMOVED', 'x'))).toBe('SQLITE_READONLY');
    expect(storageFailureKind(sqliteError('SQLITE_IOERR_WRITE', 'x'))).toBe('SQLITE_IOERR');
    expect(storageFailureKind(sqliteError('SQLITE_CONSTRAINT_UNIQUE', 'x'))).toBeUndefined();
    expect(storageFailureKind(new Error('plain'))).toBeUndefined();
  });

  it('When PostgreSQL cannot serve (a lost connection, a shutdown, a full disk), then that is a storage failure; a bad statement is not', () => {
    // SQLSTATEs: https://www.postgresql.org/docs/15/errcodes-appendix.html; node-postgres's own
    // messages for a broken connection: pg/lib/client.js and pg-pool/index.js.
    expect(storageFailureKind(sqliteError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'))).toBe('postgres-connection');
    expect(storageFailureKind(new Error('Connection terminated unexpectedly'))).toBe('postgres-connection');
    expect(storageFailureKind(new Error('timeout exceeded when trying to connect'))).toBe('postgres-connection');
    expect(storageFailureKind(sqliteError('57P01', 'terminating connection due to administrator command'))).toBe('postgres-57P01');
    expect(storageFailureKind(sqliteError('08006', 'connection failure'))).toBe('postgres-08006');
    expect(storageFailureKind(sqliteError('53100', 'could not extend file: No space left on device'))).toBe('postgres-53100');
    expect(storageFailureKind(sqliteError('25006', 'cannot execute INSERT in a read-only transaction'))).toBe('postgres-25006');
    expect(storageFailureKind(sqliteError('25P03', 'terminating connection due to idle-in-transaction timeout'))).toBe('postgres-25P03');
    expect(storageFailureKind(sqliteError('57P05', 'terminating connection due to idle-session timeout'))).toBe('postgres-57P05');
    expect(storageFailureKind(sqliteError('57014', 'canceling statement due to user request'))).toBeUndefined();
    expect(storageFailureKind(sqliteError('23505', 'duplicate key value violates unique constraint'))).toBeUndefined();
    expect(storageFailureKind(sqliteError('42P01', 'relation "tracks" does not exist'))).toBeUndefined();
  });

  it('When writes fail, then 503, "unavailable", and one log line per kind per minute with a count after', () => {
    let now = 0;
    const lines: string[] = [];
    const health = createStorageHealth({ info() {}, warn() {}, error: (line) => lines.push(line) }, () => now);
    const store = guardStore(
      {
        failWith: null as string | null,
        insert(this: { failWith: string | null }) {
          if (this.failWith) throw sqliteError(this.failWith, `failed: ${this.failWith}`);
          return 1;
        },
        read: () => 'row',
      },
      health,
      ['insert'],
    );
    store.failWith = 'SQLITE_FULL';
    for (let i = 0; i < 10; i += 1) {
      expect(() => store.insert()).toThrow(AppError);
      now += 1000;
    }
    store.failWith = 'SQLITE_READONLY';
    expect(() => store.insert()).toThrow('Database unavailable');
    // What the image collector checks so as not to log a full disk once per image.
    let caught: unknown;
    try {
      store.insert();
    } catch (error) {
      caught = error;
    }
    expect(isStorageUnavailable(caught)).toBe(true);
    expect(isStorageUnavailable(new Error('other'))).toBe(false);
    expect(health.state()).toBe('unavailable');
    expect(store.read()).toBe('row');
    expect(health.state()).toBe('unavailable');
    expect(lines).toEqual(['database unavailable (SQLITE_FULL): failed: SQLITE_FULL', 'database unavailable (SQLITE_READONLY): failed: SQLITE_READONLY']);
    now += 60_000;
    store.failWith = 'SQLITE_FULL';
    expect(() => store.insert()).toThrow(AppError);
    expect(lines[2]).toBe('database unavailable (SQLITE_FULL): failed: SQLITE_FULL (9 more since the last report)');
    store.failWith = null;
    expect(store.insert()).toBe(1);
    expect(health.state()).toBe('ok');
  });

  it('When an error is not a storage failure, then it passes through unchanged', () => {
    const health = createStorageHealth({ info() {}, warn() {}, error() {} });
    const bug = new TypeError('bug');
    const store = guardStore(
      {
        insert: () => {
          throw bug;
        },
      },
      health,
      ['insert'],
    );
    expect(() => store.insert()).toThrow(bug);
    expect(health.state()).toBe('ok');
  });
});

describe('writes while the connection is lost (docs/several-instances.md "Health checks")', () => {
  it('When the connection is lost, then writes and the named operations are refused at once, reads still run, and a restore lets writes through', async () => {
    const health = createStorageHealth(silentLogger);
    let calls = 0;
    const store = {
      insert: async () => (calls += 1),
      nextReceivedSeq: async () => (calls += 1),
      current: async () => (calls += 1),
    };
    const guarded = guardStore(store, health, ['insert'], ['nextReceivedSeq']);
    health.lost();
    await expect(guarded.insert()).rejects.toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
    await expect(guarded.nextReceivedSeq()).rejects.toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
    await expect(guarded.current()).resolves.toBe(1);
    expect(calls).toBe(1);
    health.restored();
    await expect(guarded.insert()).resolves.toBe(2);
    expect(health.state()).toBe('ok');
  });
});
