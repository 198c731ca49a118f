import { asObject, postJson, request } from '../../helpers/http';
import { eventually } from '../../helpers/eventually';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { openSse } from '../../helpers/sse-client';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// PATCH /v1/history/<dbid> (docs/http-api.md "`PATCH /v1/history/<dbid>`: correct a record"), on SQLite and PostgreSQL:
// the record's own fields change, its play does not unless asked (history-corrections.test.ts); the current track is announced again at
// once (on every instance); an older record changes in the history only; what is refused changes nothing.

const SECRET = 'edit-secret';
const AUTH = { 'X-SVC-Client-Auth': SECRET };

function patch(url: string, body: unknown, headers: Record<string, string> = AUTH, contentType = 'application/json') {
  return request(url, { method: 'PATCH', headers: { 'Content-Type': contentType, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

async function submit(t: TestServer, fields: Record<string, unknown>): Promise<number> {
  const res = await postJson(`${t.url}/v1/remoteinput`, fields, AUTH);
  expect(res.status).toBe(200);
  return Number(asObject(res.json).dbid);
}

function behavesOn(backend: string, start: () => Promise<TestServer[]>, stop: () => Promise<void>): void {
  describe(`PATCH /v1/history/<dbid> on ${backend}`, () => {
    let servers: TestServer[];
    let t: TestServer;
    beforeAll(async () => {
      servers = await start();
      t = servers[0];
    }, 60_000);
    afterAll(async () => {
      for (const server of servers ?? []) await server.close();
      await stop();
    });

    it('When the current track is corrected, then /v1/last and /v1/events show it at once, and its play is unchanged', async () => {
      const dbid = await submit(t, { artist: 'DAFT PUNK', title: 'One More Time', album: 'Discovery', isrc: 'GB-DUW-00' });
      const events = await openSse(`${t.url}/v1/events`);
      try {
        expect(JSON.parse((await events.next()).data)).toMatchObject({ dbid, artist: 'DAFT PUNK' });
        const before = asObject((await request(`${t.url}/v1/last`)).json);
        const res = await patch(`${t.url}/v1/history/${dbid}`, { artist: 'Daft Punk', isrc: 'GBDUW0000053', album: null, label: 'Virgin' });
        expect(res.status).toBe(200);
        const answer = asObject(res.json);
        expect(answer.warnings).toEqual([]);
        expect(answer.record).toMatchObject({ dbid, artist: 'Daft Punk', isrc: 'GBDUW0000053', label: 'Virgin', started_at: before.started_at, kind: 'music' });
        expect(asObject(answer.record)).not.toHaveProperty('album');
        const announced = await events.next();
        expect(announced.event).toBe('track');
        expect(JSON.parse(announced.data)).toMatchObject({ dbid, artist: 'Daft Punk', label: 'Virgin' });
        const last = asObject((await request(`${t.url}/v1/last`)).json);
        expect(last).toMatchObject({ dbid, artist: 'Daft Punk', started_at: before.started_at, channel: before.channel });
        // Every instance shows it: PostgreSQL announces the change (docs/several-instances.md).
        for (const other of servers.slice(1))
          await eventually(
            async () => asObject((await request(`${other.url}/v1/last`)).json),
            (seen) => seen.artist === 'Daft Punk',
          );
      } finally {
        events.close();
      }
    });

    it('When an older record is corrected, then the history shows it and the current track stays', async () => {
      const older = await submit(t, { artist: 'Burial', title: 'Archangel' });
      const current = await submit(t, { artist: 'Moderat', title: 'A New Error' });
      const page = async () => (await request(`${t.url}/v1/history?limit=5`)).json as { tracks: Array<Record<string, unknown>> };
      expect((await page()).tracks.find((track) => track.dbid === older)).not.toHaveProperty('label');
      const res = await patch(`${t.url}/v1/history/${older}?secret=${SECRET}`, { label: 'Hyperdub', writers: ['William Bevan'], duration: '238' }, {});
      expect(res.status).toBe(200);
      expect((await page()).tracks.find((track) => track.dbid === older)).toMatchObject({ label: 'Hyperdub', writers: ['William Bevan'], duration: 238 });
      expect(asObject((await request(`${t.url}/v1/last`)).json)).toMatchObject({ dbid: current, artist: 'Moderat' });
    });

    it('When a correction is refused, then the answer says why and the record is as it was', async () => {
      const dbid = await submit(t, { artist: 'Bonobo', title: 'Kerala' });
      const url = `${t.url}/v1/history/${dbid}`;
      const refusals: Array<[Promise<{ status: number; json: unknown }>, number, RegExp]> = [
        [patch(url, { title: 'x' }, {}), 403, /Missing secret/],
        [patch(`${t.url}/v1/history/999999`, { title: 'x' }, {}), 403, /Missing secret/],
        [patch(url, { title: 'x' }, { 'X-SVC-Client-Auth': 'wrong' }), 403, /Invalid secret/],
        [patch(`${t.url}/v1/history/999999`, { title: 'x' }), 404, /No record with dbid 999999/],
        [patch(`${t.url}/v1/history/x1`, { title: 'x' }), 400, /Invalid dbid/],
        [patch(url, { kind: 'song' }), 400, /Invalid 'kind'/],
        [patch(url, { channel: 'two' }), 400, /'channel' belongs to the play log/],
        [patch(url, { artist: null, title: null }), 400, /.+/],
        [patch(url, '[1, 2]'), 400, /JSON object/],
        [patch(url, '{"title": ', AUTH), 400, /.+/],
        [patch(url, 'title=x', AUTH, 'image/png'), 415, /Unsupported content type/],
      ];
      for (const [answer, status, message] of refusals) {
        const res = await answer;
        expect({ status: res.status, error: asObject(res.json).error }).toEqual({ status, error: expect.stringMatching(message) });
      }
      const stored = ((await request(`${t.url}/v1/history?limit=1`)).json as { tracks: Array<Record<string, unknown>> }).tracks[0];
      expect(stored).toMatchObject({ dbid, artist: 'Bonobo', title: 'Kerala', kind: 'music' });
    });

    it('When a browser on another site sends one, then it is refused before anything is read', async () => {
      const dbid = await submit(t, { artist: 'Khruangbin', title: 'Maria También' });
      const res = await patch(`${t.url}/v1/history/${dbid}`, { title: 'x' }, { ...AUTH, Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' });
      expect(res.status).toBe(403);
      expect(asObject((await request(`${t.url}/v1/last`)).json)).toMatchObject({ dbid, title: 'Maria También' });
    });
  });
}

behavesOn(
  'SQLite',
  async () => [await startTestServer({ config: { secret: SECRET } })],
  async () => undefined,
);

describeWithPostgres('on PostgreSQL, two instances', () => {
  let database: TestDatabase | undefined;
  behavesOn(
    'PostgreSQL',
    async () => {
      database = await createTestDatabase();
      const url = database.url;
      return [await startTestServer({ config: { secret: SECRET }, dbFile: url }), await startTestServer({ config: { secret: SECRET }, dbFile: url })];
    },
    async () => {
      await database?.drop();
    },
  );
});
