import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { TRANSPARENT_PNG_BASE64 } from '../../domain/image';
import { fieldText, type ImageCategory, type TrackRecord } from '../../domain/track';
import { nameKey } from '../../images/names';
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
// A reader that asked `?complete=1` (or every reader, with `wsstream.complete`) gets one frame per
// track instead, once the track has settled or at the enrichment deadline (docs/whats-now-playing.md
// "One frame per track"): for clients that read the first frame of a track and ignore the rest.

export const WSSTREAM_PATH = '/wsstream';
/** What's Now Playing's fanart slideshow socket: the same frames, a new artist fanart every few seconds. */
export const FANART_STREAM_PATH = '/wsartistfanartstream';
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
  /** `wsstream.complete`: every reader reads one frame per track unless it asks `?complete=0`. */
  completeByDefault?: boolean;
  /** How long a complete reader waits for a track to settle (the enrichment deadline). */
  settleDeadlineMs?: number;
  /**
   * /wsartistfanartstream: every `intervalMs` (and on every change) the frame again, its
   * `artistfanartbase64` a random fanart of the artist, else the cover, else transparent.
   */
  fanart?: { intervalMs: number; find: ImageLookup['find']; pick?: (count: number) => number };
}

export interface WsStream {
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Sends `{"last": true}` to every socket and closes it with 1001. */
  close(): Promise<void>;
}

interface Reader {
  outbox: Outbox;
  /** One frame per track, when it has settled (?complete=1). */
  complete: boolean;
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
    const images = await options.current.of(record);
    return wsStreamFrame(record, options.fanart ? await withFanartPick(record, images, options.fanart) : images, options.images);
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
  const everyUpdate = () =>
    fanOut.send(
      [...readers.values()].filter((reader) => !reader.complete),
      send,
    );
  // Nothing current (the only track was taken back): nothing to send, as for every reader.
  const settled = () => {
    if (options.nowPlaying.current())
      fanOut.send(
        [...readers.values()].filter((reader) => reader.complete),
        send,
      );
  };
  const settling = createSettling(options.nowPlaying, options.settleDeadlineMs ?? DEFAULT_SETTLE_MS, settled);
  options.nowPlaying.on('track-changed', everyUpdate);
  // A cover that arrives after the response changes the frame (its coverimagebase64) too.
  options.nowPlaying.on('track-updated', everyUpdate);
  options.current.on('artist-image', everyUpdate);

  wss.on('connection', (socket, request: IncomingMessage) => {
    heartbeat.watch(socket);
    const reader: Reader = {
      complete: wantsComplete(request.url, options.completeByDefault ?? false),
      sending: false,
      stale: false,
      // Every frame here goes out as a reply (produced when it is the reader's turn); none is pushed.
      outbox: new Outbox(socket, {
        wire: request.socket,
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
    const slideshow = options.fanart ? setInterval(() => options.nowPlaying.current() && send(reader), options.fanart.intervalMs) : undefined;
    socket.on('close', () => {
      clearInterval(slideshow);
      readers.delete(socket);
    });
    // A complete reader that connects while the current track is settling gets it when it has.
    if (options.nowPlaying.current() && !(reader.complete && settling.pending())) send(reader);
  });

  return {
    handleUpgrade(request, socket, head) {
      acceptUpgrade(wss, request, socket, head);
    },
    close() {
      heartbeat.stop();
      options.nowPlaying.off('track-changed', everyUpdate);
      options.nowPlaying.off('track-updated', everyUpdate);
      options.current.off('artist-image', everyUpdate);
      settling.stop();
      fanOut.clear();
      for (const reader of readers.values()) reader.outbox.finish(JSON.stringify({ last: true }), CLOSE_GOING_AWAY, 'server shutting down');
      // A reader stuck in the middle of a frame never gets `last`; it is cut after a moment.
      return closeServer(wss);
    },
  };
}

/** The artist's fanart to show now: a random one of those stored, else the track's own, else its cover. */
async function withFanartPick(record: TrackRecord, images: CurrentImageSet, fanart: NonNullable<WsStreamOptions['fanart']>): Promise<CurrentImageSet> {
  const artistKey = nameKey(fieldText(record.metadata, 'artist') ?? '');
  const all = artistKey === '' ? [] : await fanart.find({ category: 'fanart', artistKey });
  const pick = fanart.pick ?? ((count: number) => Math.floor(Math.random() * count));
  const chosen = all.length > 0 ? all[Math.min(all.length - 1, Math.max(0, pick(all.length)))] : undefined;
  const shown = chosen ?? images.fanart ?? images.cover;
  return shown ? { ...images, fanart: shown } : images;
}

/** Without a configured deadline, a complete reader waits this long for a track to settle. */
const DEFAULT_SETTLE_MS = 10_000;

/** `?complete=1` (or `true`) asks for one frame per track; `?complete=0` (or `false`) declines the default. */
export function wantsComplete(url: string | undefined, byDefault: boolean): boolean {
  const value = new URLSearchParams((url ?? '').split('?')[1] ?? '').get('complete');
  if (value === '1' || value === 'true') return true;
  if (value === '0' || value === 'false') return false;
  return byDefault;
}

/**
 * When the current track has settled: its enrichment ended here ('track-settled'), or the deadline
 * passed (a track of another instance, which settles there), or it was taken back. `release` runs
 * once per track.
 */
function createSettling(nowPlaying: NowPlaying, deadlineMs: number, release: () => void): { pending(): boolean; stop(): void } {
  let waiting: { dbid: number; timer: NodeJS.Timeout } | null = null;
  const done = () => {
    if (!waiting) return;
    clearTimeout(waiting.timer);
    waiting = null;
    release();
  };
  const onChanged = (record: TrackRecord) => {
    if (waiting) clearTimeout(waiting.timer);
    waiting = { dbid: record.dbid, timer: setTimeout(done, deadlineMs) };
    waiting.timer.unref();
  };
  const onSettled = (record: TrackRecord) => {
    if (waiting?.dbid === record.dbid) done();
  };
  nowPlaying.on('track-changed', onChanged);
  nowPlaying.on('track-settled', onSettled);
  nowPlaying.on('track-retracted', done);
  return {
    pending: () => waiting !== null,
    stop() {
      if (waiting) clearTimeout(waiting.timer);
      waiting = null;
      nowPlaying.off('track-changed', onChanged);
      nowPlaying.off('track-settled', onSettled);
      nowPlaying.off('track-retracted', done);
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
