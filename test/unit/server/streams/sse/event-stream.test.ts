import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { NowPlaying } from '../../../../../src/domain/current-track';
import type { TrackRecord } from '../../../../../src/domain/track';
import { AppError } from '../../../../../src/errors';
import { QueueBudget } from '../../../../../src/server/guards/queue-budget';
import { MAX_REPLAYS_PER_CLIENT, MAX_REPLAY_PIECES, createEventStream } from '../../../../../src/server/streams/sse/event-stream';
import { MAX_REPLAY } from '../../../../../src/server/streams/sse/frames';
import { createWorkPool } from '../../../../../src/server/guards/work-pool';
import { openSse, type SseClient } from '../../../../helpers/sse-client';
import { silentLogger } from '../../../../helpers/silent-logger';

// docs/several-instances.md "Resuming streams": a reconnecting /v1/events reader's replay waits
// its turn in the expensive-work pool; when the pool cannot serve it, the reader is told to come
// back with its own id (a short 200 stream, sse/frames.ts busyAnswer) instead of getting the
// current track as if nothing was missed. Replayed and
// live events meet in strictly increasing dbid order, each once, also when this instance's own
// current track lags the database.

const record = (dbid: number, title = `T${dbid}`): TrackRecord => ({ dbid, receivedSeq: dbid, receivedAt: '2026-01-01T00:00:00.000Z', metadata: { title } });

interface Setup {
  url: string;
  nowPlaying: NowPlaying;
  stored: TrackRecord[];
  reads: () => number;
  /** Resolves the next store read only when called (null: reads answer at once). */
  holdReads: (hold: boolean) => void;
  releaseRead: () => void;
  /** Readers whose stream was handed its response. */
  readers: () => number;
  /** A write to the store: its version moves on (with `versioned`). */
  write: () => void;
  close: () => Promise<void>;
}

/** The client of a request: its `x-client` header when it has one (a stand-in for other addresses), else its address. */
const clientOf = (request: http.IncomingMessage) => String(request.headers['x-client'] ?? request.socket.remoteAddress ?? '');

/** `versioned`: the store says its version (TrackStore.version), so readers may share a replay read. */
async function setup(pool = createWorkPool(), current = 3, storedUpTo = 3, versioned = false): Promise<Setup> {
  const nowPlaying = new NowPlaying(record(current));
  const stored = Array.from({ length: storedUpTo }, (_, index) => record(index + 1));
  let reads = 0;
  let version = 0;
  let hold = false;
  const held: (() => void)[] = [];
  const tracks = {
    since: async (dbid: number, limit: number) => {
      reads += 1;
      if (hold) await new Promise<void>((resolve) => held.push(resolve));
      return stored.filter((one) => one.dbid > dbid).slice(0, limit);
    },
    history: async ({ limit }: { limit?: number }) => ({ records: [...stored].reverse().slice(0, limit ?? 100), more: false }),
    ...(versioned ? { version: () => version } : {}),
  };
  const stream = createEventStream({ nowPlaying, tracks, budget: new QueueBudget(8 * 1024 * 1024), pool, logger: silentLogger });
  const server = http.createServer((request, response) => {
    const since = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('since'));
    stream.open(since, clientOf(request)).then(
      (start) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        start(response);
      },
      (error: unknown) => {
        response.writeHead(error instanceof AppError ? error.status : 500, error instanceof AppError ? error.headers : {});
        response.end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    nowPlaying,
    stored,
    reads: () => reads,
    holdReads: (value) => (hold = value),
    releaseRead: () => held.shift()?.(),
    readers: () => stream.readerCount(),
    write: () => void (version += 1),
    close: async () => {
      stream.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function ids(client: SseClient, count: number): Promise<number[]> {
  const got: number[] = [];
  while (got.length < count) {
    const event = await client.next();
    if (event.event === 'track') got.push(Number(event.id));
  }
  return got;
}

describe('SSE replays: never silently cut, strictly increasing', () => {
  it('When readers missed the same records at one store version, then the store is read once for them all; after a write, anew', async () => {
    const t = await setup(createWorkPool(), 3, 3, true);
    const first = await openSse(`${t.url}?since=1`);
    const second = await openSse(`${t.url}?since=1`);
    expect(await ids(first, 2)).toEqual([2, 3]);
    expect(await ids(second, 2)).toEqual([2, 3]);
    expect(t.reads()).toBe(1);
    // Another record stored: a piece read before it may lack it, so the next reader reads its own.
    t.stored.push(record(4));
    t.write();
    const third = await openSse(`${t.url}?since=1`);
    expect(await ids(third, 3)).toEqual([2, 3, 4]);
    expect(t.reads()).toBe(2);
    for (const client of [first, second, third]) client.close();
    await t.close();
  });

  it('When the pool has room, then the missed records are replayed in order, the current one once', async () => {
    const t = await setup();
    const client = await openSse(`${t.url}?since=1`);
    expect(await ids(client, 2)).toEqual([2, 3]);
    t.nowPlaying.offer(record(4));
    expect(await ids(client, 1)).toEqual([4]);
    expect(t.reads()).toBe(1);
    client.close();
    await t.close();
  });

  it('When the pool is full, then the reader gets a 200 stream with a retry, its own id and the current track, then the end, and the store is not read', async () => {
    const pool = createWorkPool({ concurrency: 1, maxQueued: 0 });
    let release = () => undefined as void;
    void pool.run('flood', () => new Promise<void>((resolve) => (release = resolve)));
    const t = await setup(pool);
    const client = await openSse(`${t.url}?since=1`);
    await client.ended;
    // An error status would end a browser's EventSource for good; a 200 stream that ends is reconnected.
    expect(client.status).toBe(200);
    expect(client.retries).toHaveLength(1);
    expect(client.retries[0]).toBeGreaterThanOrEqual(1000);
    expect(client.retries[0]).toBeLessThan(2000);
    // No `track` event (every dbid still comes once, in order, when the replay is served), and the
    // id a reconnect sends is the reader's own.
    expect(client.events.map((event) => [event.event, event.id])).toEqual([['busy', '1']]);
    expect(JSON.parse(client.events[0].data)).toEqual({ after: 1, retry_ms: client.retries[0], current: { dbid: 3, title: 'T3' } });
    expect(t.reads()).toBe(0);
    expect(t.readers()).toBe(0);
    release();
    // Back with its last id, the reader gets everything.
    const again = await openSse(`${t.url}?since=${client.events[0].id}`);
    expect(await ids(again, 2)).toEqual([2, 3]);
    again.close();
    client.close();
    await t.close();
  });

  it('When this instance lags the database, then its older current track is not sent backwards, nor the newest twice', async () => {
    // The store has 1..5; this instance still shows 3 (its LISTEN is behind), then catches up.
    const t = await setup(createWorkPool(), 3, 5);
    const client = await openSse(`${t.url}?since=3`);
    expect(await ids(client, 2)).toEqual([4, 5]);
    t.nowPlaying.offer(t.stored[3]);
    t.nowPlaying.offer(t.stored[4]);
    t.stored.push(record(6));
    t.nowPlaying.offer(record(6));
    expect(await ids(client, 1)).toEqual([6]);
    expect(client.events.filter((event) => event.event === 'track').map((event) => Number(event.id))).toEqual([4, 5, 6]);
    client.close();
    await t.close();
  });

  it('When a reader hangs up while its first replay piece is read, then no reader is left behind for its closed response', async () => {
    const t = await setup(createWorkPool(), 3, 3);
    t.holdReads(true);
    const request = http.get(`${t.url}?since=1`);
    request.on('error', () => undefined);
    while (t.reads() === 0) await new Promise((resolve) => setImmediate(resolve));
    request.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    t.releaseRead();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(t.readers()).toBe(0);
    await t.close();
  });

  it('When tracks change while the replay is read, then they follow it in order, each once', async () => {
    const t = await setup(createWorkPool(), 3, 3);
    t.holdReads(true);
    const opening = openSse(`${t.url}?since=1`);
    while (t.reads() === 0) await new Promise((resolve) => setImmediate(resolve));
    // Stored after the read began (the read does not see them), announced while it waits.
    t.nowPlaying.offer(record(4));
    t.nowPlaying.offer(record(5));
    t.releaseRead();
    const client = await opening;
    expect(await ids(client, 4)).toEqual([2, 3, 4, 5]);
    client.close();
    await t.close();
  });

  it('When a reader missed more than fits in one piece, then it gets every piece in order', async () => {
    const total = MAX_REPLAY * 2 + 7;
    const t = await setup(createWorkPool(), total, total);
    const client = await openSse(`${t.url}?since=0`);
    expect(await ids(client, total)).toEqual(Array.from({ length: total }, (_, index) => index + 1));
    client.close();
    await t.close();
  });

  it('When a reader missed more than the replay budget, then it gets the pieces, a gap marker and the newest records, never nothing', async () => {
    const total = MAX_REPLAY * (MAX_REPLAY_PIECES + 3);
    const t = await setup(createWorkPool(), total, total);
    const client = await openSse(`${t.url}?since=0`);
    const budget = MAX_REPLAY * MAX_REPLAY_PIECES;
    const got = await ids(client, budget + MAX_REPLAY);
    expect(got.slice(0, budget)).toEqual(Array.from({ length: budget }, (_, index) => index + 1));
    expect(got.slice(budget)).toEqual(Array.from({ length: MAX_REPLAY }, (_, index) => total - MAX_REPLAY + index + 1));
    const gap = client.events.find((event) => event.event === 'gap');
    expect(JSON.parse(gap?.data ?? '{}')).toEqual({ after: budget, resumes_at: total - MAX_REPLAY + 1 });
    client.close();
    await t.close();
  });

  // Issue 54, N7: 100 readers replaying 60 KB records from one address held 1,003 MiB and let
  // /v1/last answer 7 times in 30 s. One address runs MAX_REPLAYS_PER_CLIENT replays at once.
  it('When one address has its replays running, then its next replay gets the busy answer without a store read, another address is served, and a place comes back when one ends', async () => {
    const t = await setup(createWorkPool({ concurrency: 4 }), 3, 3);
    t.holdReads(true);
    const running = Array.from({ length: MAX_REPLAYS_PER_CLIENT }, () => openSse(`${t.url}?since=1`));
    while (t.reads() < MAX_REPLAYS_PER_CLIENT) await new Promise((resolve) => setImmediate(resolve));
    const over = await openSse(`${t.url}?since=1`);
    await over.ended;
    expect(over.status).toBe(200);
    expect(over.events.map((event) => [event.event, event.id])).toEqual([['busy', '1']]);
    expect(over.retries).toHaveLength(1);
    expect(t.reads()).toBe(MAX_REPLAYS_PER_CLIENT);
    // Another address has its own places.
    const other = openSse(`${t.url}?since=1`, { 'x-client': '192.0.2.7' });
    while (t.reads() < MAX_REPLAYS_PER_CLIENT + 1) await new Promise((resolve) => setImmediate(resolve));
    // The replays end (live now): the address may replay again.
    for (let index = 0; index <= MAX_REPLAYS_PER_CLIENT; index++) t.releaseRead();
    const clients = await Promise.all([...running, other]);
    for (const client of clients) expect(await ids(client, 2)).toEqual([2, 3]);
    t.holdReads(false);
    const again = await openSse(`${t.url}?since=1`);
    expect(await ids(again, 2)).toEqual([2, 3]);
    for (const client of [...clients, again, over]) client.close();
    await t.close();
  });

  // Issue 54, N13: 2,000 paused readers held 1,533 MiB of kernel TCP memory. A reader that stops
  // reading is closed once its unsent events pass its share, and reset, so its socket's buffers go.
  it('When a reader pauses its socket, then the server closes it once its unsent events pass the cap, seen by the socket closing', async () => {
    const t = await setup(createWorkPool(), 3, 3);
    const port = Number(new URL(t.url).port);
    const socket = net.connect({ host: '127.0.0.1', port });
    let closed = false;
    socket.on('error', () => undefined);
    socket.on('close', () => (closed = true));
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    socket.pause();
    while (t.readers() === 0) await new Promise((resolve) => setImmediate(resolve));
    const big = 'x'.repeat(64 * 1024);
    // Events of 64 KiB until the server gives up on the paused reader (the kernel's buffers first, then svc's cap).
    for (let dbid = 4; !closed; dbid += 1) {
      t.nowPlaying.offer(record(dbid, `${big}${dbid}`));
      await new Promise((resolve) => setImmediate(resolve));
      // A paused socket does not read, so it learns of the reset when it reads again: only then.
      if (t.readers() === 0) {
        socket.resume();
        await new Promise((resolve) => socket.once('close', resolve));
      }
    }
    expect(closed).toBe(true);
    expect(t.readers()).toBe(0);
    await t.close();
  });
});
