import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { StartupError, errorMessage } from '../errors';
import { MIGRATIONS, type Migration } from './migrations';

export type Db = Database.Database;

/** Opens (creating if needed) the SQLite file, applies pragmas and pending migrations. */
export function openDatabase(file: string, migrations: readonly Migration[] = MIGRATIONS): Db {
  const inMemory = file === ':memory:';
  let db: Db;
  try {
    if (!inMemory) fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
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
    migrate(db, migrations);
  } catch (error) {
    db.close();
    throw new StartupError(`cannot use database ${file}: ${errorMessage(error)}`);
  }
  return db;
}

export function migrate(db: Db, migrations: readonly Migration[]): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  const pending = [...migrations].sort((a, b) => a.version - b.version).filter((m) => m.version > current);
  for (const migration of pending) {
    db.transaction(() => {
      db.exec(migration.sql);
      db.pragma(`user_version = ${Math.trunc(migration.version)}`);
    })();
  }
}
