import type { ServerResponse } from 'node:http';
import { AppError } from '../../errors';
import type { QueueBudget } from '../guards/queue-budget';

// A large reply produced only as the reader takes it (docs/decisions.md "Hostile clients and
// browsers"): chunk after chunk, each handed to the socket when the previous one has left for
// the kernel. The bytes themselves are shared: every reply of the same image streams from one
// copy, loaded once from the store and counted against limits.maxQueuedBytes while any reply
// uses it. SQLite cannot read part of a BLOB without loading all of it, so one copy per image
// being served (not one per request, and not one load per chunk) is the cheapest bound.

const REPLY_CHUNK_BYTES = 64 * 1024;

/**
 * A reader that takes nothing of a chunk (or of a budgeted reply) for this long is dropped, like a
 * WebSocket peer that stops answering pings.
 */
export const STALLED_READER_MS = 60_000;

/**
 * Drops a stalled reply with its connection. `response.destroy()` alone waits for the response
 * to get its socket, which a pipelined reply behind an unread one never does: the connection
 * itself goes (docs/limits-and-load.md "Memory").
 */
export function dropWithConnection(response: ServerResponse): void {
  response.req.socket.destroy();
  response.destroy();
}

export interface Lease {
  bytes: Buffer;
  release(): void;
}

/** Runs a store load in its client's turn (the expensive-work pool); may refuse with a 503 AppError. */
export type LoadScheduler = <T>(client: string, load: () => Promise<T>) => Promise<T>;

/** One in-memory copy per image being served, shared by its replies and counted in the budget. */
export class SharedBlobs {
  private readonly open = new Map<string, { bytes: Promise<Buffer | null>; users: number; size: number }>();

  constructor(
    private readonly load: (key: string) => Promise<Buffer | null>,
    private readonly budget: QueueBudget,
    /** The bytes of an image already held in memory elsewhere (the image memory cache), if any. */
    readonly inMemory: (key: string) => Buffer | undefined = () => undefined,
    private readonly schedule: LoadScheduler = (_client, load) => load(),
  ) {}

  /**
   * A lease on the image's bytes, loaded once for all its replies: null when the store no longer
   * has them. Rejects when the pool refuses the load (a 503 before any header is sent).
   */
  async acquire(key: string, size: number, client: string): Promise<Lease | null> {
    let entry = this.open.get(key);
    if (!entry) {
      // Room in the budget first, outside the pool: a pool slot never waits for slow readers.
      const loading = this.budget.reserve(size).then(() => this.schedule(client, () => this.load(key)));
      entry = { bytes: loading, users: 0, size };
      this.open.set(key, entry);
    }
    entry.users += 1;
    const held = entry;
    const release = () => {
      held.users -= 1;
      if (held.users > 0) return;
      this.open.delete(key);
      this.budget.release(held.size);
    };
    let bytes: Buffer | null;
    try {
      bytes = await held.bytes;
    } catch (error) {
      release();
      if (error instanceof AppError) throw error;
      return null;
    }
    if (!bytes) {
      release();
      return null;
    }
    return { bytes, release };
  }
}

/** Streams the leased bytes to the response as the reader drains (after earlier pipelined replies); releases the lease. */
export async function streamReply(response: ServerResponse, lease: Lease): Promise<void> {
  try {
    if (!response.socket) {
      // Behind unread pipelined replies: the wait for the socket is a stall too.
      const stalled = setTimeout(() => dropWithConnection(response), STALLED_READER_MS);
      await settled(response, 'socket');
      clearTimeout(stalled);
    }
    for (let offset = 0; offset < lease.bytes.length && !response.destroyed; offset += REPLY_CHUNK_BYTES) {
      await written(response, lease.bytes.subarray(offset, offset + REPLY_CHUNK_BYTES));
    }
    if (!response.destroyed) response.end();
  } finally {
    lease.release();
  }
}

/**
 * Replies up to this size may go out in one write (endWithShared): within STALLED_READER_MS, a
 * reader as slow as 17 KB/s still takes all of it. Larger ones are streamed chunk by chunk, where
 * the stall timer restarts with every chunk.
 */
export const ONE_WRITE_MAX_BYTES = 1024 * 1024;

/**
 * Ends the response with bytes shared with the rest of the process (the image memory cache, at
 * most ONE_WRITE_MAX_BYTES): handed to the socket in one write, never copied. A reply not taken
 * within STALLED_READER_MS is dropped, as a stalled streamed reply is; a closed connection keeps
 * only this timer until it fires.
 */
export function endWithShared(response: ServerResponse, bytes: Buffer): void {
  const stalled = setTimeout(() => dropWithConnection(response), STALLED_READER_MS);
  response.end(bytes, () => clearTimeout(stalled));
}

function settled(response: ServerResponse, event: 'socket'): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off(event, done);
      response.off('close', done);
      resolve();
    };
    response.once(event, done);
    response.once('close', done);
  });
}

/** Resolves when the chunk has left for the kernel, or the connection closed without it. */
function written(response: ServerResponse, chunk: Buffer): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const stalled = setTimeout(() => dropWithConnection(response), STALLED_READER_MS);
    const settle = () => {
      if (done) return;
      done = true;
      clearTimeout(stalled);
      response.off('close', settle);
      resolve();
    };
    response.once('close', settle);
    response.write(chunk, settle);
  });
}
