import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { StartupError, errorMessage } from '../../errors';
import { VERSION } from '../../version';
import { refuseNewerSchema } from '../migrations';
import { MIGRATIONS } from './migrations';

// `svc backup` and `svc restore` for the SQLite store (docs/running.md "Backup"): SQLite's online
// backup API through better-sqlite3 (no sqlite3 binary), a copy only its owner can read (the
// database holds the key of the listener-address hash), checked with integrity_check.

/** What a finished copy holds. */
export interface BackupReport {
  file: string;
  tracks: number;
  schemaVersion: number;
}

/** Every page in one step: one read transaction, so the copy is the database as it was when the step began. */
const ALL_PAGES = 0x7fffffff;

/**
 * Copies `database` into `out` while a server may be writing it. The copy is written beside `out`
 * as `<out>.partial` (0600), checked, then renamed: `out` is either a whole checked copy or absent.
 */
export async function backupSqlite(database: string, out: string): Promise<BackupReport> {
  if (!fs.existsSync(database)) throw new StartupError(`no database at ${database} (is database set to the file svc serve uses?)`);
  prepareFolder(path.dirname(out));
  if (fs.existsSync(out)) throw new StartupError(`${out} exists already: choose another --out`);
  const partial = `${out}.partial`;
  fs.rmSync(partial, { force: true });
  // Created 0600 before SQLite writes into it: SQLite keeps an existing file's mode.
  fs.closeSync(fs.openSync(partial, 'wx', 0o600));
  const source = new Database(database, { fileMustExist: true, timeout: 5000 });
  try {
    await source.backup(partial, { progress: () => ALL_PAGES });
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw new StartupError(`backup of ${database} failed: ${errorMessage(error)}`);
  } finally {
    source.close();
  }
  try {
    singleFile(partial);
    const report = checkCopy(partial);
    fs.renameSync(partial, out);
    return { ...report, file: out };
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw error;
  }
}

/**
 * Replaces `database` with the backup `from`, through the same API, after checking the backup.
 * Refused while a process has `database` open (a running svc), and for a backup of a newer schema.
 */
export async function restoreSqlite(from: string, database: string): Promise<BackupReport> {
  if (!fs.existsSync(from)) throw new StartupError(`no backup at ${from}`);
  const report = checkCopy(from);
  refuseNewerSchema(report.schemaVersion, MIGRATIONS, 'SQLite', VERSION);
  if (fs.existsSync(database)) refuseWhileOpen(database);
  else prepareFolder(path.dirname(database));
  const backup = new Database(from, { readonly: true, fileMustExist: true });
  try {
    await backup.backup(database, { progress: () => ALL_PAGES });
  } catch (error) {
    throw new StartupError(`restore into ${database} failed: ${errorMessage(error)}`);
  } finally {
    backup.close();
  }
  fs.chmodSync(database, 0o600);
  return { ...checkCopy(database), file: database };
}

/** The copy carries the database's WAL mode; a backup is one file, with no -wal or -shm beside it. */
function singleFile(file: string): void {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma('journal_mode = DELETE');
  } finally {
    db.close();
  }
}

/** A backup folder svc creates is 0700; one that exists keeps its owner's mode (the files are 0600 either way). */
function prepareFolder(dir: string): void {
  if (fs.existsSync(dir)) return;
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new StartupError(`cannot create ${dir}: ${errorMessage(error)}`);
  }
}

/** integrity_check, the schema version and the number of tracks of a copy; a copy that fails the check is an error. */
function checkCopy(file: string): Omit<BackupReport, 'file'> {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new StartupError(`cannot open ${file}: ${errorMessage(error)}`);
  }
  try {
    const rows = db.pragma('integrity_check') as { integrity_check: string }[];
    const problems = rows.map((row) => row.integrity_check).filter((line) => line !== 'ok');
    if (problems.length > 0) throw new StartupError(`${file} fails integrity_check: ${problems.slice(0, 3).join('; ')}`);
    const schemaVersion = db.pragma('user_version', { simple: true }) as number;
    const hasTracks = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tracks'").get() !== undefined;
    if (!hasTracks) throw new StartupError(`${file} is not an svc database (no tracks table)`);
    const { count } = db.prepare('SELECT count(*) AS count FROM tracks').get() as { count: number };
    return { tracks: count, schemaVersion };
  } catch (error) {
    if (error instanceof StartupError) throw error;
    throw new StartupError(`${file} is not a readable SQLite database: ${errorMessage(error)}`);
  } finally {
    db.close();
  }
}

/**
 * A connection in exclusive locking mode cannot take its write lock while another process holds
 * the WAL database open: then a server (or another tool) is using it.
 */
function refuseWhileOpen(database: string): void {
  const probe = new Database(database, { fileMustExist: true, timeout: 0 });
  try {
    probe.pragma('locking_mode = EXCLUSIVE');
    probe.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      throw new StartupError(`${database} is in use (is svc serve running on it? stop it first: systemctl stop svc)`);
    }
    throw new StartupError(`cannot use ${database}: ${errorMessage(error)}`);
  } finally {
    probe.close();
  }
}
