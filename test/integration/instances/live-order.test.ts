import http from 'node:http';
import { postJson } from '../../helpers/http';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { startServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { makeTempDir } from '../../helpers/temp-dir';

// Every live reader gets every dbid once, in order, whatever order an instance learns of them
// (docs/several-instances.md "Resuming streams"): two instances store tracks milliseconds apart,
// so each one's own write often reaches its readers before the other's older one is announced to
// it. An instance that showed N+1 first never sent N (issue 50, finding 2). A /v1/events reader
// on each instance collects the `id:` of every track event; the test waits until both have seen
// the last dbid stored, and then compares with the dbids the submissions were answered with.

const TRACKS = 200;

/** Reads the `id:` lines of /v1/events. */
function readIds(url: string): { ids: number[]; reached: (dbid: number) => Promise<void>; close: () => void } {
  const ids: number[] = [];
  const waiters: { dbid: number; resolve: () => void }[] = [];
  let buffer = '';
  const req = http.get(`${url}/v1/events`, { headers: { accept: 'text/event-stream' } }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('id: ')) continue;
        const dbid = Number(line.slice(4));
        ids.push(dbid);
        for (const waiter of waiters.filter((w) => w.dbid <= dbid)) waiter.resolve();
      }
    });
  });
  req.on('error', () => undefined);
  return {
    ids,
    reached: (dbid) => (ids.some((id) => id >= dbid) ? Promise.resolve() : new Promise((resolve) => waiters.push({ dbid, resolve }))),
    close: () => req.destroy(),
  };
}

describeWithPostgres('live readers across instances', () => {
  let database: TestDatabase;
  let temp: ReturnType<typeof makeTempDir>;
  let instances: ServeProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    temp = makeTempDir();
    instances = await Promise.all([1, 2].map(() => startServeProcess(['--port', '0', '--db', database.url, '--offline'], {}, temp.dir)));
  }, 60_000);
  afterAll(async () => {
    for (const instance of instances) instance.child.kill('SIGKILL');
    await Promise.all(instances.map((instance) => instance.exited));
    await database?.drop();
    temp?.cleanup();
  });

  it('When two instances store tracks milliseconds apart, then a /v1/events reader on each gets every dbid once, in order', async () => {
    const readers = instances.map((instance) => readIds(instance.url));
    try {
      // The first event of each reader is the current state: wait for the first track on both.
      const first = await postJson(`${instances[0]?.url}/v1/remoteinput`, { artist: 'Order', title: 'first' });
      const firstDbid = Number((first.json as { dbid: number }).dbid);
      await Promise.all(readers.map((reader) => reader.reached(firstDbid)));
      // Two writers, one per instance, each a few requests at a time.
      const dbids: number[] = [firstDbid];
      await Promise.all(
        instances.map(async (instance, which) => {
          for (let i = 0; i < TRACKS / 2; i += 4) {
            const answers = await Promise.all(
              [0, 1, 2, 3].map((k) => postJson(`${instance.url}/v1/remoteinput`, { artist: 'Order', title: `w${which} ${i + k}` })),
            );
            for (const answer of answers) {
              expect(answer.status).toBe(200);
              dbids.push(Number((answer.json as { dbid: number }).dbid));
            }
          }
        }),
      );
      const last = Math.max(...dbids);
      await Promise.all(readers.map((reader) => reader.reached(last)));
      const expected = [...dbids].sort((x, y) => x - y);
      for (const reader of readers) {
        // The same dbid twice in a row is an update of the record just sent (its play's end), not a double.
        const fromFirst = reader.ids.slice(reader.ids.indexOf(firstDbid)).filter((id, index, all) => index === 0 || all[index - 1] !== id);
        expect(fromFirst).toEqual(expected);
      }
    } finally {
      for (const reader of readers) reader.close();
    }
  }, 120_000);
});
