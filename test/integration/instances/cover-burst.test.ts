import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { makePng } from '../../helpers/images';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// Covers at audience scale (docs/several-instances.md "Covers from memory"): after a track change
// every overlay fetches the new cover at once. On PostgreSQL, 1,000 concurrent fetches of a cover
// no instance has served yet all succeed, and the store is read once.

const FETCHES = 1000;

describeWithPostgres('a burst of fetches of a new cover on PostgreSQL', () => {
  let database: TestDatabase;
  let t: TestServer;

  beforeAll(async () => {
    database = await createTestDatabase();
    // Every fetch comes from 127.0.0.1 here, as from behind a load balancer.
    t = await startTestServer({ config: { database: { location: database.url }, limits: { maxConnectionsPerAddress: 0 } } });
  });
  afterAll(async () => {
    await t?.close();
    await database?.drop();
  });

  it(`When ${FETCHES} clients fetch a new cover at once, then every one gets 200 and its bytes, and the store is read once`, async () => {
    const cover = makePng(300, 300, [250, 120, 0], [10, 40, 200]);
    const { key } = await t.server.imageStore.put(cover);
    const reads = (['get', 'use', 'slice'] as const).map((method) => jest.spyOn(t.server.imageStore, method));

    // One connection per fetch, all open at once, as 1,000 browsers would.
    const fetchOne = () =>
      new Promise<{ status: number; same: boolean; ms: number }>((resolve, reject) => {
        const started = performance.now();
        http
          .get(`${t.url}/cover/${key}`, { agent: false }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, same: Buffer.concat(chunks).equals(cover), ms: performance.now() - started }));
            res.on('error', reject);
          })
          .on('error', reject);
      });
    const answers = await Promise.all(Array.from({ length: FETCHES }, fetchOne));

    expect(answers.filter((answer) => answer.status !== 200 || !answer.same)).toEqual([]);
    expect(reads.reduce((sum, spy) => sum + spy.mock.calls.length, 0)).toBe(1);
    const sorted = answers.map((answer) => answer.ms).sort((a, b) => a - b);
    process.stderr.write(`cover burst: p99 ${sorted[Math.ceil(FETCHES * 0.99) - 1]?.toFixed(0)} ms over ${FETCHES} fetches\n`);
    reads.forEach((spy) => spy.mockRestore());
  }, 60_000);
});
