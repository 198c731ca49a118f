import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { NowPlaying } from '../../../../src/domain/current-track';
import type { TrackRecord } from '../../../../src/domain/track';
import { QueueBudget } from '../../../../src/server/queue-budget';
import { createEventStream } from '../../../../src/server/sse/event-stream';
import { createWorkPool } from '../../../../src/server/work-pool';
import { openSse } from '../../../helpers/sse-client';
import { silentLogger } from '../../../helpers/silent-logger';

// A reconnecting /v1/events reader's replay waits its turn in the expensive-work pool
// (docs/limits-and-load.md "Expensive requests"); when the pool is full it still gets the
// current track at once, without the records it missed.

const record = (dbid: number, title: string): TrackRecord => ({ dbid, receivedSeq: dbid, receivedAt: '2026-01-01T00:00:00.000Z', metadata: { title } });

describe('SSE replays in the work pool', () => {
  const setup = async (pool: ReturnType<typeof createWorkPool>) => {
    const nowPlaying = new NowPlaying(record(3, 'Three'));
    let reads = 0;
    const tracks = {
      since: async (dbid: number) => {
        reads += 1;
        return [record(2, 'Two'), record(3, 'Three')].filter((one) => one.dbid > dbid);
      },
      history: async () => ({ records: [], more: false }),
    };
    const stream = createEventStream({ nowPlaying, tracks, budget: new QueueBudget(8 * 1024 * 1024), pool, logger: silentLogger });
    const server = http.createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      stream.attach(response, 1, request.socket.remoteAddress ?? '');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const close = async () => {
      stream.close();
      await new Promise((resolve) => server.close(resolve));
    };
    return { url, close, reads: () => reads };
  };

  it('When the pool has room, then the missed records are replayed, the current one last', async () => {
    const { url, close, reads } = await setup(createWorkPool());
    const client = await openSse(url);
    expect([(await client.next()).id, (await client.next()).id]).toEqual(['2', '3']);
    expect(reads()).toBe(1);
    client.close();
    await close();
  });

  it('When the pool is full, then the reader gets the current track at once and the store is not read', async () => {
    const pool = createWorkPool({ concurrency: 1, maxQueued: 0 });
    let release = () => undefined as void;
    void pool.run('flood', () => new Promise<void>((resolve) => (release = resolve)));
    const { url, close, reads } = await setup(pool);
    const client = await openSse(url);
    expect(await client.next()).toMatchObject({ event: 'track', id: '3' });
    expect(reads()).toBe(0);
    release();
    client.close();
    await close();
  });
});
