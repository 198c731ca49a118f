import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { TRANSPARENT_PNG_BASE64 } from '../../../domain/image';
import { fieldText, type ImageCategory, type TrackRecord } from '../../../domain/track';
import { nameKey } from '../../../images/names';
import { withCoverForNoThumb, type CurrentImageSet, type CurrentImages } from '../../read-models/current-images';
import { WNP_SAMPLE_TRACK } from './wnp-sample';
import { throttledLog, type Logger } from '../../../log';
import type { NowPlaying } from '../../../domain/current-track';
import type { QueueBudget } from '../../guards/queue-budget';
import { createFanOut } from '../fan-out';
import { budgetedQueuedBytes } from './budgeted-queue';
import { startHeartbeat } from './heartbeat';
import { Outbox } from './outbox';
import { CLOSE_GOING_AWAY, acceptUpgrade, closeServer } from './socket-server';
import { base64FieldFragments, type ImageLookup } from './requests';

// /wsstream (docs/decisions.md "/wsstream"): the socket What's Now Playing's stock overlay templates
// and its browser client library read the track from. No auth; client messages are ignored.
// A frame carries the /v1/last fields without `dbid`, plus `coverimagebase64`, `artistthumbnailbase64`,
// `artistbannerbase64`, `artistlogobase64` and `artistfanartbase64`: each image's bytes, or a
// 1x1 transparent PNG when there is none, as What's Now Playing sends. At shutdown: `{"last": true}`,
// then close with 1001. A reader that falls behind gets only the newest track once it catches up:
// at most one frame is under way per socket, its images read from the store piece by piece; a
// frame the reader already has (the same record and images) is not sent again.
// By default (`wsstream.complete`) a reader gets one frame per change, as What's Now Playing's own
// server does: once the new track's enrichment has ended here and its images have downloaded, or
// once `wsstream.completeWaitSeconds` has passed, whichever is first; the previous frame stays on
// screen until then; what arrives after that is sent as it comes (docs/whats-now-playing.md "One
// frame per change"). `?complete=0` asks for every update at once (title first).
// `?preview` (WNP's template editor) gets WNP's sample track while nothing plays; `?sample` gets it always.

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
  /** `wsstream.complete`: every reader reads one frame per change unless it asks `?complete=0`. */
  completeByDefault?: boolean;
  /** `wsstream.completeWaitSeconds` in ms: how long a complete reader waits for a track's images. */
  settleDeadlineMs?: number;
  /** The image downloads under way per record (the collector), so a complete frame waits for them. */
  downloads?: {
    downloading(dbid: number): boolean;
    on(event: 'images-idle', listener: (dbid: number) => void): unknown;
    off(event: 'images-idle', listener: (dbid: number) => void): unknown;
  };
  /** `wsstream.coverForNoThumbs`: the cover stands in for a missing artist thumbnail. */
  coverForNoThumbs?: boolean;
  /** The clock a record's age is read by (a record older than the wait is shown at once). */
  now?: () => number;
  /**
   * /wsartistfanartstream: every `intervalMs` (and on every change) the frame again, its
   * `artistfanartbase64` a random fanart of the artist, else the cover, else transparent.
   */
  fanart?: {
    intervalMs: number;
    find: ImageLookup['find'];
    pick?: (count: number) => number;
    /** The repeating timer (setInterval by default); answers its cancel. */
    every?: (tick: () => void, ms: number) => () => void;
  };
}

export interface WsStream {
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Sends `{"last": true}` to every socket and closes it with 1001. */
  close(): Promise<void>;
}

interface Reader {
  outbox: Outbox;
  /** One frame per change, when the track's images are known (?complete=1, the default). */
  complete: boolean;
  /** `?preview` / `?sample`: What's Now Playing's sample track while nothing plays / always. */
  sample: 'no' | 'preview' | 'always';
  /** What the last frame showed (record and image keys): the same frame is not sent twice. */
  shown: string;
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

  /** The frame for the track current when it is this reader's turn (never an outdated one); null: the reader has it. */
  const frameNow = async (reader: Reader, tick: boolean): Promise<string | AsyncIterable<string> | null> => {
    const record = reader.sample === 'always' ? null : options.nowPlaying.current();
    if (!record || (reader.sample === 'preview' && fieldText(record.metadata, 'title') === undefined)) {
      if (reader.sample === 'no') return '{}';
      return sampleFrame(reader);
    }
    const images = withCoverForNoThumb(await options.current.of(record), options.coverForNoThumbs ?? true);
    const shown = options.fanart ? await withFanartPick(record, images, options.fanart) : images;
    const signature = frameSignature(record, shown);
    // The slideshow's tick sends its frame again on purpose (a new fanart pick, or the same one).
    if (!tick && signature === reader.shown) return null;
    reader.shown = signature;
    return wsStreamFrame(record, shown, options.images);
  };

  const send = (reader: Reader, tick = false) => {
    if (reader.sending) {
      reader.stale = true;
      return;
    }
    reader.sending = true;
    reader.stale = false;
    reader.outbox.reply(() => frameNow(reader, tick));
  };

  // After the current turn, in slices (fan-out.ts); each reader gets the track current at its turn.
  const fanOut = createFanOut<Reader>();
  // A complete reader waits while the current track settles, then takes updates as they come.
  const everyUpdate = () =>
    fanOut.send(
      [...readers.values()].filter((reader) => !reader.complete || !settling.pending()),
      (reader) => send(reader),
    );
  // Nothing current (the only track was taken back): nothing to send, as for every reader.
  const settled = () => {
    if (options.nowPlaying.current())
      fanOut.send(
        [...readers.values()].filter((reader) => reader.complete),
        (reader) => send(reader),
      );
  };
  const settling = createSettling({
    nowPlaying: options.nowPlaying,
    deadlineMs: options.settleDeadlineMs ?? DEFAULT_SETTLE_MS,
    downloads: options.downloads,
    now: options.now ?? Date.now,
    release: settled,
  });
  options.nowPlaying.on('track-changed', everyUpdate);
  // A cover that arrives after the response changes the frame (its coverimagebase64) too.
  options.nowPlaying.on('track-updated', everyUpdate);
  options.current.on('artist-image', everyUpdate);

  wss.on('connection', (socket, request: IncomingMessage) => {
    heartbeat.watch(socket);
    const reader: Reader = {
      complete: wantsComplete(request.url, options.completeByDefault ?? true),
      sample: wantsSample(request.url),
      shown: '',
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
    // The slideshow holds still while a complete reader waits for the new track's images.
    const tick = () => options.nowPlaying.current() && !(reader.complete && settling.pending()) && send(reader, true);
    const stopSlideshow = options.fanart ? (options.fanart.every ?? everyInterval)(tick, options.fanart.intervalMs) : undefined;
    socket.on('close', () => {
      stopSlideshow?.();
      readers.delete(socket);
    });
    // A complete reader that connects while the current track is settling gets it when it has.
    if ((options.nowPlaying.current() || reader.sample !== 'no') && !(reader.complete && settling.pending())) send(reader);
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

/** Without a configured wait, a complete reader waits this long for a track's images. */
const DEFAULT_SETTLE_MS = 4_000;

/** `?complete=1` (or `true`) asks for one frame per change; `?complete=0` (or `false`) for every update. */
export function wantsComplete(url: string | undefined, byDefault: boolean): boolean {
  const value = queryOf(url).get('complete');
  if (value === '1' || value === 'true') return true;
  if (value === '0' || value === 'false') return false;
  return byDefault;
}

/** What's Now Playing reads the mere presence of `preview` and `sample` (processes/webserver.py websocket_streamer). */
export function wantsSample(url: string | undefined): Reader['sample'] {
  const query = queryOf(url);
  if (query.has('sample')) return 'always';
  return query.has('preview') ? 'preview' : 'no';
}

function queryOf(url: string | undefined): URLSearchParams {
  return new URLSearchParams((url ?? '').split('?')[1] ?? '');
}

interface SettlingDeps {
  nowPlaying: NowPlaying;
  deadlineMs: number;
  downloads: WsStreamOptions['downloads'];
  now: () => number;
  release: () => void;
}

/**
 * When the current track's frame is complete: its enrichment ended here ('track-settled') and its
 * image downloads have ended, or the wait passed (a track of another instance, which settles
 * there), or it was taken back. A record older than the wait (a track current again after a
 * delete) is complete at once. `release` runs once per track.
 */
function createSettling(deps: SettlingDeps): { pending(): boolean; stop(): void } {
  const { nowPlaying, deadlineMs, downloads } = deps;
  let waiting: { dbid: number; timer: NodeJS.Timeout; settled: boolean } | null = null;
  const done = () => {
    if (!waiting) return;
    clearTimeout(waiting.timer);
    waiting = null;
    deps.release();
  };
  const onChanged = (record: TrackRecord) => {
    if (waiting) clearTimeout(waiting.timer);
    waiting = null;
    if (deps.now() - Date.parse(record.receivedAt) >= deadlineMs) return;
    waiting = { dbid: record.dbid, timer: setTimeout(done, deadlineMs), settled: false };
    waiting.timer.unref();
  };
  const onSettled = (record: TrackRecord) => {
    if (waiting?.dbid !== record.dbid) return;
    waiting.settled = true;
    if (!downloads?.downloading(record.dbid)) done();
  };
  const onImagesIdle = (dbid: number) => {
    if (waiting?.dbid === dbid && waiting.settled) done();
  };
  nowPlaying.on('track-changed', onChanged);
  nowPlaying.on('track-settled', onSettled);
  nowPlaying.on('track-retracted', done);
  downloads?.on('images-idle', onImagesIdle);
  return {
    pending: () => waiting !== null,
    stop() {
      if (waiting) clearTimeout(waiting.timer);
      waiting = null;
      nowPlaying.off('track-changed', onChanged);
      nowPlaying.off('track-settled', onSettled);
      nowPlaying.off('track-retracted', done);
      downloads?.off('images-idle', onImagesIdle);
    },
  };
}

/** The record and the image keys a frame shows: two frames with the same signature are the same bytes. */
function frameSignature(record: TrackRecord, images: CurrentImageSet): string {
  return JSON.stringify([record.dbid, record.metadata, FRAME_IMAGE_FIELDS.map(([category]) => images[category]?.key ?? '')]);
}

/** What's Now Playing's sample track (preview/sampledata.py `_BASE_METADATA`), images transparent. */
function sampleFrame(reader: Reader): string | null {
  if (reader.shown === SAMPLE_SIGNATURE) return null;
  reader.shown = SAMPLE_SIGNATURE;
  const head: Record<string, unknown> = { ...WNP_SAMPLE_TRACK };
  for (const [, field] of FRAME_IMAGE_FIELDS) head[field] = TRANSPARENT_PNG_BASE64;
  return JSON.stringify(head);
}

const SAMPLE_SIGNATURE = 'sample';

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

/** The slideshow's real timer. */
function everyInterval(tick: () => void, ms: number): () => void {
  const timer = setInterval(tick, ms);
  return () => clearInterval(timer);
}
