import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { eventually } from '../../helpers/eventually';
import { asObject, postJson } from '../../helpers/http';
import { serveBytes, startImageHost, type Handler, type ImageHost } from '../../helpers/image-host';
import { makePng } from '../../helpers/images';
import { BROKER, clearRetained, retainedUnder } from '../../helpers/mqtt-broker';
import { describeWithPeers } from '../../helpers/peers';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres';
import { startServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy';
import { makeTempDir } from '../../helpers/temp-dir';
import { connectAsync } from 'mqtt';
import { createMqttOutput } from '../../../src/outputs/mqtt';
import { messageOf } from '../../helpers/output-message';
import { silentLogger } from '../../helpers/silent-logger';
import { until } from '../../helpers/eventually';

// Retained `now_playing` ends on the newest dbid, never on the newest queued message
// (docs/outputs.md "Delivery"). Two `svc serve` instances share one PostgreSQL and one mqtt output on
// the real Mosquitto, reached through a TCP proxy the test cuts (a broker outage). While the broker
// is away, instance one stores A with a cover that the test holds back, instance two stores B
// (newer), and only then A's enrichment ends: A's end-of-enrichment message is queued last. When
// the broker is back, the retained message must be B's.

describeWithPeers(['mosquitto', 'postgresql'], 'a broker outage while two instances queue tracks out of dbid order', () => {
  const prefix = `svc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  const held: (() => void)[] = [];
  let database: TestDatabase;
  let temp: ReturnType<typeof makeTempDir>;
  let broker: TcpProxy;
  let host: ImageHost;
  let instances: ServeProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    temp = makeTempDir();
    const brokerUrl = new URL(BROKER);
    broker = await startTcpProxy(Number(brokerUrl.port || 1883), brokerUrl.hostname);
    host = await startImageHost();
    const cover = serveBytes(makePng(8, 8, [1, 2, 3], [4, 5, 6]), 'image/png');
    const gated: Handler = (request, response) => held.push(() => cover(request, response));
    host.route('/held.png', gated);
    brokerUrl.port = String(broker.port);
    fs.writeFileSync(
      path.join(temp.dir, '.svcrc.json'),
      JSON.stringify({ coverFetch: { allowPrivateAddresses: true }, outputs: [{ name: 'now', type: 'mqtt', url: brokerUrl.toString(), topic: prefix }] }),
    );
    instances = await Promise.all(['one', 'two'].map(() => startServeProcess(['--port', '0', '--db', database.url, '--offline'], {}, temp.dir)));
  }, 60_000);
  afterAll(async () => {
    for (const instance of instances) instance.child.kill('SIGKILL');
    await Promise.all(instances.map((instance) => instance.exited));
    held.forEach((release) => release());
    await Promise.all([host?.close(), broker?.close()]);
    await clearRetained(`${prefix}/#`);
    await database?.drop();
    temp?.cleanup();
  });

  const retainedDbid = async () => {
    const text = (await retainedUnder(`${prefix}/now_playing`)).get(`${prefix}/now_playing`);
    return text ? Number((JSON.parse(text) as { dbid: number }).dbid) : undefined;
  };
  const queued = async (dbid: number, kind: string) =>
    Number((await database.query<{ n: string }>('SELECT count(*) AS n FROM output_messages WHERE dbid = $1 AND kind = $2', [dbid, kind]))[0]?.n);

  it('When A settles after the newer B during the outage, then the retained now_playing ends on B', async () => {
    const [one, two] = instances;
    if (!one || !two) throw new Error('two instances');
    // Both connected: a first track is delivered.
    const warm = Number(asObject((await postJson(`${one.url}/v1/remoteinput`, { artist: 'Warm', title: 'Up' })).json).dbid);
    await eventually(retainedDbid, (dbid) => dbid === warm, 30_000);

    broker.cut();
    const first = postJson(`${one.url}/v1/remoteinput`, { artist: 'A', title: 'Older', coverurl: `${host.url}/held.png` });
    await eventually(
      async () => held.length,
      (n) => n === 1,
    );
    // Stored and announced; its answer waits for its cover.
    const current = await eventually(
      async () => asObject(await (await fetch(`${one.url}/v1/last`)).json()),
      (track) => track.title === 'Older',
    );
    const a = Number(current.dbid);
    const b = Number(asObject((await postJson(`${two.url}/v1/remoteinput`, { artist: 'B', title: 'Newer' })).json).dbid);
    expect(b).toBeGreaterThan(a);
    await eventually(
      () => queued(b, 'track.settled'),
      (n) => n === 1,
    );
    // A's enrichment ends last: its message is the newest row in the queue.
    held.shift()?.();
    expect(asObject((await first).json).dbid).toBe(a);
    await eventually(
      () => queued(a, 'track.settled'),
      (n) => n === 1,
    );

    broker.restore();
    const status = async () => asObject(((await (await fetch(`${one.url}/v1/outputs`)).json()) as { outputs: unknown[] }).outputs[0]);
    const after = await eventually(status, (row) => row.pending === 0 && asObject(row.lastSuccess ?? {}).dbid !== warm, 60_000);
    expect(after.lastSuccess).toMatchObject({ dbid: b });
    expect(await retainedDbid()).toBe(b);
  }, 120_000);
});

// A publish that got no PUBACK in time must not reach the broker later, after another instance
// published a newer track (docs/outputs.md "mqtt (and Home Assistant)"): the broker's connection is
// frozen (a silent partition that keeps the bytes), the output's publish of A times out, another
// client publishes B retained (the instance that took over), then the partition heals.
describeWithPeers(['mosquitto'], 'a publish stuck in a silent partition', () => {
  const prefix = `svc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  let broker: TcpProxy;

  beforeAll(async () => {
    const url = new URL(BROKER);
    broker = await startTcpProxy(Number(url.port || 1883), url.hostname);
  });
  afterAll(async () => {
    await broker?.close();
    await clearRetained(`${prefix}/#`);
  });

  const retained = async () => (await retainedUnder(`${prefix}/now_playing`)).get(`${prefix}/now_playing`);

  it('When the publish of A times out and B is published meanwhile, then A never arrives after B; the output then delivers again', async () => {
    const url = new URL(BROKER);
    url.port = String(broker.port);
    const output = createMqttOutput({ name: 'stuck', url: url.toString(), topic: prefix, instance: 'one' }, { get: async () => null }, silentLogger);
    try {
      await until(async () => (await retainedUnder(`${prefix}/status/one`)).get(`${prefix}/status/one`) === 'online', 'the output connected');
      broker.freeze();
      const timedOut = new AbortController();
      const sending = output.send(messageOf({ dbid: 1, title: 'A' }), timedOut.signal);
      await until(() => broker.heldBytes() > 0, 'the publish of A is held in the partition');
      // The dispatcher's deadline (src/signals.ts deadlineSignal) aborts with a TimeoutError.
      timedOut.abort(new DOMException('no answer within 10000 ms', 'TimeoutError'));
      expect(await sending).toMatchObject({ outcome: 'retry' });

      const other = await connectAsync(BROKER, { clientId: `svc-test-other-${randomBytes(4).toString('hex')}` });
      await other.publishAsync(`${prefix}/now_playing`, JSON.stringify({ dbid: 2, title: 'B' }), { qos: 1, retain: true });
      await other.endAsync();

      broker.restore();
      await until(() => broker.heldBytes() === 0, 'the partition passed on what it held');
      // A fresh subscriber's marker comes after what the broker had been handed before it.
      expect(JSON.parse((await retained()) ?? '{}')).toMatchObject({ dbid: 2 });
      // The output connects again and delivers.
      await until(async () => (await output.send(messageOf({ dbid: 3, title: 'C' }), new AbortController().signal)).outcome === 'delivered', 'delivered again');
      expect(JSON.parse((await retained()) ?? '{}')).toMatchObject({ dbid: 3 });
    } finally {
      await output.close();
    }
  }, 60_000);
});
