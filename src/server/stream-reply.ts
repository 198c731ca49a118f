import type { ServerResponse } from 'node:http';
import type { QueueBudget } from './queue-budget';

// A large reply produced only as the reader takes it (decisions.md "Hostile clients and
// browsers"): each chunk is read from the store when the previous one has been handed to the
// kernel, and counts against the process-wide budget while it waits in memory. A reader that
// stops reading holds one chunk, never a whole image.

export const REPLY_CHUNK_BYTES = 64 * 1024;

/** A reader that takes nothing of a chunk for this long is dropped, like a WebSocket peer that stops answering pings. */
export const STALLED_READER_MS = 60_000;

/** Reads `length` bytes at `offset`; null when the source is gone (an image evicted meanwhile). */
export type ChunkSource = (offset: number, length: number) => Buffer | null;

export async function streamReply(response: ServerResponse, size: number, read: ChunkSource, budget: QueueBudget): Promise<void> {
  // A pipelined reply waits for the ones before it: it takes no budget until it owns the socket.
  if (!response.socket) await new Promise<void>((resolve) => {
    const settle = () => {
      response.off('socket', settle);
      response.off('close', settle);
      resolve();
    };
    response.once('socket', settle);
    response.once('close', settle);
  });
  for (let offset = 0; offset < size; offset += REPLY_CHUNK_BYTES) {
    const length = Math.min(REPLY_CHUNK_BYTES, size - offset);
    await budget.reserve(length);
    if (response.destroyed) {
      budget.release(length);
      return;
    }
    const chunk = read(offset, length);
    if (!chunk || chunk.length !== length) {
      budget.release(length);
      // The declared Content-Length cannot be met any more: the client must see a broken reply.
      response.destroy();
      return;
    }
    await written(response, chunk);
    budget.release(length);
  }
  response.end();
}

/** Resolves when the chunk has left for the kernel, or the connection closed without it. */
function written(response: ServerResponse, chunk: Buffer): Promise<void> {
  return new Promise((resolve) => {
    let settled = false;
    const stalled = setTimeout(() => response.destroy(), STALLED_READER_MS);
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(stalled);
      response.off('close', settle);
      resolve();
    };
    response.once('close', settle);
    response.write(chunk, settle);
  });
}
