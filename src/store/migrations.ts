// Append-only schema history. `PRAGMA user_version` records the last version applied;
// never edit a released migration, add the next one.

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tracks',
    sql: `
      CREATE TABLE tracks (
        -- AUTOINCREMENT: a dbid is never reused, even after the newest row is deleted.
        dbid INTEGER PRIMARY KEY AUTOINCREMENT,
        -- Arrival order of the submission; the current track is the highest one stored.
        received_seq INTEGER NOT NULL,
        received_at TEXT NOT NULL,
        stored_at TEXT NOT NULL,
        -- processed_metadata as JSON, so a history can be served without a migration.
        metadata TEXT NOT NULL CHECK (json_valid(metadata))
      );
      CREATE INDEX tracks_by_received_seq ON tracks (received_seq);
    `,
  },
];
