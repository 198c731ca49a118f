import Database from 'better-sqlite3';
import { asObject, getWithQuery, postJson, request } from '../helpers/http';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { storedCount } from '../helpers/stored-count';

const SECRET = 's3cret-Üñï-🎧';
const track = { artist: 'Auth', title: 'Matrix' };
const utf8Header = (value: string) => Buffer.from(value, 'utf8').toString('latin1');

describe('POST/GET /v1/remoteinput authentication when a secret is configured', () => {
  let t: TestServer;
  beforeAll(async () => {
    // Each request comes from a client of its own behind this trusted proxy: wrong secrets from one
    // address are throttled (docs/security.md "Guessing the secret"), which these precedence tests are not about.
    t = await startTestServer({ config: { secret: SECRET, trustProxy: ['127.0.0.1'] } });
  });
  afterAll(() => t.close());

  let clients = 0;
  const asClient = (headers: Record<string, string> = {}) => ({ 'X-Forwarded-For': `198.51.100.${(clients += 1)}`, ...headers });
  const submit = (body: unknown, headers: Record<string, string> = {}, query = '') => postJson(`${t.url}/v1/remoteinput${query}`, body, asClient(headers));

  it.each([
    ['X-SVC-Client-Auth header', () => submit(track, { 'X-SVC-Client-Auth': utf8Header(SECRET) })],
    ['X-WNP-Client-Auth alias header', () => submit(track, { 'X-WNP-Client-Auth': utf8Header(SECRET) })],
    ['lower-case header name', () => submit(track, { 'x-svc-client-auth': utf8Header(SECRET) })],
    ['body field secret', () => submit({ ...track, secret: SECRET })],
    ['query secret on POST', () => submit(track, {}, `?secret=${encodeURIComponent(SECRET)}`)],
    ['query secret on GET', () => getWithQuery(`${t.url}/v1/remoteinput`, { ...track, secret: SECRET }, asClient())],
    ['header on GET', () => getWithQuery(`${t.url}/v1/remoteinput`, track, asClient({ 'X-SVC-Client-Auth': utf8Header(SECRET) }))],
  ])('When the right secret comes in the %s, then the submission is stored', async (_name, send) => {
    const res = await send();
    expect(res.status).toBe(200);
    expect(typeof asObject(res.json).dbid).toBe('number');
  });

  it.each([
    ['no carrier', () => submit(track)],
    ['an empty header and no other carrier', () => submit(track, { 'X-SVC-Client-Auth': '' })],
    ['an empty body secret', () => submit({ ...track, secret: '' })],
    ['GET without secret', () => getWithQuery(`${t.url}/v1/remoteinput`, track, asClient())],
  ])('When the secret is missing (%s), then 403 {"error":"Missing secret in request"}', async (_name, send) => {
    const before = await storedCount(t.server.tracks);
    const res = await send();
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ error: 'Missing secret in request' });
    expect(await storedCount(t.server.tracks)).toBe(before);
  });

  it.each([
    ['header', () => submit(track, { 'X-SVC-Client-Auth': 'wrong' })],
    ['alias header', () => submit(track, { 'X-WNP-Client-Auth': 'wrong' })],
    ['body', () => submit({ ...track, secret: 'wrong' })],
    ['query', () => getWithQuery(`${t.url}/v1/remoteinput`, { ...track, secret: 'wrong' }, asClient())],
    ['body as a number', () => submit({ ...track, secret: 12345 })],
    ['secret with the wrong case', () => submit({ ...track, secret: SECRET.toUpperCase() })],
    ['secret prefix', () => submit({ ...track, secret: SECRET.slice(0, 4) })],
  ])('When the secret is wrong in the %s, then 403 {"error":"Invalid secret"}', async (_name, send) => {
    const res = await send();
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ error: 'Invalid secret' });
  });

  it('When the header is wrong but the body secret is right, then the header decides: 403', async () => {
    const res = await submit({ ...track, secret: SECRET }, { 'X-SVC-Client-Auth': 'wrong' });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ error: 'Invalid secret' });
  });

  it('When the header is right and the body secret wrong, then the header decides: 200', async () => {
    const res = await submit({ ...track, secret: 'wrong' }, { 'X-SVC-Client-Auth': utf8Header(SECRET) });
    expect(res.status).toBe(200);
  });

  it('When the body secret is wrong but the query secret right, then the body comes first: 403', async () => {
    const res = await submit({ ...track, secret: 'wrong' }, {}, `?secret=${encodeURIComponent(SECRET)}`);
    expect(res.status).toBe(403);
  });

  it('When HEAD carries a wrong secret, then it is refused like GET and stores nothing', async () => {
    const res = await request(`${t.url}/v1/remoteinput?artist=A&secret=wrong`, { method: 'HEAD', headers: asClient() });
    expect(res.status).toBe(403);
  });

  it('The secret is never in processed_metadata, /v1/last, the database or the log output', async () => {
    const viaBody = await submit({ ...track, secret: SECRET, title: 'Body carrier' });
    const viaQuery = await getWithQuery(`${t.url}/v1/remoteinput`, { ...track, secret: SECRET, title: 'Query carrier' }, asClient());
    await getWithQuery(`${t.url}/v1/remoteinput`, { ...track, secret: 'wrong-guess-123' }, asClient());
    for (const res of [viaBody, viaQuery]) {
      expect(res.status).toBe(200);
      expect(asObject(asObject(res.json).processed_metadata)).not.toHaveProperty('secret');
      expect(res.text).not.toContain(SECRET);
    }
    expect((await request(`${t.url}/v1/last`)).text).not.toContain(SECRET);

    const db = new Database(t.dbFile, { readonly: true });
    const rows = db.prepare('SELECT metadata FROM tracks').all() as { metadata: string }[];
    db.close();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.metadata).not.toContain(SECRET);

    const logs = t.logs.join('\n');
    expect(logs).toContain('secret=[redacted]');
    expect(logs).not.toContain(encodeURIComponent(SECRET));
    expect(logs).not.toContain(SECRET);
    expect(logs).not.toContain('wrong-guess-123');
  });
});

describe('/v1/remoteinput without a configured secret', () => {
  it('When no secret is configured, then submissions need none and any secret sent is ignored and stripped', async () => {
    const t = await startTestServer();
    try {
      const plain = await postJson(`${t.url}/v1/remoteinput`, track);
      expect(plain.status).toBe(200);
      const withSecret = await postJson(`${t.url}/v1/remoteinput`, { ...track, secret: 'anything' }, { 'X-SVC-Client-Auth': 'whatever' });
      expect(withSecret.status).toBe(200);
      expect(asObject(asObject(withSecret.json).processed_metadata)).toEqual(track);
    } finally {
      await t.close();
    }
  });
});
