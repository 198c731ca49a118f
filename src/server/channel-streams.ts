import type { NowPlaying } from '../domain/current-track';
import type { Logger } from '../log';
import { VERSION } from '../version';
import { channelViews, PerView, type ChannelViews } from './streams/channel-views';
import type { StreamPorts } from './ports';
import { createEventStream, type EventStream } from './streams/sse/event-stream';
import { createImageHub, type ImageHub } from './streams/ws/hub';
import { coverWaiter } from './streams/ws/requests';
import { createWsStream } from './streams/ws/wsstream';

// The streams that show "now" (/v1/images/ws, /wsstream, /wsartistfanartstream, GET /v1/events),
// one set per channel view (docs/channels.md "Now playing per channel"), each built on its first
// reader. The global view's event stream is the one the song requests announce on (ports.events);
// a channel's event stream replays only that channel's records.

/** The WebSocket settings of ServerOptions (start.ts). */
interface ServerOptions {
  ws?: { pingIntervalMs?: number; maxBufferedBytes?: number; subscribeWindowMs?: number; fanartEvery?: (tick: () => void, ms: number) => () => void };
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

export function createChannelStreams(ports: StreamPorts, options: ServerOptions, logger: Logger): ChannelStreams {
  const { nowPlaying, tracks } = ports;
  const views = channelViews(nowPlaying, ports.channels);
  const sets = new PerView<Streams>((view) => {
    const channel = nowPlaying.nameOf(view);
    const events =
      view === nowPlaying || channel === undefined
        ? ports.events
        : createEventStream({
            nowPlaying: view,
            tracks: {
              since: (after, limit) => tracks.since(after, limit, channel),
              version: () => tracks.version(),
              // Past the replay budget: the newest of the channel's among the newest records.
              history: async (query) => {
                const page = await tracks.history(query);
                return { ...page, records: page.records.filter((record) => record.play?.channel === channel) };
              },
            },
            budget: ports.budget,
            pool: ports.pool,
            logger,
          });
    return { hub: hub(ports, options, logger, view), ...wsStreams(ports, options, logger, view), events };
  });
  // A song request is news on every channel's stream (docs/song-requests.md).
  const announce = (event: string) => (request: object) => {
    for (const set of sets.all()) if (set.events !== ports.events) set.events.announce(event, request);
  };
  ports.songRequests.on('added', announce('request.added'));
  ports.songRequests.on('removed', announce('request.removed'));
  const byDefault = sets.get(views.byDefault);
  return {
    ...byDefault,
    views,
    of: (given) => sets.get(views.choose(given, true)),
    async close() {
      const all = sets.all();
      ports.events.close();
      for (const set of all) if (set.events !== ports.events) set.events.close();
      await Promise.all(all.flatMap((set) => [set.hub.close(), set.wsStream.close(), set.fanartStream.close()]));
    },
  };
}

function hub(ports: StreamPorts, options: ServerOptions, logger: Logger, view: NowPlaying): ImageHub {
  const { imageStore, images } = ports;
  return createImageHub({
    nowPlaying: view,
    logger,
    version: VERSION,
    budget: ports.budget,
    images: {
      imagesOf: (record) => images.imagesOf(record),
      on: (event, listener) => images.on(event, listener),
      off: (event, listener) => images.off(event, listener),
      find: (query) => imageStore.find(query),
      meta: (key) => imageStore.meta(key),
      slice: (key, offset, length) => imageStore.slice(key, offset, length),
    },
    ...(ports.coversInFlight ? { awaitCover: coverWaiter(ports.coversInFlight, ports.enrichmentDeadlineSeconds * 1000) } : {}),
    ...options.ws,
  });
}

function wsStreams(ports: StreamPorts, options: ServerOptions, logger: Logger, view: NowPlaying): Pick<Streams, 'wsStream' | 'fanartStream'> {
  const { imageStore, wsstream } = ports;
  const common = {
    nowPlaying: view,
    logger,
    images: { slice: (key: string, offset: number, length: number) => imageStore.slice(key, offset, length) },
    current: ports.current,
    budget: ports.budget,
    completeByDefault: wsstream.complete,
    settleDeadlineMs: wsstream.completeWaitSeconds * 1000,
    downloads: ports.images,
    coverForNoThumbs: wsstream.coverForNoThumbs,
    ...(options.ws?.pingIntervalMs === undefined ? {} : { pingIntervalMs: options.ws.pingIntervalMs }),
  };
  return {
    wsStream: createWsStream(common),
    fanartStream: createWsStream({
      ...common,
      fanart: {
        intervalMs: wsstream.fanartSeconds * 1000,
        find: (query) => imageStore.find(query),
        ...(options.ws?.fanartEvery ? { every: options.ws.fanartEvery } : {}),
      },
    }),
  };
}
