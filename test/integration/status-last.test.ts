import net from 'node:net';
import { VERSION, buildCommit } from '../../src/version';
import { latestVersion } from '../../src/store/migrations';
import { MIGRATIONS } from '../../src/store/sqlite/migrations';
import { asObject, getWithQuery, postJson, request } from '../helpers/http';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { storedCount } from '../helpers/stored-count';

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
    // Run from this clone: the commit too (docs/running.md "Versions").
    expect(res.json).toEqual({
      status: 'ok',
      version: VERSION,
      commit: buildCommit(),
      schema: { backend: 'sqlite', version: latestVersion(MIGRATIONS) },
      database: 'ok',
    });
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
    // Plus the play log's fields (docs/play-log.md): on air, on the main channel, as music.
    expect(last.json).toEqual({
      dbid,
      ...asObject(processed_metadata),
      started_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      ended_at: null,
      end_reason: null,
      kind: 'music',
      usage: 'feature',
      channel: 'main',
      listeners: null,
    });
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

  it('When /v1/last is asked in its plain form (fast path) or another spelling (Koa route), then both answers are the same', async () => {
    const headers = { Origin: 'https://overlay.example' };
    const fast = await request(`${t.url}/v1/last`, { headers });
    const routed = await request(`${t.url}/v1/last?from=koa`, { headers });
    expect(fast.status).toBe(200);
    expect(routed.status).toBe(200);
    expect(fast.text).toBe(routed.text);
    // Every header the Koa chain sets, not a list: a header added there must be added to the fast path.
    const perResponse = new Set(['date', 'x-request-id']);
    const comparable = (headers: Headers) => Object.fromEntries([...headers].filter(([name]) => !perResponse.has(name)));
    expect(comparable(fast.headers)).toEqual(comparable(routed.headers));
    expect(fast.headers.get('x-request-id')).not.toBe(routed.headers.get('x-request-id'));
    for (const ifNoneMatch of [fast.headers.get('etag') ?? '', '"stale"']) {
      const fastConditional = await request(`${t.url}/v1/last`, { headers: { ...headers, 'If-None-Match': ifNoneMatch } });
      const routedConditional = await request(`${t.url}/v1/last?from=koa`, { headers: { ...headers, 'If-None-Match': ifNoneMatch } });
      expect(fastConditional.status).toBe(routedConditional.status);
      expect(comparable(fastConditional.headers)).toEqual(comparable(routedConditional.headers));
    }
    const head = await request(`${t.url}/v1/last`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-length')).toBe(fast.headers.get('content-length'));
    expect(t.logs.filter((line) => line.includes(` GET /v1/last 200 `) && line.includes(`id=${fast.headers.get('x-request-id')}`))).toHaveLength(1);
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
    const before = await storedCount(t.server.tracks);
    const res = await request(`${t.url}/v1/remoteinput?artist=Head&title=Request`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(await storedCount(t.server.tracks)).toBe(before);
    const lastHead = await request(`${t.url}/v1/last`, { method: 'HEAD' });
    expect(lastHead.status).toBe(200);
  });

  it('When /v1/images/ws is fetched without a WebSocket upgrade, then the error is JSON', async () => {
    const res = await request(`${t.url}/v1/images/ws`);
    expect(res.status).toBe(426);
    expect(typeof asObject(res.json).error).toBe('string');
  });

  it('When the request headers are over 16 KiB or the request is garbage, then the error is still JSON', async () => {
    const huge = await request(`${t.url}/v1/remoteinput?artist=${'a'.repeat(20_000)}`);
    expect(huge.status).toBe(431);
    expect(asObject(huge.json).error).toBe('Request line or headers too large');
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(t.server.port, '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
      let data = '';
      socket
        .setEncoding('utf8')
        .on('data', (chunk: string) => (data += chunk))
        .on('end', () => resolve(data))
        .on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(raw.split('\r\n\r\n')[1]).toBe('{"error":"Malformed HTTP request"}');
  });

  it('When a WebSocket upgrade asks for another path, then the refusal is JSON', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(t.server.port, '127.0.0.1', () =>
        socket.write(
          'GET /v1/other HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
        ),
      );
      let data = '';
      socket
        .setEncoding('utf8')
        .on('data', (chunk: string) => (data += chunk))
        .on('end', () => resolve(data))
        .on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(raw).toMatch(/\r\n\r\n\{"error":"Not found: \/v1\/other"\}$/);
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
