import { request } from '../../helpers/http';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// Reports read the play log through the store's contract, so SQLite and PostgreSQL give the same
// files (docs/reports.md "Where the rows come from"), byte for byte.

const SECRET = 'pg-reports';
const SETTINGS = { secret: SECRET, reports: { service: 'KSVC', category: 'A', timeZone: 'America/New_York' } };
const PLAYS: Array<[string, Record<string, string>, 'music' | 'jingle']> = [
  ['2026-10-05T20:00:00.000Z', { artist: 'Daft Punk', title: 'One More Time', album: 'Discovery', label: 'Virgin', isrc: 'GBDUW0000053' }, 'music'],
  ['2026-10-05T20:05:20.000Z', { title: 'Station ID' }, 'jingle'],
  ['2026-10-05T20:05:30.000Z', { artist: 'Caret ^ | Pipe', title: 'Tab\there, "quoted", comma', album: 'Ünïcödé 日本語', label: 'Label, Inc.' }, 'music'],
  ['2026-10-05T20:12:00.000Z', { artist: 'Дельфин', title: 'Весна', album: 'Юность', label: 'Мистерия звука', isrc: 'RUA1D0512345' }, 'music'],
];

describeWithPostgres('reports on PostgreSQL and SQLite', () => {
  let database: TestDatabase;
  let servers: TestServer[];

  beforeAll(async () => {
    database = await createTestDatabase();
    servers = [await startTestServer({ config: SETTINGS }), await startTestServer({ config: SETTINGS, dbFile: database.url })];
    for (const server of servers) {
      const { tracks } = server.server;
      for (const [startedAt, metadata, kind] of PLAYS)
        await tracks.insert({
          receivedSeq: await tracks.nextReceivedSeq(),
          receivedAt: startedAt,
          metadata,
          play: { startedAt, channel: 'main', kind, usage: 'feature' },
        });
    }
  }, 60_000);
  afterAll(async () => {
    for (const server of servers ?? []) await server.close();
    await database?.drop();
  });

  it.each(['soundexchange', 'soundexchange&variant=csv', 'npr-playlist', 'prs', 'bmi'])(
    'When %s is asked of both backends, then the files are the same',
    async (format) => {
      const [name, extra] = format.split('&');
      const files = await Promise.all(
        servers.map((server) =>
          request(`${server.url}/v1/reports/${name}?from=2026-10-01&to=2026-10-31&allow_problems=1${extra ? `&${extra}` : ''}`, {
            headers: { 'X-SVC-Client-Auth': SECRET },
          }),
        ),
      );
      for (const file of files) expect(file.status).toBe(200);
      // BMI's header carries the time the file was made.
      const body = (text: string) => (name === 'bmi' ? text.slice(text.indexOf('\r\n')) : text);
      expect(body(files[1]?.text ?? '')).toBe(body(files[0]?.text ?? ''));
      // Names with reserved characters and other scripts come through (the last play is still on air: not in the NPR/DS log).
      expect(files[0]?.text).toContain(name === 'npr-playlist' ? 'Caret ^ | Pipe' : ['soundexchange', 'bmi'].includes(name) ? 'Delfin' : 'Дельфин');
    },
  );
});
