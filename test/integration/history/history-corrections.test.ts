import { asObject, request } from '../../helpers/http';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// Corrections of a play (docs/http-api.md "`PATCH /v1/history/<dbid>`: correct a record"), on
// SQLite and PostgreSQL: air times, kind and usage change; plays on a channel still never overlap;
// the listener count follows the new times (counted from the stored sessions); every correction
// leaves an audit entry that GET /v1/history shows; a refused one changes nothing and leaves none.

const SECRET = 'corrections-secret';
const AUTH = { 'X-SVC-Client-Auth': SECRET };
const SERVER = 'http://127.0.0.1:9';
const MOUNT = '/live';

function patch(url: string, body: unknown, headers: Record<string, string> = {}) {
  return request(url, { method: 'PATCH', headers: { 'Content-Type': 'application/json', ...AUTH, ...headers }, body: JSON.stringify(body) });
}

async function entry(t: TestServer, dbid: number): Promise<Record<string, unknown>> {
  const page = (await request(`${t.url}/v1/history?limit=20`)).json as { tracks: Array<Record<string, unknown>> };
  const found = page.tracks.find((track) => track.dbid === dbid);
  if (!found) throw new Error(`dbid ${dbid} not in the history`);
  return found;
}

/** Three plays on `main` (A 20:00-20:05, B 20:05-20:10, C on air from 20:10) and two listener sessions. */
async function seed(t: TestServer): Promise<[number, number, number]> {
  const { tracks, plays } = t.server;
  const dbids: number[] = [];
  for (const [startedAt, title] of [
    ['2026-10-05T20:00:00.000Z', 'Archangel'],
    ['2026-10-05T20:05:00.000Z', 'Kerala'],
    ['2026-10-05T20:10:00.000Z', 'Station ID'],
  ] as const) {
    const record = await tracks.insert({
      receivedSeq: await tracks.nextReceivedSeq(),
      receivedAt: startedAt,
      metadata: { artist: 'Burial', title },
      play: { startedAt, channel: 'main', kind: 'music', usage: 'feature' },
    });
    dbids.push(record.dbid);
  }
  const session = { server: SERVER, mount: MOUNT, channel: 'main', source: 'auth' as const, address: 'hash', userAgent: 'VLC/3.0' };
  await plays.openSession({ ...session, address: 'hash-1', clientId: '1', connectedAt: '2026-10-05T20:00:00.000Z' }, 100);
  await plays.closeSession({ server: SERVER, mount: MOUNT, clientId: '1' }, '2026-10-05T20:03:00.000Z');
  await plays.openSession({ ...session, address: 'hash-2', clientId: '2', connectedAt: '2026-10-05T20:06:00.000Z' }, 100);
  await plays.closeSession({ server: SERVER, mount: MOUNT, clientId: '2' }, '2026-10-05T20:09:00.000Z');
  return dbids as [number, number, number];
}

function behavesOn(backend: string, start: () => Promise<TestServer>, stop: () => Promise<void>): void {
  describe(`play corrections on ${backend}`, () => {
    let t: TestServer;
    let a: number;
    let b: number;
    let c: number;
    beforeAll(async () => {
      t = await start();
      [a, b, c] = await seed(t);
    }, 60_000);
    afterAll(async () => {
      await t?.close();
      await stop();
    });

    it('When an end and a start are corrected, then the times change, the listeners are counted for the new times, and each leaves an audit entry', async () => {
      const ended = await patch(`${t.url}/v1/history/${a}`, { ended_at: '2026-10-05T22:02:00+02:00' });
      expect(ended.status).toBe(200);
      // Session 1 (20:00-20:03) heard 20:00-20:02 of it.
      expect(asObject(ended.json).record).toMatchObject({
        dbid: a,
        started_at: '2026-10-05T20:00:00.000Z',
        ended_at: '2026-10-05T20:02:00.000Z',
        listeners: { atp: 1, listener_seconds: 120, peak: 1 },
      });
      const started = await patch(`${t.url}/v1/history/${b}`, { started_at: '2026-10-05T20:02:30Z' }, { 'User-Agent': 'svc/9.9.9' });
      expect(started.status).toBe(200);
      // Session 1 for 30 s, session 2 (20:06-20:09) for 180 s.
      expect(asObject(started.json).record).toMatchObject({
        started_at: '2026-10-05T20:02:30.000Z',
        ended_at: '2026-10-05T20:10:00.000Z',
        listeners: { atp: 2, listener_seconds: 210, peak: 1 },
      });
      const shownA = await entry(t, a);
      expect(shownA.corrections).toEqual([
        {
          at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          by: expect.stringMatching(/127\.0\.0\.1$/),
          changes: { ended_at: { before: '2026-10-05T20:05:00.000Z', after: '2026-10-05T20:02:00.000Z' } },
        },
      ]);
      const shownB = await entry(t, b);
      expect(shownB.corrections).toEqual([
        {
          at: expect.any(String),
          by: expect.stringMatching(/^cli .*127\.0\.0\.1$/),
          changes: { started_at: { before: '2026-10-05T20:05:00.000Z', after: '2026-10-05T20:02:30.000Z' } },
        },
      ]);
    });

    it('When kind, usage and a name are corrected together, then one audit entry names each change', async () => {
      const res = await patch(`${t.url}/v1/history/${c}`, { kind: 'jingle', usage: 'background', artist: 'KSVC' });
      expect(res.status).toBe(200);
      expect(asObject(res.json).record).toMatchObject({ dbid: c, kind: 'jingle', usage: 'background', artist: 'KSVC', ended_at: null });
      expect((await entry(t, c)).corrections).toEqual([
        {
          at: expect.any(String),
          by: expect.any(String),
          changes: {
            artist: { before: 'Burial', after: 'KSVC' },
            kind: { before: 'music', after: 'jingle' },
            usage: { before: 'feature', after: 'background' },
          },
        },
      ]);
    });

    it('When a correction would overlap another play or is malformed, then it is refused, named, and nothing changes', async () => {
      const before = await entry(t, a);
      const refusals: Array<[Record<string, unknown>, number, RegExp]> = [
        [{ ended_at: '2026-10-05T20:06:00Z' }, 422, new RegExp(`overlap play ${b} on channel "main"`)],
        [{ started_at: '2026-10-05T20:30:00Z' }, 400, /ended_at .* must be after started_at/],
        [{ ended_at: '2026-10-05T20:02:00' }, 400, /Invalid 'ended_at': expected an ISO 8601 date-time with an offset/],
        [{ ended_at: null }, 400, /Invalid 'ended_at'/],
        [{ kind: 'song' }, 400, /Invalid 'kind': expected one of music, jingle/],
        [{ usage: 'loud' }, 400, /Invalid 'usage': expected one of feature, theme, background/],
        [{ channel: 'two' }, 400, /'channel' belongs to the play log/],
        [{ listeners: null }, 400, /'listeners' belongs to the play log/],
      ];
      for (const [body, status, message] of refusals) {
        const res = await patch(`${t.url}/v1/history/${a}`, body);
        expect({ body, status: res.status, error: asObject(res.json).error }).toEqual({ body, status, error: expect.stringMatching(message) });
      }
      expect(await entry(t, a)).toEqual(before);
      // The play on air cannot be started inside the one before it either.
      const into = await patch(`${t.url}/v1/history/${c}`, { started_at: '2026-10-05T20:09:00Z' });
      expect({ status: into.status, error: asObject(into.json).error }).toEqual({ status: 422, error: expect.stringContaining(`play ${b}`) });
    });

    it("When a report's range is checked, then each correction of its plays is a note, in air order", async () => {
      const notes = async (query: string) => {
        const res = await request(`${t.url}/v1/reports/soundexchange/check?${query}`, { headers: AUTH });
        expect(res.status).toBe(200);
        return res.text
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { note?: string })
          .flatMap((line) => (line.note?.startsWith('note: dbid ') ? [line.note.slice('note: '.length)] : []));
      };
      expect(await notes('from=2026-10-05&to=2026-10-05')).toEqual([
        expect.stringMatching(
          new RegExp(`^dbid ${a}: corrected at \\S+Z by \\S*127\\.0\\.0\\.1: ended_at 2026-10-05T20:05:00.000Z -> 2026-10-05T20:02:00.000Z$`),
        ),
        expect.stringMatching(new RegExp(`^dbid ${b}: corrected at \\S+Z by cli \\S+: started_at 2026-10-05T20:05:00.000Z -> 2026-10-05T20:02:30.000Z$`)),
        expect.stringMatching(new RegExp(`^dbid ${c}: corrected at \\S+Z by \\S+: artist Burial -> KSVC; kind music -> jingle; usage feature -> background$`)),
      ]);
      expect(await notes('from=2026-10-05&to=2026-10-05&channel=other')).toEqual([]);
      expect(await notes('from=2026-10-04&to=2026-10-04')).toEqual([]);
    });

    it('When a record is corrected without changing anything, then no audit entry is kept', async () => {
      const before = (await entry(t, b)).corrections;
      const res = await patch(`${t.url}/v1/history/${b}`, { started_at: '2026-10-05T20:02:30.000Z', kind: 'music' });
      expect(res.status).toBe(200);
      expect((await entry(t, b)).corrections).toEqual(before);
    });
  });
}

const config = {
  secret: SECRET,
  reports: { service: 'KSVC', category: 'A', timeZone: 'UTC' },
  playlog: { icecast: [{ url: SERVER, adminUser: 'admin', mounts: { [MOUNT]: 'main' } }] },
};

behavesOn(
  'SQLite',
  () => startTestServer({ config }),
  async () => undefined,
);

describeWithPostgres('on PostgreSQL', () => {
  let database: TestDatabase | undefined;
  behavesOn(
    'PostgreSQL',
    async () => {
      database = await createTestDatabase();
      return startTestServer({ config, dbFile: database.url });
    },
    async () => {
      await database?.drop();
    },
  );
});
