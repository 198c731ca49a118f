import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startCli, unusedPort } from '../../cli/cli-process';
import { asObject, postJson, request } from '../../helpers/http';
import { startNginxFront, type NginxFront } from '../../helpers/nginx';
import { describeWithPeers } from '../../helpers/peers';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres';
import { startResumingReader, streamFaults, type ResumingReader } from '../../helpers/resuming-sse';
import { startServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { makeTempDir } from '../../helpers/temp-dir';

// docs/several-instances.md "Resuming streams": SSE readers and `svc last --follow` through the
// real nginx (examples/nginx/nginx.conf) in front of three instances, one of them killed while
// tracks change ten times a second. Every reader must end with every track stored after it
// started, once each, in increasing dbid order. Scaled down from the 300 readers: 30 are
// enough to fill the fair queue of replays (a few per client) when they come back together.

const READERS = 30;
const TRACKS = 40;
const TRACK_INTERVAL_MS = 100;
const KILL_AFTER = 10;

interface Station {
  database: TestDatabase;
  temp: ReturnType<typeof makeTempDir>;
  instances: ServeProcess[];
  front: NginxFront;
}

async function startStation(config: Record<string, unknown>): Promise<Station> {
  const database = await createTestDatabase();
  const temp = makeTempDir();
  // openWrites: the test submits without a secret, which trustProxy otherwise refuses (docs/security.md).
  fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ openWrites: true, ...config }));
  const instances = await Promise.all([1, 2, 3].map(() => startServeProcess(['--port', '0', '--db', database.url, '--offline'], {}, temp.dir)));
  fs.mkdirSync(path.join(temp.dir, 'nginx'));
  const front = startNginxFront(
    path.join(temp.dir, 'nginx'),
    await unusedPort(),
    instances.map((instance) => new URL(instance.url).host),
  );
  for (let tries = 0; (await request(`${front.url}/v1/status`).catch(() => ({ status: 0 }))).status !== 200; tries += 1) {
    if (tries > 100) throw new Error('nginx did not answer');
    await pause(50);
  }
  return { database, temp, instances, front };
}

async function stopStation(station: Station | undefined): Promise<void> {
  if (!station) return;
  await station.front.stop();
  for (const instance of station.instances) instance.child.kill('SIGKILL');
  await Promise.all(station.instances.map((instance) => instance.exited));
  await station.database.drop();
  station.temp.cleanup();
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** One submission through nginx with an Idempotency-Key, tried again (same key) until it is answered 200. */
async function submit(front: string, title: string): Promise<number> {
  const key = randomUUID();
  for (let attempt = 0; ; attempt += 1) {
    const answer = await postJson(`${front}/v1/remoteinput`, { artist: 'Show', title }, { 'Idempotency-Key': key }).catch(() => ({ status: 0, json: {} }));
    if (answer.status === 200) return Number(asObject(answer.json).dbid);
    // While every instance is marked failed (each killed within nginx's fail_timeout), nginx answers 502.
    if (attempt > 100) throw new Error(`submission ${title} failed: ${answer.status}`);
    await pause(200);
  }
}

/** The instance serving the most of these readers (by its request-id prefix), or the first one. */
async function busiest(station: Station, readers: readonly ResumingReader[]): Promise<ServeProcess> {
  const prefixes = await Promise.all(
    station.instances.map(async (instance) => String((await fetch(`${instance.url}/v1/status`)).headers.get('x-request-id')).split('-')[0]),
  );
  const counts = prefixes.map((prefix) => readers.filter((reader) => reader.servedBy() === prefix).length);
  return station.instances[counts.indexOf(Math.max(...counts))] ?? station.instances[0];
}

/** Ten tracks a second through nginx; `between(index)` runs before track `index` (kills an instance). */
async function runShow(station: Station, between: (index: number) => Promise<void>): Promise<number[]> {
  const dbids: number[] = [];
  for (let index = 0; index < TRACKS; index += 1) {
    await between(index);
    const started = Date.now();
    dbids.push(await submit(station.front.url, `Track ${index}`));
    await pause(Math.max(0, TRACK_INTERVAL_MS - (Date.now() - started)));
  }
  return dbids;
}

async function storedAfter(database: TestDatabase, dbid: number): Promise<number[]> {
  return (await database.query<{ dbid: string }>('SELECT dbid FROM tracks WHERE dbid > $1 ORDER BY dbid', [dbid])).map((row) => Number(row.dbid));
}

async function caughtUp(readers: ResumingReader[], last: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (readers.some((reader) => !reader.ids().includes(last)) && Date.now() < deadline) await pause(100);
}

function faultsOf(readers: ResumingReader[], expected: number[]) {
  const faults = readers.map((reader) => streamFaults(reader.ids(), expected));
  return {
    readersWithGap: faults.filter((fault) => fault.gaps > 0).length,
    duplicates: faults.reduce((sum, fault) => sum + fault.duplicates, 0),
    backwards: faults.reduce((sum, fault) => sum + fault.backwards, 0),
    refusals: readers.reduce((sum, reader) => sum + reader.refusals(), 0),
    reconnects: readers.reduce((sum, reader) => sum + reader.connections(), 0) - readers.length,
  };
}

describeWithPeers(['nginx', 'postgresql'], 'SSE readers and followers through nginx while an instance is killed', () => {
  jest.setTimeout(180_000);
  let station: Station | undefined;
  afterEach(async () => {
    await stopStation(station);
    station = undefined;
  });

  test.each([
    ['with trustProxy, each reader its own client', { trustProxy: ['127.0.0.1'] }, READERS],
    // Three times as many readers, all one client (nginx): more at once than one client's place in
    // the queue holds, unless they missed the same records at one store version and share a read
    // (src/server/streams/sse/event-stream.ts); either way none may miss or double a track.
    ['without trustProxy: every reader is nginx, one client in the fair queue', {}, READERS * 3],
  ])('When %s, then 0 readers have a gap, 0 duplicates, ids strictly increasing', async (_name, config, readerCount) => {
    station = await startStation(config);
    const first = await submit(station.front.url, 'Opening');
    // Each reader comes from its own address behind an outer proxy (believed only with trustProxy).
    const readers = Array.from({ length: readerCount }, (_, index) =>
      startResumingReader(`${station?.front.url}/v1/events`, first, { 'X-Forwarded-For': `198.51.100.${index + 1}` }),
    );
    try {
      const dbids = await runShow(station, async (index) => {
        if (index === KILL_AFTER) (await busiest(station as Station, readers)).child.kill('SIGKILL');
      });
      await caughtUp(readers, Math.max(...dbids));
      const expected = await storedAfter(station.database, first);
      const faults = faultsOf(readers, expected);
      process.stderr.write(`behind nginx (${_name}): ${readerCount} readers, ${expected.length} tracks: ${JSON.stringify(faults)}\n`);
      expect(faults).toMatchObject({ readersWithGap: 0, duplicates: 0, backwards: 0 });
      // The killed instance's readers came back through nginx.
      expect(faults.reconnects).toBeGreaterThan(0);
    } finally {
      for (const reader of readers) reader.stop();
    }
  });

  test('When svc last --follow reads through nginx and an instance is killed, then every dbid is printed once', async () => {
    station = await startStation({ trustProxy: ['127.0.0.1'] });
    const first = await submit(station.front.url, 'Opening');
    const follow = startCli(['last', '--follow', '--json', '--url', station.front.url]);
    try {
      await follow.waitForLines(1);
      // Which instance holds its WebSocket is not known from here: one after the other is killed
      // and started again on its port until the follower loses its connection.
      const dbids = await runShow(station, async (index) => {
        const victim = index % KILL_AFTER === 0 && index > 0 ? (station as Station).instances[index / KILL_AFTER - 1] : undefined;
        if (!victim || /lost the connection/.test(follow.stderr())) return;
        victim.child.kill('SIGKILL');
        await victim.exited;
        const port = new URL(victim.url).port;
        (station as Station).instances[index / KILL_AFTER - 1] = await startServeProcess(
          ['--port', port, '--db', (station as Station).database.url, '--offline'],
          {},
          (station as Station).temp.dir,
        );
      });
      const expected = await storedAfter(station.database, first - 1);
      const printed = () => follow.lines().map((line) => Number(asObject(JSON.parse(line)).dbid));
      const deadline = Date.now() + 30_000;
      while (!printed().includes(Math.max(...dbids)) && Date.now() < deadline) await pause(100);
      expect(printed()).toEqual(expected);
      expect(follow.stderr()).toMatch(/reconnected/);
    } finally {
      await follow.stop();
    }
  });
});
