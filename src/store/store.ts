import type { EventEmitter } from 'node:events';
import type { ImageCategory } from '../domain/track';
import type { IdempotencyBounds, IdempotencyStore } from './idempotency';
import type { ImageStore } from './images';
import type { LibraryStore } from './library';
import type { LookupCacheStore } from './lookup-cache';
import type { OutputStore } from './outputs';
import type { SongRequestStore } from './song-requests';
import type { PlayLogStore } from './plays';
import type { PlayReportQueries } from './play-reports';
import type { ReportSnapshots } from './report-snapshot';
import type { TrackStore } from './tracks';

// Everything the app stores, behind one asynchronous interface (docs/several-instances.md, docs/decisions.md
// "Several instances"): `database` is a file path (SQLite, the embedded default) or a
// postgres:// URL, where every instance pointing at the same database shares one state.
// The backends: store/open-store.ts chooses; SQLite in database.ts, tracks.ts, images.ts and
// lookup-cache.ts, PostgreSQL in store/postgres/.

/** A change made by another instance sharing the database (PostgreSQL LISTEN/NOTIFY). */
export type StoreChange =
  /** A record was stored, or its metadata changed (a cover that arrived after the response). */
  | { kind: 'track'; dbid: number }
  /** An image was linked to a record. */
  | { kind: 'image'; dbid: number; key: string; category: ImageCategory }
  /** A record was deleted (DELETE /v1/history); if it was current, an older one is now. */
  | { kind: 'deleted'; dbid: number };

export interface StoreEvents {
  change: [StoreChange];
  /** The connection was lost: changes may have been missed until 'reconnected'. */
  disconnected: [];
  /** The connection is back: the caller catches up (current track, records since its last seen dbid). */
  reconnected: [];
}

/**
 * The outbound request spacing shared by every instance (docs/decisions.md): one "next allowed
 * start" per service, on the database's clock.
 */
export interface RequestSlots {
  /**
   * Takes the service's turn if it is free now (0: start the request now), else answers how many
   * ms until it may be free (ask again then). Taking it blocks others for `intervalMs`.
   */
  tryAcquire(service: string, intervalMs: number): Promise<number>;
  /**
   * Called as the request actually starts: no other may start before `intervalMs` from now, however
   * late this one started after its turn (a slow reply, a busy event loop).
   */
  started(service: string, intervalMs: number): Promise<void>;
}

export interface Store {
  readonly tracks: TrackStore;
  /** Air times, listener sessions and listener counts (docs/play-log.md). */
  /** The play log, and the queries a report makes of it (play-reports.ts). */
  readonly plays: PlayLogStore & PlayReportQueries & ReportSnapshots;
  readonly images: ImageStore;
  readonly lookupCache: LookupCacheStore;
  /** The outputs' delivery log (docs/outputs.md). */
  readonly outputs: OutputStore;
  /** First answers to Idempotency-Keys (docs/limits-and-load.md "Idempotency and retries"). */
  readonly idempotency: IdempotencyStore;
  /** The song-request queue (docs/song-requests.md). */
  readonly songRequests: SongRequestStore;
  /** The audio files svc recognises (docs/recognition.md). */
  readonly library: LibraryStore;
  /** Shared request spacing; absent with SQLite, where one process's limiter is the whole story. */
  readonly requestSlots?: RequestSlots;
  /** Changes of other instances; never fires with SQLite (one process owns the file). */
  readonly events: EventEmitter<StoreEvents>;
  /**
   * PostgreSQL: whether this instance hears notifications (its own echoes come back), or its channel
   * is silent (docs/several-instances.md "PgBouncer"); absent with SQLite.
   */
  notifications?(): 'ok' | 'silent';
  /**
   * Rejects with the backend's own error when the database takes no writes now (a read-only
   * file, a read-only PostgreSQL session); writes nothing. Run once at start, so that a
   * read-only database is reported then and not at the first submission.
   */
  probeWrite(): Promise<void>;
  /** The backend and the schema version the database is at after the start's migrations (docs/running.md "Versions"). */
  readonly schema: SchemaVersion;
  close(): Promise<void>;
}

export interface SchemaVersion {
  backend: 'sqlite' | 'postgresql';
  version: number;
}

export interface StoreOptions {
  /** `images.maxTotalBytes`: the LRU budget of the image store. */
  maxImageBytes: number;
  /** Clock in milliseconds; tests pass their own. */
  now?: () => number;
  /** PostgreSQL: `database.poolSize`, connections for queries (the LISTEN connection is one more). */
  poolSize?: number;
  /** PostgreSQL: `database.listenUrl`, a direct connection for LISTEN and migrations; empty or absent: the main URL. */
  listenUrl?: string;
  /** PostgreSQL: reports a lost or regained connection (logged by the caller). */
  onConnectionProblem?: (message: string) => void;
  /** Told when this start upgraded the schema: the version before and after (logged by the caller). */
  onMigrated?: (fromVersion: number, toVersion: number) => void;
  /** Idempotency keys kept at most (entries, bytes); tests use small ones (store/idempotency.ts). */
  idempotencyBounds?: IdempotencyBounds;
  /** PostgreSQL: how often and how patiently silence is checked (store/postgres/liveness.ts); tests use short ones. */
  liveness?: { intervalMs?: number; timeoutMs?: number };
}

export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}
