import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { unusedPort } from '../../cli/cli-process';
import { eventually, until } from '../../helpers/eventually';
import { startNginxFront, type NginxFront } from '../../helpers/nginx';
import { describeWithPeers } from '../../helpers/peers';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres';
import { startReceiver, type Receiver } from '../../helpers/receiver';
import { runCli } from '../../helpers/run-cli';
import { startServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { makeTempDir } from '../../helpers/temp-dir';

// docs/decisions.md "Delivery promises" as a station runs it: three instances on one PostgreSQL
// behind the nginx example (examples/nginx/nginx.conf), `svc submit` clients, and kill -9 of one
// instance after another while they submit (restarted each time). Every answered submission is
// its stored record, every record is stored once, and a webhook gets every stored record once, in
// dbid order. Scaled down from a night's 1,000 submissions: the kills, not the count, are the test.

const CLIENTS = 3;
const PER_CLIENT = 40;
const SIGNING = `whsec_${randomBytes(24).toString('base64')}`;

describeWithPeers(['nginx', 'postgresql'], 'kill -9 of instances behind nginx during submissions', () => {
  jest.setTimeout(120_000);
  let database: TestDatabase;
  let temp: ReturnType<typeof makeTempDir>;
  let receiver: Receiver;
  const ports: number[] = [];
  const instances: ServeProcess[] = [];
  let front: NginxFront;

  const start = (index: number) =>
    startServeProcess(['--port', String(ports[index]), '--db', database.url, '--offline'], {}, temp.dir).then((instance) => {
      instances[index] = instance;
    });

  beforeAll(async () => {
    database = await createTestDatabase();
    temp = makeTempDir();
    receiver = await startReceiver();
    const outputs = [{ name: 'hook', type: 'webhook', url: `${receiver.url}/hook`, secret: SIGNING }];
    fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ processingTimeoutSeconds: 3, enrichment: { deadlineSeconds: 1 }, outputs }));
    for (let index = 0; index < 3; index++) ports.push(await unusedPort());
    for (let index = 0; index < 3; index++) await start(index);
    fs.mkdirSync(path.join(temp.dir, 'nginx'));
    front = startNginxFront(
      path.join(temp.dir, 'nginx'),
      await unusedPort(),
      ports.map((port) => `127.0.0.1:${port}`),
    );
  });
  afterAll(async () => {
    await front?.stop();
    for (const instance of instances) if (instance.child.exitCode === null) instance.child.kill('SIGKILL');
    await Promise.all(instances.map((instance) => instance.exited));
    await receiver?.close();
    await database?.drop();
    temp?.cleanup();
  });

  it('When instances are killed one after another, then every 2xx is its stored record, stored once, and the webhook gets each once in dbid order', async () => {
    let kills = 0;
    const killer = (async () => {
      for (const index of [0, 1, 2]) {
        // Each kill lands while writes are under way: 20 more tracks delivered since the last one.
        await until(() => receiver.received.length >= (index + 1) * 20, 'writes are under way', 60_000);
        instances[index]?.child.kill('SIGKILL');
        await instances[index]?.exited;
        kills += 1;
        await start(index);
      }
    })();
    const runs = await Promise.all(
      Array.from({ length: CLIENTS }, (_, client) => {
        const input = Array.from({ length: PER_CLIENT }, (_, index) => JSON.stringify({ artist: 'Kill', title: `c${client}-${index}` })).join('\n');
        return runCli(['submit', '-', '--url', front.url, '--timeout', '30', '--json'], { input, timeoutMs: 100_000 });
      }),
    );
    await killer;
    expect(kills).toBe(3);
    for (const run of runs) expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const answered = runs
      .flatMap((run) => run.stdout.trim().split('\n'))
      .map((line) => JSON.parse(line) as { dbid: number; processed_metadata: { title: string } });
    expect(answered).toHaveLength(CLIENTS * PER_CLIENT);

    const stored = await database.query<{ dbid: string; title: string }>(`SELECT dbid, metadata->>'title' AS title FROM tracks ORDER BY dbid`);
    const titles = stored.map((row) => row.title);
    expect(titles.filter((title, index) => titles.indexOf(title) !== index)).toEqual([]);
    expect(stored).toHaveLength(CLIENTS * PER_CLIENT);
    const dbidOf = new Map(stored.map((row) => [row.title, Number(row.dbid)]));
    expect(answered.filter((answer) => dbidOf.get(answer.processed_metadata.title) !== answer.dbid)).toEqual([]);

    // The webhook: one message (webhook-id) per stored record, first arrivals in dbid order. A
    // message whose attempt a kill cut short comes again with its id once the claim expires.
    const firstArrivals = () => {
      const seen = new Map<string, number>();
      for (const one of receiver.received) {
        const id = String(one.headers['webhook-id']);
        if (!seen.has(id)) seen.set(id, (JSON.parse(one.body.toString('utf8')) as { data: { dbid: number } }).data.dbid);
      }
      return [...seen.values()];
    };
    const delivered = await eventually(
      async () => firstArrivals(),
      (dbids) => dbids.length >= stored.length,
      60_000,
    );
    expect(delivered).toEqual(stored.map((row) => Number(row.dbid)));
    process.stdout.write(
      `\nkills behind nginx: ${CLIENTS * PER_CLIENT} submissions, ${kills} kill -9, ${stored.length} stored once, ${delivered.length} delivered in dbid order, ${receiver.received.length - delivered.length} repeated with the same webhook-id\n`,
    );
  });
});
