import { errorMessage } from '../errors';
import type { ImageCollector } from '../images/collector';
import type { Logger } from '../log';
import { sleep } from '../signals';
import { isStorageUnavailable, storageFailureKind, type StorageHealth } from '../store/health';
import type { NowPlaying } from '../domain/current-track';
import { MAX_CHANNEL_VIEWS } from '../domain/channel-now-playing';
import type { Store, StoreChange } from '../store/store';
import type { TrackRecord } from '../domain/track';
import type { TrackStore } from '../store/tracks';

// Changes made through other instances sharing the database (docs/several-instances.md) reach
// this instance's /v1/last, WebSocket viewers and --follow clients: the store's notifications
// are turned into the same NowPlaying and image events a local submission produces.
//
// Never drop a change (docs/several-instances.md "Partitions and reconnects"): changes are
// applied one at a time, in the order announced, and one that cannot be read now (a refused
// connection, a full pool) is tried again with backoff until it is read. After a reconnect the
// instance catches up from the last record it read from the database, not from its own last
// write, so a write of its own in between does not hide what others stored meanwhile.

/** At most this many missed records are replayed in order after a reconnect; the current track always is. */
const CATCH_UP_LIMIT = 500;
/** Changes waiting past this are folded into one catch-up (which reads them all again anyway). */
const MAX_QUEUED_CHANGES = 1000;
/** Queued changes whose records are read at the same time (the pool runs them side by side). */
const READ_AHEAD = 8;
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2000;

export interface OtherInstancesDeps {
  store: Pick<Store, 'events'>;
  tracks: TrackStore;
  nowPlaying: NowPlaying;
  images: Pick<ImageCollector, 'announceLinked' | 'imagesOf'>;
  health: Pick<StorageHealth, 'lost' | 'restored'>;
  logger: Logger;
}

type Work = StoreChange | { kind: 'catch-up' };

/** Starts following; returns the function that stops. */
export function followOtherInstances(deps: OtherInstancesDeps): () => void {
  const position = new ReadPosition(deps.nowPlaying.current()?.dbid ?? 0);
  const onAnnounced = (record: { dbid: number }) => position.announced(record.dbid);
  deps.nowPlaying.on('track-changed', onAnnounced);

  const queue: Work[] = [];
  /** Records of the next few queued changes, read ahead (in parallel) and used in queue order. */
  const readsAhead = new Map<Work, Promise<TrackRecord | null>>();
  const readAhead = () => {
    for (const work of queue.slice(0, READ_AHEAD)) {
      if (work.kind !== 'track' || readsAhead.has(work)) continue;
      const reading = deps.tracks.byDbid(work.dbid);
      // Awaited in order by drain(), or dropped with a folded queue: never unhandled.
      reading.catch(() => undefined);
      readsAhead.set(work, reading);
    }
  };

  const apply = async (change: StoreChange) => {
    if (change.kind === 'track') {
      const record = await (readsAhead.get(change) ?? deps.tracks.byDbid(change.dbid));
      if (!record) return;
      position.read(record.dbid);
      if (deps.nowPlaying.current()?.dbid === record.dbid) deps.nowPlaying.update(record);
      else deps.nowPlaying.offer(record);
      return;
    }
    if (change.kind === 'image') {
      const current = deps.nowPlaying.current();
      if (current?.dbid === change.dbid) await deps.images.announceLinked(current, change.category, change.key);
      return;
    }
    // A deletion elsewhere: if it was the current track, the newest one left takes its place.
    if (deps.nowPlaying.current()?.dbid === change.dbid) deps.nowPlaying.retract(change.dbid, await deps.tracks.current());
  };

  const stopping = new AbortController();
  let running = false;

  /** Applies the queued work in order; what fails is tried again, with backoff, until it succeeds. */
  const drain = async () => {
    running = true;
    let delayMs = RETRY_FIRST_MS;
    let failing = false;
    while (queue.length > 0 && !stopping.signal.aborted) {
      const work = queue[0];
      readAhead();
      try {
        if (work.kind === 'catch-up') await catchUp(deps, position);
        else await apply(work);
        readsAhead.delete(work);
        queue.shift();
        delayMs = RETRY_FIRST_MS;
        // The database answers again: whatever failed before is behind us.
        if (failing || work.kind === 'catch-up') deps.health.restored();
        failing = false;
      } catch (error) {
        if (!isStorageUnavailable(error) && storageFailureKind(error) === undefined) {
          // Not the database being away: trying again would fail the same way.
          deps.logger.error(`change from another instance not applied: ${errorMessage(error)}`);
          readsAhead.delete(work);
          queue.shift();
          continue;
        }
        if (!failing) deps.logger.warn(`change from another instance not read yet (trying again): ${errorMessage(error)}`);
        failing = true;
        // Read again on the next try, with whatever was read ahead after it.
        readsAhead.clear();
        await sleep(delayMs, stopping.signal).catch(() => undefined);
        delayMs = Math.min(delayMs * 2, RETRY_MAX_MS);
      }
    }
    running = false;
  };

  const enqueue = (work: Work) => {
    if (queue.length >= MAX_QUEUED_CHANGES) {
      // A catch-up reads every record since the last one read, and the current track's images.
      queue.length = 1;
      readsAhead.clear();
      queue.push({ kind: 'catch-up' });
    } else if (work.kind !== 'catch-up' || queue.at(-1)?.kind !== 'catch-up') {
      queue.push(work);
    }
    if (!running) void drain();
  };

  const onChange = (change: StoreChange) => enqueue(change);
  const onDisconnected = () => deps.health.lost();
  const onReconnected = () => enqueue({ kind: 'catch-up' });
  deps.store.events.on('change', onChange);
  deps.store.events.on('disconnected', onDisconnected);
  deps.store.events.on('reconnected', onReconnected);
  return () => {
    stopping.abort();
    deps.nowPlaying.off('track-changed', onAnnounced);
    deps.store.events.off('change', onChange);
    deps.store.events.off('disconnected', onDisconnected);
    deps.store.events.off('reconnected', onReconnected);
  };
}

/** Where a follower stands: the newest record it read, and newer ones every viewer already saw. */
class ReadPosition {
  /** Records every viewer was already told about, newer than `lastRead`: a catch-up skips them. */
  private readonly seen = new Set<number>();

  /** `lastRead`: the newest record this follower read from the database (changes and catch-ups; never a local write). */
  constructor(public lastRead: number) {}

  announced(dbid: number): void {
    if (dbid > this.lastRead) this.seen.add(dbid);
  }

  wasAnnounced(dbid: number): boolean {
    return this.seen.has(dbid);
  }

  read(dbid: number): void {
    this.lastRead = Math.max(this.lastRead, dbid);
    for (const seen of this.seen) if (seen <= this.lastRead) this.seen.delete(seen);
  }
}

/** Replays the records stored since the last one read, then brings the current track and its images up to date. */
async function catchUp(deps: OtherInstancesDeps, position: ReadPosition): Promise<void> {
  const before = deps.nowPlaying.current()?.dbid;
  for (const record of await deps.tracks.since(position.lastRead, CATCH_UP_LIMIT)) {
    const known = position.wasAnnounced(record.dbid);
    position.read(record.dbid);
    if (!known) deps.nowPlaying.offer(record);
  }
  // Each channel's newest too: another channel's record may commit after a higher dbid was read.
  for (const record of await deps.tracks.currentPerChannel(MAX_CHANNEL_VIEWS)) deps.nowPlaying.offer(record);
  const current = await deps.tracks.current();
  if (!current) return;
  const shown = deps.nowPlaying.current();
  if (shown?.dbid !== current.dbid) deps.nowPlaying.offer(current);
  // Its metadata may have changed meanwhile (a cover that arrived after the response).
  else if (JSON.stringify(shown.metadata) !== JSON.stringify(current.metadata)) deps.nowPlaying.update(current);
  // Images linked while this instance was not listening: announced for the track on screen.
  if (current.dbid !== before) {
    for (const image of await deps.images.imagesOf(current)) await deps.images.announceLinked(current, image.category, image.key);
  }
}
