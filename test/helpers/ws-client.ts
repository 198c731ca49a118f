import { WebSocket } from 'ws';

// A real WebSocket client for /v1/images/ws that keeps every frame it receives, so a test can
// wait for one that may already have arrived.

export type Frame = Record<string, unknown> & { type: string };

export interface FrameClient {
  socket: WebSocket;
  frames: Frame[];
  /** Resolves with the first frame at index >= `from` that matches. */
  waitFor(predicate: (frame: Frame) => boolean, options?: { from?: number; timeoutMs?: number }): Promise<Frame>;
  /** Sends a message and resolves with the next frame that is not a push (track/image). */
  ask(message: unknown): Promise<Frame>;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

export function wsUrl(httpUrl: string): string {
  return `${httpUrl.replace(/^http/, 'ws')}/v1/images/ws`;
}

/**
 * `subscribe` (the default) sends `{"type":"subscribe"}` at once, as svc's own pages do, to get
 * the push stream; `false` makes a request/response client, that gets answers only when its
 * first message comes within 0.5 s (or a push client, when it stays silent that long).
 */
export async function connectClient(httpUrl: string, options: { subscribe?: boolean } = {}): Promise<FrameClient> {
  const socket = new WebSocket(wsUrl(httpUrl));
  const frames: Frame[] = [];
  const waiters = new Set<() => void>();
  socket.on('message', (data) => {
    const text = Array.isArray(data) ? Buffer.concat(data).toString() : Buffer.isBuffer(data) ? data.toString() : Buffer.from(new Uint8Array(data)).toString();
    frames.push(JSON.parse(text) as Frame);
    for (const wake of [...waiters]) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString() });
      for (const wake of [...waiters]) wake();
    });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  if (options.subscribe ?? true) socket.send(JSON.stringify({ type: 'subscribe' }));

  const waitFor: FrameClient['waitFor'] = (predicate, options = {}) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = frames.slice(options.from ?? 0).find(predicate);
        if (found) {
          done();
          resolve(found);
        } else if (socket.readyState === WebSocket.CLOSED) {
          done();
          reject(new Error(`socket closed; frames so far: ${JSON.stringify(frames.map((f) => f.type))}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no matching frame within ${options.timeoutMs ?? 5000} ms; got ${JSON.stringify(frames).slice(0, 2000)}`));
      }, options.timeoutMs ?? 5000);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  return {
    socket,
    frames,
    waitFor,
    ask(message) {
      const from = frames.length;
      socket.send(typeof message === 'string' ? message : JSON.stringify(message));
      return waitFor((frame) => frame.type !== 'track' && frame.type !== 'image', { from });
    },
    closed,
    close: () => socket.close(),
  };
}
