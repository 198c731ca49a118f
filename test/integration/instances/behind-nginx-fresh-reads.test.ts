import { WebSocket } from 'ws';
import { unusedPort } from '../../cli/cli-process';
import { until } from '../../helpers/eventually';
import { asObject, postJson, request } from '../../helpers/http';
import { startNginxFront, type NginxFront } from '../../helpers/nginx';
import { describeWithPeers } from '../../helpers/peers';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres';
import { openSse } from '../../helpers/sse-client';
import { proxyInFrontOf, type TcpProxy } from '../../helpers/tcp-proxy';
import { makeTempDir } from '../../helpers/temp-dir';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/several-instances.md "Fresh reads through nginx": examples/nginx/nginx.conf as written
// (only the ports change), with the real nginx, in front of three instances on one PostgreSQL.
// Two of them reach the database through TCP proxies that can stop passing bytes. A cut-off
// instance still knows the track before the cut, and answers it to a plain read; nginx marks its
// reads X-SVC-Fresh-Only, so the instance answers them 503 and nginx asks another. Then the third
// instance is stopped too (a partition plus a kill): the upstream is not emptied, and every read
// is the newest track. With every live instance cut off, reads are answered from what they knew.

const READS = 60;
/** The reads of each kind (history, text, the event stream's first event) besides /v1/last. */
const OTHER_READS = 10;

describeWithPeers(['nginx', 'postgresql'], 'reads through nginx while an instance is partitioned', () => {
  jest.setTimeout(120_000);
  let database: TestDatabase;
  const proxies: TcpProxy[] = [];
  let instances: TestServer[] = [];
  let front: NginxFront;
  let temp: ReturnType<typeof makeTempDir>;

  beforeAll(async () => {
    database = await createTestDatabase();
    const proxiedB = await proxyInFrontOf(database.url);
    const proxiedC = await proxyInFrontOf(database.url);
    proxies.push(proxiedB.proxy, proxiedC.proxy);
    const config = (location: string) => ({ config: { database: { location }, trustProxy: ['127.0.0.1'], openWrites: true } });
    instances = await Promise.all([startTestServer(config(database.url)), startTestServer(config(proxiedB.url)), startTestServer(config(proxiedC.url))]);
    temp = makeTempDir();
    front = startNginxFront(
      temp.dir,
      await unusedPort(),
      instances.map((instance) => new URL(instance.url).host),
    );
    await until(async () => (await request(`${front.url}/v1/status`).catch(() => ({ status: 0 }))).status === 200, 'nginx answers');
  });
  afterAll(async () => {
    await front?.stop();
    await Promise.all(instances.map((instance) => instance.close()));
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await database?.drop();
    temp?.cleanup();
  });

  /** 101 when the WebSocket opened (then closed), else the status the upgrade was answered with. */
  const upgradeStatus = (url: string, headers: Record<string, string> = {}) =>
    new Promise<number>((resolve) => {
      const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/wsstream`, { headers });
      socket.on('open', () => {
        socket.close();
        resolve(101);
      });
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.on('error', () => undefined);
    });
  const lastAt = async (url: string, headers: Record<string, string> = {}) => request(`${url}/v1/last`, { headers });
  const titleAt = async (url: string) => asObject((await lastAt(url)).json).title;

  /**
   * `count` reads of /v1/last through nginx and OTHER_READS of the other current-state answers:
   * each status and the title it names. The history is read from the database, so no instance
   * cut off from it has one to give (`withHistory` false).
   */
  async function readThroughNginx(count: number, withHistory = true): Promise<{ statuses: number[]; titles: unknown[] }> {
    const statuses: number[] = [];
    const titles: unknown[] = [];
    for (let index = 0; index < count; index += 1) {
      const last = await lastAt(front.url);
      statuses.push(last.status);
      titles.push(last.status === 200 ? asObject(last.json).title : last.text);
    }
    for (let index = 0; index < OTHER_READS; index += 1) {
      if (withHistory) {
        const history = await request(`${front.url}/v1/history?limit=1`);
        statuses.push(history.status);
        titles.push(history.status === 200 ? asObject((asObject(history.json).tracks as unknown[])[0]).title : history.text);
      }
      const text = await request(`${front.url}/v1/last.txt?format={title}`);
      statuses.push(text.status);
      titles.push(text.text.trim());
      const events = await openSse(`${front.url}/v1/events`);
      statuses.push(events.status);
      titles.push(events.status === 200 ? asObject(JSON.parse((await events.next()).data)).title : undefined);
      events.close();
    }
    return { statuses, titles };
  }

  it('When one instance is cut off from PostgreSQL and another is stopped, then every read through nginx is the newest track, none refused', async () => {
    const [a, b, cut] = instances;
    expect((await postJson(`${front.url}/v1/remoteinput`, { artist: 'Read', title: 'Before' })).status).toBe(200);
    await until(async () => (await titleAt(cut.url)) === 'Before', 'the cut-to-be instance has the first track');

    proxies[1].stall();
    await until(async () => (await request(`${cut.url}/v1/health/ready`)).status === 503, 'the cut instance says it is not ready');
    expect((await postJson(`${a.url}/v1/remoteinput`, { artist: 'Read', title: 'After' })).status).toBe(200);
    await until(async () => (await titleAt(b.url)) === 'After', 'the other instance has the new track');
    // Asked directly, the cut instance answers what it knew (docs/decisions.md "Several
    // instances"); asked the way nginx asks, it refuses.
    expect(await titleAt(cut.url)).toBe('Before');
    const refused = await lastAt(cut.url, { 'X-SVC-Fresh-Only': '1' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(asObject(refused.json).error).toMatch(/cannot reach its database/);
    expect(await upgradeStatus(cut.url, { 'X-SVC-Fresh-Only': '1' })).toBe(503);
    expect(await upgradeStatus(cut.url)).toBe(101);

    const whileCut = await readThroughNginx(READS);
    expect(whileCut.titles.filter((title) => title !== 'After')).toEqual([]);
    expect(whileCut.statuses.filter((status) => status !== 200)).toEqual([]);
    for (let index = 0; index < OTHER_READS; index += 1) expect(await upgradeStatus(front.url)).toBe(101);

    // A partition plus a kill: only b is left. nginx has never emptied its upstream.
    await a.stop();
    const afterKill = await readThroughNginx(READS);
    expect(afterKill.titles.filter((title) => title !== 'After')).toEqual([]);
    expect(afterKill.statuses.filter((status) => status !== 200)).toEqual([]);

    // Every live instance cut off (the database itself away): the current track is answered from
    // what they knew, as without a load balancer.
    proxies[0].stall();
    await until(async () => (await request(`${b.url}/v1/health/ready`)).status === 503, 'b says it is not ready');
    const allCut = await readThroughNginx(OTHER_READS, false);
    expect(allCut.statuses.filter((status) => status !== 200)).toEqual([]);
    expect(allCut.titles.filter((title) => title !== 'After' && title !== 'Before')).toEqual([]);

    for (const proxy of proxies) proxy.restore();
    await until(async () => (await request(`${cut.url}/v1/health/ready`)).status === 200, 'the cut instance is ready again');
    expect(await titleAt(cut.url)).toBe('After');
  });
});
