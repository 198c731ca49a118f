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

/** The newest schema version a backend's history reaches: what this build knows. */
export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.reduce((latest, migration) => Math.max(latest, migration.version), 0);
}

/**
 * Rollback protection (docs/running.md "Upgrades"): a database a newer svc has upgraded is refused
 * before anything is written, naming both versions. An older build would store rows without the
 * columns it does not know, and the newer one would read them wrong later.
 */
export function refuseNewerSchema(current: number, migrations: readonly Migration[], backend: 'SQLite' | 'PostgreSQL', release: string): void {
  const known = latestVersion(migrations);
  if (current <= known) return;
  throw new Error(
    `its ${backend} schema is version ${current}, newer than version ${known}, the newest svc ${release} knows: a newer svc upgraded it. ` +
      'Start that newer svc again, or restore the backup taken before the upgrade (docs/running.md "Upgrades")',
  );
}
