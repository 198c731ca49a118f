import type { FrozenConfig } from '../config/schema';
import type { NowPlaying } from '../domain/current-track';
import { channelRules } from '../domain/channels';
import type { Logger } from '../log';
import { VERSION } from '../version';
import { channelViews, PerView, type ChannelViews } from './streams/channel-views';
import type { Storage, Work } from './parts';
import { createEventStream, type EventStream } from './streams/sse/event-stream';
import { createImageHub, type ImageHub } from './streams/ws/hub';
import { coverWaiter } from './streams/ws/requests';
import { createWsStream } from './streams/ws/wsstream';

// The streams that show "now" (/v1/images/ws, /wsstream, /wsartistfanartstream, GET /v1/events),
// one set per channel view (docs/channels.md "Now playing per channel"), each built on its first
// reader. The global view's event stream is the one the song requests announce on (work.events);
// a channel's event stream replays only that channel's records.

/** The WebSocket settings of ServerOptions (start.ts). */
interface ServerOptions {
  ws?: { pingIntervalMs?: number; maxBufferedBytes?: number; subscribeWindowMs?: number };
}

export interface Streams {
  hub: ImageHub;
  wsStream: ReturnType<typeof createWsStream>;
  /** /wsartistfanartstream: the wsstream frames with a changing artist fanart. */
  fanartStream: ReturnType<typeof createWsStream>;
  events: EventStream;
}

export interface ChannelStreams extends Streams {
  views: ChannelViews;
  /** The streams of a `?channel=` value (absent: the default's); throws the 400 of an undeclared channel. */
  of(given: string | string[] | undefined): Streams;
  close(): Promise<void>;
}

export function createChannelStreams(config: FrozenConfig, options: ServerOptions, storage: Storage, work: Work, logger: Logger): ChannelStreams {
  const { nowPlaying, tracks } = storage;
  const views = channelViews(nowPlaying, channelRules(config.channels));
  const sets = new PerView<Streams>((view) => {
    const channel = nowPlaying.nameOf(view);
    const events =
      view === nowPlaying || channel === undefined
        ? work.events
        : createEventStream({
            nowPlaying: view,
            tracks: {
              since: (after, limit) => tracks.since(after, limit, channel),
              // Past the replay budget: the newest of the channel's among the newest records.
              history: async (query) => {
                const page = await tracks.history(query);
                return { ...page, records: page.records.filter((record) => record.play?.channel === channel) };
              },
            },
            budget: work.queueBudget,
            pool: work.expensiveWork,
            logger,
          });
    return { hub: hub(options, storage, work, logger, view), ...wsStreams(config, options, storage, work, logger, view), events };
  });
  // A song request is news on every channel's stream (docs/song-requests.md).
  const announce = (event: string) => (request: object) => {
    for (const set of sets.all()) if (set.events !== work.events) set.events.announce(event, request);
  };
  work.songRequests.on('added', announce('request.added'));
  work.songRequests.on('removed', announce('request.removed'));
  const byDefault = sets.get(views.byDefault);
  return {
    ...byDefault,
    views,
    of: (given) => sets.get(views.choose(given, true)),
    async close() {
      const all = sets.all();
      work.events.close();
      for (const set of all) if (set.events !== work.events) set.events.close();
      await Promise.all(all.flatMap((set) => [set.hub.close(), set.wsStream.close(), set.fanartStream.close()]));
    },
  };
}

function hub(options: ServerOptions, storage: Storage, work: Work, logger: Logger, view: NowPlaying): ImageHub {
  const { imageStore } = storage;
  const { images } = work;
  return createImageHub({
    nowPlaying: view,
    logger,
    version: VERSION,
    budget: work.queueBudget,
    images: {
      imagesOf: (record) => images.imagesOf(record),
      on: (event, listener) => images.on(event, listener),
      off: (event, listener) => images.off(event, listener),
      find: (query) => imageStore.find(query),
      meta: (key) => imageStore.meta(key),
      slice: (key, offset, length) => imageStore.slice(key, offset, length),
    },
    ...(work.submitDeps.coversInFlight ? { awaitCover: coverWaiter(work.submitDeps.coversInFlight, work.submitDeps.enrichmentDeadlineSeconds * 1000) } : {}),
    ...options.ws,
  });
}

function wsStreams(
  config: FrozenConfig,
  options: ServerOptions,
  storage: Storage,
  work: Work,
  logger: Logger,
  view: NowPlaying,
): Pick<Streams, 'wsStream' | 'fanartStream'> {
  const { imageStore } = storage;
  const common = {
    nowPlaying: view,
    logger,
    images: { slice: (key: string, offset: number, length: number) => imageStore.slice(key, offset, length) },
    current: work.currentImages,
    budget: work.queueBudget,
    completeByDefault: config.wsstream.complete,
    settleDeadlineMs: config.wsstream.completeWaitSeconds * 1000,
    downloads: work.images,
    coverForNoThumbs: config.wsstream.coverForNoThumbs,
    ...(options.ws?.pingIntervalMs === undefined ? {} : { pingIntervalMs: options.ws.pingIntervalMs }),
  };
  return {
    wsStream: createWsStream(common),
    fanartStream: createWsStream({ ...common, fanart: { intervalMs: config.wsstream.fanartSeconds * 1000, find: (query) => imageStore.find(query) } }),
  };
}
