import { rawRequest } from '../../helpers/raw-http';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { storedCount } from '../../helpers/stored-count';

// docs/decisions.md "Hostile clients and browsers": a web page on another origin must never store a
// track, with or without a secret; reads stay open per corsOrigins. The headers below are the
// ones a browser sends (Fetch standard, "origin" and "Sec-Fetch-Site" request headers): a
// cross-origin fetch or form POST carries Origin; a sandboxed iframe or a data: page sends
// `Origin: null`; an <img> GET is no-cors and carries no Origin, only `Sec-Fetch-Site`.

const TRACK = 'artist=Portishead&title=Roads';

describe('browser writes to /v1/remoteinput', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { writeOrigins: ['http://overlay.test:3000'] } });
  });
  afterAll(() => t.close());

  const ownOrigin = () => t.url;

  it.each([
    [
      'a text/plain POST from another origin',
      'POST',
      { Origin: 'http://evil.test', 'Content-Type': 'text/plain' },
      JSON.stringify({ artist: 'A', title: 'T' }),
    ],
    ['a form POST from another origin', 'POST', { Origin: 'http://evil.test', 'Content-Type': 'application/x-www-form-urlencoded' }, TRACK],
    ['a POST from an opaque origin (Origin: null)', 'POST', { Origin: 'null', 'Content-Type': 'text/plain' }, JSON.stringify({ artist: 'A', title: 'T' })],
    ['an <img> GET from another site', 'GET', { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'no-cors', 'Sec-Fetch-Dest': 'image' }, undefined],
    ['an <img> GET from a sibling subdomain', 'GET', { 'Sec-Fetch-Site': 'same-site', 'Sec-Fetch-Dest': 'image' }, undefined],
    ['a HEAD from another origin', 'HEAD', { Origin: 'http://evil.test' }, undefined],
  ])('When %s arrives, then 403 "Cross-site request refused" and nothing is stored', async (_name, method, headers, body) => {
    const before = await storedCount(t.server.tracks);
    const path = method === 'POST' ? '/v1/remoteinput' : `/v1/remoteinput?${TRACK}`;
    const res = await rawRequest(`${t.url}${path}`, { method, headers, body });
    expect(res.status).toBe(403);
    if (method !== 'HEAD') expect(JSON.parse(res.text)).toEqual({ error: 'Cross-site request refused' });
    expect(await storedCount(t.server.tracks)).toBe(before);
  });

  it.each([
    // What Chromium sends for a link opened from outside the browser that redirects to the write.
    [
      'a redirected navigation Chromium counts as a direct visit',
      { 'Sec-Fetch-Site': 'none', 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document', 'Sec-Fetch-User': '?1' },
    ],
    ['a same-origin navigation', { 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Mode': 'navigate' }],
    ['a document fetch without a mode', { 'Sec-Fetch-Dest': 'document' }],
  ])('When %s asks GET /v1/remoteinput, then 403 and nothing is stored', async (_name, headers: Record<string, string>) => {
    const before = await storedCount(t.server.tracks);
    const res = await rawRequest(`${t.url}/v1/remoteinput?${TRACK}`, { headers });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.text)).toEqual({ error: 'A browser navigation never writes: submit from DJ software, a script or fetch()' });
    expect(await storedCount(t.server.tracks)).toBe(before);
  });

  it('When the path is spelled in capitals with a trailing slash, then the write is still refused', async () => {
    const res = await rawRequest(`${t.url}/V1/RemoteInput/?${TRACK}`, { headers: { 'Sec-Fetch-Site': 'cross-site' } });
    expect(res.status).toBe(403);
  });

  it.each([
    ['no browser headers (curl, OBS scripts)', {}],
    ['its own origin', { Origin: 'OWN', 'Sec-Fetch-Site': 'same-origin' }],
    ['a listed write origin', { Origin: 'http://overlay.test:3000', 'Sec-Fetch-Site': 'cross-site' }],
    ['Sec-Fetch-Site: none and no navigation headers', { 'Sec-Fetch-Site': 'none' }],
  ])('When a write comes with %s, then it is stored', async (name, headers: Record<string, string>) => {
    const before = await storedCount(t.server.tracks);
    const resolved = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v === 'OWN' ? ownOrigin() : v]));
    // A title of its own: the same track twice in a row is one play (docs/title-first.md).
    const res = await rawRequest(`${t.url}/v1/remoteinput?artist=Portishead&title=${encodeURIComponent(name)}`, { headers: resolved });
    expect(res.status).toBe(200);
    expect(await storedCount(t.server.tracks)).toBe(before + 1);
  });

  it('When a page on another origin reads /v1/last or /v1/status, then it may (corsOrigins ["*"])', async () => {
    for (const path of ['/v1/last', '/v1/status']) {
      const res = await rawRequest(`${t.url}${path}`, { headers: { Origin: 'http://evil.test', 'Sec-Fetch-Site': 'cross-site' } });
      expect([path, res.status, res.headers['access-control-allow-origin']]).toEqual([path, 200, '*']);
    }
  });
});

describe('DELETE /v1/history/<dbid> from a browser', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it("When a page on another origin deletes a record, then 403 and the record stays; from svc's own page it goes", async () => {
    const stored = await rawRequest(`${t.url}/v1/remoteinput?${TRACK}`);
    const { dbid } = JSON.parse(stored.text) as { dbid: number };
    const refused = await rawRequest(`${t.url}/v1/history/${dbid}`, {
      method: 'DELETE',
      headers: { Origin: 'http://evil.test', 'Sec-Fetch-Site': 'cross-site' },
    });
    expect([refused.status, JSON.parse(refused.text)]).toEqual([403, { error: 'Cross-site request refused' }]);
    expect(await storedCount(t.server.tracks)).toBe(1);
    const allowed = await rawRequest(`${t.url}/v1/history/${dbid}`, { method: 'DELETE', headers: { Origin: t.url, 'Sec-Fetch-Site': 'same-origin' } });
    expect(allowed.status).toBeLessThan(300);
    expect(await storedCount(t.server.tracks)).toBe(0);
  });
});

describe('browser writes with a secret configured', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { secret: 's3cret' } });
  });
  afterAll(() => t.close());

  it('When a cross-site page knows the secret, then the write is still refused', async () => {
    const res = await rawRequest(`${t.url}/v1/remoteinput?${TRACK}&secret=s3cret`, { headers: { Origin: 'http://evil.test' } });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.text)).toEqual({ error: 'Cross-site request refused' });
    expect(await storedCount(t.server.tracks)).toBe(0);
  });
});
