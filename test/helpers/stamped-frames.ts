import { WebSocket } from 'ws';

// A WebSocket reader that keeps every frame with its arrival time (title-first tests and frame logs).

export interface StampedFrames {
  frames: { at: number; frame: Record<string, unknown> }[];
  /** Resolves with the first frame (at or after index `from`) that matches. */
  waitFor(match: (frame: Record<string, unknown>) => boolean, from?: number): Promise<{ at: number; frame: Record<string, unknown> }>;
  close(): void;
}

/** A /wsstream or /v1/images/ws reader that stamps each frame with its arrival time. */
export async function stampedReader(url: string, subscribe: boolean): Promise<StampedFrames> {
  const socket = new WebSocket(url);
  const frames: StampedFrames['frames'] = [];
  const waiters = new Set<() => void>();
  socket.on('message', (data) => {
    frames.push({ at: performance.now(), frame: JSON.parse((data as Buffer).toString()) as Record<string, unknown> });
    for (const wake of [...waiters]) wake();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  if (subscribe) socket.send(JSON.stringify({ type: 'subscribe' }));
  return {
    frames,
    waitFor: (match, from = 0) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching frame; got ${JSON.stringify(frames.map((f) => f.frame)).slice(0, 1500)}`));
        }, 15_000);
        const check = () => {
          const found = frames.slice(from).find((entry) => match(entry.frame));
          if (!found) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found);
        };
        waiters.add(check);
        check();
      }),
    close: () => socket.close(),
  };
}
