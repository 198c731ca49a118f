import type { EventEmitter } from 'node:events';
import type { ImageCategory } from '../domain/track';
import type { ImageStore } from './images';
import type { LookupCacheStore } from './lookup-cache';
import type { TrackStore } from './tracks';

// Everything the app stores, behind one asynchronous interface (issue 15, decisions.md "Several
// instances: PostgreSQL"): `database` is a file path (SQLite, the embedded default) or a
// postgres:// URL, where every instance pointing at the same database shares one state.
// The backends: store/open-store.ts chooses; SQLite in database.ts, tracks.ts, images.ts and
// lookup-cache.ts, PostgreSQL in store/postgres/.

/** A change made by another instance sharing the database (PostgreSQL LISTEN/NOTIFY). */
export type StoreChange =
  /** A record was stored, or its metadata changed (a cover that arrived after the response). */
  | { kind: 'track'; dbid: number }
  /** An image was linked to a record. */
  | { kind: 'image'; dbid: number; key: string; category: ImageCategory }
  /** Records were deleted; the current track may be an older one now. */
  | { kind: 'deleted' };

export interface StoreEvents {
  change: [StoreChange];
  /** The connection was lost: changes may have been missed until 'reconnected'. */
  disconnected: [];
  /** The connection is back: the caller catches up (current track, records since its last seen dbid). */
  reconnected: [];
}

/** The next moment (ms since the epoch) a request to a rate-limited service may start, shared by every instance. */
export interface RequestSlots {
  /** Reserves the next slot `intervalMs` after the previous one and returns when it starts. */
  reserve(service: string, intervalMs: number): Promise<number>;
}

export interface Store {
  readonly backend: 'sqlite' | 'postgres';
  readonly tracks: TrackStore;
  readonly images: ImageStore;
  readonly lookupCache: LookupCacheStore;
  /** Shared request spacing; absent with SQLite, where one process's limiter is the whole story. */
  readonly requestSlots?: RequestSlots;
  /** Changes of other instances; never fires with SQLite (one process owns the file). */
  readonly events: EventEmitter<StoreEvents>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** `images.maxTotalBytes`: the LRU budget of the image store. */
  maxImageBytes: number;
  /** Clock in milliseconds; tests pass their own. */
  now?: () => number;
  /** PostgreSQL: reports a lost or regained connection (logged by the caller). */
  onConnectionProblem?: (message: string) => void;
}

export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}
