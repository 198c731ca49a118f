import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { asObject, postJson } from '../../helpers/http';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { startReceiver, type Received, type Receiver } from '../../helpers/receiver';
import { startServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { makeTempDir } from '../../helpers/temp-dir';
import { until } from '../../helpers/eventually';

// Durable delivery (docs/outputs.md "Delivery"): a pending message survives kill -9 and arrives
// with its id after a restart; several instances on one PostgreSQL database deliver each message
// exactly once. Real `svc serve` processes.

const SIGNING = `whsec_${randomBytes(24).toString('base64')}`;

async function freePortThenDown(): Promise<number> {
  const probe = await startReceiver();
  await probe.close();
  return probe.port;
}

/** One row of a query on the SQLite file of a stopped or running svc, read-only. */
function readRow<T>(file: string, sql: string, ...params: unknown[]): T | undefined {
  const sqlite = new Database(file, { readonly: true });
  try {
    return sqlite.prepare(sql).get(...params) as T | undefined;
  } finally {
    sqlite.close();
  }
}

const titleOf = (one: Received | undefined) => (JSON.parse(one?.body.toString('utf8') ?? '{}') as { data?: { title?: string } }).data?.title;

const killed = async (instance: ServeProcess) => {
  instance.child.kill('SIGKILL');
  await instance.exited;
};

describe('a pending delivery and kill -9', () => {
  let temp: ReturnType<typeof makeTempDir>;
  let receiver: Receiver | undefined;
  let instance: ServeProcess | undefined;
  beforeEach(() => {
    temp = makeTempDir();
  });
  afterEach(async () => {
    if (instance) await killed(instance);
    await receiver?.close();
    temp.cleanup();
  });

  it('When the target is down and svc is killed with -9, then after a restart, once the target is up, the message arrives once with the same webhook-id', async () => {
    const port = await freePortThenDown();
    const db = path.join(temp.dir, 'svc.db');
    fs.writeFileSync(
      path.join(temp.dir, '.svcrc.json'),
      JSON.stringify({ outputs: [{ name: 'hook', type: 'webhook', url: `http://127.0.0.1:${port}/in`, secret: SIGNING }] }),
    );
    instance = await startServeProcess(['--port', '0', '--db', db, '--offline'], {}, temp.dir);
    const dbid = Number(asObject((await postJson(`${instance.url}/v1/remoteinput`, { artist: 'A', title: 'Survivor' })).json).dbid);
    const readMessage = () =>
      readRow<{ message_id: string; state: string; attempts: number }>(db, 'SELECT message_id, state, attempts FROM output_messages WHERE dbid = ?', dbid);
    const deadline = Date.now() + 15_000;
    while ((readMessage()?.attempts ?? 0) < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const before = readMessage();
    expect(before).toMatchObject({ state: 'pending' });
    expect(before!.attempts).toBeGreaterThanOrEqual(1);
    await killed(instance);
    instance = undefined;

    instance = await startServeProcess(['--port', '0', '--db', db, '--offline'], {}, temp.dir);
    receiver = await startReceiver(port);
    const [arrived] = await receiver.waitFor(1, 30_000);
    expect(arrived.headers['webhook-id']).toBe(before!.message_id);
    expect(JSON.parse(arrived.body.toString('utf8'))).toMatchObject({ type: 'track.changed', data: { dbid, title: 'Survivor' } });
    // The marker: a second delivery of the survivor would come before the next track's.
    await postJson(`${instance.url}/v1/remoteinput`, { artist: 'A', title: 'Marker' });
    const [, next] = await receiver.waitFor(2, 30_000);
    expect(titleOf(next)).toBe('Marker');
    expect(receiver.received).toHaveLength(2);
    expect(readMessage()).toMatchObject({ state: 'delivered' });
  });

  it('When svc was killed after writing a change and before queueing it, then the next start queues it and the message arrives', async () => {
    receiver = await startReceiver();
    const db = path.join(temp.dir, 'svc.db');
    fs.writeFileSync(
      path.join(temp.dir, '.svcrc.json'),
      JSON.stringify({ outputs: [{ name: 'hook', type: 'webhook', url: `${receiver.url}/in`, secret: SIGNING }] }),
    );
    instance = await startServeProcess(['--port', '0', '--db', db, '--offline'], {}, temp.dir);
    const dbid = Number(asObject((await postJson(`${instance.url}/v1/remoteinput`, { artist: 'A', title: 'Before' })).json).dbid);
    await receiver.waitFor(1, 15_000);
    // Killed once that delivery is recorded: a claim left open would hold the queue for its lease.
    const pending = () => readRow<{ n: number }>(db, "SELECT count(*) AS n FROM output_messages WHERE state = 'pending'")?.n ?? 0;
    const deadline = Date.now() + 15_000;
    while (pending() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await killed(instance);
    instance = undefined;
    // What a kill -9 between the answer and the move into the queues leaves: the change row alone.
    const sqlite = new Database(db);
    sqlite
      .prepare("INSERT INTO output_changes (event, dbid, payload, created_at) VALUES ('settled', ?, ?, ?)")
      .run(dbid + 1, JSON.stringify({ dbid: dbid + 1, artist: 'A', title: 'Acknowledged' }), Date.now());
    sqlite.close();

    instance = await startServeProcess(['--port', '0', '--db', db, '--offline'], {}, temp.dir);
    const arrived = await receiver.waitFor(2, 15_000);
    expect(JSON.parse(arrived[1].body.toString('utf8'))).toMatchObject({ type: 'track.changed', data: { dbid: dbid + 1, title: 'Acknowledged' } });
  });
});

describeWithPostgres('outputs with two instances on one PostgreSQL database', () => {
  let database: TestDatabase;
  let temp: ReturnType<typeof makeTempDir>;
  let hooks: Receiver;
  let titles: Receiver;
  let instances: ServeProcess[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
    temp = makeTempDir();
    hooks = await startReceiver();
    titles = await startReceiver();
    fs.writeFileSync(
      path.join(temp.dir, '.svcrc.json'),
      JSON.stringify({
        outputs: [
          { name: 'hook', type: 'webhook', url: `${hooks.url}/in`, secret: SIGNING },
          // Every instance hears every change and enqueues the title: it must still go once.
          { name: 'stream', type: 'icecast', url: `${titles.url}/live`, password: 'hackme-source-password' },
        ],
      }),
    );
    instances = await Promise.all([1, 2].map(() => startServeProcess(['--port', '0', '--db', database.url, '--offline'], {}, temp.dir)));
  });
  afterAll(async () => {
    await Promise.all(instances.map(killed));
    await hooks?.close();
    await titles?.close();
    await database?.drop();
    temp?.cleanup();
  });

  it('When ten tracks are submitted through both instances, then each webhook message is delivered exactly once, in dbid order, and no title twice', async () => {
    const dbids: number[] = [];
    for (let index = 0; index < 10; index += 1) {
      const instance = instances[index % 2];
      dbids.push(Number(asObject((await postJson(`${instance.url}/v1/remoteinput`, { artist: 'A', title: `Track ${index}` })).json).dbid));
    }
    await hooks.waitFor(10, 30_000);
    // The marker: a second delivery of any of the ten, or a title sent twice, would come before it.
    const marker = Number(asObject((await postJson(`${instances[0].url}/v1/remoteinput`, { artist: 'A', title: 'Marker' })).json).dbid);
    const arrived = await hooks.waitFor(11, 30_000);
    const songOf = (one: Received) => new URL(one.path, 'http://x').searchParams.get('song');
    await until(() => titles.received.some((one) => songOf(one) === 'A - Marker'), 'the marker title arrived');
    expect(hooks.received).toHaveLength(11);
    const delivered = arrived.map((one) => (JSON.parse(one.body.toString('utf8')) as { data: { dbid: number } }).data.dbid);
    expect(delivered).toEqual([...dbids, marker]);
    expect(new Set(arrived.map((one) => one.headers['webhook-id'])).size).toBe(11);
    const songs = titles.received.map(songOf);
    expect(songs.length).toBeGreaterThanOrEqual(2);
    expect(new Set(songs).size).toBe(songs.length);
    expect(songs.at(-1)).toBe('A - Marker');
    const rows = await database.query<{ n: string }>(
      "SELECT count(*) AS n FROM output_messages WHERE output = 'stream' AND kind = 'track.changed' AND dbid = $1",
      [dbids[9]],
    );
    expect(Number(rows[0]?.n)).toBe(1);
  });

  it('When an instance died after writing a change and before queueing it, then a running instance queues it within seconds, once', async () => {
    const before = hooks.received.length;
    // The row a killed instance leaves; both running instances look for such changes every second.
    await database.query("INSERT INTO output_changes (event, dbid, payload, created_at) VALUES ('settled', 1000, $1, $2)", [
      JSON.stringify({ dbid: 1000, artist: 'A', title: 'Orphan' }),
      Date.now(),
    ]);
    const arrived = await hooks.waitFor(before + 1, 10_000);
    expect(JSON.parse(arrived[before].body.toString('utf8'))).toMatchObject({ data: { dbid: 1000, title: 'Orphan' } });
    // The marker, a second orphan after it: a second queueing of the first would be delivered before it.
    await database.query("INSERT INTO output_changes (event, dbid, payload, created_at) VALUES ('settled', 1001, $1, $2)", [
      JSON.stringify({ dbid: 1001, artist: 'A', title: 'Marker' }),
      Date.now(),
    ]);
    const next = await hooks.waitFor(before + 2, 10_000);
    expect(titleOf(next[before + 1])).toBe('Marker');
    expect(hooks.received).toHaveLength(before + 2);
  });
});
