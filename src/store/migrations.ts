// The schema history's contract, shared by both backends: each keeps its own append-only list
// (sqlite/migrations.ts by `PRAGMA user_version`, postgres/migrations.ts in a table); never
// edit a released migration, add the next one.

/** One step of a backend's schema history. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Told once when a start applied migrations: the schema version before and after (logged by the server). */
export type MigrationReport = (fromVersion: number, toVersion: number) => void;

/** The migrations after `current`, oldest first: what either backend still has to apply. */
export function pendingMigrations(migrations: readonly Migration[], current: number): Migration[] {
  return [...migrations].sort((a, b) => a.version - b.version).filter((m) => m.version > current);
}
