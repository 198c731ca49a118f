import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { unusedPort } from '../../cli/cli-process';
import { until } from '../../helpers/eventually';
import { asObject, postJson, request } from '../../helpers/http';
import { startNginxFront, type NginxFront } from '../../helpers/nginx';
import { describeWithPeers } from '../../helpers/peers';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres';
import { proxyInFrontOf, type TcpProxy } from '../../helpers/tcp-proxy';
import { makeTempDir } from '../../helpers/temp-dir';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/several-instances.md "Health checks": one of three instances behind the real nginx
// reaches PostgreSQL through a TCP proxy that stops passing bytes. Its /v1/health/ready answers 503
// (within 5 s by the liveness checks' design, src/store/postgres/liveness.ts; asserted here only
// as a hang guard); from then on it refuses writes at once, nginx moves each one on and takes the
// instance out, and no submission through nginx fails.

/** The writes answered through nginx while the instance is cut off, once it says 503. */
const WRITES_DURING_PARTITION = 45;
/** The stations' pace: a new submission this often, whether or not the last one was answered. */
const SUBMIT_EVERY_MS = 100;
/** The most that /v1/health/ready may take to say 503, as a hang guard (the design says < 5 s). */
const READY_503_GUARD_MS = 20_000;

/** The POST /v1/remoteinput lines of an instance's access log (method, path, status, ms). */
const writesIn = (logs: readonly string[]) => logs.filter((line) => line.includes('POST /v1/remoteinput '));

describeWithPeers(['nginx', 'postgresql'], 'a partitioned instance behind nginx', () => {
  jest.setTimeout(90_000);
  let database: TestDatabase;
  let proxy: TcpProxy;
  let instances: TestServer[] = [];
  let front: NginxFront;
  let temp: ReturnType<typeof makeTempDir>;

  beforeAll(async () => {
    database = await createTestDatabase();
    const proxied = await proxyInFrontOf(database.url);
    proxy = proxied.proxy;
    const config = (location: string) => ({ config: { database: { location }, trustProxy: ['127.0.0.1'] } });
    instances = [await startTestServer(config(database.url)), await startTestServer(config(database.url)), await startTestServer(config(proxied.url))];
    temp = makeTempDir();
    front = startNginxFront(
      path.join(temp.dir),
      await unusedPort(),
      instances.map((instance) => new URL(instance.url).host),
    );
  });
  afterAll(async () => {
    await front?.stop();
    await Promise.all(instances.map((instance) => instance.close()));
    await proxy?.close();
    await database?.drop();
    temp?.cleanup();
  });

  it('When its database stops answering, then ready is 503 within 5 s, nginx moves the writes on and takes it out, and 0 submissions fail', async () => {
    const cut = instances[2];
    expect((await request(`${cut.url}/v1/health/ready`)).status).toBe(200);
    expect((await request(`${cut.url}/v1/health/live`)).status).toBe(200);

    const failures: number[] = [];
    let stored = 0;
    const pending: Promise<void>[] = [];
    let index = 0;
    const submitter = setInterval(() => {
      index += 1;
      pending.push(
        postJson(`${front.url}/v1/remoteinput`, { artist: 'Partition', title: `P${index}` }, { 'Idempotency-Key': randomUUID() }).then(
          (answer) => (answer.status === 200 ? void (stored += 1) : void failures.push(answer.status)),
          () => void failures.push(0),
        ),
      );
    }, SUBMIT_EVERY_MS);

    await until(() => stored >= 5, 'writes went through nginx before the partition');
    proxy.stall();
    const stalledAt = Date.now();
    await until(async () => (await request(`${cut.url}/v1/health/ready`)).status === 503, 'the cut instance said 503 on ready', READY_503_GUARD_MS);
    const readyAfterMs = Date.now() - stalledAt;
    const answeredAtReady = stored + failures.length;
    await until(
      () => stored + failures.length >= answeredAtReady + WRITES_DURING_PARTITION,
      `${WRITES_DURING_PARTITION} writes answered during the partition`,
      60_000,
    );
    const writesAfterReady = writesIn(cut.logs).length;
    clearInterval(submitter);
    await Promise.all(pending);
    proxy.restore();

    const lateWrites = writesIn(cut.logs);
    // Writes that reached the cut instance once it knew: answered 503 at once (nginx moved them on).
    const slow = lateWrites.filter((line) => / 503 /.test(line) && Number(/ ([\d.]+)ms /.exec(line)?.[1]) > 100);
    process.stderr.write(
      `partition: ready 503 after ${readyAfterMs} ms; ${stored} stored, ${failures.length} failed; ` +
        `writes that reached the cut instance: ${lateWrites.length} (${slow.length} waited for the database); ${writesAfterReady} logged by ${WRITES_DURING_PARTITION} answers after ready said 503\n`,
    );
    expect(failures).toEqual([]);
    expect(stored).toBeGreaterThan(0);
    // After the first slow ones (in flight while the silence went unnoticed), nginx took it out:
    // of the writes during the partition, only a probe now and then reached it.
    expect(lateWrites.length).toBeLessThan(25);
    // Once back, it is ready again.
    await until(async () => (await request(`${cut.url}/v1/health/ready`)).status === 200, 'the cut instance was ready again', READY_503_GUARD_MS);
    expect(asObject((await request(`${cut.url}/v1/status`)).json)).toMatchObject({ database: 'ok' });
  });
});
