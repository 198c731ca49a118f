import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { rawRequest } from '../../helpers/raw-http';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { storedCount } from '../../helpers/stored-count';
import { until } from '../../helpers/eventually';

// docs/decisions.md "Hostile clients and browsers": every malformed request is a 4xx with a JSON
// body, never a 500; nothing is stored; the secret never reaches the log in any spelling.

const SECRET = 's3cret-do-not-log';

describe('hostile input to /v1/remoteinput', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { secret: SECRET, maxBodyBytes: 64 * 1024 } });
  });
  afterAll(() => t.close());

  const post = (body: Buffer | string, headers: Record<string, string> = {}) =>
    rawRequest(`${t.url}/v1/remoteinput`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });

  const nested = (depth: number, leaf: string) => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;

  it('When the secret is nested 4,112 levels deep (the probe) or 30,000, then 403 "Invalid secret", not a stack overflow', async () => {
    for (const depth of [4112, 30_000]) {
      const res = await post(`{"artist":"A","title":"T","secret":${nested(depth, '"x"')}}`);
      expect([depth, res.status, JSON.parse(res.text)]).toEqual([depth, 403, { error: 'Invalid secret' }]);
    }
    expect(t.logs.join('\n')).not.toMatch(/RangeError|Maximum call stack/);
  });

  it('When any field is nested 15,000 levels deep, then it is dropped with a warning', async () => {
    const res = await post(`{"artist":"A","title":"T","secret":"${SECRET}","mood":${nested(15_000, '1')},"deep":{"a":${nested(10_000, '{}')}}}`);
    expect(res.status).toBe(200);
    const body = JSON.parse(res.text) as { warnings: string[]; processed_metadata: Record<string, unknown> };
    expect(body.warnings).toEqual(["Field 'mood' dropped: a list may hold only text", "Field 'deep' dropped: objects are not accepted"]);
    expect(body.processed_metadata).not.toHaveProperty('mood');
  });

  it.each([
    ['gzip', 'not gzip at all'],
    ['deflate', 'not deflate at all'],
    ['br', 'not brotli at all'],
    ['gzip', gzipSync('{"artist":"A","title":"T"}').subarray(0, 20)],
  ])('When a %s body does not decompress, then 400 "Invalid request body encoding" and nothing is stored', async (encoding, body) => {
    const before = await storedCount(t.server.tracks);
    const res = await post(Buffer.from(body), { 'Content-Encoding': encoding });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toEqual({ error: 'Invalid request body encoding' });
    expect(await storedCount(t.server.tracks)).toBe(before);
  });

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ])('When a %s body decompresses fine, then it is stored', async (encoding, compress) => {
    const res = await post(compress(JSON.stringify({ artist: 'A', title: 'T', secret: SECRET })), { 'Content-Encoding': encoding });
    expect(res.status).toBe(200);
  });

  it('When a small gzip body inflates past maxBodyBytes (a zip bomb), then 413', async () => {
    const bomb = gzipSync(`{"artist":"${'a'.repeat(10 * 1024 * 1024)}"}`);
    expect(bomb.length).toBeLessThan(64 * 1024);
    const res = await post(bomb, { 'Content-Encoding': 'gzip' });
    expect(res.status).toBe(413);
  });

  it('When the Content-Encoding is unknown, then 415 names it', async () => {
    const res = await post('{}', { 'Content-Encoding': 'compress' });
    expect([res.status, JSON.parse(res.text)]).toEqual([415, { error: 'Unsupported content encoding: compress' }]);
  });

  it('When a submission has more than limits.maxFields fields, then 400 with the count, and nothing is stored', async () => {
    const before = await storedCount(t.server.tracks);
    const fields = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`f${i}`, 'x']));
    const res = await post(JSON.stringify({ artist: 'A', secret: SECRET, ...fields }));
    expect([res.status, JSON.parse(res.text)]).toEqual([400, { error: 'Too many fields (1002, limit 200)' }]);
    expect(await storedCount(t.server.tracks)).toBe(before);
  });

  it('When 199 fields each earn a warning, then the answer lists 50 of them and says how many more', async () => {
    const fields = Object.fromEntries(Array.from({ length: 197 }, (_, i) => [`f${i}`, [i]]));
    const res = await post(JSON.stringify({ artist: 'A', secret: SECRET, ...fields }));
    expect(res.status).toBe(200);
    const { warnings } = JSON.parse(res.text) as { warnings: string[] };
    expect(warnings).toHaveLength(51);
    expect(warnings[50]).toBe('147 more warnings not listed');
  });

  it('When the secret is sent as %73ecret, secre%74, SECRET or twice, then the access log never shows it', async () => {
    const spellings = [`%73ecret=${SECRET}`, `secre%74=${SECRET}`, `SECRET=${SECRET}`, `secret=${SECRET}&secret=${SECRET}`, `%73%65%63%72%65%74=${SECRET}`];
    for (const query of spellings) await rawRequest(`${t.url}/v1/remoteinput?artist=A&${query}`);
    // %73ecret is the real secret to the query parser: it authenticates, so the line is a 200.
    const accepted = await rawRequest(`${t.url}/v1/remoteinput?artist=B&%73ecret=${SECRET}`);
    expect(accepted.status).toBe(200);
    await waitForLogLines(t.logs, spellings.length + 1);
    expect(t.logs.join('\n')).not.toContain(SECRET);
  });

  it('When random bytes arrive with any Content-Encoding and Content-Type, then the answer is a JSON 4xx or 200', async () => {
    const encodings = fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-gzip', '', 'gzip, br');
    const types = fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', '', 'application/vnd.api+json');
    const bodies = fc.oneof(
      fc.uint8Array({ maxLength: 2000 }).map((bytes) => Buffer.from(bytes)),
      fc.integer({ min: 1, max: 50_000 }).map((depth) => Buffer.from(`{"secret":${nested(depth, '0')}}`)),
      fc.integer({ min: 1, max: 50_000 }).map((depth) => Buffer.from(`{"artist":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`)),
    );
    // Each run from its own loopback address: a nested `secret` is a wrong secret, and the
    // failed-authentication throttle (docs/security.md "Guessing the secret") would space one
    // address's runs out by seconds.
    let run = 0;
    await fc.assert(
      fc.asyncProperty(bodies, encodings, types, async (body, encoding, type) => {
        const headers: Record<string, string> = {};
        if (encoding) headers['Content-Encoding'] = encoding;
        if (type) headers['Content-Type'] = type;
        run += 1;
        const localAddress = `127.0.${10 + Math.floor(run / 250)}.${(run % 250) + 1}`;
        const res = await rawRequest(`${t.url}/v1/remoteinput`, { method: 'POST', headers, body, localAddress });
        expect(res.status).toBeLessThan(500);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(() => JSON.parse(res.text) as unknown).not.toThrow();
      }),
      { numRuns: 150 },
    );
  });
});

describe('nosniff', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it.each([
    ['GET', '/v1/last'],
    ['GET', '/v1/last?x'],
    ['GET', '/v1/status'],
    ['GET', '/v1/remoteinput?artist=A'],
    ['GET', '/v1/remoteinput'],
    ['DELETE', '/v1/last'],
    ['GET', '/nowhere'],
    ['GET', '/v1/images/ws'],
  ])('When %s %s is answered in JSON, then it carries X-Content-Type-Options: nosniff', async (method, path) => {
    const res = await rawRequest(`${t.url}${path}`, { method });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('When Node rejects a request before Koa (headers too large), then the JSON answer carries nosniff too', async () => {
    const res = await rawRequest(`${t.url}/v1/status`, { headers: { 'X-Big': 'x'.repeat(20_000) } });
    expect(res.status).toBe(431);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});

/** The access log is written after the response; wait for the lines rather than a fixed time. */
function waitForLogLines(logs: string[], count: number): Promise<void> {
  return until(() => logs.filter((line) => line.includes('/v1/remoteinput?')).length >= count, `${count} access log lines`, 5000);
}
