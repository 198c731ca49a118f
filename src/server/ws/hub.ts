import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { TrackImage, TrackRecord } from '../../domain/track';
import type { Logger } from '../../log';
import type { NowPlaying } from '../../store/now-playing';
import { errorFrame, imageFrame, trackFrame, type PushFrame, type ReplyFrame } from './frames';
import { answerMessage, type ImageLookup } from './requests';

// /v1/images/ws (decisions.md): pushes the current track on connect and on every change, then
// each image as it becomes available; answers the image clients' requests (ws/requests.ts).
// A slow consumer never slows the others: frames are serialized once and handed to each socket
// without waiting, and a socket whose unsent bytes pass the bound is closed with 1013.

export const IMAGES_WS_PATH = '/v1/images/ws';
/** Inbound messages larger than this are refused (the socket is closed with 1009). */
export const MAX_INBOUND_BYTES = 64 * 1024;
export const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;

/** The images side the hub needs: announcements, a track's stored images, lookups by name. */
export interface HubImages extends ImageLookup {
  imagesOf(record: TrackRecord): TrackImage[];
  on(event: 'image', listener: (image: TrackImage) => void): unknown;
  off(event: 'image', listener: (image: TrackImage) => void): unknown;
}

export interface HubOptions {
  nowPlaying: NowPlaying;
  images: HubImages;
  logger: Logger;
  version: string;
  pingIntervalMs?: number;
  /** Unsent bytes one client may have queued before it is dropped as too slow. */
  maxBufferedBytes?: number;
}

export interface ImageHub {
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  clientCount(): number;
  /** Closes every socket with 1001 (going away). */
  close(): Promise<void>;
}

const CLOSE_GOING_AWAY = 1001;
const CLOSE_TRY_AGAIN_LATER = 1013;

export function createImageHub(options: HubOptions): ImageHub {
  const maxBuffered = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_INBOUND_BYTES, perMessageDeflate: false });
  const alive = new WeakSet<WebSocket>();
  // Bytes of a requested image still on their way out: they do not count against the bound
  // for pushes, so a client that asked for a large image is not dropped for reading it.
  const replyAllowance = new WeakMap<WebSocket, number>();

  const tooSlow = (socket: WebSocket, allowance: number): boolean => {
    if (socket.bufferedAmount <= maxBuffered) {
      replyAllowance.delete(socket);
      return false;
    }
    if (socket.bufferedAmount <= maxBuffered + allowance) return false;
    options.logger.warn(`images ws: a client is too slow (${socket.bufferedAmount} bytes unsent); closing it with ${CLOSE_TRY_AGAIN_LATER}`);
    socket.close(CLOSE_TRY_AGAIN_LATER, 'client too slow');
    return true;
  };

  const push = (socket: WebSocket, data: string) => {
    if (socket.readyState !== WebSocket.OPEN) return;
    if (!tooSlow(socket, replyAllowance.get(socket) ?? 0)) socket.send(data);
  };

  const broadcast = (frame: PushFrame) => {
    if (wss.clients.size === 0) return;
    // Serialized once, not once per client.
    const data = JSON.stringify(frame);
    for (const socket of wss.clients) push(socket, data);
  };

  const reply = (socket: WebSocket, frame: ReplyFrame) => {
    if (socket.readyState !== WebSocket.OPEN) return;
    // A client asking faster than it reads is as slow as one that does not read at all.
    if (tooSlow(socket, 0)) return;
    socket.send(JSON.stringify(frame));
    replyAllowance.set(socket, Math.max(0, socket.bufferedAmount - maxBuffered));
  };

  const onTrackChanged = (record: TrackRecord) => broadcast(trackFrame(record));
  const onImage = (image: TrackImage) => broadcast(imageFrame(image));
  options.nowPlaying.on('track-changed', onTrackChanged);
  options.images.on('image', onImage);

  const onMessage = (socket: WebSocket, data: RawData, isBinary: boolean) => {
    if (isBinary) {
      reply(socket, errorFrame('BAD_STRUCTURE', 'messages are JSON text frames'));
      return;
    }
    reply(socket, answerMessage(rawText(data), { images: options.images, version: options.version }));
  };

  wss.on('connection', (socket) => {
    alive.add(socket);
    socket.on('pong', () => alive.add(socket));
    socket.on('error', (error) => options.logger.warn(`images ws: ${error.message}`));
    socket.on('message', (data, isBinary) => onMessage(socket, data, isBinary));
    const current = options.nowPlaying.current();
    if (!current) return;
    push(socket, JSON.stringify(trackFrame(current)));
    for (const image of safeImagesOf(current)) push(socket, JSON.stringify(imageFrame(image)));
  });

  const safeImagesOf = (record: TrackRecord): TrackImage[] => {
    try {
      return options.images.imagesOf(record);
    } catch (error) {
      options.logger.error(`images ws: cannot list the images of track ${record.dbid}: ${String(error)}`);
      return [];
    }
  };

  // Heartbeat: a peer that did not answer the previous ping is gone (ws README, "broken connections").
  const heartbeat = setInterval(() => {
    for (const socket of wss.clients) {
      if (!alive.has(socket)) {
        socket.terminate();
        continue;
      }
      alive.delete(socket);
      socket.ping();
    }
  }, options.pingIntervalMs ?? 30_000);
  heartbeat.unref();

  return {
    handleUpgrade(request, socket, head) {
      wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
    },
    clientCount: () => wss.clients.size,
    close() {
      clearInterval(heartbeat);
      options.nowPlaying.off('track-changed', onTrackChanged);
      options.images.off('image', onImage);
      for (const socket of wss.clients) socket.close(CLOSE_GOING_AWAY, 'server shutting down');
      return new Promise((resolve) => {
        // Give peers a moment to answer the close frame, then cut whoever did not.
        const force = setTimeout(() => {
          for (const socket of wss.clients) socket.terminate();
        }, 1000);
        wss.close(() => {
          clearTimeout(force);
          resolve();
        });
      });
    },
  };
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data).toString('utf8');
}
