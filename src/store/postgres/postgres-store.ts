import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { StartupError, errorMessage } from '../../errors';
import type { Store, StoreEvents, StoreOptions } from '../store';
import { openPostgresPool, withoutPassword, type PostgresContext } from './connection';
import { createPostgresImageStore } from './images';
import { createPostgresLookupCache } from './lookup-cache';
import { listenForChanges } from './notifications';
import { createPostgresOutputStore } from './outputs';
import { createPostgresReportSnapshots } from './report-snapshot';
import { createPostgresPlayLogStore } from './plays';
import { createPostgresIdempotencyStore } from './idempotency';
import { createPostgresSongRequestStore } from './song-requests';
import { createPostgresLibraryStore } from './library';
import { probePostgresWrite } from './probe-write';
import { createPostgresRequestSlots } from './request-slots';
import { createPostgresTrackStore } from './tracks';

// The PostgreSQL store (docs/several-instances.md): every instance pointing at one database shares records,
// images, the lookup cache and the request spacing, and hears the others' changes through
// LISTEN/NOTIFY on one channel. Queries run on a small pool (connection.ts); a dedicated
// connection listens and reconnects by itself with backoff (notifications.ts). The parts:
// tracks.ts, images.ts, lookup-cache.ts, request-slots.ts, outputs.ts.

export async function openPostgresStore(url: string, options: StoreOptions): Promise<Store> {
  const instanceId = randomUUID();
  // Through a transaction-mode pooler, LISTEN and session state need a direct connection (database.listenUrl).
  const directUrl = options.listenUrl || undefined;
  const pool = await openPostgresPool(url, options.onConnectionProblem, options.poolSize, directUrl, options.onMigrated);
  const context: PostgresContext = { pool, instanceId, now: options.now ?? Date.now };
  const plays = createPostgresPlayLogStore(context);
  const tracks = createPostgresTrackStore(context, plays);

  const events = new EventEmitter<StoreEvents>();
  events.setMaxListeners(0);
  // Another instance's change, or changes missed while disconnected, make cached pages stale.
  events.on('change', tracks.markStale);
  events.on('reconnected', () => tracks.markStale());
  const listener = listenForChanges({
    url: directUrl ?? url,
    instanceId,
    events,
    pool,
    report: options.onConnectionProblem,
    ...(options.liveness ? { liveness: options.liveness } : {}),
  });
  try {
    await listener.ready;
  } catch (error) {
    await listener.close();
    await pool.end().catch(() => undefined);
    throw new StartupError(`cannot listen on database ${withoutPassword(directUrl ?? url)}: ${errorMessage(error)}`);
  }
  let closing: Promise<void> | undefined;
  const schemaVersion = await readSchemaVersion(context).catch(async (error: unknown) => {
    await listener.close();
    await pool.end().catch(() => undefined);
    throw new StartupError(`cannot use database ${withoutPassword(url)}: ${errorMessage(error)}`);
  });

  return {
    tracks: tracks.store,
    plays: { ...plays, ...createPostgresReportSnapshots(pool) },
    images: createPostgresImageStore(context, options.maxImageBytes),
    lookupCache: createPostgresLookupCache(context),
    outputs: createPostgresOutputStore(pool),
    idempotency: createPostgresIdempotencyStore(pool, options.idempotencyBounds),
    songRequests: createPostgresSongRequestStore(pool),
    library: createPostgresLibraryStore(pool, options.now),
    requestSlots: createPostgresRequestSlots(pool),
    events,
    notifications: () => listener.notifications(),
    probeWrite: () => probePostgresWrite(pool),
    schema: { backend: 'postgresql', version: schemaVersion },
    close() {
      closing ??= listener.close().then(() => pool.end());
      return closing;
    },
  };
}

/** The last migration recorded in `svc_schema` (migrations.ts), after the start's own. */
async function readSchemaVersion(context: PostgresContext): Promise<number> {
  const result = await context.pool.query<{ version: number | null }>('SELECT max(version) AS version FROM svc_schema');
  return result.rows[0]?.version ?? 0;
}
