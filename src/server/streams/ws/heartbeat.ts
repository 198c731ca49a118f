import type { WebSocket, WebSocketServer } from 'ws';

// The WebSocket heartbeat (ws README, "How to detect and close broken connections"): every
// interval each peer is pinged, and a peer that did not answer the previous ping is cut.

export interface Heartbeat {
  /** Starts watching a new peer (it counts as alive until its first ping goes unanswered). */
  watch(socket: WebSocket): void;
  stop(): void;
}

/**
 * `stillTalking` may vouch for a peer that could not be heard answering (e.g. its socket is
 * paused while it takes a long reply): such a peer is pinged again rather than cut.
 */
export function startHeartbeat(wss: WebSocketServer, intervalMs: number, stillTalking: (socket: WebSocket) => boolean = () => false): Heartbeat {
  const alive = new WeakSet<WebSocket>();
  const timer = setInterval(() => {
    for (const socket of wss.clients) {
      if (!alive.has(socket) && !stillTalking(socket)) {
        socket.terminate();
        continue;
      }
      alive.delete(socket);
      socket.ping();
    }
  }, intervalMs);
  timer.unref();
  // One listener for every socket (`this` is the socket), not a closure per socket.
  function onPong(this: WebSocket): void {
    alive.add(this);
  }
  return {
    watch(socket) {
      alive.add(socket);
      socket.on('pong', onPong);
    },
    stop: () => clearInterval(timer),
  };
}
