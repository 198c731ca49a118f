import http from 'node:http';
import { AppError } from '../../../src/errors';
import type { OpenStream } from '../../../src/server/streams/sse/event-stream';
import { until } from '../../helpers/eventually';
import { postJson, request } from '../../helpers/http';
import { rawRequest } from '../../helpers/raw-http';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// GET and HEAD /v1/events with at most `?since=` are answered before Koa
// (server/fast-paths/events-fast-path.ts); another query parameter sends the same request through the Koa
// route (routes/events.ts). Both must give the same answer: status, every header but the
// per-response ones, the opening of the stream or the error body, the access-log line, the
// client address a replay waits under.

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const perResponse = new Set(['date', 'x-request-id']);

describe('GET /v1/events: the fast path and the Koa route', () => {
  let t: TestServer;
  let current = 0;
  const origin = 'https://overlay.example';

  /** One request on its own connection; a stream is read until `until` holds, then dropped. */
  const exchange = (
    path: string,
    options: { method?: string; headers?: Record<string, string>; localAddress?: string; until?: (body: string) => boolean } = {},
  ): Promise<Answer & { id: string }> => {
    const target = new URL(t.url);
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          path,
          method: options.method ?? 'GET',
          headers: options.headers,
          localAddress: options.localAddress,
          agent: false,
        },
        (res) => {
          let body = '';
          const done = () => {
            const headers = Object.fromEntries(Object.entries(res.headers).filter(([name]) => !perResponse.has(name)));
            resolve({ status: res.statusCode ?? 0, headers, body, id: String(res.headers['x-request-id']) });
            req.destroy();
          };
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            body += chunk;
            if (options.until?.(body)) done();
          });
          res.on('end', done);
        },
      );
      req.on('error', reject);
      req.end();
    });
  };
  /** The stream has sent the current track. */
  const untilCurrent = (body: string) => body.includes(`id: ${current}\n`) && body.endsWith('\n\n');
  const viaKoa = (path: string) => `${path}${path.includes('?') ? '&' : '?'}via=koa`;
  /** The same request answered by the fast path and by the Koa route: both answers. */
  const both = async (path: string, options: Parameters<typeof exchange>[1] = {}) => {
    const fast = await exchange(path, options);
    const routed = await exchange(viaKoa(path), options);
    return { fast, routed };
  };

  beforeAll(async () => {
    t = await startTestServer({ config: { corsOrigins: [origin], trustProxy: ['127.0.0.2'] } });
    for (const title of ['One', 'Two', 'Three']) {
      const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Moderat', title });
      current = Number((res.json as { dbid: number }).dbid);
    }
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(() => t.close());

  it('When a reader opens the stream with or without since or Last-Event-ID, from an allowed origin or another, then both answer the same stream', async () => {
    const cases: [string, Record<string, string>][] = [
      ['/v1/events', {}],
      ['/v1/events', { Origin: origin }],
      ['/v1/events', { Origin: 'https://elsewhere.example' }],
      [`/v1/events?since=${current - 2}`, { Origin: origin }],
      [`/v1/events?since=${current - 2}`, { 'Last-Event-ID': String(current - 1) }],
      ['/v1/events', { 'Last-Event-ID': String(current - 2) }],
      ['/v1/events', { 'Last-Event-ID': 'not-ours' }],
    ];
    for (const [path, headers] of cases) {
      const { fast, routed } = await both(path, { headers, until: untilCurrent });
      expect(fast.status).toBe(200);
      expect(fast).toEqual({ ...routed, id: fast.id });
      expect(fast.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    }
    const replayed = await exchange(`/v1/events?since=${current - 2}`, { until: untilCurrent });
    expect(replayed.body.startsWith('retry: 3000\n\n')).toBe(true);
    expect([...replayed.body.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]))).toEqual([current - 1, current]);
  });

  it('When since is not a dbid, then both answer the same 400 JSON, to GET and to HEAD', async () => {
    for (const path of ['/v1/events?since=abc', '/v1/events?since=', '/v1/events?since=-1']) {
      for (const method of ['GET', 'HEAD']) {
        const { fast, routed } = await both(path, { method, headers: { Origin: origin } });
        expect(fast.status).toBe(400);
        expect(fast).toEqual({ ...routed, id: fast.id });
      }
    }
    const bad = await exchange('/v1/events?since=abc');
    expect(JSON.parse(bad.body)).toEqual({ error: "Invalid 'since': expected a dbid (a non-negative integer)" });
    expect(bad.headers['x-content-type-options']).toBe('nosniff');
  });

  it('When HEAD asks, then both answer the stream headers without a body', async () => {
    for (const path of ['/v1/events', '/v1/events?since=1']) {
      const { fast, routed } = await both(path, { method: 'HEAD', headers: { Origin: origin } });
      expect(fast.status).toBe(200);
      expect(fast.body).toBe('');
      expect(fast).toEqual({ ...routed, id: fast.id });
    }
  });

  it('When opening the stream is refused with an AppError, then both answer the same status and Retry-After; an unexpected failure the same 500, logged', async () => {
    const open = jest.spyOn(t.server.events, 'open');
    const busy = () => new AppError('SERVER_BUSY', undefined, { headers: { 'Retry-After': '1' } });
    open.mockRejectedValueOnce(busy()).mockRejectedValueOnce(busy());
    const refused = await both('/v1/events?since=1', { headers: { Origin: origin } });
    expect(refused.fast.status).toBe(503);
    expect(refused.fast.headers['retry-after']).toBe('1');
    expect(refused.fast).toEqual({ ...refused.routed, id: refused.fast.id });
    open.mockRejectedValueOnce(new Error('boom')).mockRejectedValueOnce(new Error('boom'));
    const failed = await both('/v1/events?since=1');
    expect(failed.fast.status).toBe(500);
    expect(JSON.parse(failed.fast.body)).toEqual({ error: 'Internal server error' });
    expect(failed.fast).toEqual({ ...failed.routed, id: failed.fast.id });
    for (const id of [failed.fast.id, failed.routed.id]) expect(t.logs.filter((line) => line.includes(`request ${id} failed: Error: boom`))).toHaveLength(1);
  });

  it('When a trusted proxy forwards a reader, then both wait its replay under the real client address; an untrusted sender is its own address', async () => {
    const open = jest.spyOn(t.server.events, 'open');
    const forwarded = { 'X-Forwarded-For': '198.51.100.7', Origin: origin };
    const viaProxy = await both('/v1/events?since=1', { headers: forwarded, localAddress: '127.0.0.2', until: untilCurrent });
    expect(viaProxy.fast).toEqual({ ...viaProxy.routed, id: viaProxy.fast.id });
    const direct = await both('/v1/events?since=1', { headers: forwarded, localAddress: '127.0.0.3', until: untilCurrent });
    expect(direct.fast).toEqual({ ...direct.routed, id: direct.fast.id });
    expect(open.mock.calls.map((call) => [call[0], call[1]])).toEqual([
      [1, '198.51.100.7'],
      [1, '198.51.100.7'],
      [1, '127.0.0.3'],
      [1, '127.0.0.3'],
    ]);
  });

  it('When a stream opens, then the access log has its one line with its id; a reader that hangs up while its replay waits leaves none', async () => {
    const opened = await exchange('/v1/events?since=1', { until: untilCurrent });
    expect(t.logs.filter((line) => line.includes('GET /v1/events?since=1 200 ') && line.includes(`id=${opened.id}`))).toHaveLength(1);
    const head = await exchange('/v1/events', { method: 'HEAD' });
    expect(t.logs.filter((line) => line.includes('HEAD /v1/events 200 ') && line.includes(`id=${head.id}`))).toHaveLength(1);

    // The replay waits until its reader hangs up, as a job waiting in a full pool does.
    let waiting = (): void => undefined;
    const waited = new Promise<void>((resolve) => (waiting = resolve));
    jest.spyOn(t.server.events, 'open').mockImplementationOnce(
      (_since, _client, gone) =>
        new Promise<OpenStream>((_resolve, reject) => {
          waiting();
          gone?.addEventListener('abort', () => reject(new AppError('SERVER_BUSY')));
        }),
    );
    const linesBefore = t.logs.length;
    const req = http.get(`${t.url}/v1/events?since=2`, { agent: false });
    req.on('error', () => undefined);
    await waited;
    req.destroy();
    // The marker: a request after it, whose access-log line comes once the aborted one would have logged.
    await request(`${t.url}/v1/last?marker=after-abort`);
    await until(() => t.logs.some((line) => line.includes('marker=after-abort')), 'the marker request was logged');
    expect(t.logs.slice(linesBefore).filter((line) => line.includes('/v1/events'))).toEqual([]);
  });

  it('When the request is one the fast path leaves to Koa, then Koa answers it as before', async () => {
    const repeated = await rawRequest(`${t.url}/v1/events?since=1&since=2`);
    expect(repeated.status).toBe(400);
    expect(JSON.parse(repeated.text)).toEqual({ error: "Repeated query parameter 'since'" });
    const unknownHost = await rawRequest(`${t.url}/v1/events`, { headers: { Host: 'rebind.example' } });
    expect(unknownHost.status).toBe(421);
    const post = await rawRequest(`${t.url}/v1/events`, { method: 'POST' });
    expect(post.status).toBe(405);
    const preflight = await rawRequest(`${t.url}/v1/events`, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'GET' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-headers']).toContain('Last-Event-ID');
  });
});
