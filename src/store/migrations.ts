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
  // Version 2 is the image store's (written in parallel); migrate() applies versions in order.
  {
    version: 3,
    name: 'lookup cache',
    sql: `
      -- Answers of outside services (issue 5 "Cache"): found ones for 7 days, "not found" for 1 day.
      CREATE TABLE lookup_cache (
        service TEXT NOT NULL,
        lookup_key TEXT NOT NULL,
        found INTEGER NOT NULL CHECK (found IN (0, 1)),
        -- The decoded answer as JSON; NULL when the service said "not found".
        answer TEXT CHECK (answer IS NULL OR json_valid(answer)),
        fetched_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (service, lookup_key)
      ) WITHOUT ROWID;
      CREATE INDEX lookup_cache_by_expiry ON lookup_cache (expires_at);
    `,
  },
];
