import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { TrackImage, TrackRecord } from '../../../domain/track';
import { throttledLog, type Logger } from '../../../log';
import type { NowPlaying } from '../../../domain/current-track';
import { errorFrame, imageFrame, trackFrame, type PushFrame } from './frames';
import { MAX_REQUESTS_IN_FLIGHT } from '../../guards/pipelining';
import type { QueueBudget } from '../../guards/queue-budget';
import { createFanOut } from '../fan-out';
import { budgetedQueuedBytes } from './budgeted-queue';
import { startHeartbeat } from './heartbeat';
import { Outbox } from './outbox';
import { prepareTextFrame } from './prepared-frame';
import { CLOSE_GOING_AWAY, acceptUpgrade, closeServer } from './socket-server';
import { answerMessage, replyText, subscriptionIn, type ImageLookup, type RequestContext } from './requests';

// /v1/images/ws (docs/decisions.md "/v1/images/ws"). A client that
// sends a message within SUBSCRIBE_WINDOW_MS of the handshake is a request/response client
// (What's Now Playing's image clients send `hello` at once and read each answer as the next
// frame): it gets answers only, unless it subscribes. Any other client, or one that sends
// `subscribe`, gets the push stream: the current track and its images, then every change.
// Each socket's frames go through its Outbox: pushes are serialized and framed once for all
// clients, the same bytes written to each, and bounded per reader (1013); replies are produced in
// order as the reader takes them.

export const IMAGES_WS_PATH = '/v1/images/ws';
/** Inbound messages larger than this are refused (the socket is closed with 1009). */
export const MAX_INBOUND_BYTES = 64 * 1024;
const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;
/** A first message within this time after the handshake makes a request/response client. */
const SUBSCRIBE_WINDOW_MS = 500;

/** The images side the hub needs: announcements, a track's stored images, lookups by name. */
export interface HubImages extends ImageLookup {
  imagesOf(record: TrackRecord): Promise<TrackImage[]>;
  on(event: 'image', listener: (image: TrackImage) => void): unknown;
  off(event: 'image', listener: (image: TrackImage) => void): unknown;
}

export interface HubOptions {
  nowPlaying: NowPlaying;
  images: HubImages;
  logger: Logger;
  version: string;
  pingIntervalMs?: number;
  /** Unsent bytes of pushed frames one client may have queued before it is dropped as too slow. */
  maxBufferedBytes?: number;
  /** Tests shorten the request/response window. */
  subscribeWindowMs?: number;
  /** limits.maxQueuedBytes, shared with every other reader of the process. */
  budget: QueueBudget;
  /** Waits for an album cover still being fetched before `get_images` answers (requests.ts). */
  awaitCover?: RequestContext['awaitCover'];
}

export interface ImageHub {
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every socket with 1001 (going away). */
  close(): Promise<void>;
}

interface Client {
  outbox: Outbox;
  /** Undecided until the first message or the end of the window. */
  mode: 'undecided' | 'requests' | 'push';
  window?: NodeJS.Timeout;
  inFlight: number;
}

export function createImageHub(options: HubOptions): ImageHub {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_INBOUND_BYTES, perMessageDeflate: false });
  // A client's protocol errors are its own: one line a minute with a count, not one per frame (docs/security.md "Logs").
  const reportProtocolError = throttledLog((message) => options.logger.warn(message));
  const clients = new Map<WebSocket, Client>();
  const pushes = createPushStream(options);
  const heartbeat = watchHeartbeat(wss, clients, options.pingIntervalMs ?? 30_000);

  // One listener of each kind for every socket (`this` is the socket), not three closures per
  // socket: docs/limits-and-load.md "What one client costs".
  function onSocketError(error: Error): void {
    reportProtocolError('protocol', `images ws: ${error.message}`);
  }
  function onSocketMessage(this: WebSocket, data: RawData, isBinary: boolean): void {
    const client = clients.get(this);
    if (client) onMessage(this, client, data, isBinary, options, pushes.subscribe);
  }
  function onSocketClose(this: WebSocket): void {
    const client = clients.get(this);
    if (!client) return;
    forgetWindow(client);
    pushes.forget(client);
    clients.delete(this);
  }

  wss.on('connection', (socket, request: IncomingMessage) => {
    heartbeat.watch(socket);
    const client = newClient(socket, request.socket, options);
    clients.set(socket, client);
    socket.on('error', onSocketError);
    socket.on('message', onSocketMessage);
    socket.on('close', onSocketClose);
    client.window = setTimeout(pushes.subscribe, options.subscribeWindowMs ?? SUBSCRIBE_WINDOW_MS, client);
  });

  return {
    handleUpgrade(request, socket, head) {
      acceptUpgrade(wss, request, socket, head);
    },
    close() {
      heartbeat.stop();
      for (const client of clients.values()) if (client.window) clearTimeout(client.window);
      pushes.stop();
      for (const socket of wss.clients) socket.close(CLOSE_GOING_AWAY, 'server shutting down');
      return closeServer(wss);
    },
  };
}

/** A socket's client state; its Outbox bounds what it has unsent and resumes reading as answers drain. */
function newClient(socket: WebSocket, wire: Duplex, options: HubOptions): Client {
  const client: Client = {
    mode: 'undecided',
    inFlight: 0,
    outbox: new Outbox(socket, {
      wire,
      queued: budgetedQueuedBytes(options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES, options.budget),
      onReplySent: () => {
        client.inFlight -= 1;
        if (client.inFlight < MAX_REQUESTS_IN_FLIGHT && socket.isPaused) socket.resume();
      },
      onTooSlow: (unsent) => options.logger.warn(`images ws: a client is too slow (${unsent} bytes unsent); closing it with 1013`),
      onReplyFailed: (error) => options.logger.error(`images ws: a reply failed: ${String(error)}`),
    }),
  };
  return client;
}

/**
 * The push stream: subscribers get the current track and its images, then every change. Frames
 * are serialized once for all of them.
 */
function createPushStream(options: HubOptions): { subscribe: (client: Client) => void; forget: (client: Client) => void; stop: () => void } {
  const subscribers = new Set<Client>();
  const fanOut = createFanOut<Client>();

  const broadcast = (frame: PushFrame) => {
    if (subscribers.size === 0) return;
    // Serialized and framed once, not once per client; written after the current turn, in slices (fan-out.ts).
    const data = prepareTextFrame(JSON.stringify(frame));
    fanOut.send(subscribers, (client) => client.outbox.push(data));
  };

  const safeImagesOf = async (record: TrackRecord): Promise<TrackImage[]> => {
    try {
      return await options.images.imagesOf(record);
    } catch (error) {
      options.logger.error(`images ws: cannot list the images of track ${record.dbid}: ${String(error)}`);
      return [];
    }
  };

  const subscribe = (client: Client) => {
    forgetWindow(client);
    if (client.mode === 'push') return;
    client.mode = 'push';
    subscribers.add(client);
    const current = options.nowPlaying.current();
    if (!current) return;
    client.outbox.push(prepareTextFrame(JSON.stringify(trackFrame(current))));
    void safeImagesOf(current).then((images) => {
      // The track may have changed while the images were read: they belong to the old one then.
      if (options.nowPlaying.current()?.dbid !== current.dbid) return;
      for (const image of images) client.outbox.push(prepareTextFrame(JSON.stringify(imageFrame(image))));
    });
  };

  // A change and an update of the current track are the same frame: an update repeats the dbid
  // with more fields filled (docs/title-first.md).
  const onTrackUpdated = (record: TrackRecord) => broadcast(trackFrame(record));
  // A new track may show images from its first moment (the store knew them: docs/decisions.md
  // "Complete frames"): they follow its track frame at once.
  const onTrackChanged = (record: TrackRecord) => {
    broadcast(trackFrame(record));
    if (subscribers.size === 0) return;
    void safeImagesOf(record).then((images) => {
      if (options.nowPlaying.current()?.dbid !== record.dbid) return;
      for (const image of images) broadcast(imageFrame(image));
    });
  };
  const onImage = (image: TrackImage) => broadcast(imageFrame(image));
  options.nowPlaying.on('track-changed', onTrackChanged);
  options.nowPlaying.on('track-updated', onTrackUpdated);
  options.images.on('image', onImage);

  return {
    subscribe,
    forget: (client) => subscribers.delete(client),
    stop() {
      options.nowPlaying.off('track-changed', onTrackChanged);
      options.nowPlaying.off('track-updated', onTrackUpdated);
      options.images.off('image', onImage);
      fanOut.clear();
    },
  };
}

/** A message: a subscription, or a request answered in order through the client's Outbox. */
function onMessage(socket: WebSocket, client: Client, data: RawData, isBinary: boolean, options: HubOptions, subscribe: (client: Client) => void): void {
  const text = isBinary ? null : rawText(data);
  const subscription = text === null ? null : subscriptionIn(text);
  if (subscription === 'subscribe-only') {
    subscribe(client);
    return;
  }
  if (client.mode === 'undecided') {
    forgetWindow(client);
    client.mode = 'requests';
  }
  client.inFlight += 1;
  // Stop reading past the bound (the same 8 as HTTP pipelining); resumed as answers drain (Outbox onReplySent).
  if (client.inFlight >= MAX_REQUESTS_IN_FLIGHT) socket.pause();
  // No head-of-line (docs/streams.md "`/v1/images/ws`"): each answer is queued when it is ready, so a
  // get_images that waits for a cover never holds back the answers after it; each answer echoes
  // its request's type, data_type, category, artist and album, all WNP's protocol ties it by.
  const context: RequestContext = { images: options.images, version: options.version, ...(options.awaitCover ? { awaitCover: options.awaitCover } : {}) };
  const answer = text === null ? Promise.resolve(errorFrame('BAD_STRUCTURE', 'messages are JSON text frames')) : answerMessage(text, context);
  void answer.then((ready) => {
    client.outbox.reply(() => replyText(ready, options.images));
    // `hello` with `subscribe: true`: the welcome first, then the pushes.
    if (subscription === 'with-request') subscribe(client);
  });
}

/**
 * Heartbeat: a peer that did not answer the previous ping is gone (ws README, "broken connections").
 * A peer whose socket is paused (8 requests in flight) cannot be heard answering; it counts as
 * alive while it keeps taking its answers.
 */
function watchHeartbeat(wss: WebSocketServer, clients: Map<WebSocket, Client>, intervalMs: number) {
  const writtenAtLastPing = new WeakMap<WebSocket, number>();
  return startHeartbeat(wss, intervalMs, (socket) => {
    const written = clients.get(socket)?.outbox.writtenFragments() ?? 0;
    const draining = socket.isPaused && written !== writtenAtLastPing.get(socket);
    writtenAtLastPing.set(socket, written);
    return draining;
  });
}

/** The subscribe window is over: its timer goes, and is not kept for the socket's lifetime. */
function forgetWindow(client: Client): void {
  if (client.window) clearTimeout(client.window);
  client.window = undefined;
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data).toString('utf8');
}
