/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import { EventEmitter } from 'node:events';
import type { Store, StoreEvents, StoreOptions } from '../store';
import { openDatabase, probeSqliteWrite, schemaVersionOf } from './database';
import { createIdempotencyStore } from './idempotency';
import { createImageStore } from './images';
import { createLibraryStore } from './library';
import { createLookupCacheStore } from './lookup-cache';
import { createOutputStore } from './outputs';
import { createSongRequestStore } from './song-requests';
import { createPlayLogStore } from './plays';
import { createSqliteReportSnapshots } from './report-snapshot';
import { createTrackStore } from './tracks';

// The SQLite backend of the Store contract (store.ts): one file, one connection, each store in
// its own module of this folder. It imports the contracts and the ground, never postgres/.

export function openSqliteStore(file: string, options: StoreOptions): Store {
  const db = openDatabase(file, undefined, options.onMigrated);
  const log = createPlayLogStore(db);
  const snapshots = createSqliteReportSnapshots(db, log);
  const plays = { ...log, reportSnapshot: () => snapshots.reportSnapshot() };
  return {
    tracks: createTrackStore(db, plays),
    plays,
    images: createImageStore(db, { maxTotalBytes: options.maxImageBytes, ...(options.now ? { now: options.now } : {}) }),
    lookupCache: createLookupCacheStore(db, options.now),
    outputs: createOutputStore(db),
    idempotency: createIdempotencyStore(db, options.idempotencyBounds),
    songRequests: createSongRequestStore(db),
    library: createLibraryStore(db, options.now),
    events: new EventEmitter<StoreEvents>(),
    probeWrite: async () => probeSqliteWrite(db),
    schema: { backend: 'sqlite', version: schemaVersionOf(db) },
    close: async () => {
      snapshots.close();
      db.close();
    },
  };
}
