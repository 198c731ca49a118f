import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { unusedPort } from '../../cli/cli-process';
import { asObject, postJson, request } from '../../helpers/http';
import { startNginxFront, type NginxFront } from '../../helpers/nginx';
import { describeWithPeers } from '../../helpers/peers';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres';
import { proxyInFrontOf, type TcpProxy } from '../../helpers/tcp-proxy';
import { makeTempDir } from '../../helpers/temp-dir';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/several-instances.md "Health checks": one of three instances behind the real nginx
// reaches PostgreSQL through a TCP proxy that stops passing bytes. Its /v1/health/ready answers 503
// within 5 s; from then on it refuses writes at once, nginx moves each one on and takes the
// instance out, and no submission through nginx fails.

const PARTITION_MS = 8000;
const SUBMIT_EVERY_MS = 100;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    let submitting = true;
    const submissions = (async () => {
      const pending: Promise<void>[] = [];
      for (let index = 0; submitting; index += 1) {
        pending.push(
          postJson(`${front.url}/v1/remoteinput`, { artist: 'Partition', title: `P${index}` }, { 'Idempotency-Key': randomUUID() }).then(
            (answer) => (answer.status === 200 ? void (stored += 1) : void failures.push(answer.status)),
            () => void failures.push(0),
          ),
        );
        await pause(SUBMIT_EVERY_MS);
      }
      await Promise.all(pending);
    })();

    await pause(1000);
    proxy.stall();
    const stalledAt = Date.now();
    let readyAfterMs = -1;
    while (Date.now() - stalledAt < PARTITION_MS) {
      if (readyAfterMs < 0 && (await request(`${cut.url}/v1/health/ready`)).status === 503) readyAfterMs = Date.now() - stalledAt;
      await pause(100);
    }
    const writesAfterReady = writesIn(cut.logs).length;
    submitting = false;
    await submissions;
    proxy.restore();

    const lateWrites = writesIn(cut.logs);
    // Writes that reached the cut instance once it knew: answered 503 at once (nginx moved them on).
    const slow = lateWrites.filter((line) => / 503 /.test(line) && Number(/ ([\d.]+)ms /.exec(line)?.[1]) > 100);
    process.stderr.write(
      `partition: ready 503 after ${readyAfterMs} ms; ${stored} stored, ${failures.length} failed; ` +
        `writes that reached the cut instance: ${lateWrites.length} (${slow.length} waited for the database); ${writesAfterReady} logged by the time ready said 503 + ${PARTITION_MS} ms\n`,
    );
    expect(readyAfterMs).toBeGreaterThanOrEqual(0);
    expect(readyAfterMs).toBeLessThanOrEqual(5000);
    expect(failures).toEqual([]);
    expect(stored).toBeGreaterThan(0);
    // After the first slow ones (in flight while the silence went unnoticed), nginx took it out:
    // of the ~80 writes during the partition, only a probe now and then reached it.
    expect(lateWrites.length).toBeLessThan(25);
    // Once back, it is ready again.
    for (let tries = 0; (await request(`${cut.url}/v1/health/ready`)).status !== 200 && tries < 100; tries += 1) await pause(100);
    expect((await request(`${cut.url}/v1/health/ready`)).status).toBe(200);
    expect(asObject((await request(`${cut.url}/v1/status`)).json)).toMatchObject({ database: 'ok' });
  });
});
