import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { StartupError, errorMessage } from '../../errors';
import { VERSION } from '../../version';
import { pendingMigrations, refuseNewerSchema, type Migration, type MigrationReport } from '../migrations';
import { MIGRATIONS } from './migrations';

export type Db = Database.Database;

/**
 * SQLite's own page cache, in KiB: SQLite's default of 2 MiB rather than better-sqlite3's 16 MiB.
 * The file's pages stay in the operating system's cache either way; a second copy in the process
 * was 10 MiB of its resident size after 10,000 submissions (docs/limits-and-load.md "What one record costs").
 */
const PAGE_CACHE_KIB = 2000;

/** Opens (creating if needed) the SQLite file, applies pragmas and pending migrations. */
export function openDatabase(file: string, migrations: readonly Migration[] = MIGRATIONS, onMigrated?: MigrationReport): Db {
  const inMemory = file === ':memory:';
  let db: Db;
  if (!inMemory) prepareDirectory(file);
  try {
    db = new Database(file);
  } catch (error) {
    throw new StartupError(`cannot open database ${file}: ${errorMessage(error)}`);
  }
  try {
    if (!inMemory) db.pragma('journal_mode = WAL');
    // NORMAL is durable against a process crash in WAL mode; only a power loss can drop the last commits.
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
    migrate(db, migrations, onMigrated);
  } catch (error) {
    db.close();
    throw new StartupError(`cannot use database ${file}: ${errorMessage(error)}`);
  }
  return db;
}

/**
 * Creates the database's directory one level at a time, so that every failure names the
 * directory and the reason in one line. (Node's recursive mkdir loops forever on /proc, where
 * mkdir answers ENOENT for a parent that exists.)
 */
function prepareDirectory(file: string): void {
  const fail = (why: string) => new StartupError(`cannot open database ${file}: ${why}`);
  const target = path.resolve(file);
  const missing: string[] = [];
  let dir = path.dirname(target);
  while (!fs.existsSync(dir)) {
    missing.unshift(dir);
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  if (!fs.statSync(dir).isDirectory()) throw fail(`${dir} is not a directory`);
  for (const child of missing) {
    try {
      // Only its owner may list what svc keeps (docs/security.md "Secrets at rest").
      fs.mkdirSync(child, { mode: 0o700 });
    } catch (error) {
      throw fail(`cannot create directory ${child}: ${describeFsError(error)}`);
    }
  }
  const parent = path.dirname(target);
  if (fs.existsSync(target) && fs.statSync(target).isDirectory()) throw fail(`${target} is a directory; give a file name, e.g. ${path.join(target, 'svc.db')}`);
  try {
    // SQLite writes its -wal and -shm files next to the database: the directory must be writable.
    fs.accessSync(parent, fs.constants.W_OK | fs.constants.X_OK);
  } catch (error) {
    throw fail(`cannot write in directory ${parent}: ${describeFsError(error)}`);
  }
  createOwnerOnly(target, fail);
}

/**
 * A new database file is made 0600 before SQLite opens it (an empty file is an empty database),
 * and SQLite gives its -wal and -shm files the database's mode: readable by the owner only.
 * An existing file keeps the mode its owner gave it.
 */
function createOwnerOnly(target: string, fail: (why: string) => Error): void {
  try {
    fs.closeSync(fs.openSync(target, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw fail(`cannot create ${target}: ${describeFsError(error)}`);
  }
}

const FS_ERRORS: Readonly<Record<string, string>> = {
  EACCES: 'permission denied (check its owner and mode, or choose another --db)',
  EPERM: 'operation not permitted (choose another --db)',
  EROFS: 'read-only file system',
  ENOENT: 'no such file or directory (this file system does not allow new directories here)',
  ENOTDIR: 'a part of the path is not a directory',
  ENOSPC: 'no space left on the device',
  // It is there, but a parent directory did not let us see it.
  EEXIST: 'it exists but cannot be reached (permission denied on a parent directory)',
};

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return (code && FS_ERRORS[code]) ?? errorMessage(error);
}

/**
 * Setting user_version to its own value takes a write lock and writes the header: a read-only
 * file answers SQLITE_READONLY here, as a submission would later, and nothing changes.
 */
export function probeSqliteWrite(db: Db): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  db.pragma(`user_version = ${Math.trunc(version)}`);
}

/** The schema version the file is at (`PRAGMA user_version`). */
export function schemaVersionOf(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

function migrate(db: Db, migrations: readonly Migration[], onMigrated: MigrationReport | undefined): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  refuseNewerSchema(current, migrations, 'SQLite', VERSION);
  const pending = pendingMigrations(migrations, current);
  for (const migration of pending) {
    db.transaction(() => {
      db.exec(migration.sql);
      db.pragma(`user_version = ${Math.trunc(migration.version)}`);
    })();
  }
  const last = pending.at(-1);
  if (last) onMigrated?.(current, last.version);
}
