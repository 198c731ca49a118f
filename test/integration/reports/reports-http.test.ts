import { asObject, postJson, request } from '../../helpers/http';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// GET /v1/reports/<format> and /check (docs/reports.md "Over HTTP"), by outcome: refused without
// the secret, from a browser navigation and from another site; a file with its name; a refusal
// listing problems; the check as NDJSON.

const SECRET = 's3cret-reports';
const auth = { 'X-SVC-Client-Auth': SECRET };
// The plays start two days ago (a range that ends after now is a problem of its own), a jingle
// after them, so that the last music play ends when the jingle starts.
const dayFrom = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
const FROM = dayFrom(-3);
const TO = dayFrom(-1);
const TWO_DAYS_AGO = Date.now() - 2 * 86_400_000;
const ago = (minutes: number) => new Date(TWO_DAYS_AGO + minutes * 60_000).toISOString();
const compact = (date: string) => date.replaceAll('-', '');

describe('GET /v1/reports', () => {
  let t: TestServer;
  let path: (format: string, extra?: string) => string;

  beforeAll(async () => {
    t = await startTestServer({
      config: { secret: SECRET, reports: { service: 'KSVC', category: 'A', timeZone: 'UTC' }, playlog: { startedAtPastSeconds: 3 * 86_400 } },
    });
    for (const [artist, title, minute] of [
      ['Daft Punk', 'One More Time', 0],
      ['Sigur Rós', 'Hoppípolla', 5],
    ] as const) {
      const res = await postJson(
        `${t.url}/v1/remoteinput`,
        { artist, title, album: 'An album', label: 'A label', isrc: 'GBDUW0000053', started_at: ago(minute) },
        auth,
      );
      expect(res.status).toBe(200);
    }
    const jingle = await postJson(`${t.url}/v1/remoteinput`, { title: 'KSVC id', kind: 'jingle', started_at: ago(11) }, auth);
    expect(jingle.status).toBe(200);
    expect((await postJson(`${t.url}/v1/remoteinput/end`, { channel: 'main' }, auth)).status).toBeLessThan(300);
    path = (format, extra = '') => `${t.url}/v1/reports/${format}?from=${FROM}&to=${TO}${extra}`;
  });
  afterAll(() => t.close());

  it('When the secret is missing or wrong, then it answers 403 and no file', async () => {
    const missing = await request(path('bmi'));
    expect(missing.status).toBe(403);
    expect(missing.json).toEqual({ error: 'Missing secret in request' });
    const wrong = await request(path('bmi'), { headers: { 'X-SVC-Client-Auth': 'nope' } });
    expect(wrong.status).toBe(403);
    expect(wrong.json).toEqual({ error: 'Invalid secret' });
  });

  it('When a browser navigates to it, even with the secret in the URL, then it answers 403', async () => {
    const res = await request(path('bmi', `&secret=${SECRET}`), {
      headers: { 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document', 'Sec-Fetch-Site': 'none' },
    });
    expect(res.status).toBe(403);
    expect(asObject(res.json).error).toMatch(/browser navigation/);
  });

  it('When a page on another site asks with the secret, then it answers 403', async () => {
    const res = await request(path('bmi'), { headers: { ...auth, Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'cors' } });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ error: 'Cross-site request refused' });
  });

  it('When a clean report is asked with the secret, then the file comes with its name', async () => {
    const res = await request(path('bmi'), { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="KSVC${compact(FROM).slice(2, 6)}.emr"; filename*=UTF-8''KSVC${compact(FROM).slice(2, 6)}.emr`,
    );
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(res.text)));
    expect(res.headers.get('cache-control')).toBe('no-store');
    const records = res.text.split('\r\n');
    expect(records.map((line) => line.slice(0, 4))).toEqual(['HEDR', 'FMDT', 'FMDT', 'TRLR', '']);
    expect(records[2]).toContain('Hoppipolla');
  });

  it('When the report has problems, then it answers 422 listing them, and allow_problems=1 writes it anyway', async () => {
    const refused = await request(path('soundexchange'), { headers: auth });
    expect(refused.status).toBe(422);
    const body = asObject(refused.json);
    expect(body.problems).toEqual([
      'dbid 1: no performances: no listener count was kept and channel "main" has no listener sessions',
      'dbid 2: no performances: no listener count was kept and channel "main" has no listener sessions',
    ]);
    const allowed = await request(path('soundexchange', '&allow_problems=1'), { headers: auth });
    expect(allowed.status).toBe(200);
    expect(allowed.text).toBe('^KSVC^|^A^|^Daft Punk^|^One More Time^|^GBDUW0000053^|^An album^|^A label^|0\r\n');
  });

  it('When the check is asked, then every problem is one NDJSON line and the summary is last', async () => {
    const res = await request(path('soundexchange/check'), { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = res.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.filter((line) => 'problem' in line)).toHaveLength(2);
    expect(lines[lines.length - 1]).toEqual({
      summary: { music_plays: 2, excluded_not_music: { jingle: 1 }, excluded_short: 0, channels: ['main'], problems: 2, notes: 0 },
    });
  });

  it('When a play is on a channel named in another script, then the summary header carries it escaped', async () => {
    const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Aphex Twin', title: 'Xtal', channel: 'Радио Ü', started_at: ago(20) }, auth);
    expect(res.status).toBe(200);
    const file = await request(path('prs', '&allow_problems=1'), { headers: auth });
    expect(file.status).toBe(200);
    expect(JSON.parse(file.headers.get('x-report-summary') ?? '{}')).toMatchObject({ channels: ['main', 'Радио Ü'] });
  });

  it('When a parameter is wrong, then it answers 400 naming it; an unknown format is 404', async () => {
    expect(asObject((await request(`${t.url}/v1/reports/bmi?from=2026-02-30&to=2026-03-01`, { headers: auth })).json).error).toMatch(
      /^from must be a local date/,
    );
    expect(asObject((await request(`${t.url}/v1/reports/bmi?from=2026-03-02&to=2026-03-01`, { headers: auth })).json).error).toMatch(/is before from/);
    expect((await request(`${t.url}/v1/reports/bmi?from=2026-03-01&to=2026-03-01&colour=red`, { headers: auth })).status).toBe(400);
    expect((await request(`${t.url}/v1/reports/prs?from=2026-03-01&to=2026-03-01&variant=csv`, { headers: auth })).status).toBe(400);
    expect((await request(`${t.url}/v1/reports/gema?from=2026-03-01&to=2026-03-01`, { headers: auth })).status).toBe(404);
    const farOff = await request(`${t.url}/v1/reports/bmi?from=9999-12-01&to=9999-12-31`, { headers: auth });
    expect(farOff.status).toBe(400);
    expect(asObject(farOff.json).error).toBe('from must be a date from 1970-01-01 to 2999-12-31, got 9999-12-01');
  });
});

describe('GET /v1/reports without a configured secret', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('When no secret is configured, then reports are refused: they show listeners', async () => {
    const res = await request(`${t.url}/v1/reports/bmi?from=2026-03-01&to=2026-03-01`);
    expect(res.status).toBe(403);
    expect(asObject(res.json).error).toMatch(/the server has none/);
  });
});
