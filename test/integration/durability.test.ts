import path from 'node:path';
import Database from 'better-sqlite3';
import { asObject, getWithQuery, postJson, request } from '../helpers/http';
import { startServeProcess } from '../helpers/serve-process';
import { makeTempDir } from '../helpers/temp-dir';
import { startTestServer } from '../helpers/test-server';
import { until } from '../helpers/eventually';

describe('restart', () => {
  it('When the server stops and starts on the same database, then /v1/last is unchanged and the next dbid continues', async () => {
    const t = await startTestServer();
    try {
      let lastDbid = 0;
      for (let i = 1; i <= 3; i += 1) lastDbid = asObject((await postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: `T${i}` })).json).dbid as number;
      const before = await request(`${t.url}/v1/last`);
      await t.restart();
      const after = await request(`${t.server.url}/v1/last`);
      expect(after.text).toBe(before.text);
      expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
      const next = await getWithQuery(`${t.server.url}/v1/remoteinput`, { artist: 'A', title: 'After restart' });
      expect(asObject(next.json).dbid).toBe(lastDbid + 1);
    } finally {
      await t.close();
    }
  });

  it('When the newest record is deleted, then its dbid is still never reused (AUTOINCREMENT)', async () => {
    const t = await startTestServer();
    try {
      const first = asObject((await postJson(`${t.url}/v1/remoteinput`, { artist: 'A' })).json).dbid as number;
      await t.server.close();
      const db = new Database(t.dbFile);
      db.prepare('DELETE FROM tracks WHERE dbid = ?').run(first);
      db.close();
      await t.restart();
      const second = asObject((await postJson(`${t.server.url}/v1/remoteinput`, { artist: 'B' })).json).dbid as number;
      expect(second).toBe(first + 1);
    } finally {
      await t.close();
    }
  });

  it('When the database is ":memory:", then the server works without a file', async () => {
    const t = await startTestServer({ config: { database: { location: ':memory:' } } });
    try {
      expect((await postJson(`${t.url}/v1/remoteinput`, { artist: 'Memory' })).status).toBe(200);
      expect(asObject((await request(`${t.url}/v1/last`)).json).artist).toBe('Memory');
    } finally {
      await t.close();
    }
  });
});

describe('crash', () => {
  it('When the server is killed with SIGKILL during a stream of submissions, then every submission that got a 200 is in the database', async () => {
    const temp = makeTempDir();
    const dbFile = path.join(temp.dir, 'svc.db');
    try {
      const serve = await startServeProcess(['--port', '0', '--db', dbFile, '--offline']);
      const acknowledged: number[] = [];
      let stop = false;
      const writers = Array.from({ length: 4 }, async (_, writer) => {
        for (let i = 0; !stop; i += 1) {
          try {
            const res = await postJson(`${serve.url}/v1/remoteinput`, { artist: `Writer ${writer}`, title: `Take ${i}` });
            if (res.status === 200) acknowledged.push(asObject(res.json).dbid as number);
          } catch {
            return; // the server is gone
          }
        }
      });
      await until(() => acknowledged.length > 20, 'more than 20 writes were acknowledged');
      serve.child.kill('SIGKILL');
      stop = true;
      await Promise.all(writers);
      await serve.exited;
      expect(acknowledged.length).toBeGreaterThan(20);

      const db = new Database(dbFile, { readonly: true });
      const stored = new Set((db.prepare('SELECT dbid FROM tracks').all() as { dbid: number }[]).map((row) => row.dbid));
      db.close();
      const lost = acknowledged.filter((dbid) => !stored.has(dbid));
      expect(lost).toEqual([]);

      // And the server starts again on that database and goes on numbering.
      const again = await startServeProcess(['--port', '0', '--db', dbFile, '--offline']);
      const next = asObject((await postJson(`${again.url}/v1/remoteinput`, { artist: 'After crash' })).json).dbid as number;
      expect(next).toBeGreaterThan(Math.max(...stored));
      again.child.kill('SIGTERM');
      expect(await again.exited).toBe(0);
    } finally {
      temp.cleanup();
    }
  });
});
