import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';

// What /v1/images/ws and /wsstream do alike with their WebSocketServer (noServer: start.ts routes
// the upgrade by path): accept an upgrade, and finish the shutdown once each has sent its close frames.

/** The close code both send their sockets when the server shuts down (RFC 6455 7.4.1: going away). */
export const CLOSE_GOING_AWAY = 1001;

/** How long peers have to answer the close frame before they are cut. */
const CLOSE_GRACE_MS = 1000;

/** Completes the WebSocket handshake and hands the socket to `wss`'s 'connection' listeners. */
export function acceptUpgrade(wss: WebSocketServer, request: IncomingMessage, socket: Duplex, head: Buffer): void {
  wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
}

/** Closes `wss` once its peers have answered the close frames already sent; cuts whoever did not after a moment. */
export function closeServer(wss: WebSocketServer): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => {
      for (const socket of wss.clients) socket.terminate();
    }, CLOSE_GRACE_MS);
    wss.close(() => {
      clearTimeout(force);
      resolve();
    });
  });
}
