import { unusedPort } from '../../cli/cli-process';
import { until } from '../../helpers/eventually';
import { startHaproxyFront, type HaproxyFront } from '../../helpers/haproxy';
import { asObject, postJson, request } from '../../helpers/http';
import { describeWithPeers } from '../../helpers/peers';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres';
import { proxyInFrontOf, type TcpProxy } from '../../helpers/tcp-proxy';
import { makeTempDir } from '../../helpers/temp-dir';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/several-instances.md "Health checks": examples/haproxy/haproxy.cfg as written, with the real
// HAProxy, in front of three instances on one PostgreSQL. One of them reaches the database through
// a TCP proxy that stops passing bytes: it keeps answering reads from what it knew (stale), so only
// an active check on /v1/health/ready takes it out for reads. Once HAProxy has it DOWN, every read
// through HAProxy is the newest track, and the other two stay in (the backend is never emptied).

const READS = 60;

describeWithPeers(['haproxy', 'postgresql'], 'a partitioned instance behind HAProxy', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let instances: TestServer[] = [];
  let front: HaproxyFront;
  let temp: ReturnType<typeof makeTempDir>;

  beforeAll(async () => {
    database = await createTestDatabase();
    const proxied = await proxyInFrontOf(database.url);
    proxy = proxied.proxy;
    const config = (location: string) => ({ config: { database: { location }, trustProxy: ['127.0.0.1'] } });
    // The cut one's silence checks run every 100 ms with a 1 s limit (store/postgres/liveness.ts; 1.5 s and 2 s in production).
    instances = [
      await startTestServer(config(database.url)),
      await startTestServer(config(database.url)),
      await startTestServer({ ...config(proxied.url), storeLiveness: { intervalMs: 100, timeoutMs: 1000 } }),
    ];
    temp = makeTempDir();
    front = await startHaproxyFront(
      temp.dir,
      await unusedPort(),
      instances.map((instance) => new URL(instance.url).host),
    );
  }, 60_000);
  afterAll(async () => {
    await front?.stop();
    await Promise.all(instances.map((instance) => instance.close()));
    await proxy?.close();
    await database?.drop();
    temp?.cleanup();
  });

  const titleAt = async (url: string) => asObject((await request(`${url}/v1/last`)).json).title;
  const allUp = async () => [...(await front.servers()).values()].every((status) => status === 'UP');

  it('When one instance loses its database, then HAProxy takes it out for reads too, every read is the newest track, and it comes back once ready', async () => {
    const [a, b, cut] = instances;
    await until(allUp, 'HAProxy has every instance UP', 30_000);
    expect((await postJson(`${front.url}/v1/remoteinput`, { artist: 'Read', title: 'Before' })).status).toBe(200);
    await until(async () => (await titleAt(cut.url)) === 'Before', 'the cut-to-be instance has the first track');

    proxy.stall();
    await until(async () => (await request(`${cut.url}/v1/health/ready`)).status === 503, 'the cut instance says it is not ready');
    await until(async () => (await front.servers()).get('c') !== 'UP', 'HAProxy has the cut instance out');
    expect(await front.servers()).toEqual(
      new Map([
        ['a', 'UP'],
        ['b', 'UP'],
        ['c', expect.stringMatching(/^DOWN/)],
      ]),
    );

    expect((await postJson(`${a.url}/v1/remoteinput`, { artist: 'Read', title: 'After' })).status).toBe(200);
    await until(async () => (await titleAt(b.url)) === 'After', 'the other instance has the new track');
    // The cut one still answers, with the track it knew: what the check must keep from readers.
    expect(await titleAt(cut.url)).toBe('Before');

    const titles: unknown[] = [];
    for (let index = 0; index < READS; index += 1) {
      const answer = await request(`${front.url}/v1/last`);
      expect(answer.status).toBe(200);
      titles.push(asObject(answer.json).title);
    }
    expect(titles.filter((title) => title !== 'After')).toEqual([]);

    proxy.restore();
    await until(allUp, 'HAProxy has the instance back', 30_000);
    expect(await titleAt(cut.url)).toBe('After');
  }, 90_000);
});
