import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { TrackRecord } from '../../domain/track';
import type { Logger } from '../../log';
import type { NowPlaying } from '../../pipeline/now-playing';
import { trackFrame, type PushFrame } from './frames';

// /v1/images/ws: pushes the current track on connect and on every change (decisions.md).
// A slow consumer never slows the others: past a bounded send buffer it is closed with 1013.

export const IMAGES_WS_PATH = '/v1/images/ws';

export interface HubOptions {
  nowPlaying: NowPlaying;
  logger: Logger;
  pingIntervalMs?: number;
  /** Bytes queued for one client before it is dropped as too slow. */
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
  const maxBuffered = options.maxBufferedBytes ?? 1024 * 1024;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const alive = new WeakSet<WebSocket>();

  const send = (socket: WebSocket, frame: PushFrame) => {
    if (socket.readyState !== WebSocket.OPEN) return;
    if (socket.bufferedAmount > maxBuffered) {
      socket.close(CLOSE_TRY_AGAIN_LATER, 'client too slow');
      return;
    }
    socket.send(JSON.stringify(frame));
  };

  const broadcast = (frame: PushFrame) => {
    // Serialize once, not once per client.
    const data = JSON.stringify(frame);
    for (const socket of wss.clients) {
      if (socket.readyState !== WebSocket.OPEN) continue;
      if (socket.bufferedAmount > maxBuffered) socket.close(CLOSE_TRY_AGAIN_LATER, 'client too slow');
      else socket.send(data);
    }
  };

  const onTrackChanged = (record: TrackRecord) => broadcast(trackFrame(record));
  options.nowPlaying.on('track-changed', onTrackChanged);

  wss.on('connection', (socket) => {
    alive.add(socket);
    socket.on('pong', () => alive.add(socket));
    socket.on('error', (error) => options.logger.warn(`images ws: ${error.message}`));
    const current = options.nowPlaying.current();
    if (current) send(socket, trackFrame(current));
  });

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
