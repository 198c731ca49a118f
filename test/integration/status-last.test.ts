import { VERSION } from '../../src/version';
import { asObject, getWithQuery, postJson, request } from '../helpers/http';
import { startTestServer, type TestServer } from '../helpers/test-server';

describe('GET /v1/status, GET /v1/last, unknown paths and methods', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { corsOrigins: ['https://overlay.example'] } });
  });
  afterAll(() => t.close());

  it('When /v1/status is asked, then it answers ok and the package version', async () => {
    const res = await request(`${t.url}/v1/status`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.json).toEqual({ status: 'ok', version: VERSION });
  });

  it('When nothing has been submitted, then /v1/last is 200 {}', async () => {
    const res = await request(`${t.url}/v1/last`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({});
  });

  it('When a track was submitted, then /v1/last is its processed metadata plus dbid, never the secret or system fields', async () => {
    const submitted = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Daft Punk', title: 'One More Time', hostname: 'dj-pc', filename: '/music/a.mp3' });
    const { dbid, processed_metadata } = asObject(submitted.json);
    const last = await request(`${t.url}/v1/last`);
    expect(last.json).toEqual({ dbid, ...asObject(processed_metadata) });
    expect(last.text).not.toMatch(/dj-pc|a\.mp3/);
  });

  it('When If-None-Match carries the current ETag, then /v1/last is 304; after a change the ETag changes', async () => {
    const first = await request(`${t.url}/v1/last`);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);
    const cached = await request(`${t.url}/v1/last`, { headers: { 'If-None-Match': etag as string } });
    expect(cached.status).toBe(304);
    expect(cached.text).toBe('');
    await getWithQuery(`${t.url}/v1/remoteinput`, { artist: 'Other', title: 'Track' });
    const changed = await request(`${t.url}/v1/last`, { headers: { 'If-None-Match': etag as string } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('When a path is unknown, then the answer is a JSON 404', async () => {
    for (const path of ['/nope', '/v1', '/v1/last/extra', '/v2/last']) {
      const res = await request(`${t.url}${path}`);
      expect(res.status).toBe(404);
      expect(typeof asObject(res.json).error).toBe('string');
    }
  });

  it('When a known path gets a wrong method, then it is a JSON 405 with Allow', async () => {
    const res = await request(`${t.url}/v1/last`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('HEAD, GET, OPTIONS');
    expect(asObject(res.json).error).toMatch(/DELETE/);
    const put = await request(`${t.url}/v1/remoteinput`, { method: 'PUT', body: '{}' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);
  });

  it('When a browser sends a CORS preflight from an allowed origin, then the auth headers are allowed', async () => {
    const res = await request(`${t.url}/v1/remoteinput`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://overlay.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-svc-client-auth' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://overlay.example');
    expect(res.headers.get('access-control-allow-headers')).toMatch(/X-SVC-Client-Auth/);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/X-WNP-Client-Auth/);
    expect(res.headers.get('access-control-allow-methods')).toMatch(/POST/);
  });

  it('When an origin is not in corsOrigins, then no CORS header allows it', async () => {
    const res = await request(`${t.url}/v1/last`, { headers: { Origin: 'https://evil.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('vary')).toMatch(/Origin/);
  });

  it('When HEAD /v1/remoteinput is sent with valid fields, then it answers 200 and creates no record', async () => {
    const before = t.server.tracks.count();
    const res = await request(`${t.url}/v1/remoteinput?artist=Head&title=Request`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(t.server.tracks.count()).toBe(before);
    const lastHead = await request(`${t.url}/v1/last`, { method: 'HEAD' });
    expect(lastHead.status).toBe(200);
  });

  it('When /v1/images/ws is fetched without a WebSocket upgrade, then the error is JSON', async () => {
    const res = await request(`${t.url}/v1/images/ws`);
    expect(res.status).toBe(426);
    expect(typeof asObject(res.json).error).toBe('string');
  });

  it('Every request gets one access log line with method, path, status and milliseconds', async () => {
    await request(`${t.url}/v1/status?probe=1`);
    expect(t.logs.filter((line) => / GET \/v1\/status\?probe=1 200 \d+\.\dms id=/.test(line))).toHaveLength(1);
  });
});

describe('with the default corsOrigins ["*"]', () => {
  it('When any origin asks, then Access-Control-Allow-Origin is *', async () => {
    const t = await startTestServer();
    try {
      const res = await request(`${t.url}/v1/last`, { headers: { Origin: 'https://anything.example' } });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    } finally {
      await t.close();
    }
  });
});
