import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { TRANSPARENT_PNG_BASE64 } from '../../domain/image';
import type { ImageCategory, TrackRecord } from '../../domain/track';
import type { CurrentImageSet, CurrentImages } from '../current-images';
import { throttledLog, type Logger } from '../../log';
import type { NowPlaying } from '../../domain/current-track';
import type { QueueBudget } from '../queue-budget';
import { createFanOut } from '../fan-out';
import { budgetedQueuedBytes } from './budgeted-queue';
import { startHeartbeat } from './heartbeat';
import { Outbox } from './outbox';
import { CLOSE_GOING_AWAY, acceptUpgrade, closeServer } from './socket-server';
import { base64FieldFragments, type ImageLookup } from './requests';

// /wsstream (docs/decisions.md "/wsstream"): the socket What's Now Playing's stock overlay templates
// and its browser client library read the track from. No auth; client messages are ignored.
// On connect (when a track has played) and on every change of the current track: one frame with
// the /v1/last fields without `dbid`, plus `coverimagebase64`, `artistthumbnailbase64`,
// `artistbannerbase64`, `artistlogobase64` and `artistfanartbase64`: each image's bytes, or a
// 1x1 transparent PNG when there is none, as What's Now Playing sends. An artist image that
// arrives later (enrichment runs on after the response) sends the frame again. At shutdown: `{"last": true}`,
// then close with 1001. A reader that falls behind gets only the newest track once it catches up:
// at most one frame is under way per socket, its images read from the store piece by piece.

export const WSSTREAM_PATH = '/wsstream';
const MAX_INBOUND_BYTES = 4 * 1024;

export interface WsStreamOptions {
  nowPlaying: NowPlaying;
  images: Pick<ImageLookup, 'slice'>;
  /** The current track's image of each kind. */
  current: Pick<CurrentImages, 'of' | 'on' | 'off'>;
  logger: Logger;
  pingIntervalMs?: number;
  /** limits.maxQueuedBytes, shared with every other reader of the process. */
  budget: QueueBudget;
}

export interface WsStream {
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Sends `{"last": true}` to every socket and closes it with 1001. */
  close(): Promise<void>;
}

interface Reader {
  outbox: Outbox;
  /** A frame is being sent; `stale` says the track changed meanwhile. */
  sending: boolean;
  stale: boolean;
}

export function createWsStream(options: WsStreamOptions): WsStream {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_INBOUND_BYTES, perMessageDeflate: false });
  // A client's protocol errors are its own: one line a minute with a count, not one per frame (docs/security.md "Logs").
  const reportProtocolError = throttledLog((message) => options.logger.warn(message));
  const readers = new Map<WebSocket, Reader>();
  const heartbeat = startHeartbeat(wss, options.pingIntervalMs ?? 30_000);

  /** The frame for the track current when it is this reader's turn (never an outdated one). */
  const frameNow = async (): Promise<string | AsyncIterable<string>> => {
    const record = options.nowPlaying.current();
    if (!record) return '{}';
    return wsStreamFrame(record, await options.current.of(record), options.images);
  };

  const send = (reader: Reader) => {
    if (reader.sending) {
      reader.stale = true;
      return;
    }
    reader.sending = true;
    reader.stale = false;
    reader.outbox.reply(frameNow);
  };

  // After the current turn, in slices (fan-out.ts); each reader gets the track current at its turn.
  const fanOut = createFanOut<Reader>();
  const onChange = () => fanOut.send(readers.values(), send);
  options.nowPlaying.on('track-changed', onChange);
  // A cover that arrives after the response changes the frame (its coverimagebase64) too.
  options.nowPlaying.on('track-updated', onChange);
  options.current.on('artist-image', onChange);

  wss.on('connection', (socket) => {
    heartbeat.watch(socket);
    const reader: Reader = {
      sending: false,
      stale: false,
      // Every frame here goes out as a reply (produced when it is the reader's turn); none is pushed.
      outbox: new Outbox(socket, {
        queued: budgetedQueuedBytes(0, options.budget),
        onReplySent: () => {
          reader.sending = false;
          if (reader.stale) send(reader);
        },
        onTooSlow: () => undefined,
        onReplyFailed: (error) => options.logger.error(`wsstream: a frame failed: ${String(error)}`),
      }),
    };
    readers.set(socket, reader);
    socket.on('error', (error) => reportProtocolError('protocol', `wsstream: ${error.message}`));
    socket.on('close', () => readers.delete(socket));
    if (options.nowPlaying.current()) send(reader);
  });

  return {
    handleUpgrade(request, socket, head) {
      acceptUpgrade(wss, request, socket, head);
    },
    close() {
      heartbeat.stop();
      options.nowPlaying.off('track-changed', onChange);
      options.nowPlaying.off('track-updated', onChange);
      options.current.off('artist-image', onChange);
      fanOut.clear();
      for (const reader of readers.values()) reader.outbox.finish(JSON.stringify({ last: true }), CLOSE_GOING_AWAY, 'server shutting down');
      // A reader stuck in the middle of a frame never gets `last`; it is cut after a moment.
      return closeServer(wss);
    },
  };
}

/** The frame's image keys, What's Now Playing's names (its `<kind>raw` blobs, base64 as `<kind>base64`). */
const FRAME_IMAGE_FIELDS: readonly (readonly [ImageCategory, string])[] = [
  ['cover', 'coverimagebase64'],
  ['thumbnail', 'artistthumbnailbase64'],
  ['banner', 'artistbannerbase64'],
  ['logo', 'artistlogobase64'],
  ['fanart', 'artistfanartbase64'],
];

/** `{...the /v1/last fields without dbid, "coverimagebase64": "...", "artist...base64": "..."}`, the images read lazily. */
function wsStreamFrame(record: TrackRecord, images: CurrentImageSet, store: Pick<ImageLookup, 'slice'>): string | AsyncIterable<string> {
  const head: Record<string, unknown> = { ...record.metadata };
  const stored = [];
  for (const [category, field] of FRAME_IMAGE_FIELDS) {
    const image = images[category];
    if (image) stored.push({ field, size: image.size, read: (offset: number, length: number) => store.slice(image.key, offset, length) });
    else head[field] = TRANSPARENT_PNG_BASE64;
  }
  if (stored.length === 0) return JSON.stringify(head);
  return base64FieldFragments(head, stored);
}
