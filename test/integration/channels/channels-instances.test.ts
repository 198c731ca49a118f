import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { until } from '../../helpers/eventually';
import { asObject, postJson, request } from '../../helpers/http';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { startServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { makeTempDir } from '../../helpers/temp-dir';

// docs/channels.md "Now playing per channel" on several instances of one PostgreSQL database:
// plays on two channels are submitted at once, spread over three instances; each instance's
// /v1/events?channel= reader gets exactly its channel's dbids, once each, in order, and every
// instance's /v1/last?channel= names the same current play per channel.

const TRACKS = 60;
const CHANNELS = ['FM', 'Web'] as const;

/** The `id:` lines of one SSE stream. */
function readIds(url: string): { ids: number[]; opened: Promise<void>; close: () => void } {
  const ids: number[] = [];
  let buffer = '';
  let markOpen: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (markOpen = resolve));
  const req = http.get(url, { headers: { accept: 'text/event-stream' } }, (res) => {
    markOpen();
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('id: ')) ids.push(Number(line.slice(4)));
    });
  });
  req.on('error', () => undefined);
  return { ids, opened, close: () => req.destroy() };
}

describeWithPostgres('channels across instances', () => {
  let database: TestDatabase;
  let temp: ReturnType<typeof makeTempDir>;
  let instances: ServeProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    temp = makeTempDir();
    fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ channels: CHANNELS.map((name) => ({ name })) }));
    instances = await Promise.all([1, 2, 3].map(() => startServeProcess(['--port', '0', '--db', database.url, '--offline'], {}, temp.dir)));
  }, 60_000);
  afterAll(async () => {
    for (const instance of instances) instance.child.kill('SIGKILL');
    await Promise.all(instances.map((instance) => instance.exited));
    await database?.drop();
    temp?.cleanup();
  });

  it('When plays on two channels arrive at once on three instances, then every instance agrees on each channel, with no lost or reordered event', async () => {
    const readers = instances.map((instance) =>
      Object.fromEntries(CHANNELS.map((channel) => [channel, readIds(`${instance.url}/v1/events?channel=${channel}`)])),
    );
    try {
      // Every stream is open (its headers came) before the first play is submitted.
      await Promise.all(readers.flatMap((set) => Object.values(set).map((reader) => reader.opened)));
      const answers = await Promise.all(
        Array.from({ length: TRACKS }, async (_, index) => {
          const channel = CHANNELS[index % 2] ?? 'FM';
          const instance = instances[index % 3];
          const answer = await postJson(`${instance.url}/v1/remoteinput`, { artist: 'Band', title: `t${index}`, channel });
          expect(answer.status).toBe(200);
          return { channel, dbid: Number(asObject(answer.json).dbid) };
        }),
      );
      for (const channel of CHANNELS) {
        const dbids = answers
          .filter((answer) => answer.channel === channel)
          .map((answer) => answer.dbid)
          .sort((a, b) => a - b);
        const newest = dbids[dbids.length - 1];
        for (const [index, instance] of instances.entries()) {
          const reader = readers[index]?.[channel];
          await until(() => (reader?.ids ?? []).includes(newest ?? -1), `instance ${index + 1} hears ${channel}'s newest`);
          expect(reader?.ids).toEqual(dbids);
          expect(asObject((await request(`${instance.url}/v1/last?channel=${channel}`)).json)).toMatchObject({ dbid: newest, channel });
        }
      }
    } finally {
      for (const set of readers) for (const reader of Object.values(set)) reader.close();
    }
  });
});
