import { openPostgresStore } from './postgres/postgres-store';
import { openSqliteStore } from './sqlite/sqlite-store';
import { isPostgresUrl, type Store, type StoreOptions } from './store';

// The one place that chooses a backend (docs/architecture.md "Adding a storage backend").

/** Opens the store `database` names: a postgres:// URL, or else a SQLite file path. */
export async function openStore(database: string, options: StoreOptions): Promise<Store> {
  if (isPostgresUrl(database)) return openPostgresStore(database, options);
  return openSqliteStore(database, options);
}

export { openSqliteStore };
