import { errorMessage } from '../errors';
import type { ImageCollector } from '../images/collector';
import type { Logger } from '../log';
import type { StorageHealth } from '../store/health';
import type { NowPlaying } from '../store/now-playing';
import type { Store, StoreChange } from '../store/store';
import type { TrackStore } from '../store/tracks';

// Changes made through other instances sharing the database (decisions.md "Several instances:
// PostgreSQL") reach this instance's /v1/last, WebSocket viewers and --follow clients: the
// store's notifications are turned into the same NowPlaying and image events a local
// submission produces. After a lost connection the instance catches up on what it missed.

/** At most this many missed records are replayed in order after a reconnect; the current track always is. */
const CATCH_UP_LIMIT = 500;

export interface OtherInstancesDeps {
  store: Pick<Store, 'events'>;
  tracks: TrackStore;
  nowPlaying: NowPlaying;
  images: Pick<ImageCollector, 'announceLinked' | 'imagesOf'>;
  health: Pick<StorageHealth, 'lost' | 'restored'>;
  logger: Logger;
}

/** Starts following; returns the function that stops. */
export function followOtherInstances(deps: OtherInstancesDeps): () => void {
  let lastSeenDbid = deps.nowPlaying.current()?.dbid ?? 0;
  const seen = (dbid: number) => {
    lastSeenDbid = Math.max(lastSeenDbid, dbid);
  };
  const onLocal = (record: { dbid: number }) => seen(record.dbid);
  deps.nowPlaying.on('track-changed', onLocal);

  const apply = async (change: StoreChange) => {
    if (change.kind === 'track') {
      const record = await deps.tracks.byDbid(change.dbid);
      if (!record) return;
      seen(record.dbid);
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

  const catchUp = async () => {
    const before = deps.nowPlaying.current()?.dbid;
    for (const record of await deps.tracks.since(lastSeenDbid, CATCH_UP_LIMIT)) {
      seen(record.dbid);
      deps.nowPlaying.offer(record);
    }
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
  };

  const onChange = (change: StoreChange) => {
    apply(change).catch((error: unknown) => deps.logger.warn(`change from another instance not applied: ${errorMessage(error)}`));
  };
  const onDisconnected = () => deps.health.lost();
  const onReconnected = () => {
    catchUp().then(
      () => deps.health.restored(),
      (error: unknown) => deps.logger.warn(`catching up after reconnecting failed: ${errorMessage(error)}`),
    );
  };
  deps.store.events.on('change', onChange);
  deps.store.events.on('disconnected', onDisconnected);
  deps.store.events.on('reconnected', onReconnected);
  return () => {
    deps.nowPlaying.off('track-changed', onLocal);
    deps.store.events.off('change', onChange);
    deps.store.events.off('disconnected', onDisconnected);
    deps.store.events.off('reconnected', onReconnected);
  };
}
